// `tandem generate`: prints the continuation of a prompt, streamed as it is sampled. The
// tokenizer (and with --chat, the chat template) come from the model folder.
import { loadAddon } from '../../native/index.js';
import {
  UsageError,
  flag,
  intOption,
  numberOption,
  parseArgs,
  requireString,
  stringOption,
  type OptionSpec,
} from '../../shared/cli-args.js';
import { Tokenizer } from '../tokenizer/tokenizer.js';
import { parseEngineKind } from './engine-kind.js';

const SPEC: Record<string, OptionSpec> = {
  model: {},
  'max-tokens': {},
  temperature: {},
  'top-p': {},
  'top-k': {},
  seed: {},
  engine: {},
  threads: {},
  chat: { boolean: true },
};

export const GENERATE_USAGE = `usage: tandem generate --model DIR [--max-tokens N] [--temperature T] [--top-p P]
                       [--top-k K] [--seed S] [--chat] [--engine cpu] [--threads N] "prompt"`;

export async function runGenerate(argv: readonly string[]): Promise<number> {
  const args = parseArgs(argv, SPEC);
  if (args.positionals.length !== 1) throw new UsageError('give exactly one prompt (quote it)');
  const prompt = args.positionals[0] as string;
  const model = requireString(args, 'model');
  const maxTokens = intOption(args, 'max-tokens', 1, 1 << 20, 64) as number;
  const params = {
    temperature: numberOption(args, 'temperature', 0, 100, 0) as number,
    topP: numberOption(args, 'top-p', Number.MIN_VALUE, 1, 1) as number,
    topK: intOption(args, 'top-k', 0, 1 << 30, 0) as number,
    seed: intOption(args, 'seed', 0, Number.MAX_SAFE_INTEGER, 0) as number,
  };
  const engineKind = parseEngineKind(stringOption(args, 'engine') ?? 'cpu');
  const chat = flag(args, 'chat');
  const tokenizer = await Tokenizer.fromModelDir(model, { requireChatTemplate: chat });
  const text = chat
    ? tokenizer.applyChatTemplate([{ role: 'user', content: prompt }], { addGenerationPrompt: true })
    : prompt;
  const ids = tokenizer.encode(text);
  if (ids.length === 0) throw new UsageError('the prompt encodes to no tokens');

  const engine = new (loadAddon().Engine)(model, { engine: engineKind, threads: intOption(args, 'threads', 1, 256) });
  try {
    const stops = new Set([...engine.info.eosTokenIds, ...tokenizer.eosTokenIds]);
    const seq = engine.createSequence();
    let logits = await engine.prefill(seq, Int32Array.from(ids));
    const stream = tokenizer.createStreamDecoder();
    for (let i = 0; i < maxTokens; i++) {
      const position = ids.length + i;
      const tok = engine.sample(logits, 0, params, position);
      if (stops.has(tok)) break;
      process.stdout.write(stream.push(tok));
      if (i + 1 === maxTokens || position + 1 >= engine.info.maxPositionEmbeddings) break;
      logits = await engine.decode(Int32Array.of(seq), Int32Array.of(tok));
    }
    process.stdout.write(`${stream.flush()}\n`);
    return 0;
  } finally {
    engine.close();
  }
}
