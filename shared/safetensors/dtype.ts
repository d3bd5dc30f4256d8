// The dtypes the safetensors format defines, with their element sizes in bytes.
// Sub-byte and 8-bit float formats are recognised in headers (so such files can be
// inspected) but cannot be converted.
export const DTYPE_BYTES = {
  BOOL: 1,
  U8: 1,
  I8: 1,
  F8_E5M2: 1,
  F8_E4M3: 1,
  I16: 2,
  U16: 2,
  F16: 2,
  BF16: 2,
  I32: 4,
  U32: 4,
  F32: 4,
  I64: 8,
  U64: 8,
  F64: 8,
} as const;

export type SafetensorsDType = keyof typeof DTYPE_BYTES;

/** The dtypes SafetensorsWriter can write. */
export type WritableDType = 'F32' | 'BF16' | 'F16' | 'I32';

export function isSafetensorsDType(value: unknown): value is SafetensorsDType {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(DTYPE_BYTES, value);
}

export function isWritableDType(value: unknown): value is WritableDType {
  return value === 'F32' || value === 'BF16' || value === 'F16' || value === 'I32';
}

export function dtypeBytes(dtype: SafetensorsDType): number {
  return DTYPE_BYTES[dtype];
}

/** Product of the dimensions; 1 for a scalar (shape []). */
export function elementCount(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}
