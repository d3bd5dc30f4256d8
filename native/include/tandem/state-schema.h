// The tensors of a state file for a given model, shared by every backend so that any
// engine can import what any other exported:
//   tokens               i32 [n]
//   layers.{i}.conv      compute dtype [K−1, conv_dim]   (linear attention; oldest first)
//   layers.{i}.recurrent f32 [Hv, Dk, Dv]                 (linear attention)
//   layers.{i}.keys      compute dtype [nkv, n, D]        (full attention; after k_norm and RoPE)
//   layers.{i}.values    compute dtype [nkv, n, D]
#pragma once
#include <string>
#include <vector>

#include "tandem/model-config.h"

namespace tandem {

enum class StateTensorKind { Tokens, Conv, Recurrent, Keys, Values };

struct StateTensorSpec {
  std::string name;
  std::vector<int64_t> shape;
  StateTensorKind kind;
  int layer;  // -1 for tokens
  bool recurrent() const { return kind == StateTensorKind::Recurrent; }  // fp32 whatever the compute dtype
};

std::vector<StateTensorSpec> state_schema(const ModelConfig& cfg, int64_t n_tokens);
// Checks the token ids of an imported state; E_STATE_FILE when any is outside [0, V).
void validate_state_tokens(const std::vector<int32_t>& tokens, const ModelConfig& cfg, const std::string& path);

}  // namespace tandem
