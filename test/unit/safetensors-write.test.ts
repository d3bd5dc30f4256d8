import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  readSafetensors,
  SafetensorsError,
  SafetensorsWriter,
  writeSafetensors,
  f32ToF16,
  f32ToBf16,
  f16ToF32,
} from '../../shared/safetensors.js';

const dir = mkdtempSync(join(tmpdir(), 'tandem-st-write-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let counter = 0;
const target = (): string => join(dir, `out-${counter++}.safetensors`);

describe('writeSafetensors round trips', () => {
  it('F32, I32 and metadata exactly; the header is space-padded to 8 bytes', async () => {
    const p = target();
    const logits = Float32Array.from({ length: 6 * 7 }, (_, i) => Math.sin(i) * 1e3);
    const ids = Int32Array.from([0, -1, 2147483647, -2147483648, 248044]);
    await writeSafetensors(
      p,
      [
        { name: 'ids', dtype: 'I32', shape: [5], data: ids },
        { name: 'logits', dtype: 'F32', shape: [6, 7], data: logits },
        { name: 'scalar', dtype: 'F32', shape: [], data: Float32Array.of(2.5) },
        { name: 'empty', dtype: 'F32', shape: [0, 3], data: new Float32Array(0) },
      ],
      { split: '37', note: 'héllo "quoted"' },
    );
    const raw = readFileSync(p);
    const n = Number(raw.readBigUInt64LE(0));
    expect(n % 8).toBe(0);
    const json = raw.subarray(8, 8 + n).toString('utf8');
    expect(json).toMatch(/^\{.*\} *$/s);
    expect(JSON.parse(json).__metadata__).toEqual({ split: '37', note: 'héllo "quoted"' });

    const f = readSafetensors(p);
    expect(f.metadata).toEqual({ split: '37', note: 'héllo "quoted"' });
    expect(f.getFloat32('logits')).toEqual(logits);
    expect(f.getInt32('ids')).toEqual(ids);
    expect(f.info('scalar').shape).toEqual([]);
    expect(Array.from(f.getFloat32('scalar'))).toEqual([2.5]);
    expect(f.info('empty').byteLength).toBe(0);
    expect(f.getFloat32('empty').length).toBe(0);
    expect(f.fileSize).toBe(8 + n + 42 * 4 + 5 * 4 + 4);
    expect(readdirSync(dir).filter((x) => x.includes('partial'))).toEqual([]);
  });

  it('BF16 and F16 with round-to-nearest-even (values checked against numpy and torch rules)', async () => {
    const p = target();
    const f16In = Float32Array.from([
      0, -0, 1, -2, 0.5, 0.1, 1 / 3, 65504, 65519, 65520, 70000, 1e-8, 5.960464477539063e-8, 2.98e-8, 3e-8, 6.1e-5,
      6.097555160522461e-5, -1e30, Infinity, NaN, 2049, 2051, 1.00048828125, 1.000732421875,
    ]);
    // numpy float32 -> float16 bit patterns
    const f16Bits = [
      0, 32768, 15360, 49152, 14336, 11878, 13653, 31743, 31743, 31744, 31744, 0, 1, 0, 1, 1023, 1023, 64512, 31744, 32256,
      26624, 26626, 15360, 15361,
    ];
    const bf16In = Float32Array.from([1.00390625, 1.01171875, 0.1, -3.14159, 1e-40, 3.4e38, 1 / 3]);
    const bf16Bits = [16256, 16258, 15821, 49225, 1, 32640, 16043];
    await writeSafetensors(p, [
      { name: 'h', dtype: 'F16', shape: [f16In.length], data: f16In },
      { name: 'b', dtype: 'BF16', shape: [bf16In.length], data: bf16In },
    ]);
    const f = readSafetensors(p);
    expect(Array.from(new Uint16Array(f.readBytes('h').buffer))).toEqual(f16Bits);
    expect(Array.from(new Uint16Array(f.readBytes('b').buffer))).toEqual(bf16Bits);
    const h = Array.from(f.getFloat32('h'));
    expect(h.slice(0, 7)).toEqual([0, -0, 1, -2, 0.5, 0.0999755859375, 0.333251953125]);
    expect(h.slice(7, 11)).toEqual([65504, 65504, Infinity, Infinity]);
    expect(h[12]).toBe(5.960464477539063e-8);
    expect(h[16]).toBe(6.097555160522461e-5);
    expect(h[17]).toBe(-Infinity);
    expect(h[19]).toBeNaN();
    expect(h.slice(20)).toEqual([2048, 2052, 1, 1.0009765625]);
    const b = f.getFloat32('b');
    expect(b[0]).toBe(1);
    expect(b[5]).toBe(Infinity);
  });

  it('keeps every tensor aligned to its element size by ordering wider dtypes first', async () => {
    const p = target();
    await writeSafetensors(p, [
      { name: 'odd_bf16', dtype: 'BF16', shape: [3], data: Float32Array.of(1, 2, 3) },
      { name: 'f32', dtype: 'F32', shape: [1], data: Float32Array.of(4) },
      { name: 'odd_f16', dtype: 'F16', shape: [1], data: Float32Array.of(5) },
      { name: 'i32', dtype: 'I32', shape: [1], data: Int32Array.of(6) },
    ]);
    const f = readSafetensors(p);
    expect(f.tensors.map((t) => t.name)).toEqual(['f32', 'i32', 'odd_bf16', 'odd_f16']);
    for (const t of f.tensors) expect(t.dataOffsets[0] % (t.dtype === 'F32' || t.dtype === 'I32' ? 4 : 2)).toBe(0);
    expect(Array.from(f.getFloat32('odd_bf16'))).toEqual([1, 2, 3]);
    expect(Array.from(f.getFloat32('odd_f16'))).toEqual([5]);
  });

  it('rewrites a BF16 fixture byte for byte through the streaming writer in odd-sized chunks', async () => {
    const src = readSafetensors('test/fixtures/qwen35-tiny-bf16/model.safetensors');
    const p = target();
    const w = await SafetensorsWriter.create(
      p,
      src.tensors.map((t) => ({ name: t.name, dtype: 'BF16' as const, shape: t.shape })),
      src.metadata,
    );
    for (const t of src.tensors) {
      const bytes = src.readBytes(t.name);
      for (let i = 0; i < bytes.length; i += 4099) await w.write(t.name, bytes.subarray(i, Math.min(bytes.length, i + 4099)));
    }
    expect(w.current).toBeUndefined();
    await w.close();
    const out = readSafetensors(p);
    expect(out.metadata).toEqual({ format: 'pt' });
    for (const t of src.tensors) {
      expect(out.info(t.name).shape).toEqual(t.shape);
      expect(Buffer.from(out.readBytes(t.name)).equals(Buffer.from(src.readBytes(t.name)))).toBe(true);
    }
    expect(out.fileSize).toBe(w.fileBytes);
  });

  it('accepts several writes in flight at once', async () => {
    const p = target();
    const w = await SafetensorsWriter.create(p, [
      { name: 'a', dtype: 'F32', shape: [4] },
      { name: 'b', dtype: 'I32', shape: [2] },
    ]);
    await Promise.all([
      w.write('a', Float32Array.of(1, 2)),
      w.write('a', Float32Array.of(3, 4)),
      w.write('b', Int32Array.of(7, 8)),
    ]);
    await w.close();
    const f = readSafetensors(p);
    expect(Array.from(f.getFloat32('a'))).toEqual([1, 2, 3, 4]);
    expect(Array.from(f.getInt32('b'))).toEqual([7, 8]);
  });
});

describe('SafetensorsWriter refusals', () => {
  const specs = [
    { name: 'a', dtype: 'F32' as const, shape: [2] },
    { name: 'b', dtype: 'BF16' as const, shape: [4] },
  ];

  async function expectRejects(promise: Promise<unknown>, kind: string, text: RegExp): Promise<void> {
    const err = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SafetensorsError);
    expect((err as SafetensorsError).kind).toBe(kind);
    expect((err as SafetensorsError).message).toMatch(text);
  }

  it('bytes for the wrong tensor', async () => {
    const p = target();
    const w = await SafetensorsWriter.create(p, specs);
    await w.write('a', Float32Array.of(1));
    await expectRejects(w.write('b', new Uint16Array(4)), 'write-order', /in order: 'a' still needs 4 of 8 bytes/);
    await expectRejects(w.write('zzz', new Uint8Array(1)), 'unknown-tensor', /'zzz': not in the tensor list/);
    await w.write('a', Float32Array.of(2));
    await expectRejects(w.write('a', new Uint8Array(0)), 'write-order', /already complete/);
    await w.abort();
    expect(existsSync(p)).toBe(false);
  });

  it('more bytes than the tensor has left', async () => {
    const w = await SafetensorsWriter.create(target(), specs);
    await expectRejects(w.write('a', new Float32Array(3)), 'write-order', /tensor 'a': chunk of 12 bytes exceeds the 8 bytes/);
    await w.abort();
  });

  it('close with a tensor short of bytes removes the partial file and creates nothing', async () => {
    const p = target();
    const w = await SafetensorsWriter.create(p, specs);
    await w.write('a', Float32Array.of(1, 2));
    await w.write('b', new Uint16Array(3));
    expect(w.remainingBytes).toBe(2);
    await expectRejects(w.close(), 'write-order', /tensor 'b': incomplete: got 6 of 8 bytes/);
    expect(existsSync(p)).toBe(false);
    expect(readdirSync(dir).filter((x) => x.includes('partial'))).toEqual([]);
    await expectRejects(w.write('b', new Uint16Array(1)), 'write-order', /writer is already aborted/);
  });

  it('close with tensors never written', async () => {
    const w = await SafetensorsWriter.create(target(), specs);
    await expectRejects(w.close(), 'write-order', /tensor 'a': incomplete: got 0 of 8 bytes \(and 1 more tensors unwritten\)/);
  });

  it('invalid tensor lists and metadata', async () => {
    const bad = async (s: any[], meta: any, text: RegExp): Promise<void> =>
      expectRejects(SafetensorsWriter.create(target(), s, meta), 'bad-spec', text);
    await bad([{ name: 'x', dtype: 'F32', shape: [1] }, { name: 'x', dtype: 'F32', shape: [1] }], undefined, /appears twice/);
    await bad([{ name: '', dtype: 'F32', shape: [1] }], undefined, /non-empty/);
    await bad([{ name: '__metadata__', dtype: 'F32', shape: [1] }], undefined, /reserved/);
    await bad([{ name: 'x', dtype: 'F64', shape: [1] }], undefined, /dtype "F64" is not one of/);
    await bad([{ name: 'x', dtype: 'F32', shape: [-1] }], undefined, /shape \[-1\]/);
    await bad(
      [{ name: 'x', dtype: 'BF16', shape: [3] }, { name: 'y', dtype: 'F32', shape: [1] }],
      undefined,
      /tensor 'y': would start at data offset 6/,
    );
    await bad([{ name: 'x', dtype: 'F32', shape: [1] }], { n: 1 }, /metadata value for 'n' is not a string/);
  });

  it('writeSafetensors: data of the wrong type or length', async () => {
    await expectRejects(
      writeSafetensors(target(), [{ name: 'x', dtype: 'I32', shape: [1], data: new Float32Array(1) }]),
      'bad-spec',
      /tensor 'x': dtype I32 needs an Int32Array/,
    );
    await expectRejects(
      writeSafetensors(target(), [{ name: 'x', dtype: 'F32', shape: [2, 2], data: new Float32Array(3) }]),
      'bad-spec',
      /data has 3 elements but shape \[2, 2\] needs 4/,
    );
  });

  it('an unwritable target directory', async () => {
    await expectRejects(SafetensorsWriter.create(join(dir, 'no/such/dir/x.safetensors'), specs), 'io', /cannot create/);
  });
});

describe('conversion helpers', () => {
  const asF32 = (bits: number): number => new Float32Array(Uint32Array.of(bits >>> 0).buffer)[0] as number;

  it('f16 -> f32 -> f16 is the identity on every non-NaN f16 value', () => {
    const all = Uint16Array.from({ length: 65536 }, (_, i) => i);
    const wide = new Float32Array(65536);
    f16ToF32(all, wide);
    const back = new Uint16Array(65536);
    f32ToF16(wide, back);
    for (let h = 0; h < 65536; h++) {
      if (Number.isNaN(wide[h])) expect(Number.isNaN(wide[h])).toBe((h & 0x7c00) === 0x7c00 && (h & 0x3ff) !== 0);
      else if (back[h] !== h) expect.fail(`f16 ${h} came back as ${back[h]}`);
    }
  });

  it('f16 and bf16 round exact midpoints to the even neighbour and anything above them up', () => {
    const wide = new Float32Array(2);
    for (let h = 0; h < 0x7bff; h += 7) {
      f16ToF32(Uint16Array.of(h, h + 1), wide);
      const mid = ((wide[0] as number) + (wide[1] as number)) / 2; // exact in fp32
      const above = asF32(new Uint32Array(Float32Array.of(mid).buffer)[0]! + 1);
      const out = new Uint16Array(2);
      f32ToF16(Float32Array.of(mid, above), out);
      expect(out[0]).toBe(h % 2 === 0 ? h : h + 1);
      expect(out[1]).toBe(h + 1);
    }
    for (let b = 0; b < 0x7f7f; b += 13) {
      const mid = asF32((b << 16) | 0x8000);
      const out = new Uint16Array(2);
      f32ToBf16(Float32Array.of(mid, asF32((b << 16) | 0x8001)), out);
      expect(out[0]).toBe(b % 2 === 0 ? b : b + 1);
      expect(out[1]).toBe(b + 1);
    }
  });
});
