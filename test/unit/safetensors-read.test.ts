import { describe, expect, it } from 'vitest';
import { readSafetensors, SafetensorsError, f32ToBf16, bf16ToF32 } from '../../shared/safetensors.js';

const REF = 'test/fixtures/qwen35-tiny/reference.safetensors';
const F32_MODEL = 'test/fixtures/qwen35-tiny/model.safetensors';
const BF16_MODEL = 'test/fixtures/qwen35-tiny-bf16/model.safetensors';

describe('readSafetensors on the fixtures', () => {
  it('reads the header of reference.safetensors: metadata, dtypes, shapes', () => {
    const f = readSafetensors(REF);
    expect(f.metadata.split).toBe('37');
    expect(f.metadata.transformers).toBe('"5.17.0"');
    expect(f.info('prefill_logits')).toMatchObject({ dtype: 'F32', shape: [100, 512], elements: 51200 });
    expect(f.info('input_ids')).toMatchObject({ dtype: 'I32', shape: [100], byteLength: 400 });
    expect(f.dataStart).toBe(8 + f.headerLength);
    expect(f.headerLength).toBe(1376);
    expect(f.has('decode_tokens')).toBe(true);
    expect(f.has('nope')).toBe(false);
    // Tensors are listed in data order, back to back.
    let end = 0;
    for (const t of f.tensors) {
      expect(t.dataOffsets[0]).toBe(end);
      end = t.dataOffsets[1];
    }
    expect(f.dataStart + end).toBe(f.fileSize);
  });

  it('reads F32 and I32 tensors with the values Python reads', () => {
    const f = readSafetensors(REF);
    const logits = f.getFloat32('prefill_logits');
    expect(logits).toBeInstanceOf(Float32Array);
    expect(logits.length).toBe(51200);
    // Values read independently with Python's struct module.
    expect(logits[0]).toBe(Math.fround(0.7858656048774719));
    expect(logits[1]).toBe(Math.fround(0.06718710064888));
    expect(logits[51199]).toBe(Math.fround(-0.10152197629213333));
    let sum = 0;
    for (const v of logits) sum += v;
    expect(sum).toBeCloseTo(-162.06011472237697, 6);
    const ids = f.getInt32('input_ids');
    expect(ids).toBeInstanceOf(Int32Array);
    expect(Array.from(ids.subarray(0, 10))).toEqual([338, 176, 74, 16, 230, 354, 244, 153, 236, 442]);
    expect(Array.from(ids.subarray(97))).toEqual([421, 141, 303]);
  });

  it('reads BF16 weights as the round-to-nearest-even images of the F32 weights', () => {
    const f32 = readSafetensors(F32_MODEL);
    const bf16 = readSafetensors(BF16_MODEL);
    expect(bf16.tensors.map((t) => t.name).sort()).toEqual(f32.tensors.map((t) => t.name).sort());
    for (const t of bf16.tensors) {
      expect(t.dtype).toBe('BF16');
      expect(t.shape).toEqual(f32.info(t.name).shape);
      const a = f32.getFloat32(t.name);
      const b = bf16.getFloat32(t.name);
      const bits = new Uint16Array(a.length);
      f32ToBf16(a, bits);
      const rounded = new Float32Array(a.length);
      bf16ToF32(bits, rounded);
      expect(b).toEqual(rounded);
      let worst = 0; // largest relative rounding error: bf16 keeps 8 significant bits
      for (let i = 0; i < a.length; i++) {
        const x = a[i] as number;
        if (x !== 0) worst = Math.max(worst, Math.abs((b[i] as number) - x) / Math.abs(x));
      }
      expect(worst).toBeLessThanOrEqual(2 ** -8);
    }
  });

  it('returns raw bytes', () => {
    const f = readSafetensors(REF);
    const raw = f.readBytes('input_ids');
    expect(raw.length).toBe(400);
    expect(new DataView(raw.buffer).getInt32(0, true)).toBe(338);
  });
});

describe('readSafetensors lookup errors', () => {
  it('names the file for a missing file', () => {
    expect(() => readSafetensors('test/fixtures/none.safetensors')).toThrow(
      expect.objectContaining({ kind: 'io', message: expect.stringContaining('test/fixtures/none.safetensors') }),
    );
  });

  it('names the tensor for an unknown tensor', () => {
    const f = readSafetensors(REF);
    expect(() => f.getFloat32('missing.weight')).toThrow(SafetensorsError);
    expect(() => f.getFloat32('missing.weight')).toThrow(/reference\.safetensors, tensor 'missing\.weight': no such tensor/);
  });

  it('refuses a float read of an int tensor and an int read of a float tensor', () => {
    const f = readSafetensors(REF);
    expect(() => f.getFloat32('input_ids')).toThrow(
      expect.objectContaining({ kind: 'unsupported-dtype', tensor: 'input_ids', file: REF }),
    );
    expect(() => f.getInt32('prefill_logits')).toThrow(
      expect.objectContaining({ kind: 'unsupported-dtype', tensor: 'prefill_logits' }),
    );
  });
});
