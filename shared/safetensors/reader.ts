// Lazy safetensors reader: readSafetensors() reads only the 8-byte length and the header;
// each tensor is read from disk when asked for, in bounded chunks, so multi-GB files never
// have to fit in memory at once. Synchronous (fs.*Sync): call it from CLI code, tests or a
// worker thread, not from a latency-sensitive event loop.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { SafetensorsError } from './error.js';
import { assertLittleEndian, bf16ToF32, f16ToF32 } from './convert.js';
import { checkHeaderLength, parseHeader, type TensorInfo } from './header.js';

/** Bytes read from disk per call when converting a tensor. A multiple of 8. */
const CHUNK_BYTES = 64 * 1024 * 1024;

export interface SafetensorsFile {
  readonly path: string;
  readonly fileSize: number;
  /** Length of the JSON header in bytes (padding included). */
  readonly headerLength: number;
  /** Absolute offset of the data section (8 + headerLength). */
  readonly dataStart: number;
  readonly metadata: Readonly<Record<string, string>>;
  /** Every tensor, in the order its data appears in the file. */
  readonly tensors: readonly TensorInfo[];
  has(name: string): boolean;
  /** Throws SafetensorsError 'unknown-tensor' when absent. */
  info(name: string): TensorInfo;
  /** The tensor's raw little-endian bytes. */
  readBytes(name: string): Uint8Array;
  /** F32, BF16, F16 or F64 as fp32 (F64 rounded). Other dtypes: 'unsupported-dtype'. */
  getFloat32(name: string): Float32Array;
  /** I32 as is; I64 narrowed, with 'bad-value' for any value outside the int32 range. */
  getInt32(name: string): Int32Array;
}

function ioError(path: string, what: string, err: unknown, tensor?: string): SafetensorsError {
  return new SafetensorsError('io', path, `${what}: ${(err as Error).message}`, tensor, { cause: err });
}

function withFd<T>(path: string, fn: (fd: number) => T): T {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    throw ioError(path, 'cannot open', err);
  }
  try {
    return fn(fd);
  } finally {
    closeSync(fd);
  }
}

// Fills `dst` from `position`; throws 'truncated' if the file ends first.
function readFully(path: string, fd: number, dst: Uint8Array, position: number, tensor?: string): void {
  let done = 0;
  while (done < dst.length) {
    let n: number;
    try {
      n = readSync(fd, dst, done, Math.min(dst.length - done, 1 << 30), position + done);
    } catch (err) {
      throw ioError(path, 'read failed', err, tensor);
    }
    if (n === 0) {
      throw new SafetensorsError(
        'truncated',
        path,
        `file is truncated: expected ${dst.length} bytes at offset ${position}, got ${done}`,
        tensor,
      );
    }
    done += n;
  }
}

/**
 * Opens `path`, reads and validates the header (never the tensor data), and returns a
 * handle whose getters read tensors on demand. Throws SafetensorsError naming the file
 * (and tensor, when one is at fault) for a missing or unreadable file, a truncated file,
 * a bad header length, bad JSON, offsets out of bounds or a shape/size mismatch.
 */
export function readSafetensors(path: string): SafetensorsFile {
  assertLittleEndian();
  const { fileSize, headerLength, header } = withFd(path, (fd) => {
    const size = fstatSync(fd).size;
    if (size < 8) {
      throw new SafetensorsError(
        'truncated',
        path,
        `file is truncated: ${size} bytes, shorter than the 8-byte header length`,
      );
    }
    const lenBytes = new Uint8Array(8);
    readFully(path, fd, lenBytes, 0);
    const n = checkHeaderLength(path, new DataView(lenBytes.buffer).getBigUint64(0, true), size);
    const json = new Uint8Array(n);
    readFully(path, fd, json, 8);
    const text = Buffer.from(json.buffer, json.byteOffset, json.length).toString('utf8');
    return { fileSize: size, headerLength: n, header: parseHeader(path, text, n, size - 8 - n) };
  });
  return new LazySafetensorsFile(path, fileSize, headerLength, header.metadata, header.tensors);
}

class LazySafetensorsFile implements SafetensorsFile {
  readonly dataStart: number;
  private readonly byName: Map<string, TensorInfo>;

  constructor(
    readonly path: string,
    readonly fileSize: number,
    readonly headerLength: number,
    readonly metadata: Readonly<Record<string, string>>,
    readonly tensors: readonly TensorInfo[],
  ) {
    this.dataStart = 8 + headerLength;
    this.byName = new Map(tensors.map((t) => [t.name, t]));
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  info(name: string): TensorInfo {
    const t = this.byName.get(name);
    if (t === undefined) throw new SafetensorsError('unknown-tensor', this.path, 'no such tensor in the file', name);
    return t;
  }

  readBytes(name: string): Uint8Array {
    const t = this.info(name);
    const out = new Uint8Array(t.byteLength);
    this.readInto(t, out, 0);
    return out;
  }

  getFloat32(name: string): Float32Array {
    const t = this.info(name);
    const out = new Float32Array(t.elements);
    switch (t.dtype) {
      case 'F32':
        this.readInto(t, new Uint8Array(out.buffer), 0);
        return out;
      case 'BF16':
        this.convertChunks(t, 2, (bytes, first, count) => bf16ToF32(new Uint16Array(bytes.buffer, 0, count), out.subarray(first)));
        return out;
      case 'F16':
        this.convertChunks(t, 2, (bytes, first, count) => f16ToF32(new Uint16Array(bytes.buffer, 0, count), out.subarray(first)));
        return out;
      case 'F64':
        this.convertChunks(t, 8, (bytes, first, count) => out.set(new Float64Array(bytes.buffer, 0, count), first));
        return out;
      default:
        throw new SafetensorsError(
          'unsupported-dtype',
          this.path,
          `dtype ${t.dtype} cannot be read as float32 (F32, BF16, F16 and F64 can)`,
          name,
        );
    }
  }

  getInt32(name: string): Int32Array {
    const t = this.info(name);
    const out = new Int32Array(t.elements);
    if (t.dtype === 'I32') {
      this.readInto(t, new Uint8Array(out.buffer), 0);
      return out;
    }
    if (t.dtype === 'I64') {
      this.convertChunks(t, 8, (bytes, first, count) => {
        const src = new BigInt64Array(bytes.buffer, 0, count);
        for (let i = 0; i < count; i++) {
          const v = src[i] as bigint;
          if (v < -2147483648n || v > 2147483647n) {
            throw new SafetensorsError('bad-value', this.path, `element ${first + i} = ${v} does not fit in int32`, name);
          }
          out[first + i] = Number(v);
        }
      });
      return out;
    }
    throw new SafetensorsError(
      'unsupported-dtype',
      this.path,
      `dtype ${t.dtype} cannot be read as int32 (I32 and I64 can)`,
      name,
    );
  }

  // Reads the tensor's bytes into dst starting at dst[dstOffset].
  private readInto(t: TensorInfo, dst: Uint8Array, dstOffset: number): void {
    withFd(this.path, (fd) => {
      this.checkUnchanged(fd, t.name);
      readFully(this.path, fd, dst.subarray(dstOffset, dstOffset + t.byteLength), t.fileOffset, t.name);
    });
  }

  // Streams the tensor through a scratch buffer; `convert(bytes, firstElement, count)`
  // sees chunks whose buffer starts at offset 0 (so any typed view is aligned).
  private convertChunks(
    t: TensorInfo,
    elementBytes: number,
    convert: (bytes: Uint8Array, firstElement: number, count: number) => void,
  ): void {
    const scratch = new Uint8Array(Math.min(CHUNK_BYTES, t.byteLength));
    withFd(this.path, (fd) => {
      this.checkUnchanged(fd, t.name);
      for (let done = 0; done < t.byteLength; done += scratch.length) {
        const n = Math.min(scratch.length, t.byteLength - done);
        const chunk = scratch.subarray(0, n);
        readFully(this.path, fd, chunk, t.fileOffset + done, t.name);
        convert(chunk, done / elementBytes, n / elementBytes);
      }
    });
  }

  private checkUnchanged(fd: number, tensor: string): void {
    const size = fstatSync(fd).size;
    if (size !== this.fileSize) {
      throw new SafetensorsError(
        'io',
        this.path,
        `file changed size since its header was read (${this.fileSize} -> ${size} bytes)`,
        tensor,
      );
    }
  }
}
