// The `tandem` command: dispatches to sub-commands. Exit codes: 0 success, 1 failure
// (engine, I/O), 2 usage error. Errors are printed as one line on stderr.
import { isEngineError } from '../../native/index.js';
import { UsageError } from '../../shared/cli-args.js';
import { runBench } from './bench.js';
import { runGenerate } from './generate.js';
import { LOGITS_USAGE, runLogits } from './logits.js';
import { runMakeModel } from './make-model.js';

const USAGE = `usage: tandem <command> [options]

commands:
  logits      conformance output of the engine (prefill/decode logits, state handoff)
  generate    generate a continuation of a prompt
  make-model  write a model folder with random weights in the shapes of a preset
  bench       benchmarks (bench engine: prefill, decode and state-file figures as JSON)

Run "tandem <command> --help" for a command's options.`;

type Command = (argv: string[]) => Promise<number>;

const COMMANDS: Record<string, { run: Command; usage?: string }> = {
  logits: { run: runLogits, usage: LOGITS_USAGE },
  generate: { run: runGenerate },
  'make-model': { run: (argv) => runMakeModel(argv) },
  bench: { run: runBench },
};

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return name === undefined ? 2 : 0;
  }
  const cmd = COMMANDS[name];
  if (!cmd) {
    process.stderr.write(`tandem: unknown command "${name}"\n${USAGE}\n`);
    return 2;
  }
  if (cmd.usage && (rest.includes('--help') || rest.includes('-h'))) {
    process.stdout.write(`${cmd.usage}\n`);
    return 0;
  }
  try {
    return await cmd.run(rest);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`tandem ${name}: ${e.message}\n${cmd.usage ?? ''}\n`);
      return 2;
    }
    if (isEngineError(e)) {
      process.stderr.write(`tandem ${name}: ${e.message} [${e.code}]\n`);
      return 1;
    }
    process.stderr.write(`tandem ${name}: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
}
