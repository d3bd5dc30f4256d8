// Byte-level access to Tandem state files for the corruption tests: the header and table
// layout of native/include/tandem/state-file.h and a TS twin of the native checksum
// (native/src/hash.cpp), so a test can patch a field and re-seal the header checksum to
// reach the specific validation behind it.

export const HEADER_BYTES = 128;
export const ENTRY_BYTES = 128;
export const ALIGN = 16384;

/** Header field offsets. */
export const H = { magic: 0, version: 8, headerBytes: 12, fileBytes: 16, fingerprint: 24, nTokens: 32, nTensors: 40, reserved: 44, checksum: 48 } as const;
/** Table entry field offsets. */
export const E = { name: 0, dtype: 64, ndim: 68, shape: 72, offset: 104, bytes: 112, checksum: 120 } as const;

export const entryAt = (i: number): number => HEADER_BYTES + ENTRY_BYTES * i;

const MASK = (1n << 64n) - 1n;

function fnv1a64(bytes: Uint8Array, seed = 0xcbf29ce484222325n): bigint {
  let h = seed;
  for (const b of bytes) h = ((h ^ BigInt(b)) * 0x100000001b3n) & MASK;
  return h;
}

/** The native ChecksumStream over `bytes`: 8 lanes of (a += u32, b += a) over 32-byte blocks, zero-padded, then FNV-1a of the lanes and the length. */
export function checksum(bytes: Uint8Array): bigint {
  const padded = new Uint8Array(Math.ceil(bytes.length / 32) * 32);
  padded.set(bytes);
  const view = new DataView(padded.buffer);
  const a = new BigUint64Array(8);
  const b = new BigUint64Array(8);
  for (let off = 0; off < padded.length; off += 32) {
    for (let l = 0; l < 8; l++) {
      a[l] = (a[l] as bigint) + BigInt(view.getUint32(off + 4 * l, true));
      b[l] = (b[l] as bigint) + (a[l] as bigint);
    }
  }
  const buf = new DataView(new ArrayBuffer(8 * 17));
  for (let l = 0; l < 8; l++) {
    buf.setBigUint64(8 * l, a[l] as bigint, true);
    buf.setBigUint64(64 + 8 * l, b[l] as bigint, true);
  }
  buf.setBigUint64(128, BigInt(bytes.length), true);
  return fnv1a64(new Uint8Array(buf.buffer));
}

/** Recomputes the header checksum (header + table, checksum field as zero) in place. */
export function reseal(file: Buffer): Buffer {
  const headerBytes = file.readUInt32LE(H.headerBytes);
  const copy = Buffer.from(file.subarray(0, Math.min(headerBytes, file.length)));
  copy.fill(0, H.checksum, H.checksum + 8);
  file.writeBigUInt64LE(checksum(copy), H.checksum);
  return file;
}

/** Recomputes the checksum of table entry `i` from its data, in place (reseal afterwards). */
export function resealTensor(file: Buffer, i: number): Buffer {
  const e = entryAt(i);
  const offset = Number(file.readBigUInt64LE(e + E.offset));
  const bytes = Number(file.readBigUInt64LE(e + E.bytes));
  file.writeBigUInt64LE(checksum(file.subarray(offset, offset + bytes)), e + E.checksum);
  return file;
}

export function entryName(file: Buffer, i: number): string {
  const raw = file.subarray(entryAt(i) + E.name, entryAt(i) + E.name + 64);
  const end = raw.indexOf(0);
  return raw.subarray(0, end < 0 ? 64 : end).toString('latin1');
}

export function findEntry(file: Buffer, name: string): number {
  const n = file.readUInt32LE(H.nTensors);
  for (let i = 0; i < n; i++) if (entryName(file, i) === name) return i;
  throw new Error(`no tensor ${name} in the state file`);
}
