#include "tandem/host-sequence.h"

#include <algorithm>
#include <cstring>

namespace tandem {

size_t HostSequence::bytes() const {
  size_t n = tokens.capacity() * sizeof(int32_t);
  for (const auto& L : layers) n += (L.conv.capacity() + L.rec.capacity() + L.k.capacity() + L.v.capacity()) * 4;
  return n;
}

HostSequence make_host_sequence(const ModelConfig& c) {
  HostSequence s;
  s.layers.resize(size_t(c.n_layers));
  for (int i = 0; i < c.n_layers; ++i) {
    HostLayerState& L = s.layers[size_t(i)];
    if (c.layers[size_t(i)] == LayerKind::LinearAttention) {
      L.conv.assign(size_t(c.conv_kernel - 1) * size_t(c.conv_dim()), 0.0f);
      L.rec.assign(size_t(c.lin_v_heads) * size_t(c.lin_k_dim) * size_t(c.lin_v_dim), 0.0f);
    }
  }
  return s;
}

void reserve_kv(HostSequence& s, const ModelConfig& c, int64_t rows) {
  for (int i = 0; i < c.n_layers; ++i) {
    if (c.layers[size_t(i)] != LayerKind::FullAttention) continue;
    HostLayerState& L = s.layers[size_t(i)];
    if (L.cap >= rows) continue;
    const int64_t cap = std::max<int64_t>({rows, 2 * L.cap, 64});
    const int64_t D = c.head_dim, H = c.n_kv_heads;
    std::vector<float> k(static_cast<size_t>(H * cap * D), 0.0f), v(size_t(H * cap * D), 0.0f);
    const int64_t used = std::min(L.cap, s.length());
    for (int64_t h = 0; h < H && used > 0; ++h) {
      std::memcpy(&k[size_t(h * cap * D)], &L.k[size_t(h * L.cap * D)], size_t(used * D) * 4);
      std::memcpy(&v[size_t(h * cap * D)], &L.v[size_t(h * L.cap * D)], size_t(used * D) * 4);
    }
    L.k.swap(k);
    L.v.swap(v);
    L.cap = cap;
  }
}

}  // namespace tandem
