// The model's weights, bound by name and shape to the config. Matrices stay in the mmap'd
// files in their stored dtype; small vectors (norms, conv taps, decay parameters) are
// converted to fp32 at load, with the (1 + w) of zero-centred norms already applied.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tandem/dtype.h"
#include "tandem/model-config.h"
#include "tandem/safetensors.h"

namespace tandem {

// A [rows, cols] matrix in PyTorch [out, in] order: y = x · Wᵀ.
struct Matrix {
  const void* data = nullptr;
  DType dtype = DType::F32;
  int64_t rows = 0;
  int64_t cols = 0;
  std::string name;
  size_t bytes() const { return size_t(rows * cols) * dtype_size(dtype); }
};

struct AttentionWeights {
  Matrix q_proj, k_proj, v_proj, o_proj;
  std::vector<float> q_norm, k_norm;  // effective weights, [head_dim]
};

struct DeltaNetWeights {
  Matrix in_proj_qkv, in_proj_z, in_proj_b, in_proj_a, out_proj;
  std::vector<float> conv;     // [K, conv_dim]: tap j of channel c at conv[j * conv_dim + c]
  std::vector<float> dt_bias;  // [Hv]
  std::vector<float> neg_exp_a;  // [Hv]: −exp(A_log)
  std::vector<float> norm;     // [Dv], plain weight of the gated RMSNorm
};

struct LayerWeights {
  LayerKind kind;
  std::vector<float> input_norm, post_norm;  // effective, [hidden]
  AttentionWeights attn;
  DeltaNetWeights delta;
  Matrix gate_proj, up_proj, down_proj;
};

struct ModelWeights {
  Matrix embed;    // [V, H]
  Matrix lm_head;  // [V, H]; the embedding when tied
  std::vector<float> final_norm;
  std::vector<LayerWeights> layers;
  DType dtype = DType::F32;  // dtype of the big matrices (the embedding's)
  uint64_t fingerprint = 0;
  int64_t parameter_count = 0;
  size_t weight_bytes = 0;         // every bound tensor
  size_t decode_weight_bytes = 0;  // bytes one decode step reads
};

// Binds every tensor the config needs. Accepts `model.language_model.` and `model.`
// prefixes; skips `model.visual.*` and `mtp.*`. A missing or mis-shaped tensor throws
// E_MODEL_WEIGHTS naming it. The returned pointers stay valid while `files` lives.
ModelWeights bind_weights(const ModelConfig& cfg, const SafetensorsSet& files);

}  // namespace tandem
