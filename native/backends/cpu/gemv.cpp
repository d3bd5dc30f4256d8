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

#if TANDEM_AVX2
// y[t, r] for R consecutive rows t of x against one weight row; U-way unrolled over the
// columns so that R·U ≥ 4 independent accumulators hide the FMA latency.
template <DType kT, int R>
inline void dot_block(const void* row, const float* x, int64_t n, float* y, int64_t y_stride) {
  constexpr int U = R >= 4 ? 1 : 4 / R;
  __m256 acc[R * U];
  for (int j = 0; j < R * U; ++j) acc[j] = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 * U <= n; i += 8 * U) {
    for (int u = 0; u < U; ++u) {
      const __m256 wv = load8<kT>(row, i + 8 * u);
      for (int j = 0; j < R; ++j) acc[j * U + u] = _mm256_fmadd_ps(wv, _mm256_loadu_ps(x + j * n + i + 8 * u), acc[j * U + u]);
    }
  }
  for (; i + 8 <= n; i += 8) {
    const __m256 wv = load8<kT>(row, i);
    for (int j = 0; j < R; ++j) acc[j * U] = _mm256_fmadd_ps(wv, _mm256_loadu_ps(x + j * n + i), acc[j * U]);
  }
  for (int j = 0; j < R; ++j) {
    __m256 t = acc[j * U];
    for (int u = 1; u < U; ++u) t = _mm256_add_ps(t, acc[j * U + u]);
    float s = hsum(t);
    for (int64_t k = i; k < n; ++k) s += scalar_at<kT>(row, k) * x[j * n + k];
    y[j * y_stride] = s;
  }
}
#endif

template <DType kT>
void gemv_typed(const Matrix& w, const float* x, int64_t T, float* y, int64_t r0, int64_t r1) {
  const int64_t n = w.cols, rows = w.rows;
  const size_t esz = dtype_size(kT);
  for (int64_t r = r0; r < r1; ++r) {
    const void* row = static_cast<const char*>(w.data) + size_t(r) * size_t(n) * esz;
    int64_t t = 0;
#if TANDEM_AVX2
    for (; t + 8 <= T; t += 8) dot_block<kT, 8>(row, x + t * n, n, y + t * rows + r, rows);
    if (t + 4 <= T) { dot_block<kT, 4>(row, x + t * n, n, y + t * rows + r, rows); t += 4; }
    if (t + 2 <= T) { dot_block<kT, 2>(row, x + t * n, n, y + t * rows + r, rows); t += 2; }
    if (t < T) { dot_block<kT, 1>(row, x + t * n, n, y + t * rows + r, rows); t += 1; }
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
