// Access to the reference fixtures (test/fixtures, computed by transformers 5.17) and the
// comparison rules of test/fixtures/README.md.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadAddon } from '../../native/index.js';
import { readSafetensors } from '../../shared/safetensors.js';

export const FIXTURES_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');
export const MODEL_FIXTURES = ['qwen35-tiny', 'qwen35-tiny-bf16', 'qwen35-tiny-tied', 'qwen3-tiny'] as const;
export type ModelFixture = (typeof MODEL_FIXTURES)[number];

export interface Reference {
  dir: string;
  vocab: number;
  inputIds: number[];
  prefillLogits: Float32Array;
  decodeTokens: number[];
  decodeLogits: Float32Array;
  split: number;
  states: Map<string, { shape: number[]; data: Float32Array }>;
}

export function loadReference(name: ModelFixture): Reference {
  const dir = join(FIXTURES_DIR, name);
  const f = readSafetensors(join(dir, 'reference.safetensors'));
  const vocab = (f.info('prefill_logits').shape[1] as number);
  const states = new Map<string, { shape: number[]; data: Float32Array }>();
  for (const t of f.tensors) {
    if (t.name.startsWith('state.')) states.set(t.name.slice('state.'.length), { shape: [...t.shape], data: f.getFloat32(t.name) });
  }
  return {
    dir,
    vocab,
    inputIds: Array.from(f.getInt32('input_ids')),
    prefillLogits: f.getFloat32('prefill_logits'),
    decodeTokens: Array.from(f.getInt32('decode_tokens')),
    decodeLogits: f.getFloat32('decode_logits'),
    split: Number(JSON.parse(f.metadata.split as string)),
    states,
  };
}

export interface Comparison {
  maxAbsDiff: number;
  /** Rows whose argmax differs although the reference's top-two gap is ≥ `tieGap`. */
  argmaxMismatches: number[];
}

/** Compares [rows, V] logits to the reference: max |Δ| and argmax agreement outside near-ties. */
export function compareLogits(got: Float32Array, ref: Float32Array, vocab: number, tieGap: number): Comparison {
  if (got.length !== ref.length) throw new Error(`length ${got.length} vs reference ${ref.length}`);
  let maxAbsDiff = 0;
  const argmaxMismatches: number[] = [];
  for (let r = 0; r < ref.length / vocab; r++) {
    let gBest = 0;
    let rBest = 0;
    let rTop = -Infinity;
    let rSecond = -Infinity;
    for (let j = 0; j < vocab; j++) {
      const g = got[r * vocab + j] as number;
      const x = ref[r * vocab + j] as number;
      const d = Math.abs(g - x);
      if (!(d <= maxAbsDiff)) maxAbsDiff = Number.isNaN(d) ? Infinity : d;
      if (g > (got[r * vocab + gBest] as number)) gBest = j;
      if (x > rTop) {
        rSecond = rTop;
        rTop = x;
        rBest = j;
      } else if (x > rSecond) rSecond = x;
    }
    if (gBest !== rBest && rTop - rSecond >= tieGap) argmaxMismatches.push(r);
  }
  return { maxAbsDiff, argmaxMismatches };
}

/** The tensors of a state file, as fp32 (tokens as numbers), read through the addon's table. */
export function readStateFile(path: string): Map<string, { shape: number[]; data: Float32Array | Int32Array }> {
  const info = loadAddon().inspectStateFile(path);
  const bytes = readFileSync(path);
  const out = new Map<string, { shape: number[]; data: Float32Array | Int32Array }>();
  for (const t of info.tensors) {
    const copy = bytes.buffer.slice(bytes.byteOffset + t.offset, bytes.byteOffset + t.offset + t.bytes);
    if (t.dtype === 'i32') out.set(t.name, { shape: t.shape, data: new Int32Array(copy) });
    else if (t.dtype === 'f32') out.set(t.name, { shape: t.shape, data: new Float32Array(copy) });
    else throw new Error(`state tensor ${t.name} has dtype ${t.dtype}; the CPU engine writes f32`);
  }
  return out;
}
