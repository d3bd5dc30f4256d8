// `tandem bench engine`: runs bench/engine-bench.ts and prints (or writes) its JSON.
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { runEngineBench } from '../../bench/engine-bench.js';
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
  engine: {},
  threads: {},
  prefill: {},
  'decode-batch': {},
  'decode-steps': {},
  'decode-context': {},
  state: {},
  chunk: {},
  seed: {},
  'bandwidth-mib': {},
  'sgemm-size': {},
  out: {},
};

export const BENCH_USAGE = `usage: tandem bench engine --model DIR [--engine cpu] [--threads N]
         [--prefill 13,74,410,1024] [--decode-batch 1,4,16] [--decode-steps 8]
         [--decode-context 32] [--state 74,1024] [--chunk 512] [--seed 1]
         [--bandwidth-mib 1024] [--sgemm-size 2048] [--out FILE]`;

export async function runBench(argv: readonly string[]): Promise<number> {
  const [what, ...rest] = argv;
  if (what !== 'engine') throw new UsageError(`unknown benchmark "${what ?? ''}" (benchmarks: engine)\n${BENCH_USAGE}`);
  const args = parseArgs(rest, SPEC);
  if (args.positionals.length > 0) throw new UsageError(`unexpected argument "${args.positionals[0]}"`);
  const list = (name: string, fallback: string, max: number) => parseIntList(stringOption(args, name) ?? fallback, `--${name}`, 1, max);
  const result = await runEngineBench({
    model: requireString(args, 'model'),
    engine: parseEngineKind(stringOption(args, 'engine') ?? 'cpu'),
    threads: intOption(args, 'threads', 1, 256, cpus().length) as number,
    prefillLengths: list('prefill', '13,74,410,1024', 1 << 20),
    decodeBatches: list('decode-batch', '1,4,16', 4096),
    decodeSteps: intOption(args, 'decode-steps', 1, 100000, 8) as number,
    decodeContext: intOption(args, 'decode-context', 1, 1 << 20, 32) as number,
    stateLengths: list('state', '74,1024', 1 << 20),
    chunk: intOption(args, 'chunk', 1, 1 << 20, 512) as number,
    seed: intOption(args, 'seed', 0, 2 ** 31, 1) as number,
    bandwidthBytes: (intOption(args, 'bandwidth-mib', 1, 1 << 16, 1024) as number) * 1024 * 1024,
    sgemmSize: intOption(args, 'sgemm-size', 64, 16384, 2048) as number,
  });
  const json = `${JSON.stringify({ command: `tandem bench engine ${rest.join(' ')}`, ...result }, null, 2)}\n`;
  const out = stringOption(args, 'out');
  if (out) writeFileSync(out, json);
  process.stdout.write(json);
  return 0;
}
