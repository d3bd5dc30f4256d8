// Streaming safetensors writer. The header is written first (its size follows from the
// tensor list alone); the caller then feeds each tensor's bytes, in list order, in chunks
// of any size, so multi-GB files never sit in memory. Data goes to a temporary file next
// to the target, renamed onto the target by close() only once every tensor has received
// exactly its byte count; an existing file at the target is replaced.
import { randomBytes } from 'node:crypto';
import { open, rm, rename, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { SafetensorsError } from './error.js';
import { assertLittleEndian } from './convert.js';
import { dtypeBytes, elementCount, isWritableDType, type WritableDType } from './dtype.js';
import { buildHeader, METADATA_KEY } from './header.js';

export interface TensorSpec {
  readonly name: string;
  readonly dtype: WritableDType;
  readonly shape: readonly number[];
}

/** Throws SafetensorsError 'bad-spec' for an invalid tensor list or metadata. */
export function validateSpecs(
  path: string,
  specs: readonly TensorSpec[],
  metadata: Readonly<Record<string, string>> | undefined,
): void {
  const seen = new Set<string>();
  let offset = 0;
  for (const s of specs) {
    const bad = (msg: string): SafetensorsError => new SafetensorsError('bad-spec', path, msg, s.name);
    if (typeof s.name !== 'string' || s.name.length === 0) throw bad('tensor name must be a non-empty string');
    if (s.name === METADATA_KEY) throw bad(`${METADATA_KEY} is reserved`);
    if (seen.has(s.name)) throw bad('tensor name appears twice');
    seen.add(s.name);
    if (!isWritableDType(s.dtype)) throw bad(`dtype ${JSON.stringify(s.dtype)} is not one of F32, BF16, F16, I32`);
    if (!Array.isArray(s.shape) || !s.shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
      throw bad(`shape ${JSON.stringify(s.shape)} is not a list of non-negative integers`);
    }
    const size = dtypeBytes(s.dtype);
    if (offset % size !== 0) {
      throw bad(
        `would start at data offset ${offset}, not a multiple of its ${size}-byte element size; ` +
          'order tensors by descending element size',
      );
    }
    offset += elementCount(s.shape) * size;
    if (!Number.isSafeInteger(offset)) throw bad('total data size is too large');
  }
  if (metadata !== undefined) {
    for (const [k, v] of Object.entries(metadata)) {
      if (typeof v !== 'string') throw new SafetensorsError('bad-spec', path, `metadata value for '${k}' is not a string`);
    }
  }
}

export class SafetensorsWriter {
  /** Total file size once complete. */
  readonly fileBytes: number;
  private index = 0; // the tensor now receiving bytes
  private filled = 0; // bytes it has received
  private position: number; // file offset of the next byte
  private state: 'open' | 'closed' | 'aborted' = 'open';
  private readonly pending = new Set<Promise<unknown>>();
  private failure: unknown; // the first failed write, rethrown by close()

  private constructor(
    readonly path: string,
    private readonly tempPath: string,
    private readonly handle: FileHandle,
    readonly specs: readonly TensorSpec[],
    private readonly sizes: readonly number[],
    headerBytes: number,
  ) {
    this.position = headerBytes;
    this.fileBytes = headerBytes + sizes.reduce((a, b) => a + b, 0);
    this.skipEmpty();
  }

  /**
   * Validates the specs, creates the temporary file and writes the header. Throws
   * SafetensorsError 'bad-spec' or 'io'.
   */
  static async create(
    path: string,
    specs: readonly TensorSpec[],
    metadata?: Readonly<Record<string, string>>,
  ): Promise<SafetensorsWriter> {
    assertLittleEndian();
    validateSpecs(path, specs, metadata);
    const { bytes, offsets } = buildHeader(specs, metadata);
    const tempPath = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.partial`);
    let handle: FileHandle;
    try {
      handle = await open(tempPath, 'wx', 0o644);
    } catch (err) {
      throw new SafetensorsError('io', path, `cannot create ${tempPath}: ${(err as Error).message}`, undefined, {
        cause: err,
      });
    }
    const writer = new SafetensorsWriter(path, tempPath, handle, specs, offsets.map(([b, e]) => e - b), bytes.length);
    try {
      await writeAll(handle, bytes, 0);
    } catch (err) {
      await writer.abort();
      throw new SafetensorsError('io', path, `cannot write the header: ${(err as Error).message}`, undefined, {
        cause: err,
      });
    }
    return writer;
  }

  /** The tensor that the next write() must name, or undefined once all are complete. */
  get current(): TensorSpec | undefined {
    return this.specs[this.index];
  }

  /** Bytes the current tensor still needs (0 once all are complete). */
  get remainingBytes(): number {
    const size = this.sizes[this.index];
    return size === undefined ? 0 : size - this.filled;
  }

  /**
   * Appends `chunk` to tensor `name`, which must be the current one. Rejects with
   * SafetensorsError 'write-order' for another tensor, more bytes than it has left or a
   * closed writer ('unknown-tensor' for a name not in the list), 'io' if the write fails
   * (close() then fails too). The chunk's memory must stay unchanged until the returned
   * promise settles; several writes may be in flight at once (each has its own offset).
   */
  write(name: string, chunk: ArrayBufferView): Promise<void> {
    if (this.state !== 'open') return Promise.reject(this.closedError());
    const current = this.specs[this.index];
    if (current === undefined || current.name !== name) return Promise.reject(this.orderError(name));
    const left = (this.sizes[this.index] as number) - this.filled;
    if (chunk.byteLength > left) {
      return Promise.reject(
        new SafetensorsError(
          'write-order',
          this.path,
          `chunk of ${chunk.byteLength} bytes exceeds the ${left} bytes the tensor still needs`,
          name,
        ),
      );
    }
    const bytes = new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const at = this.position;
    this.position += bytes.length;
    this.filled += bytes.length;
    if (this.filled === this.sizes[this.index]) {
      this.index++;
      this.filled = 0;
      this.skipEmpty();
    }
    const p = writeAll(this.handle, bytes, at).catch((err: unknown) => {
      const wrapped = new SafetensorsError('io', this.path, `write failed: ${(err as Error).message}`, name, { cause: err });
      this.failure ??= wrapped;
      throw wrapped;
    });
    this.pending.add(p);
    void p.then(
      () => this.pending.delete(p),
      () => this.pending.delete(p),
    );
    return p;
  }

  /**
   * Waits for outstanding writes, checks every tensor is complete and renames the
   * temporary file onto the target. On any failure the temporary file is removed and the
   * error (SafetensorsError 'write-order' or 'io') is thrown.
   */
  async close(): Promise<void> {
    if (this.state !== 'open') throw this.closedError();
    try {
      await Promise.allSettled(this.pending);
      if (this.failure !== undefined) throw this.failure;
      if (this.index < this.specs.length) {
        const spec = this.specs[this.index] as TensorSpec;
        throw new SafetensorsError(
          'write-order',
          this.path,
          `incomplete: got ${this.filled} of ${this.sizes[this.index]} bytes` +
            (this.specs.length - this.index > 1 ? ` (and ${this.specs.length - this.index - 1} more tensors unwritten)` : ''),
          spec.name,
        );
      }
      this.state = 'closed';
      await this.handle.close();
      await rename(this.tempPath, this.path).catch((err: unknown) => {
        throw new SafetensorsError('io', this.path, `cannot rename ${this.tempPath}: ${(err as Error).message}`, undefined, {
          cause: err,
        });
      });
    } catch (err) {
      await this.abort();
      throw err;
    }
  }

  /** Discards the file being written. Safe to call more than once and after a failure. */
  async abort(): Promise<void> {
    if (this.state === 'aborted') return;
    const wasOpen = this.state === 'open';
    this.state = 'aborted';
    await Promise.allSettled(this.pending);
    if (wasOpen) await this.handle.close().catch(() => undefined);
    await rm(this.tempPath, { force: true });
  }

  private skipEmpty(): void {
    while (this.index < this.sizes.length && this.sizes[this.index] === 0) this.index++;
  }

  private closedError(): SafetensorsError {
    return new SafetensorsError('write-order', this.path, `writer is already ${this.state}`);
  }

  private orderError(name: string): SafetensorsError {
    const current = this.specs[this.index];
    const target = this.specs.findIndex((s) => s.name === name);
    if (target < 0) return new SafetensorsError('unknown-tensor', this.path, 'not in the tensor list', name);
    if (current === undefined || target < this.index) {
      return new SafetensorsError('write-order', this.path, 'tensor is already complete', name);
    }
    return new SafetensorsError(
      'write-order',
      this.path,
      `tensors must be written in order: '${current.name}' still needs ` +
        `${(this.sizes[this.index] as number) - this.filled} of ${this.sizes[this.index]} bytes`,
      name,
    );
  }
}

async function writeAll(handle: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  let done = 0;
  while (done < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, done, Math.min(bytes.length - done, 1 << 30), position + done);
    done += bytesWritten;
  }
}
