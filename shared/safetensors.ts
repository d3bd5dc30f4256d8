// Reader and writer for the safetensors format: an 8-byte little-endian header length,
// a JSON header of {dtype, shape, data_offsets} per tensor plus optional string-valued
// "__metadata__", then the tensor data.
export { SafetensorsError, type SafetensorsErrorKind } from './safetensors/error.js';
export {
  DTYPE_BYTES,
  dtypeBytes,
  elementCount,
  isSafetensorsDType,
  isWritableDType,
  type SafetensorsDType,
  type WritableDType,
} from './safetensors/dtype.js';
export { bf16ToF32, f16ToF32, f32ToBf16, f32ToF16, f32BitsToBf16Bits, f32BitsToF16Bits } from './safetensors/convert.js';
export { MAX_HEADER_BYTES, type TensorInfo } from './safetensors/header.js';
export { readSafetensors, type SafetensorsFile } from './safetensors/reader.js';
export { SafetensorsWriter, validateSpecs, type TensorSpec } from './safetensors/writer.js';
export { writeSafetensors, type TensorData } from './safetensors/write-file.js';
