// The per-operation compute interface of the host forward pass. All activations are fp32,
// row-major, in host memory. CpuKernels implements every operation; a backend that
// accelerates only some (the ANE: only `linear`) derives from CpuKernels and overrides
// those, leaving the rest to the CPU. Calls come from the engine's owner thread only.
#pragma once
#include <cstdint>

#include "tandem/model-config.h"
#include "tandem/weights.h"

namespace tandem {

class Kernels {
 public:
  virtual ~Kernels() = default;
  virtual const char* name() const = 0;

  // y[T, W.rows] = x[T, W.cols] · Wᵀ.
  virtual void linear(const Matrix& w, const float* x, int64_t T, float* y) = 0;
  // y[t, :] = E[tokens[t], :] as fp32. Token ids are already validated.
  virtual void embed(const Matrix& e, const int32_t* tokens, int64_t T, float* y) = 0;
  // y[t, :] = x[t, :] / sqrt(mean(x[t]²) + eps) ⊙ w, for T rows of `dim` (in place allowed).
  virtual void rms_norm(const float* x, const float* w, int64_t T, int64_t dim, float eps, float* y) = 0;
  // Per-head RMSNorm in place: head h of row t starts at x + t·stride + h·head_stride.
  virtual void head_rms_norm(float* x, int64_t T, int64_t heads, int64_t dim, int64_t head_stride,
                             int64_t stride, const float* w, float eps) = 0;
  // Rotate-half RoPE in place on the first `rotary_dim` dims of each head (laid out as in
  // head_rms_norm); row t is at position positions[t].
  virtual void rope(float* x, int64_t T, int64_t heads, int64_t head_dim, int64_t head_stride, int64_t stride,
                    int rotary_dim, double theta, DType freq_dtype, const int64_t* positions) = 0;
  // Causal softmax attention of one sequence. q: T rows (stride q_stride) of nh heads × D
  // (head h at q + h·q_head_stride);
  // the cache holds nkv heads × `cap` rows × D, rows [0, start + T) valid, with this chunk's
  // keys at rows start…start+T−1. Query t attends keys ≤ start + t. out: [T, nh·D].
  virtual void attention(const float* q, int64_t q_head_stride, int64_t q_stride, int64_t T, const float* k_cache, const float* v_cache,
                         int64_t cap, int64_t start, int nh, int nkv, int D, float* out) = 0;
  // Depthwise causal conv + SiLU over channels: window [K−1, C] holds the previous K−1
  // inputs (oldest first) and is advanced by the T new rows of m [T, C]; c [T, C] is written.
  virtual void causal_conv_silu(const float* m, int64_t T, int64_t C, int K, const float* taps, float* window,
                                float* c) = 0;
  // Gated delta rule of one sequence over T tokens (Qwen3.5 §3.5 steps 3–7): qkv [T, conv_dim]
  // post-conv, b and a [T, Hv] raw projections; state [Hv, Dk, Dv] updated; o [T, Hv·Dv].
  virtual void gated_delta_rule(const float* qkv, const float* b, const float* a, int64_t T,
                                const ModelConfig& cfg, const DeltaNetWeights& w, float* state, float* o) = 0;
  // o[t, h, :] = w ⊙ rmsnorm(o[t, h, :]) ⊙ silu(z[t, h, :]) in place, heads of `dim`.
  virtual void gated_rms_norm(float* o, const float* z, int64_t T, int64_t heads, int64_t dim, const float* w,
                              float eps) = 0;
  // out[i] = silu(gate[i]) · up[i].
  virtual void swiglu(const float* gate, const float* up, int64_t n, float* out) = 0;
  // out[t, j] = sigmoid(gate[t, j]) · x[t, j] with row strides.
  virtual void sigmoid_gate(float* x, int64_t x_stride, const float* gate, int64_t gate_stride, int64_t T,
                            int64_t n) = 0;
  // y[i] += x[i].
  virtual void add(float* y, const float* x, int64_t n) = 0;
};

}  // namespace tandem
