// Fast reproducible pseudo-random numbers for synthetic weights (not for cryptography or
// sampling): Marsaglia's xorshift128 (period 2^128 - 1) seeded through splitmix32.

/** splitmix32 finaliser: a bijective 32-bit mix. Returns an unsigned 32-bit integer. */
export function mix32(x: number): number {
  let t = (x + 0x9e3779b9) | 0;
  t = Math.imul(t ^ (t >>> 16), 0x21f0aaad);
  t = Math.imul(t ^ (t >>> 15), 0x735a2d97);
  return (t ^ (t >>> 15)) >>> 0;
}

/** 32-bit FNV-1a of a string's UTF-16 code units. */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * A 32-bit stream key from a user seed (any integer 0 .. 2^53-1) and a stream name, so
 * that each tensor's values depend only on the seed and its own name.
 */
export function streamKey(seed: number, name: string): number {
  if (!Number.isSafeInteger(seed) || seed < 0) throw new RangeError(`seed must be an integer in [0, 2^53), got ${seed}`);
  const lo = seed >>> 0;
  const hi = Math.floor(seed / 2 ** 32) >>> 0;
  return mix32(mix32(lo ^ mix32(hi)) ^ hashString(name));
}

export class Xorshift128 {
  private x: number;
  private y: number;
  private z: number;
  private w: number;
  private spare = -1; // an unused low half of the last draw, or -1

  constructor(key: number) {
    let s = key >>> 0;
    const next = (): number => (s = mix32(s)) | 0;
    this.x = next();
    this.y = next();
    this.z = next();
    this.w = next();
    if ((this.x | this.y | this.z | this.w) === 0) this.w = 1; // the all-zero state is a fixed point
  }

  /** Next unsigned 32-bit integer. (State words are kept as int32 for speed.) */
  nextUint32(): number {
    const t = this.x ^ (this.x << 11);
    this.x = this.y;
    this.y = this.z;
    this.z = this.w;
    this.w = this.w ^ (this.w >>> 19) ^ t ^ (t >>> 8);
    return this.w >>> 0;
  }

  /**
   * Fills `out` with `table[r]` for successive 16-bit draws r (each 32-bit output gives two:
   * high half first). A half left over from an odd-length fill is used by the next fill,
   * so the sequence does not depend on how it is split into calls. table.length is 65536.
   */
  fillFromTableF32(out: Float32Array, table: Float32Array): void {
    this.fillFromTable(out, table);
  }

  /** As fillFromTableF32, for 16-bit outputs (same draws, same order). */
  fillFromTableU16(out: Uint16Array, table: Uint16Array): void {
    this.fillFromTable(out, table);
  }

  private fillFromTable<A extends Float32Array | Uint16Array>(out: A, table: A): void {
    let i = 0;
    if (this.spare >= 0 && out.length > 0) {
      out[i++] = table[this.spare] as number;
      this.spare = -1;
    }
    let { x, y, z, w } = this;
    for (; i + 1 < out.length; i += 2) {
      const t = x ^ (x << 11);
      x = y;
      y = z;
      z = w;
      w = w ^ (w >>> 19) ^ t ^ (t >>> 8);
      out[i] = table[w >>> 16] as number;
      out[i + 1] = table[w & 0xffff] as number;
    }
    this.x = x;
    this.y = y;
    this.z = z;
    this.w = w;
    if (i < out.length) {
      const r = this.nextUint32();
      out[i] = table[r >>> 16] as number;
      this.spare = r & 0xffff;
    }
  }
}
