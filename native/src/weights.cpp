#include "tandem/weights.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "tandem/errors.h"
#include "tandem/hash.h"

namespace tandem {

namespace {

std::string shape_str(const std::vector<int64_t>& s) {
  std::ostringstream o;
  o << '[';
  for (size_t i = 0; i < s.size(); ++i) o << (i ? ", " : "") << s[i];
  o << ']';
  return o.str();
}

class Binder {
 public:
  Binder(const SafetensorsSet& files, std::string prefix) : files_(files), prefix_(std::move(prefix)) {}

  // `local` is relative to the model prefix unless it starts with '/' (then it is absolute).
  const TensorRef& tensor(const std::string& local, const std::vector<int64_t>& shape) {
    const std::string name = local[0] == '/' ? local.substr(1) : prefix_ + local;
    const TensorRef* t = files_.find(name);
    if (!t) fail(ErrorCode::ModelWeights, "tensor " + name + " is missing from the model files");
    if (t->shape != shape)
      fail(ErrorCode::ModelWeights, "tensor " + name + " has shape " + shape_str(t->shape) + " but the config needs " +
                                        shape_str(shape) + " (in " + t->file + ")");
    if (t->dtype == DType::I32) fail(ErrorCode::ModelWeights, "tensor " + name + " has integer dtype");
    note(*t);
    return *t;
  }

  Matrix matrix(const std::string& local, int64_t rows, int64_t cols) {
    const TensorRef& t = tensor(local, {rows, cols});
    Matrix m;
    m.data = t.data;
    m.dtype = t.dtype;
    m.rows = rows;
    m.cols = cols;
    m.name = t.name;
    return m;
  }

  std::vector<float> vector(const std::string& local, const std::vector<int64_t>& shape, float add = 0.0f) {
    const TensorRef& t = tensor(local, shape);
    std::vector<float> v(size_t(t.numel()));
    convert_to_f32(t.dtype, t.data, v.data(), v.size());
    if (add != 0.0f)
      for (float& x : v) x += add;
    return v;
  }

  uint64_t fingerprint_seed(const std::string& canonical) const {
    return fnv1a64(canonical.data(), canonical.size(), kFnvOffset);
  }
  uint64_t fold(uint64_t h) const { return fnv1a64(desc_.data(), desc_.size(), h); }

  int64_t params = 0;
  size_t bytes = 0;

 private:
  // Every bound tensor feeds the fingerprint: name, dtype, shape and its first 64 bytes.
  void note(const TensorRef& t) {
    params += t.numel();
    bytes += t.bytes;
    desc_ += t.name;
    desc_ += ':';
    desc_ += dtype_name(t.dtype);
    desc_ += shape_str(t.shape);
    desc_.append(static_cast<const char*>(t.data), std::min<size_t>(64, t.bytes));
    desc_ += ';';
  }
  const SafetensorsSet& files_;
  std::string prefix_;
  std::string desc_;
};

std::string detect_prefix(const SafetensorsSet& files) {
  if (files.find("model.language_model.embed_tokens.weight")) return "model.language_model.";
  if (files.find("model.embed_tokens.weight")) return "model.";
  fail(ErrorCode::ModelWeights,
       "tensor model.embed_tokens.weight (or model.language_model.embed_tokens.weight) is missing from the model files");
}

}  // namespace

ModelWeights bind_weights(const ModelConfig& c, const SafetensorsSet& files) {
  ModelWeights w;
  const std::string prefix = detect_prefix(files);
  Binder b(files, prefix);
  const int64_t H = c.hidden, V = c.vocab_size, I = c.intermediate;
  const float norm_add = c.zero_centred_norms() ? 1.0f : 0.0f;

  w.embed = b.matrix("embed_tokens.weight", V, H);
  w.dtype = w.embed.dtype;
  w.final_norm = b.vector("norm.weight", {H}, norm_add);
  for (int i = 0; i < c.n_layers; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    LayerWeights L;
    L.kind = c.layers[size_t(i)];
    L.input_norm = b.vector(p + "input_layernorm.weight", {H}, norm_add);
    L.post_norm = b.vector(p + "post_attention_layernorm.weight", {H}, norm_add);
    if (L.kind == LayerKind::FullAttention) {
      const int64_t D = c.head_dim;
      const int64_t q_rows = int64_t(c.n_heads) * D * (c.attn_output_gate ? 2 : 1);
      L.attn.q_proj = b.matrix(p + "self_attn.q_proj.weight", q_rows, H);
      L.attn.k_proj = b.matrix(p + "self_attn.k_proj.weight", int64_t(c.n_kv_heads) * D, H);
      L.attn.v_proj = b.matrix(p + "self_attn.v_proj.weight", int64_t(c.n_kv_heads) * D, H);
      L.attn.o_proj = b.matrix(p + "self_attn.o_proj.weight", H, int64_t(c.n_heads) * D);
      L.attn.q_norm = b.vector(p + "self_attn.q_norm.weight", {D}, norm_add);
      L.attn.k_norm = b.vector(p + "self_attn.k_norm.weight", {D}, norm_add);
    } else {
      const int64_t conv_dim = c.conv_dim(), Hv = c.lin_v_heads, K = c.conv_kernel;
      L.delta.in_proj_qkv = b.matrix(p + "linear_attn.in_proj_qkv.weight", conv_dim, H);
      L.delta.in_proj_z = b.matrix(p + "linear_attn.in_proj_z.weight", c.value_dim(), H);
      L.delta.in_proj_b = b.matrix(p + "linear_attn.in_proj_b.weight", Hv, H);
      L.delta.in_proj_a = b.matrix(p + "linear_attn.in_proj_a.weight", Hv, H);
      L.delta.out_proj = b.matrix(p + "linear_attn.out_proj.weight", H, c.value_dim());
      std::vector<float> conv = b.vector(p + "linear_attn.conv1d.weight", {conv_dim, 1, K});
      L.delta.conv.resize(conv.size());
      for (int64_t ch = 0; ch < conv_dim; ++ch)
        for (int64_t j = 0; j < K; ++j) L.delta.conv[size_t(j * conv_dim + ch)] = conv[size_t(ch * K + j)];
      L.delta.dt_bias = b.vector(p + "linear_attn.dt_bias", {Hv});
      std::vector<float> a_log = b.vector(p + "linear_attn.A_log", {Hv});
      L.delta.neg_exp_a.resize(size_t(Hv));
      for (int64_t h = 0; h < Hv; ++h) L.delta.neg_exp_a[size_t(h)] = -std::exp(a_log[size_t(h)]);
      L.delta.norm = b.vector(p + "linear_attn.norm.weight", {c.lin_v_dim});
    }
    L.gate_proj = b.matrix(p + "mlp.gate_proj.weight", I, H);
    L.up_proj = b.matrix(p + "mlp.up_proj.weight", I, H);
    L.down_proj = b.matrix(p + "mlp.down_proj.weight", H, I);
    w.layers.push_back(std::move(L));
  }
  if (c.tied_embeddings) {
    w.lm_head = w.embed;
  } else {
    if (!files.find("lm_head.weight"))
      fail(ErrorCode::ModelWeights, "tensor lm_head.weight is missing (tie_word_embeddings is false)");
    w.lm_head = b.matrix("/lm_head.weight", V, H);
  }
  w.fingerprint = b.fold(b.fingerprint_seed(c.canonical()));
  w.parameter_count = b.params;
  w.weight_bytes = b.bytes;
  // A decode step reads every matrix once, and one row of the embedding.
  size_t decode = w.lm_head.bytes() + size_t(H) * dtype_size(w.embed.dtype);
  for (const LayerWeights& L : w.layers) {
    decode += L.gate_proj.bytes() + L.up_proj.bytes() + L.down_proj.bytes();
    if (L.kind == LayerKind::FullAttention)
      decode += L.attn.q_proj.bytes() + L.attn.k_proj.bytes() + L.attn.v_proj.bytes() + L.attn.o_proj.bytes();
    else
      decode += L.delta.in_proj_qkv.bytes() + L.delta.in_proj_z.bytes() + L.delta.in_proj_b.bytes() +
                L.delta.in_proj_a.bytes() + L.delta.out_proj.bytes();
  }
  w.decode_weight_bytes = decode;
  return w;
}

}  // namespace tandem
