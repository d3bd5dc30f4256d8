// The BLAS the CPU backend links: OpenBLAS on Linux, Accelerate on macOS.
#pragma once
#if defined(__APPLE__)
#define ACCELERATE_NEW_LAPACK
#include <Accelerate/Accelerate.h>
#else
#include <cblas.h>
#endif
#include <string>

namespace tandem {
void blas_set_threads(int threads);
int blas_get_threads();
std::string blas_info();
}  // namespace tandem
