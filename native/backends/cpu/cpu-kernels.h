// The reference backend's kernels: BLAS for large matrix products, hand-vectorised
// half-precision GEMV for decode-sized batches. The thread pool owns all parallelism: BLAS
// runs single-threaded inside pool tasks (no second set of spinning BLAS threads).
#pragma once
#include <vector>

#include "tandem/kernels.h"
#include "tandem/thread-pool.h"

namespace tandem {

class CpuKernels : public Kernels {
 public:
  explicit CpuKernels(ThreadPool& pool);
  const char* name() const override { return "cpu"; }

  void linear(const Matrix& w, const float* x, int64_t T, float* y) override;
  void embed(const Matrix& e, const int32_t* tokens, int64_t T, float* y) override;
  void rms_norm(const float* x, const float* w, int64_t T, int64_t dim, float eps, float* y) override;
  void head_rms_norm(float* x, int64_t T, int64_t heads, int64_t dim, int64_t head_stride, int64_t stride,
                     const float* w, float eps) override;
  void rope(float* x, int64_t T, int64_t heads, int64_t head_dim, int64_t head_stride, int64_t stride,
            int rotary_dim, double theta, DType freq_dtype, const int64_t* positions) override;
  void attention(const float* q, int64_t q_head_stride, int64_t q_stride, int64_t T, const float* k_cache, const float* v_cache, int64_t cap,
                 int64_t start, int nh, int nkv, int D, float* out) override;
  void causal_conv_silu(const float* m, int64_t T, int64_t C, int K, const float* taps, float* window,
                        float* c) override;
  void gated_delta_rule(const float* qkv, const float* b, const float* a, int64_t T, const ModelConfig& cfg,
                        const DeltaNetWeights& w, float* state, float* o) override;
  void gated_rms_norm(float* o, const float* z, int64_t T, int64_t heads, int64_t dim, const float* w,
                      float eps) override;
  void swiglu(const float* gate, const float* up, int64_t n, float* out) override;
  void sigmoid_gate(float* x, int64_t x_stride, const float* gate, int64_t gate_stride, int64_t T,
                    int64_t n) override;
  void add(float* y, const float* x, int64_t n) override;

  // Rows of x up to which linear() streams half-precision weights directly instead of
  // converting tiles to fp32 for sgemm.
  static constexpr int64_t kGemvMaxRows = 16;
  size_t scratch_bytes() const;

 protected:
  ThreadPool& pool_;

 private:
  std::vector<std::vector<float>> tiles_;   // per pool thread: fp32 weight tile for the sgemm path
  std::vector<std::vector<float>> scores_;  // per pool thread: attention scores of one head
};

// Streams W once for all T (≤ kGemvMaxRows) rows of x: y[T, rows(r0..r1)] for a row range.
void gemv_rows(const Matrix& w, const float* x, int64_t T, float* y, int64_t r0, int64_t r1);

}  // namespace tandem
