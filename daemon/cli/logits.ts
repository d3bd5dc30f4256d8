// `tandem logits`: the engine's conformance contract. Writes a safetensors file with
// prefill_logits f32 [T, V] and, with --decode N, decode_tokens i32 [N] (the engine's greedy
// argmax at each step) and decode_logits f32 [N, V]. --force-tokens feeds given tokens
// instead of the argmax (teacher forcing). --split K prefills the first K tokens in one engine
// instance, hands its state to a fresh instance through a state file, and finishes there.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAddon, type EngineKind, type NativeEngine } from '../../native/index.js';
import { writeSafetensors, type TensorData } from '../../shared/safetensors.js';
import {
  UsageError,
  intOption,
  parseArgs,
  parseIntList,
  requireString,
  stringOption,
  type OptionSpec,
} from '../../shared/cli-args.js';
import { parseEngineKind } from './engine-kind.js';

const SPEC: Record<string, OptionSpec> = {
  model: {},
  tokens: {},
  split: {},
  decode: {},
  'force-tokens': {},
  engine: {},
  'decode-engine': {},
  threads: {},
  chunk: {},
  out: {},
};

export const LOGITS_USAGE = `usage: tandem logits --model DIR --tokens 1,2,3 [--split K] [--decode N]
                     [--force-tokens a,b,c] [--engine cpu] [--decode-engine cpu]
                     [--threads N] [--chunk N] --out FILE`;

export interface LogitsRequest {
  model: string;
  tokens: number[];
  split?: number;
  decode: number;
  force?: number[];
  engine: EngineKind;
  decodeEngine: EngineKind;
  threads?: number;
  chunk: number;
}

export interface LogitsResult {
  vocabSize: number;
  prefillLogits: Float32Array;
  decodeTokens: Int32Array;
  decodeLogits: Float32Array;
  fingerprint: string;
}

const GREEDY = { temperature: 0, topK: 0, topP: 1, seed: 0 };

/** Runs the conformance computation (see the file comment). Engine errors propagate. */
export async function computeLogits(req: LogitsRequest): Promise<LogitsResult> {
  const addon = loadAddon();
  const T = req.tokens.length;
  const open = (kind: EngineKind): NativeEngine => new addon.Engine(req.model, { engine: kind, threads: req.threads });
  const first = open(req.engine);
  let engine = first;
  let stateDir: string | undefined;
  try {
    const V = first.info.vocabSize;
    const fingerprint = first.info.fingerprint;
    const prefillLogits = new Float32Array(T * V);
    const split = req.split ?? T;
    let seq = first.createSequence();
    const head = await first.prefill(seq, Int32Array.from(req.tokens.slice(0, split)), { allLogits: true, chunkSize: req.chunk });
    prefillLogits.set(head, 0);
    if (req.split !== undefined) {
      // Hand the state to a fresh engine instance through a state file.
      stateDir = mkdtempSync(join(tmpdir(), 'tandem-logits-'));
      const path = join(stateDir, 'split.state');
      await first.exportState(seq, path);
      first.close();
      engine = open(req.decodeEngine);
      seq = await engine.importState(path);
      if (split < T) {
        const tail = await engine.prefill(seq, Int32Array.from(req.tokens.slice(split)), { allLogits: true, chunkSize: req.chunk });
        prefillLogits.set(tail, split * V);
      }
    }
    const decodeTokens = new Int32Array(req.decode);
    const decodeLogits = new Float32Array(req.decode * V);
    let last: Float32Array = prefillLogits.subarray((T - 1) * V, T * V);
    for (let i = 0; i < req.decode; i++) {
      const argmax = engine.sample(last, 0, GREEDY, T + i);
      decodeTokens[i] = argmax;
      const feed = req.force ? (req.force[i] as number) : argmax;
      const step = await engine.decode(Int32Array.of(seq), Int32Array.of(feed));
      decodeLogits.set(step, i * V);
      last = step;
    }
    return { vocabSize: V, prefillLogits, decodeTokens, decodeLogits, fingerprint };
  } finally {
    engine.close();
    if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  }
}

export function parseLogitsArgs(argv: readonly string[]): LogitsRequest & { out: string } {
  const args = parseArgs(argv, SPEC);
  if (args.positionals.length > 0) throw new UsageError(`unexpected argument "${args.positionals[0]}"`);
  const model = requireString(args, 'model');
  const tokens = parseIntList(requireString(args, 'tokens'), '--tokens', 0, 2 ** 31 - 1);
  const split = intOption(args, 'split', 1, tokens.length);
  const forceText = stringOption(args, 'force-tokens');
  const force = forceText === undefined ? undefined : parseIntList(forceText, '--force-tokens', 0, 2 ** 31 - 1);
  const decode = intOption(args, 'decode', 0, 1 << 20, force?.length ?? 0) as number;
  if (force && force.length < decode) {
    throw new UsageError(`--force-tokens gives ${force.length} tokens but --decode asks for ${decode} steps`);
  }
  const engine = parseEngineKind(stringOption(args, 'engine') ?? 'cpu');
  const decodeEngine = parseEngineKind(stringOption(args, 'decode-engine') ?? engine);
  if (split === undefined && stringOption(args, 'decode-engine') !== undefined) {
    throw new UsageError('--decode-engine needs --split (the handoff is what changes engines)');
  }
  return {
    model,
    tokens,
    split,
    decode,
    force,
    engine,
    decodeEngine,
    threads: intOption(args, 'threads', 1, 256),
    chunk: intOption(args, 'chunk', 1, 1 << 20, 512) as number,
    out: requireString(args, 'out'),
  };
}

export async function runLogits(argv: readonly string[]): Promise<number> {
  const req = parseLogitsArgs(argv);
  const r = await computeLogits(req);
  const T = req.tokens.length;
  const tensors: TensorData[] = [{ name: 'prefill_logits', dtype: 'F32', shape: [T, r.vocabSize], data: r.prefillLogits }];
  if (req.decode > 0) {
    tensors.push({ name: 'decode_tokens', dtype: 'I32', shape: [req.decode], data: r.decodeTokens });
    tensors.push({ name: 'decode_logits', dtype: 'F32', shape: [req.decode, r.vocabSize], data: r.decodeLogits });
  }
  await writeSafetensors(req.out, tensors, {
    engine: req.engine,
    decode_engine: req.decodeEngine,
    split: String(req.split ?? ''),
    model_fingerprint: r.fingerprint,
    teacher_forced: String(req.force !== undefined),
  });
  return 0;
}
