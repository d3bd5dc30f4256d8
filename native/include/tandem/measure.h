// Machine measurements reported next to benchmark results.
#pragma once
#include <cstddef>

namespace tandem {
// Best-of-several read bandwidth in bytes/s: `threads` threads each summing their share of
// a `bytes`-sized buffer (larger than the caches for a memory figure).
double measure_read_bandwidth(size_t bytes, int threads);
// Best-of-several BLAS sgemm rate in FLOP/s for n×n×n with `threads` BLAS threads.
double measure_sgemm(int n, int threads);
}  // namespace tandem
