// The daemon's tokenizer: Hugging Face tokenizer.json through @huggingface/tokenizers,
// plus the model's chat template and end-of-sequence ids. Immutable once built; safe to
// share across requests.
import { Tokenizer as HfTokenizer } from '@huggingface/tokenizers';
import { ChatTemplate, type ChatMessage, type ChatTemplateOptions } from './chat-template.js';
import { StreamDecoder } from './stream-decoder.js';
import { TokenizerError } from './tokenizer-error.js';
import { readTokenizerFiles, type TokenizerFiles } from './tokenizer-files.js';

export { TokenizerError, type TokenizerErrorKind } from './tokenizer-error.js';
export type { ChatMessage, ChatTemplateOptions } from './chat-template.js';
export { StreamDecoder } from './stream-decoder.js';

export interface DecodeOptions {
  /** Drop special tokens (<|im_end|>, ...) from the text. Default false. */
  skipSpecialTokens?: boolean;
}

export interface TokenizerOptions {
  /** Fail when the folder has no chat template. Default true. */
  requireChatTemplate?: boolean;
}

/** Ids of these tokens also end a sequence when the vocabulary has them. */
const EXTRA_EOS_TOKENS = ['<|endoftext|>', '<|im_end|>'];
const SPECIAL_TOKEN_KEYS = ['bos_token', 'eos_token', 'unk_token', 'pad_token'] as const;

// A special token in tokenizer_config.json is a string, null, or an AddedToken object.
function tokenString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null && typeof (value as { content?: unknown }).content === 'string') {
    return (value as { content: string }).content;
  }
  return undefined;
}

export class Tokenizer {
  /** Ids that end generation: tokenizer_config's eos_token, then <|endoftext|> and <|im_end|> if present. */
  readonly eosTokenIds: readonly number[];
  /** One more than the largest id the tokenizer knows (added tokens included). */
  readonly vocabSize: number;
  readonly bosToken: string | undefined;
  readonly eosToken: string | undefined;
  private readonly cleanUpSpaces: boolean;

  private constructor(
    private readonly hf: HfTokenizer,
    private readonly template: ChatTemplate | undefined,
    config: Record<string, unknown>,
    configPath: string,
  ) {
    this.bosToken = tokenString(config.bos_token);
    this.eosToken = tokenString(config.eos_token);
    // transformers has defaulted to no clean-up since 4.45; Qwen configs set it false.
    this.cleanUpSpaces = config.clean_up_tokenization_spaces === true;
    let max = -1;
    for (const id of hf.get_vocab(true).values()) if (id > max) max = id;
    this.vocabSize = max + 1;

    const eos: number[] = [];
    if (this.eosToken !== undefined) {
      const id = hf.token_to_id(this.eosToken);
      if (id === undefined) {
        throw new TokenizerError('bad-file', `${configPath}: eos_token ${JSON.stringify(this.eosToken)} is not in the vocabulary`);
      }
      eos.push(id);
    }
    for (const token of EXTRA_EOS_TOKENS) {
      const id = hf.token_to_id(token);
      if (id !== undefined && !eos.includes(id)) eos.push(id);
    }
    this.eosTokenIds = eos;
  }

  /**
   * Loads tokenizer.json, tokenizer_config.json and the chat template (chat_template.jinja,
   * else tokenizer_config.json's chat_template) from a model folder. Throws TokenizerError
   * 'missing-file' for an absent file (the template only when options.requireChatTemplate
   * is not false) and 'bad-file' for an unreadable, malformed or unusable one.
   */
  static async fromModelDir(dir: string, options: TokenizerOptions = {}): Promise<Tokenizer> {
    const files = await readTokenizerFiles(dir);
    return Tokenizer.fromFiles(dir, files, options);
  }

  private static fromFiles(dir: string, files: TokenizerFiles, options: TokenizerOptions): Tokenizer {
    const configPath = `${dir}/tokenizer_config.json`;
    let hf: HfTokenizer;
    try {
      hf = new HfTokenizer(files.tokenizerJson, files.tokenizerConfig);
    } catch (err) {
      throw new TokenizerError('bad-file', `${dir}/tokenizer.json: cannot build the tokenizer: ${(err as Error).message}`, {
        cause: err,
      });
    }
    let template: ChatTemplate | undefined;
    if (files.chatTemplate !== undefined) {
      const special: Record<string, string> = {};
      for (const key of SPECIAL_TOKEN_KEYS) {
        const value = tokenString(files.tokenizerConfig[key]);
        if (value !== undefined) special[key] = value;
      }
      template = new ChatTemplate(files.chatTemplate, files.chatTemplateSource ?? dir, special);
    } else if (options.requireChatTemplate !== false) {
      throw new TokenizerError(
        'missing-file',
        `${dir} has no chat template: neither chat_template.jinja nor a chat_template entry in tokenizer_config.json`,
      );
    }
    return new Tokenizer(hf, template, files.tokenizerConfig, configPath);
  }

  /** Whether the model folder provided a chat template. */
  get hasChatTemplate(): boolean {
    return this.template !== undefined;
  }

  /**
   * Token ids of `text`. No BOS/EOS or other special tokens are added, but special-token
   * strings inside the text (e.g. "<|im_start|>") become their ids, as in transformers.
   */
  encode(text: string): number[] {
    if (typeof text !== 'string') throw new TokenizerError('invalid-input', 'encode needs a string');
    return this.hf.encode(text, { add_special_tokens: false }).ids;
  }

  /**
   * Text of `ids`. Throws TokenizerError 'invalid-input' unless every id is a non-negative
   * integer; ids beyond the vocabulary (padded embedding rows) decode to nothing, as in
   * Hugging Face tokenizers.
   */
  decode(ids: readonly number[], options: DecodeOptions = {}): string {
    if (!Array.isArray(ids)) throw new TokenizerError('invalid-input', 'decode needs an array of token ids');
    for (const id of ids) {
      if (!Number.isSafeInteger(id) || id < 0) {
        throw new TokenizerError('invalid-input', `token id ${String(id)} is not a non-negative integer`);
      }
    }
    if (ids.length === 0) return '';
    return this.hf.decode(ids as number[], {
      skip_special_tokens: options.skipSpecialTokens ?? false,
      clean_up_tokenization_spaces: this.cleanUpSpaces,
    });
  }

  /** The id of a token string (special tokens included), or undefined. */
  tokenToId(token: string): number | undefined {
    return this.hf.token_to_id(token);
  }

  /**
   * Renders the chat template with the tokenizer's bos/eos/unk/pad tokens available.
   * Throws TokenizerError 'missing-file' when there is no template, 'invalid-input' for
   * malformed messages and 'template' when rendering fails.
   */
  applyChatTemplate(messages: readonly ChatMessage[], options: ChatTemplateOptions): string {
    if (this.template === undefined) throw new TokenizerError('missing-file', 'this model has no chat template');
    return this.template.render(messages, options);
  }

  /** A decoder for one streamed sequence; see StreamDecoder. */
  createStreamDecoder(options: DecodeOptions = {}): StreamDecoder {
    return new StreamDecoder((ids) => this.decode(ids, options));
  }
}
