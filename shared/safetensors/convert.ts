// Element conversions between fp32 and the 16-bit float formats, on whole arrays.
// Rounding is round-to-nearest-even, as PyTorch does; NaN stays NaN, values beyond the
// target range become ±Infinity, values below the smallest f16 subnormal become ±0.
import { endianness } from 'node:os';

/** Throws unless the host is little-endian: every typed-array view here assumes it. */
export function assertLittleEndian(): void {
  if (endianness() !== 'LE') throw new Error('safetensors: a little-endian host is required');
}

let f16Table: Float32Array | undefined;

function f16BitsToNumber(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant === 0 ? sign * Infinity : NaN;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

/** All 65536 f16 values as fp32 (built on first use; exact, since f16 ⊂ f32). */
function f16ToF32Table(): Float32Array {
  if (f16Table === undefined) {
    const table = new Float32Array(65536);
    for (let h = 0; h < 65536; h++) table[h] = f16BitsToNumber(h);
    f16Table = table;
  }
  return f16Table;
}

function u32View(a: Float32Array): Uint32Array {
  return new Uint32Array(a.buffer, a.byteOffset, a.length);
}

/** dst[i] = bf16 src[i] as fp32 (exact). dst.length must be >= src.length. */
export function bf16ToF32(src: Uint16Array, dst: Float32Array): void {
  const out = u32View(dst);
  for (let i = 0; i < src.length; i++) out[i] = (src[i] as number) << 16;
}

/** dst[i] = f16 src[i] as fp32 (exact). dst.length must be >= src.length. */
export function f16ToF32(src: Uint16Array, dst: Float32Array): void {
  const table = f16ToF32Table();
  for (let i = 0; i < src.length; i++) dst[i] = table[src[i] as number] as number;
}

/** bf16 bits of one fp32 value given by its bits, rounded to nearest even. */
export function f32BitsToBf16Bits(bits: number): number {
  if ((bits & 0x7f800000) === 0x7f800000 && (bits & 0x7fffff) !== 0) return ((bits >>> 16) | 0x40) & 0xffff;
  return ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16) & 0xffff;
}

/** f16 bits of one fp32 value given by its bits, rounded to nearest even. */
export function f32BitsToF16Bits(bits: number): number {
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  let mant = bits & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant !== 0 ? 0x200 | (mant >>> 13) : 0);
  const e = exp - 112; // rebias 127 -> 15
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let half = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    if (rem > halfway || (rem === halfway && (half & 1) !== 0)) half++;
    return sign | half;
  }
  let half = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (half & 1) !== 0)) half++; // a carry into the exponent is correct
  return sign | half;
}

/** dst[i] = bf16 bits of src[i]. dst.length must be >= src.length. */
export function f32ToBf16(src: Float32Array, dst: Uint16Array): void {
  const bits = u32View(src);
  for (let i = 0; i < bits.length; i++) {
    const b = bits[i] as number;
    // Fast path for non-NaN values; NaN needs its quiet bit kept.
    dst[i] = (b & 0x7f800000) === 0x7f800000 ? f32BitsToBf16Bits(b) : (b + 0x7fff + ((b >>> 16) & 1)) >>> 16;
  }
}

/** dst[i] = f16 bits of src[i]. dst.length must be >= src.length. */
export function f32ToF16(src: Float32Array, dst: Uint16Array): void {
  const bits = u32View(src);
  for (let i = 0; i < bits.length; i++) dst[i] = f32BitsToF16Bits(bits[i] as number);
}
