#include "tandem/measure.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "tandem/blas.h"
#include "tandem/errors.h"
#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace tandem {

namespace {
double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

float sum_range(const float* p, size_t n) {
#if defined(__AVX2__)
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    a0 = _mm256_add_ps(a0, _mm256_load_ps(p + i));
    a1 = _mm256_add_ps(a1, _mm256_load_ps(p + i + 8));
    a2 = _mm256_add_ps(a2, _mm256_load_ps(p + i + 16));
    a3 = _mm256_add_ps(a3, _mm256_load_ps(p + i + 24));
  }
  alignas(32) float t[8];
  _mm256_store_ps(t, _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
  float s = 0;
  for (float v : t) s += v;
  for (; i < n; ++i) s += p[i];
  return s;
#else
  float s = 0;
  for (size_t i = 0; i < n; ++i) s += p[i];
  return s;
#endif
}
}  // namespace

double measure_read_bandwidth(size_t bytes, int threads) {
  if (bytes < (1u << 20) || bytes > (size_t(64) << 30)) fail(ErrorCode::InvalidArgument, "bandwidth buffer must be 1 MiB..64 GiB");
  if (threads < 1 || threads > 256) fail(ErrorCode::InvalidArgument, "threads must be in [1, 256]");
  const size_t n = bytes / 4 / 256 * 256;
  float* buf = static_cast<float*>(std::aligned_alloc(64, n * 4));
  if (!buf) fail(ErrorCode::Io, "cannot allocate the bandwidth buffer");
  std::vector<float> sink(static_cast<size_t>(threads));
  auto pass = [&] {
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t)
      ts.emplace_back([&, t] {
        const size_t b = n * size_t(t) / size_t(threads) / 8 * 8, e = n * size_t(t + 1) / size_t(threads) / 8 * 8;
        sink[size_t(t)] += sum_range(buf + b, e - b);
      });
    for (auto& th : ts) th.join();
  };
  {  // first touch in parallel, as the reads will be; distinct values on every page, so no
     // page can be deduplicated (KSM) and reads must come from memory
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t)
      ts.emplace_back([&, t] {
        for (size_t i = n * size_t(t) / size_t(threads); i < n * size_t(t + 1) / size_t(threads); ++i) buf[i] = float(i & 0xffffff);
      });
    for (auto& th : ts) th.join();
  }
  pass();
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    const double t0 = now_s();
    pass();
    best = std::min(best, now_s() - t0);
  }
  std::free(buf);
  volatile float keep = sink[0];
  (void)keep;
  return double(n) * 4 / best;
}

double measure_sgemm(int n, int threads) {
  if (n < 64 || n > 16384) fail(ErrorCode::InvalidArgument, "sgemm size must be in [64, 16384]");
  if (threads < 1 || threads > 256) fail(ErrorCode::InvalidArgument, "threads must be in [1, 256]");
  // BLAS threads are process-wide: restore them, so an engine's single-threaded BLAS
  // (see cpu-kernels.h) is not left multi-threaded by a measurement.
  const int previous = blas_get_threads();
  blas_set_threads(threads);
  std::vector<float> a(size_t(n) * size_t(n), 0.5f), b(a.size(), 0.25f), c(a.size(), 0.0f);
  auto run = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
  };
  run();
  double best = 1e30;
  for (int rep = 0; rep < 4; ++rep) {
    const double t0 = now_s();
    run();
    best = std::min(best, now_s() - t0);
  }
  blas_set_threads(previous);
  return 2.0 * double(n) * double(n) * double(n) / best;
}

}  // namespace tandem
