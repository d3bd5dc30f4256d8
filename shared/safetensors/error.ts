// The one error type of the safetensors reader and writer. `file` is the path involved;
// `tensor` names the tensor when the failure is about one tensor.
export type SafetensorsErrorKind =
  | 'io' // the OS refused an open, read, write or rename
  | 'truncated' // the file ends before the header or a tensor's data
  | 'bad-header-length' // the 8-byte header length is zero or implausibly large
  | 'bad-header' // the header is not valid JSON or not the expected shape
  | 'out-of-bounds' // a tensor's data_offsets fall outside the data section
  | 'size-mismatch' // a tensor's byte length is not product(shape) * element size
  | 'unknown-tensor' // no tensor of that name
  | 'unsupported-dtype' // the dtype cannot be converted as asked
  | 'bad-value' // a value cannot be represented (e.g. an I64 outside the int32 range)
  | 'bad-spec' // the writer was given an invalid tensor list or metadata
  | 'write-order'; // the writer was fed bytes out of order or with the wrong count

export class SafetensorsError extends Error {
  override readonly name = 'SafetensorsError';
  readonly kind: SafetensorsErrorKind;
  readonly file: string;
  readonly tensor: string | undefined;

  constructor(kind: SafetensorsErrorKind, file: string, message: string, tensor?: string, options?: ErrorOptions) {
    const where = tensor === undefined ? file : `${file}, tensor '${tensor}'`;
    super(`${where}: ${message}`, options);
    this.kind = kind;
    this.file = file;
    this.tensor = tensor;
  }
}
