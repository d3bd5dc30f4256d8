// The state of one sequence on a host (CPU-memory) backend: token ids, and per layer the
// conv window + recurrent state (linear attention) or the K/V cache (full attention).
#pragma once
#include <cstdint>
#include <vector>

#include "tandem/model-config.h"

namespace tandem {

struct HostLayerState {
  // Linear attention.
  std::vector<float> conv;  // [K−1, conv_dim], oldest first
  std::vector<float> rec;   // [Hv, Dk, Dv]
  // Full attention: [nkv, cap, D] each; rows [0, length) valid. K after k_norm and RoPE.
  std::vector<float> k, v;
  int64_t cap = 0;
};

struct HostSequence {
  std::vector<int32_t> tokens;
  std::vector<HostLayerState> layers;
  int64_t length() const { return int64_t(tokens.size()); }
  size_t bytes() const;
};

// A zero state (position 0) shaped for `cfg`.
HostSequence make_host_sequence(const ModelConfig& cfg);
// Grows every attention layer's cache to hold at least `rows` rows (amortised doubling).
void reserve_kv(HostSequence& s, const ModelConfig& cfg, int64_t rows);

}  // namespace tandem
