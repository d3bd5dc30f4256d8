// How `tandem make-model` fills each tensor, by name: the initial values HF gives the
// parameters that have a fixed initialisation, small uniform noise everywhere else.
import { Xorshift128, streamKey } from './prng.js';
import { f32BitsToBf16Bits, f32ToBf16 } from './safetensors.js';

export type Family = 'qwen3_5' | 'qwen3';

export type WeightInit =
  | { kind: 'uniform'; std: number } // uniform on [-std·√3, std·√3], so its std is `std`
  | { kind: 'constant'; value: number }
  | { kind: 'log-uniform'; lo: number; hi: number }; // ln(u), u uniform on [lo, hi]

const MATRIX = { kind: 'uniform', std: 0.02 } as const;

/**
 * The rule for tensor `name`. Qwen3.5's zero-centred RMSNorm weights (input/post/final,
 * q_norm, k_norm) are 0 since it scales by (1 + w); its gated norm `linear_attn.norm` is 1;
 * Qwen3's plain RMSNorm weights are 1; A_log = ln(uniform[1, 16]); dt_bias = 1; the
 * depthwise conv is uniform with std 0.2; matrices and embeddings are uniform with std 0.02.
 */
export function weightInit(name: string, family: Family): WeightInit {
  if (name.endsWith('linear_attn.norm.weight')) return { kind: 'constant', value: 1 };
  if (
    name.endsWith('layernorm.weight') ||
    name.endsWith('q_norm.weight') ||
    name.endsWith('k_norm.weight') ||
    name.endsWith('.norm.weight')
  ) {
    return { kind: 'constant', value: family === 'qwen3_5' ? 0 : 1 };
  }
  if (name.endsWith('linear_attn.A_log')) return { kind: 'log-uniform', lo: 1, hi: 16 };
  if (name.endsWith('linear_attn.dt_bias')) return { kind: 'constant', value: 1 };
  if (name.endsWith('conv1d.weight')) return { kind: 'uniform', std: 0.2 };
  return MATRIX;
}

interface Tables {
  f32: Float32Array;
  bf16: Uint16Array;
}

const tableCache = new Map<string, Tables>();

// The 65536 levels a random rule draws from: level r is the centre of the r-th of 65536
// equal slices of [lo, hi] (for log-uniform, ln of it), rounded to fp32; bf16[r] is that
// fp32 value rounded to bf16 (nearest even).
function tablesFor(init: Exclude<WeightInit, { kind: 'constant' }>): Tables {
  const key = JSON.stringify(init);
  let tables = tableCache.get(key);
  if (tables === undefined) {
    const [lo, hi] = init.kind === 'uniform' ? [-init.std * Math.sqrt(3), init.std * Math.sqrt(3)] : [init.lo, init.hi];
    const f32 = new Float32Array(65536);
    for (let r = 0; r < 65536; r++) {
      const u = lo + ((r + 0.5) * (hi - lo)) / 65536;
      f32[r] = init.kind === 'log-uniform' ? Math.log(u) : u;
    }
    const bf16 = new Uint16Array(65536);
    f32ToBf16(f32, bf16);
    tables = { f32, bf16 };
    tableCache.set(key, tables);
  }
  return tables;
}

/**
 * Produces a tensor's values chunk by chunk. Random rules draw each value from 65536
 * equally spaced levels with a 16-bit draw of a stream keyed by (seed, name), so the
 * values depend only on the seed, the name, the rule and the position in the tensor (not
 * on chunk sizes), and the bf16 values are exactly the fp32 values rounded to bf16.
 */
export class WeightStream {
  private readonly rng: Xorshift128;

  constructor(
    seed: number,
    readonly name: string,
    readonly init: WeightInit,
  ) {
    this.rng = new Xorshift128(streamKey(seed, name));
  }

  /** Fills `out` with the next out.length values. */
  fillF32(out: Float32Array): void {
    if (this.init.kind === 'constant') out.fill(this.init.value);
    else this.rng.fillFromTableF32(out, tablesFor(this.init).f32);
  }

  /** Fills `out` with the bf16 bits of the next out.length values. */
  fillBf16(out: Uint16Array): void {
    if (this.init.kind === 'constant') out.fill(f32BitsToBf16Bits(new Uint32Array(Float32Array.of(this.init.value).buffer)[0] as number));
    else this.rng.fillFromTableU16(out, tablesFor(this.init).bf16);
  }
}
