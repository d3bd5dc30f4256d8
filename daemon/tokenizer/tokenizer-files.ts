// Reads the tokenizer files of a Hugging Face model folder: tokenizer.json,
// tokenizer_config.json and the chat template (chat_template.jinja, else the
// `chat_template` entry of tokenizer_config.json).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TokenizerError } from './tokenizer-error.js';

export interface TokenizerFiles {
  tokenizerJson: Record<string, unknown>;
  tokenizerConfig: Record<string, unknown>;
  /** Template source, or undefined when the folder has none. */
  chatTemplate: string | undefined;
  /** Where the template came from, for error messages. */
  chatTemplateSource: string | undefined;
}

async function readText(path: string, required: boolean): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && !required) return undefined;
    if (code === 'ENOENT') throw new TokenizerError('missing-file', `${path} is missing`, { cause: err });
    throw new TokenizerError('bad-file', `cannot read ${path}: ${(err as Error).message}`, { cause: err });
  }
}

function settledValue<T>(r: PromiseSettledResult<T>): T {
  if (r.status === 'rejected') throw r.reason;
  return r.value;
}

function parseObject(path: string, text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new TokenizerError('bad-file', `${path} is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TokenizerError('bad-file', `${path} does not hold a JSON object`);
  }
  return value as Record<string, unknown>;
}

// tokenizer_config.json's chat_template is a string, or a list of {name, template}
// of which the one named "default" is used.
function templateFromConfig(path: string, value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    const entry = value.find(
      (e: unknown) => typeof e === 'object' && e !== null && (e as Record<string, unknown>).name === 'default',
    ) as Record<string, unknown> | undefined;
    if (entry !== undefined && typeof entry.template === 'string') return entry.template;
  }
  throw new TokenizerError('bad-file', `${path}: chat_template is neither a string nor a list holding a "default" template`);
}

/**
 * Reads and parses the files. Throws TokenizerError 'missing-file' when tokenizer.json or
 * tokenizer_config.json is absent, 'bad-file' when a file is unreadable or malformed.
 */
export async function readTokenizerFiles(dir: string): Promise<TokenizerFiles> {
  const tokenizerPath = join(dir, 'tokenizer.json');
  const configPath = join(dir, 'tokenizer_config.json');
  const templatePath = join(dir, 'chat_template.jinja');
  // The reads run concurrently, but a failure is reported in this fixed order (tokenizer.json
  // first), not by whichever read happened to fail first.
  const [tokenizerRead, configRead, templateRead] = await Promise.allSettled([
    readText(tokenizerPath, true),
    readText(configPath, true),
    readText(templatePath, false),
  ]);
  const tokenizerText = settledValue(tokenizerRead);
  const configText = settledValue(configRead);
  const templateText = settledValue(templateRead);
  const tokenizerJson = parseObject(tokenizerPath, tokenizerText as string);
  const model = tokenizerJson.model;
  if (typeof model !== 'object' || model === null || typeof (model as Record<string, unknown>).type !== 'string') {
    throw new TokenizerError('bad-file', `${tokenizerPath} has no "model" object with a "type"`);
  }
  const tokenizerConfig = parseObject(configPath, configText as string);
  if (templateText !== undefined) {
    return { tokenizerJson, tokenizerConfig, chatTemplate: templateText, chatTemplateSource: templatePath };
  }
  const fromConfig = templateFromConfig(configPath, tokenizerConfig.chat_template);
  return {
    tokenizerJson,
    tokenizerConfig,
    chatTemplate: fromConfig,
    chatTemplateSource: fromConfig === undefined ? undefined : `${configPath} (chat_template)`,
  };
}
