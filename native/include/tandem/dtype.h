// Element types of weights and state tensors, and scalar conversions to and from fp32.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace tandem {

enum class DType : uint32_t { F32 = 0, BF16 = 1, F16 = 2, I32 = 3 };

size_t dtype_size(DType t);
const char* dtype_name(DType t);          // "f32", "bf16", "f16", "i32"
bool dtype_from_safetensors(const std::string& s, DType* out);  // "F32", "BF16", "F16", "I32"

inline float bf16_to_f32(uint16_t h) {
  uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Round to nearest even, as torch does; NaN stays NaN.
inline uint16_t f32_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}

float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);

// Converts n elements of type `t` at `src` to fp32 at `dst`.
void convert_to_f32(DType t, const void* src, float* dst, size_t n);
// Converts n fp32 elements to type `t` (F32, BF16, F16).
void convert_from_f32(DType t, const float* src, void* dst, size_t n);

}  // namespace tandem
