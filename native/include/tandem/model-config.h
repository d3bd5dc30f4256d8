// The architecture of a model, parsed and validated from a Hugging Face config.json.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tandem {

enum class Architecture { Qwen35, Qwen3 };
enum class LayerKind { LinearAttention, FullAttention };

struct ModelConfig {
  Architecture arch = Architecture::Qwen35;
  std::string model_type;  // as found at the top level ("qwen3_5", "qwen3_5_text", "qwen3")
  int vocab_size = 0;
  int hidden = 0;
  int n_layers = 0;
  int intermediate = 0;
  float rms_eps = 1e-6f;
  bool tied_embeddings = false;
  int max_positions = 0;
  std::vector<LayerKind> layers;
  std::vector<int> eos_token_ids;

  // Full attention.
  int n_heads = 0;
  int n_kv_heads = 0;
  int head_dim = 0;
  int rotary_dim = 0;  // Qwen3.5: int(head_dim * partial_rotary_factor); Qwen3: head_dim
  double rope_theta = 0;
  // The dtype transformers holds RoPE's inverse frequencies in: the checkpoint's `dtype`
  // (`torch_dtype`) when it is bf16 or f16 (a model cast with `.to(dtype)` casts that buffer
  // too), else f32. The fixtures were computed that way; see MODEL-NOTES.md.
  std::string rope_freq_dtype = "f32";
  bool attn_output_gate = false;  // Qwen3.5: q_proj carries a per-head output gate

  // Gated DeltaNet (Qwen3.5 linear-attention layers).
  int lin_k_heads = 0;
  int lin_v_heads = 0;
  int lin_k_dim = 0;
  int lin_v_dim = 0;
  int conv_kernel = 0;

  int key_dim() const { return lin_k_heads * lin_k_dim; }
  int value_dim() const { return lin_v_heads * lin_v_dim; }
  int conv_dim() const { return 2 * key_dim() + value_dim(); }
  // Zero-centred (1 + w) RMSNorm weights everywhere but the gated norm (Qwen3.5 only).
  bool zero_centred_norms() const { return arch == Architecture::Qwen35; }
  // Canonical text of every field that shapes the computation (feeds the fingerprint).
  std::string canonical() const;
};

// Reads `<dir>/config.json` (and `generation_config.json` for eos ids when present).
// Throws E_MODEL_CONFIG naming the file and field on any missing, mistyped or absurd value,
// or an unknown model_type / rope_type.
ModelConfig load_model_config(const std::string& dir);
ModelConfig parse_model_config(const std::string& json_text, const std::string& source_name);

}  // namespace tandem
