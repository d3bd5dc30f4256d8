// Decode-sized matrix products straight from the stored weights (f32, bf16 or f16):
// each weight row is loaded once and multiplied against every row of x.
#include <cstring>

#include "cpu-kernels.h"
#include "tandem/errors.h"
#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define TANDEM_AVX2 1
#endif

namespace tandem {

namespace {

#if TANDEM_AVX2
template <DType kT>
inline __m256 load8(const void* base, int64_t i) {
  if constexpr (kT == DType::F32) {
    return _mm256_loadu_ps(static_cast<const float*>(base) + i);
  } else if constexpr (kT == DType::BF16) {
    __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(base) + i));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  } else {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(base) + i)));
  }
}

inline float hsum(__m256 v) {
  __m128 lo = _mm256_castps256_ps128(v), hi = _mm256_extractf128_ps(v, 1);
  lo = _mm_add_ps(lo, hi);
  lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
  lo = _mm_add_ss(lo, _mm_shuffle_ps(lo, lo, 0x55));
  return _mm_cvtss_f32(lo);
}
#endif

template <DType kT>
inline float scalar_at(const void* base, int64_t i) {
  if constexpr (kT == DType::F32) return static_cast<const float*>(base)[i];
  else if constexpr (kT == DType::BF16) return bf16_to_f32(static_cast<const uint16_t*>(base)[i]);
  else return f16_to_f32(static_cast<const uint16_t*>(base)[i]);
}

template <DType kT>
void gemv_typed(const Matrix& w, const float* x, int64_t T, float* y, int64_t r0, int64_t r1) {
  const int64_t n = w.cols, rows = w.rows;
  const size_t esz = dtype_size(kT);
  for (int64_t r = r0; r < r1; ++r) {
    const void* row = static_cast<const char*>(w.data) + size_t(r) * size_t(n) * esz;
    int64_t t = 0;
#if TANDEM_AVX2
    if (T == 1) {
      __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
      int64_t i = 0;
      for (; i + 32 <= n; i += 32) {
        a0 = _mm256_fmadd_ps(load8<kT>(row, i), _mm256_loadu_ps(x + i), a0);
        a1 = _mm256_fmadd_ps(load8<kT>(row, i + 8), _mm256_loadu_ps(x + i + 8), a1);
        a2 = _mm256_fmadd_ps(load8<kT>(row, i + 16), _mm256_loadu_ps(x + i + 16), a2);
        a3 = _mm256_fmadd_ps(load8<kT>(row, i + 24), _mm256_loadu_ps(x + i + 24), a3);
      }
      for (; i + 8 <= n; i += 8) a0 = _mm256_fmadd_ps(load8<kT>(row, i), _mm256_loadu_ps(x + i), a0);
      float s = hsum(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
      for (; i < n; ++i) s += scalar_at<kT>(row, i) * x[i];
      y[r] = s;
      continue;
    }
    for (; t + 4 <= T; t += 4) {
      const float* x0 = x + t * n;
      __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
      int64_t i = 0;
      for (; i + 8 <= n; i += 8) {
        __m256 wv = load8<kT>(row, i);
        a0 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(x0 + i), a0);
        a1 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(x0 + n + i), a1);
        a2 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(x0 + 2 * n + i), a2);
        a3 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(x0 + 3 * n + i), a3);
      }
      float s0 = hsum(a0), s1 = hsum(a1), s2 = hsum(a2), s3 = hsum(a3);
      for (; i < n; ++i) {
        float wv = scalar_at<kT>(row, i);
        s0 += wv * x0[i];
        s1 += wv * x0[n + i];
        s2 += wv * x0[2 * n + i];
        s3 += wv * x0[3 * n + i];
      }
      y[t * rows + r] = s0;
      y[(t + 1) * rows + r] = s1;
      y[(t + 2) * rows + r] = s2;
      y[(t + 3) * rows + r] = s3;
    }
#endif
    for (; t < T; ++t) {
      const float* xt = x + t * n;
      float s = 0;
      for (int64_t i = 0; i < n; ++i) s += scalar_at<kT>(row, i) * xt[i];
      y[t * rows + r] = s;
    }
  }
}

}  // namespace

void gemv_rows(const Matrix& w, const float* x, int64_t T, float* y, int64_t r0, int64_t r1) {
  switch (w.dtype) {
    case DType::F32: return gemv_typed<DType::F32>(w, x, T, y, r0, r1);
    case DType::BF16: return gemv_typed<DType::BF16>(w, x, T, y, r0, r1);
    case DType::F16: return gemv_typed<DType::F16>(w, x, T, y, r0, r1);
    default: fail(ErrorCode::Internal, "gemv: integer weights");
  }
}

}  // namespace tandem
