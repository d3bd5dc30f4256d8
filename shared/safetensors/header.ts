// Parsing, validation and construction of the safetensors header: an 8-byte little-endian
// length N, then N bytes of JSON mapping tensor names to {dtype, shape, data_offsets}
// (offsets relative to the data section that follows the header), plus an optional
// "__metadata__" object of string values.
import { SafetensorsError } from './error.js';
import { dtypeBytes, elementCount, isSafetensorsDType, type SafetensorsDType } from './dtype.js';

/** Largest header accepted, as in the reference implementation (100 MB). */
export const MAX_HEADER_BYTES = 100_000_000;
export const METADATA_KEY = '__metadata__';

export interface TensorInfo {
  readonly name: string;
  readonly dtype: SafetensorsDType;
  readonly shape: readonly number[];
  /** Number of elements: product of the shape. */
  readonly elements: number;
  readonly byteLength: number;
  /** Absolute offset of the tensor's first byte in the file. */
  readonly fileOffset: number;
  /** [begin, end) relative to the data section, as stored in the header. */
  readonly dataOffsets: readonly [number, number];
}

export interface ParsedHeader {
  /** Tensors in the order their data appears in the file. */
  readonly tensors: readonly TensorInfo[];
  readonly metadata: Readonly<Record<string, string>>;
}

function isNonNegativeSafeInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Validates the 8-byte header length against the file size. Returns it as a number.
 * Throws SafetensorsError 'bad-header-length' (zero or over MAX_HEADER_BYTES) or
 * 'truncated' (the file ends inside the header).
 */
export function checkHeaderLength(file: string, raw: bigint, fileSize: number): number {
  if (raw === 0n || raw > BigInt(MAX_HEADER_BYTES)) {
    throw new SafetensorsError(
      'bad-header-length',
      file,
      `bad header length ${raw} (must be between 1 and ${MAX_HEADER_BYTES} bytes); not a safetensors file?`,
    );
  }
  const n = Number(raw);
  if (8 + n > fileSize) {
    throw new SafetensorsError(
      'truncated',
      file,
      `file is truncated: the header needs ${8 + n} bytes but the file has only ${fileSize}`,
    );
  }
  return n;
}

/**
 * Parses and validates the header JSON. `dataBytes` is the size of the data section
 * (file size - 8 - header length). Throws SafetensorsError with kind 'bad-header',
 * 'size-mismatch', 'out-of-bounds' or 'truncated'.
 */
export function parseHeader(file: string, json: string, headerLength: number, dataBytes: number): ParsedHeader {
  let root: unknown;
  try {
    root = JSON.parse(json);
  } catch (err) {
    throw new SafetensorsError('bad-header', file, `header is not valid JSON: ${(err as Error).message}`, undefined, {
      cause: err,
    });
  }
  if (!isPlainObject(root)) throw new SafetensorsError('bad-header', file, 'header JSON is not an object');

  const metadata: Record<string, string> = {};
  const tensors: TensorInfo[] = [];
  const dataStart = 8 + headerLength;
  for (const [name, entry] of Object.entries(root)) {
    if (name === METADATA_KEY) {
      if (!isPlainObject(entry)) throw new SafetensorsError('bad-header', file, `${METADATA_KEY} is not an object`);
      for (const [k, v] of Object.entries(entry)) {
        if (typeof v !== 'string') {
          throw new SafetensorsError('bad-header', file, `${METADATA_KEY}.${k} is not a string`);
        }
        metadata[k] = v;
      }
      continue;
    }
    tensors.push(parseEntry(file, name, entry, dataStart));
  }
  checkLayout(file, tensors, dataBytes);
  return { tensors, metadata };
}

function parseEntry(file: string, name: string, entry: unknown, dataStart: number): TensorInfo {
  const bad = (msg: string): SafetensorsError => new SafetensorsError('bad-header', file, msg, name);
  if (!isPlainObject(entry)) throw bad('header entry is not an object');
  const { dtype, shape, data_offsets: offsets } = entry;
  if (!isSafetensorsDType(dtype)) throw bad(`unknown dtype ${JSON.stringify(dtype)}`);
  if (!Array.isArray(shape) || !shape.every(isNonNegativeSafeInt)) {
    throw bad(`shape ${JSON.stringify(shape)} is not a list of non-negative integers`);
  }
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(isNonNegativeSafeInt)) {
    throw bad(`data_offsets ${JSON.stringify(offsets)} is not a pair of non-negative integers`);
  }
  const [begin, end] = offsets as [number, number];
  if (end < begin) {
    throw new SafetensorsError('out-of-bounds', file, `data_offsets [${begin}, ${end}] end before they begin`, name);
  }
  const elements = elementCount(shape);
  const expected = elements * dtypeBytes(dtype);
  if (!Number.isSafeInteger(expected) || expected !== end - begin) {
    throw new SafetensorsError(
      'size-mismatch',
      file,
      `shape [${shape.join(', ')}] of ${dtype} needs ${expected} bytes but data_offsets [${begin}, ${end}] hold ${end - begin}`,
      name,
    );
  }
  return {
    name,
    dtype,
    shape: shape.slice(),
    elements,
    byteLength: end - begin,
    fileOffset: dataStart + begin,
    dataOffsets: [begin, end],
  };
}

// Sorts `tensors` by offset in place and checks that no two overlap and all lie inside the
// data section. Data that would end past the file is reported as truncation when the
// tensors are laid out back to back from offset 0 (a consistent header on a short file),
// and as out-of-bounds offsets otherwise.
function checkLayout(file: string, tensors: TensorInfo[], dataBytes: number): void {
  tensors.sort((a, b) => a.dataOffsets[0] - b.dataOffsets[0] || a.dataOffsets[1] - b.dataOffsets[1]);
  let contiguous = true;
  let prevEnd = 0;
  let prev: TensorInfo | undefined;
  for (const t of tensors) {
    const [begin, end] = t.dataOffsets;
    if (prev !== undefined && begin < prevEnd && t.byteLength > 0 && prev.byteLength > 0) {
      throw new SafetensorsError(
        'out-of-bounds',
        file,
        `data_offsets [${begin}, ${end}] overlap those of tensor '${prev.name}' [${prev.dataOffsets[0]}, ${prevEnd}]`,
        t.name,
      );
    }
    if (begin !== prevEnd) contiguous = false;
    if (end >= prevEnd) {
      prevEnd = end;
      prev = t;
    }
  }
  if (prevEnd <= dataBytes) return;
  if (contiguous) {
    const first = tensors.find((t) => t.dataOffsets[1] > dataBytes);
    throw new SafetensorsError(
      'truncated',
      file,
      `file is truncated: the header describes ${prevEnd} bytes of tensor data but only ${dataBytes} are present` +
        (first ? ` (tensor '${first.name}' is incomplete)` : ''),
    );
  }
  const outside = tensors.find((t) => t.dataOffsets[1] > dataBytes) as TensorInfo;
  throw new SafetensorsError(
    'out-of-bounds',
    file,
    `data_offsets [${outside.dataOffsets[0]}, ${outside.dataOffsets[1]}] lie outside the ${dataBytes}-byte data section`,
    outside.name,
  );
}

export interface HeaderEntrySpec {
  readonly name: string;
  readonly dtype: SafetensorsDType;
  readonly shape: readonly number[];
}

/**
 * Builds the header bytes (8-byte length + JSON padded with spaces to a multiple of 8)
 * for tensors stored back to back in the given order. Returns the bytes and the
 * [begin, end) data offsets of each tensor. The caller validates names and shapes.
 */
export function buildHeader(
  specs: readonly HeaderEntrySpec[],
  metadata: Readonly<Record<string, string>> | undefined,
): { bytes: Uint8Array; offsets: Array<[number, number]> } {
  const root: Record<string, unknown> = {};
  if (metadata !== undefined && Object.keys(metadata).length > 0) root[METADATA_KEY] = { ...metadata };
  const offsets: Array<[number, number]> = [];
  let pos = 0;
  for (const s of specs) {
    const end = pos + elementCount(s.shape) * dtypeBytes(s.dtype);
    offsets.push([pos, end]);
    root[s.name] = { dtype: s.dtype, shape: [...s.shape], data_offsets: [pos, end] };
    pos = end;
  }
  const json = Buffer.from(JSON.stringify(root), 'utf8');
  const padded = Math.ceil(json.length / 8) * 8;
  const bytes = new Uint8Array(8 + padded);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(padded), true);
  bytes.set(json, 8);
  bytes.fill(0x20, 8 + json.length);
  return { bytes, offsets };
}
