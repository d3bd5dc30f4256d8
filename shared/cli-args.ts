// Command-line argument parsing shared by every `tandem` sub-command: `--name value`,
// `--name=value`, boolean switches and positionals. Unknown options and malformed values
// throw UsageError, which the CLI prints before exiting with code 2.

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export interface OptionSpec {
  /** Takes no value. */
  readonly boolean?: boolean;
}

export interface ParsedArgs {
  readonly options: ReadonlyMap<string, string | true>;
  readonly positionals: readonly string[];
}

export function parseArgs(argv: readonly string[], spec: Readonly<Record<string, OptionSpec>>): ParsedArgs {
  const options = new Map<string, string | true>();
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('--') || arg === '--') {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    const s = spec[name];
    if (!s) throw new UsageError(`unknown option --${name}`);
    if (options.has(name)) throw new UsageError(`option --${name} given twice`);
    if (s.boolean) {
      if (eq >= 0) throw new UsageError(`option --${name} takes no value`);
      options.set(name, true);
      continue;
    }
    let value: string | undefined;
    if (eq >= 0) value = arg.slice(eq + 1);
    else {
      value = argv[i + 1];
      i++;
    }
    if (value === undefined) throw new UsageError(`option --${name} needs a value`);
    options.set(name, value);
  }
  return { options, positionals };
}

export function stringOption(args: ParsedArgs, name: string): string | undefined {
  const v = args.options.get(name);
  return typeof v === 'string' ? v : undefined;
}

export function requireString(args: ParsedArgs, name: string): string {
  const v = stringOption(args, name);
  if (v === undefined || v === '') throw new UsageError(`option --${name} is required`);
  return v;
}

export function flag(args: ParsedArgs, name: string): boolean {
  return args.options.get(name) === true;
}

/** An integer option in [min, max], or `fallback` when absent. */
export function intOption(args: ParsedArgs, name: string, min: number, max: number, fallback?: number): number | undefined {
  const v = stringOption(args, name);
  if (v === undefined) return fallback;
  return parseIntIn(v, `--${name}`, min, max);
}

export function numberOption(args: ParsedArgs, name: string, min: number, max: number, fallback?: number): number | undefined {
  const v = stringOption(args, name);
  if (v === undefined) return fallback;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < min || n > max) {
    throw new UsageError(`--${name} must be a number in [${min}, ${max}], got "${v}"`);
  }
  return n;
}

export function parseIntIn(text: string, what: string, min: number, max: number): number {
  if (!/^-?\d+$/.test(text.trim())) throw new UsageError(`${what} must be an integer, got "${text}"`);
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`${what} must be an integer in [${min}, ${max}], got ${text}`);
  }
  return n;
}

/** "1,2,3" → [1, 2, 3]; every element an integer in [min, max]; at least one. */
export function parseIntList(text: string, what: string, min: number, max: number): number[] {
  const parts = text.split(',').map((s) => s.trim());
  if (parts.length === 0 || parts.some((p) => p === '')) throw new UsageError(`${what} must be a comma-separated list of integers`);
  return parts.map((p, i) => parseIntIn(p, `${what}[${i}]`, min, max));
}
