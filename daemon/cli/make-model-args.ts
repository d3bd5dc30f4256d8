// Command-line parsing for `tandem make-model`. Everything the command needs is checked
// here; MakeModelError carries a message meant for the user.
import { isPresetName, isWeightDType, PRESET_NAMES, WEIGHT_DTYPES, type PresetName, type WeightDType } from '../../shared/model-presets.js';

export class MakeModelError extends Error {
  override readonly name = 'MakeModelError';
}

export interface MakeModelOptions {
  preset: PresetName;
  dtype: WeightDType;
  out: string;
  seed: number;
  layers: number | undefined;
  vocabSize: number | undefined;
}

export const MAKE_MODEL_USAGE = `usage: tandem make-model --preset NAME --out DIR [--dtype bf16|f32] [--seed N]
                          [--layers N] [--vocab-size V]

Writes a Hugging Face model folder (config.json, model.safetensors) with random weights in
the real shapes of a preset. Nothing is downloaded; no tokenizer is written.

  --preset NAME     ${PRESET_NAMES.join(' | ')}
  --out DIR         a new or empty directory
  --dtype D         weight dtype: ${WEIGHT_DTYPES.join(' | ')} (default bf16)
  --seed N          integer in [0, 2^53) (default 0); the same seed gives the same weights
  --layers N        for quick tests only: replaces the layer count (the layer-type pattern
                    is kept); every other value stays the preset's
  --vocab-size V    for quick tests only: replaces the vocabulary size; token ids in the
                    config (eos_token_id, ...) are left unchanged`;

function integer(flag: string, text: string, min: number): number {
  if (!/^\d+$/.test(text)) throw new MakeModelError(`${flag} needs a non-negative integer, got '${text}'`);
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < min) throw new MakeModelError(`${flag} must be an integer >= ${min}, got '${text}'`);
  return n;
}

/**
 * Parses the arguments after `make-model`. Returns 'help' for --help/-h. Throws
 * MakeModelError for an unknown flag, a missing value, a missing --preset or --out, an
 * unknown preset or dtype, or a malformed number.
 */
export function parseMakeModelArgs(argv: readonly string[]): MakeModelOptions | 'help' {
  const values = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--help' || arg === '-h') return 'help';
    if (!arg.startsWith('--')) throw new MakeModelError(`unexpected argument '${arg}'`);
    const eq = arg.indexOf('=');
    const flag = eq < 0 ? arg : arg.slice(0, eq);
    if (!['--preset', '--out', '--dtype', '--seed', '--layers', '--vocab-size'].includes(flag)) {
      throw new MakeModelError(`unknown option '${flag}'`);
    }
    let value: string | undefined;
    if (eq >= 0) value = arg.slice(eq + 1);
    else {
      value = argv[i + 1];
      i++;
    }
    if (value === undefined || value === '' || (eq < 0 && value.startsWith('--'))) {
      throw new MakeModelError(`${flag} needs a value`);
    }
    if (values.has(flag)) throw new MakeModelError(`${flag} given more than once`);
    values.set(flag, value);
  }

  const preset = values.get('--preset');
  if (preset === undefined) throw new MakeModelError(`--preset is required (one of ${PRESET_NAMES.join(', ')})`);
  if (!isPresetName(preset)) throw new MakeModelError(`unknown preset '${preset}' (known: ${PRESET_NAMES.join(', ')})`);
  const out = values.get('--out');
  if (out === undefined) throw new MakeModelError('--out DIR is required');
  const dtype = values.get('--dtype') ?? 'bf16';
  if (!isWeightDType(dtype)) throw new MakeModelError(`unknown dtype '${dtype}' (known: ${WEIGHT_DTYPES.join(', ')})`);
  const seedText = values.get('--seed');
  const layersText = values.get('--layers');
  const vocabText = values.get('--vocab-size');
  return {
    preset,
    dtype,
    out,
    seed: seedText === undefined ? 0 : integer('--seed', seedText, 0),
    layers: layersText === undefined ? undefined : integer('--layers', layersText, 1),
    vocabSize: vocabText === undefined ? undefined : integer('--vocab-size', vocabText, 1),
  };
}
