#include "tandem/blas.h"

namespace tandem {

#if defined(__APPLE__)
void blas_set_threads(int) {}
int blas_get_threads() { return 1; }
std::string blas_info() { return "Accelerate"; }
#else
extern "C" {
void openblas_set_num_threads(int);
int openblas_get_num_threads(void);
char* openblas_get_config(void);
}
void blas_set_threads(int threads) { openblas_set_num_threads(threads); }
int blas_get_threads() { return openblas_get_num_threads(); }
std::string blas_info() { return std::string("OpenBLAS ") + openblas_get_config(); }
#endif

}  // namespace tandem
