// One-call writer for tensors already in memory, built on SafetensorsWriter.
import { SafetensorsError } from './error.js';
import { f32ToBf16, f32ToF16 } from './convert.js';
import { dtypeBytes, elementCount, type WritableDType } from './dtype.js';
import { SafetensorsWriter } from './writer.js';

export interface TensorData {
  readonly name: string;
  readonly dtype: WritableDType;
  readonly shape: readonly number[];
  /** Float32Array for F32, BF16 and F16 (converted with round-to-nearest-even); Int32Array for I32. */
  readonly data: Float32Array | Int32Array;
}

/** Elements encoded per write. */
const CHUNK_ELEMENTS = 1 << 20;

/**
 * Writes `tensors` to `path` (replacing any file there). The file stores them ordered by
 * descending element size, stable otherwise, so every tensor is aligned to its element
 * size. Throws SafetensorsError 'bad-spec' when a tensor's data has the wrong array type
 * or length, and whatever SafetensorsWriter throws.
 */
export async function writeSafetensors(
  path: string,
  tensors: readonly TensorData[],
  metadata?: Readonly<Record<string, string>>,
): Promise<void> {
  for (const t of tensors) {
    const wantInt = t.dtype === 'I32';
    if (wantInt ? !(t.data instanceof Int32Array) : !(t.data instanceof Float32Array)) {
      throw new SafetensorsError('bad-spec', path, `dtype ${t.dtype} needs ${wantInt ? 'an Int32Array' : 'a Float32Array'}`, t.name);
    }
    if (Array.isArray(t.shape) && t.data.length !== elementCount(t.shape)) {
      throw new SafetensorsError(
        'bad-spec',
        path,
        `data has ${t.data.length} elements but shape [${t.shape.join(', ')}] needs ${elementCount(t.shape)}`,
        t.name,
      );
    }
  }
  const ordered = tensors
    .map((t, i) => ({ t, i }))
    .sort((a, b) => dtypeBytes(b.t.dtype) - dtypeBytes(a.t.dtype) || a.i - b.i)
    .map(({ t }) => t);
  const writer = await SafetensorsWriter.create(
    path,
    ordered.map(({ name, dtype, shape }) => ({ name, dtype, shape })),
    metadata,
  );
  try {
    for (const t of ordered) {
      for (let start = 0; start < t.data.length; start += CHUNK_ELEMENTS) {
        const part = t.data.subarray(start, Math.min(t.data.length, start + CHUNK_ELEMENTS));
        await writer.write(t.name, encode(t.dtype, part));
      }
    }
    await writer.close();
  } catch (err) {
    await writer.abort();
    throw err;
  }
}

function encode(dtype: WritableDType, part: Float32Array | Int32Array): ArrayBufferView {
  if (dtype === 'F32' || dtype === 'I32') return part;
  const out = new Uint16Array(part.length);
  if (dtype === 'BF16') f32ToBf16(part as Float32Array, out);
  else f32ToF16(part as Float32Array, out);
  return out;
}
