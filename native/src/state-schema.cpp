#include "tandem/state-schema.h"

#include "tandem/errors.h"

namespace tandem {

std::vector<StateTensorSpec> state_schema(const ModelConfig& c, int64_t n) {
  std::vector<StateTensorSpec> s;
  s.push_back({"tokens", {n}, StateTensorKind::Tokens, -1});
  for (int i = 0; i < c.n_layers; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    if (c.layers[size_t(i)] == LayerKind::LinearAttention) {
      s.push_back({p + "conv", {c.conv_kernel - 1, c.conv_dim()}, StateTensorKind::Conv, i});
      s.push_back({p + "recurrent", {c.lin_v_heads, c.lin_k_dim, c.lin_v_dim}, StateTensorKind::Recurrent, i});
    } else {
      s.push_back({p + "keys", {c.n_kv_heads, n, c.head_dim}, StateTensorKind::Keys, i});
      s.push_back({p + "values", {c.n_kv_heads, n, c.head_dim}, StateTensorKind::Values, i});
    }
  }
  return s;
}

void validate_state_tokens(const std::vector<int32_t>& tokens, const ModelConfig& c, const std::string& path) {
  for (size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] < 0 || tokens[i] >= c.vocab_size)
      fail(ErrorCode::StateFile, "state file " + path + ": token " + std::to_string(i) + " id " +
                                     std::to_string(tokens[i]) + " is outside the vocabulary");
}

}  // namespace tandem
