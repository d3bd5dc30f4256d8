// A compiled Hugging Face chat template (Jinja, rendered by @huggingface/jinja).
import { Template } from '@huggingface/jinja';
import { TokenizerError } from './tokenizer-error.js';

/** One chat turn as the template sees it. Extra fields (tool_calls, reasoning_content, ...) pass through. */
export interface ChatMessage {
  role: string;
  content?: string | null | unknown[];
  [key: string]: unknown;
}

export interface ChatTemplateOptions {
  /** Append the prompt that opens the assistant's turn (add_generation_prompt). */
  addGenerationPrompt: boolean;
  /** More template variables, e.g. { enable_thinking: false } or { tools: [...] }. */
  variables?: Record<string, unknown>;
}

export class ChatTemplate {
  private readonly template: Template;

  /**
   * Compiles `source`. `specialTokens` (bos_token, eos_token, ...; only those the tokenizer
   * defines) are available to the template, as transformers provides them. Throws
   * TokenizerError 'bad-file' when the template does not parse; `origin` names its file.
   */
  constructor(
    source: string,
    private readonly origin: string,
    private readonly specialTokens: Readonly<Record<string, string>>,
  ) {
    try {
      this.template = new Template(source);
    } catch (err) {
      throw new TokenizerError('bad-file', `${origin}: cannot parse the chat template: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }

  /**
   * Renders `messages`. Throws TokenizerError 'invalid-input' for a malformed message list
   * and 'template' when rendering fails (e.g. the template calls raise_exception).
   */
  render(messages: readonly ChatMessage[], options: ChatTemplateOptions): string {
    if (!Array.isArray(messages)) throw new TokenizerError('invalid-input', 'messages must be an array');
    messages.forEach((m, i) => {
      if (typeof m !== 'object' || m === null || typeof m.role !== 'string') {
        throw new TokenizerError('invalid-input', `messages[${i}] must be an object with a string role`);
      }
    });
    try {
      return this.template.render({
        ...this.specialTokens,
        ...options.variables,
        messages,
        add_generation_prompt: options.addGenerationPrompt,
      });
    } catch (err) {
      throw new TokenizerError('template', `chat template ${this.origin} failed: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }
}
