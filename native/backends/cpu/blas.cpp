#include "tandem/blas.h"

namespace tandem {

#if defined(__APPLE__)
void blas_set_threads(int) {}
std::string blas_info() { return "Accelerate"; }
#else
extern "C" {
void openblas_set_num_threads(int);
char* openblas_get_config(void);
}
void blas_set_threads(int threads) { openblas_set_num_threads(threads); }
std::string blas_info() { return std::string("OpenBLAS ") + openblas_get_config(); }
#endif

}  // namespace tandem
