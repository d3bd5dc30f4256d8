#include "tandem/dtype.h"

#include <cmath>

#include "tandem/errors.h"
#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace tandem {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::F32: return 4;
    case DType::BF16: return 2;
    case DType::F16: return 2;
    case DType::I32: return 4;
  }
  return 0;
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::F32: return "f32";
    case DType::BF16: return "bf16";
    case DType::F16: return "f16";
    case DType::I32: return "i32";
  }
  return "?";
}

bool dtype_from_safetensors(const std::string& s, DType* out) {
  if (s == "F32") { *out = DType::F32; return true; }
  if (s == "BF16") { *out = DType::BF16; return true; }
  if (s == "F16") { *out = DType::F16; return true; }
  if (s == "I32") { *out = DType::I32; return true; }
  return false;
}

float f16_to_f32(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t u;
  if (exp == 0) {
    if (mant == 0) {
      u = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do { ++e; mant <<= 1; } while ((mant & 0x400) == 0);
      u = sign | (uint32_t(127 - 15 - e) << 23) | ((mant & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    u = sign | 0x7f800000u | (mant << 13);
  } else {
    u = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t f32_to_f16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  uint32_t sign = (u >> 16) & 0x8000;
  int32_t exp = int32_t((u >> 23) & 0xff) - 127 + 15;
  uint32_t mant = u & 0x7fffff;
  if (((u >> 23) & 0xff) == 0xff) return uint16_t(sign | 0x7c00 | (mant ? 0x200 : 0));
  if (exp >= 31) return uint16_t(sign | 0x7c00);
  if (exp <= 0) {
    if (exp < -10) return uint16_t(sign);
    mant |= 0x800000;
    uint32_t shift = uint32_t(14 - exp);
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return uint16_t(sign | half);
  }
  uint32_t half = sign | (uint32_t(exp) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) ++half;
  return uint16_t(half);
}

void convert_to_f32(DType t, const void* src, float* dst, size_t n) {
  switch (t) {
    case DType::F32:
      std::memcpy(dst, src, n * 4);
      return;
    case DType::BF16: {
      const uint16_t* s = static_cast<const uint16_t*>(src);
      for (size_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(s[i]);
      return;
    }
    case DType::F16: {
      const uint16_t* s = static_cast<const uint16_t*>(src);
      size_t i = 0;
#if defined(__F16C__)
      for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i))));
#endif
      for (; i < n; ++i) dst[i] = f16_to_f32(s[i]);
      return;
    }
    case DType::I32:
      break;
  }
  fail(ErrorCode::Internal, "convert_to_f32: unsupported dtype");
}

void convert_from_f32(DType t, const float* src, void* dst, size_t n) {
  switch (t) {
    case DType::F32:
      std::memcpy(dst, src, n * 4);
      return;
    case DType::BF16: {
      uint16_t* d = static_cast<uint16_t*>(dst);
      for (size_t i = 0; i < n; ++i) d[i] = f32_to_bf16(src[i]);
      return;
    }
    case DType::F16: {
      uint16_t* d = static_cast<uint16_t*>(dst);
      for (size_t i = 0; i < n; ++i) d[i] = f32_to_f16(src[i]);
      return;
    }
    case DType::I32:
      break;
  }
  fail(ErrorCode::Internal, "convert_from_f32: unsupported dtype");
}

}  // namespace tandem
