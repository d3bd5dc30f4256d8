#include "tandem/host-forward.h"

#include <cstring>

#include "tandem/errors.h"

namespace tandem {

namespace {
float* sized(std::vector<float>& v, int64_t n) {
  if (v.size() < size_t(n)) v.resize(size_t(n));
  return v.data();
}
}  // namespace

HostForward::HostForward(const ModelConfig& cfg, const ModelWeights& w, Kernels& k)
    : c_(cfg), w_(w), k_(k),
      rope_freq_dtype_(cfg.rope_freq_dtype == "bf16" ? DType::BF16 : cfg.rope_freq_dtype == "f16" ? DType::F16 : DType::F32) {}

size_t HostForward::scratch_bytes() const {
  return (x_.capacity() + xn_.capacity() + a_.capacity() + b_.capacity() + c_buf_.capacity() + d_.capacity() +
          e_.capacity() + f_.capacity()) * sizeof(float);
}

void HostForward::run(const std::vector<ForwardItem>& items, bool all_logits, float* logits) {
  TANDEM_ASSERT(!items.empty());
  const int64_t H = c_.hidden;
  N_ = 0;
  row0_.clear();
  for (const auto& it : items) {
    TANDEM_ASSERT(it.n >= 1);
    row0_.push_back(N_);
    N_ += it.n;
  }
  positions_.resize(size_t(N_));
  float* x = sized(x_, N_ * H);
  for (size_t i = 0; i < items.size(); ++i) {
    const auto& it = items[i];
    for (int64_t t = 0; t < it.n; ++t) positions_[size_t(row0_[i] + t)] = it.seq->length() + t;
    k_.embed(w_.embed, it.tokens, it.n, x + row0_[i] * H);
  }

  for (int l = 0; l < c_.n_layers; ++l) {
    const LayerWeights& L = w_.layers[size_t(l)];
    k_.rms_norm(x, L.input_norm.data(), N_, H, c_.rms_eps, sized(xn_, N_ * H));
    if (L.kind == LayerKind::FullAttention) attention_layer(L, l, items);
    else delta_layer(L, l, items);
    mlp(L);
  }

  for (const auto& it : items) it.seq->tokens.insert(it.seq->tokens.end(), it.tokens, it.tokens + it.n);
  if (!logits) return;
  // Final norm and LM head over the rows whose logits are wanted.
  int64_t rows = all_logits ? N_ : int64_t(items.size());
  float* sel = sized(xn_, rows * H);
  if (all_logits) {
    k_.rms_norm(x, w_.final_norm.data(), N_, H, c_.rms_eps, sel);
  } else {
    for (size_t i = 0; i < items.size(); ++i)
      k_.rms_norm(x + (row0_[i] + items[i].n - 1) * H, w_.final_norm.data(), 1, H, c_.rms_eps, sel + int64_t(i) * H);
  }
  k_.linear(w_.lm_head, sel, rows, logits);
}

void HostForward::attention_layer(const LayerWeights& L, int layer, const std::vector<ForwardItem>& items) {
  const int64_t H = c_.hidden, D = c_.head_dim, nh = c_.n_heads, nkv = c_.n_kv_heads;
  const int64_t q_rows = L.attn.q_proj.rows, kv_rows = nkv * D;
  const int64_t q_head_stride = c_.attn_output_gate ? 2 * D : D;
  float* xn = xn_.data();
  float* q = sized(a_, N_ * q_rows);
  float* k = sized(b_, N_ * kv_rows);
  float* v = sized(c_buf_, N_ * kv_rows);
  float* att = sized(d_, N_ * nh * D);
  k_.linear(L.attn.q_proj, xn, N_, q);
  k_.linear(L.attn.k_proj, xn, N_, k);
  k_.linear(L.attn.v_proj, xn, N_, v);
  k_.head_rms_norm(q, N_, nh, D, q_head_stride, q_rows, L.attn.q_norm.data(), c_.rms_eps);
  k_.head_rms_norm(k, N_, nkv, D, D, kv_rows, L.attn.k_norm.data(), c_.rms_eps);
  k_.rope(q, N_, nh, D, q_head_stride, q_rows, c_.rotary_dim, c_.rope_theta, rope_freq_dtype_, positions_.data());
  k_.rope(k, N_, nkv, D, D, kv_rows, c_.rotary_dim, c_.rope_theta, rope_freq_dtype_, positions_.data());

  for (size_t i = 0; i < items.size(); ++i) {
    const auto& it = items[i];
    HostSequence& s = *it.seq;
    const int64_t start = s.length();
    reserve_kv(s, c_, start + it.n);
    HostLayerState& st = s.layers[size_t(layer)];
    for (int64_t t = 0; t < it.n; ++t) {
      const int64_t r = row0_[i] + t;
      for (int64_t h = 0; h < nkv; ++h) {
        std::memcpy(&st.k[size_t((h * st.cap + start + t) * D)], k + r * kv_rows + h * D, size_t(D) * 4);
        std::memcpy(&st.v[size_t((h * st.cap + start + t) * D)], v + r * kv_rows + h * D, size_t(D) * 4);
      }
    }
    k_.attention(q + row0_[i] * q_rows, q_head_stride, q_rows, it.n, st.k.data(), st.v.data(), st.cap, start, int(nh), int(nkv),
                 int(D), att + row0_[i] * nh * D);
  }
  if (c_.attn_output_gate)
    for (int64_t h = 0; h < nh; ++h) k_.sigmoid_gate(att + h * D, nh * D, q + h * 2 * D + D, q_rows, N_, D);
  float* o = sized(e_, N_ * H);
  k_.linear(L.attn.o_proj, att, N_, o);
  k_.add(x_.data(), o, N_ * H);
}

void HostForward::delta_layer(const LayerWeights& L, int layer, const std::vector<ForwardItem>& items) {
  const int64_t H = c_.hidden, C = c_.conv_dim(), VD = c_.value_dim(), Hv = c_.lin_v_heads;
  float* xn = xn_.data();
  float* m = sized(a_, N_ * C);
  float* z = sized(b_, N_ * VD);
  float* bb = sized(c_buf_, N_ * Hv);
  float* aa = sized(f_, N_ * Hv);
  float* conv = sized(d_, N_ * C + N_ * VD);
  float* o = conv + N_ * C;
  k_.linear(L.delta.in_proj_qkv, xn, N_, m);
  k_.linear(L.delta.in_proj_z, xn, N_, z);
  k_.linear(L.delta.in_proj_b, xn, N_, bb);
  k_.linear(L.delta.in_proj_a, xn, N_, aa);
  for (size_t i = 0; i < items.size(); ++i) {
    const auto& it = items[i];
    HostLayerState& st = it.seq->layers[size_t(layer)];
    const int64_t r = row0_[i];
    k_.causal_conv_silu(m + r * C, it.n, C, c_.conv_kernel, L.delta.conv.data(), st.conv.data(), conv + r * C);
    k_.gated_delta_rule(conv + r * C, bb + r * Hv, aa + r * Hv, it.n, c_, L.delta, st.rec.data(), o + r * VD);
  }
  k_.gated_rms_norm(o, z, N_, Hv, c_.lin_v_dim, L.delta.norm.data(), c_.rms_eps);
  float* out = sized(e_, N_ * H);
  k_.linear(L.delta.out_proj, o, N_, out);
  k_.add(x_.data(), out, N_ * H);
}

void HostForward::mlp(const LayerWeights& L) {
  const int64_t H = c_.hidden, I = c_.intermediate;
  float* xn = sized(xn_, N_ * H);
  k_.rms_norm(x_.data(), L.post_norm.data(), N_, H, c_.rms_eps, xn);
  float* g = sized(a_, N_ * I);
  float* u = sized(b_, N_ * I);
  k_.linear(L.gate_proj, xn, N_, g);
  k_.linear(L.up_proj, xn, N_, u);
  k_.swiglu(g, u, N_ * I, g);
  float* d = sized(e_, N_ * H);
  k_.linear(L.down_proj, g, N_, d);
  k_.add(x_.data(), d, N_ * H);
}

}  // namespace tandem
