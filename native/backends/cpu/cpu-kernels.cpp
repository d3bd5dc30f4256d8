#include "cpu-kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "tandem/blas.h"
#include "tandem/errors.h"

namespace tandem {

namespace {
inline float silu(float x) { return x / (1.0f + std::exp(-x)); }
inline float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
// torch.nn.functional.softplus with beta 1 and threshold 20.
inline float softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }
constexpr size_t kTileBytes = 1u << 20;  // one fp32 weight tile per thread, about L2-sized
}  // namespace

CpuKernels::CpuKernels(ThreadPool& pool) : pool_(pool) {}

size_t CpuKernels::scratch_bytes() const {
  size_t n = 0;
  for (const auto& v : tiles_) n += v.capacity();
  for (const auto& v : scores_) n += v.capacity();
  return n * sizeof(float);
}

void CpuKernels::linear(const Matrix& w, const float* x, int64_t T, float* y) {
  const int64_t rows = w.rows, cols = w.cols;
  if (T <= kGemvMaxRows) {
    pool_.parallel_for(rows, [&](int64_t b, int64_t e, int) { gemv_rows(w, x, T, y, b, e); });
    return;
  }
  // Each pool thread multiplies its own tiles of weight rows with single-threaded BLAS;
  // half-precision tiles are first converted into that thread's fp32 buffer.
  const size_t esz = dtype_size(w.dtype);
  int64_t tile_rows = std::max<int64_t>(16, int64_t(kTileBytes / (size_t(cols) * 4)) / 16 * 16);
  const int64_t n_tiles = (rows + tile_rows - 1) / tile_rows;
  if (w.dtype != DType::F32 && tiles_.size() < size_t(pool_.size())) tiles_.resize(size_t(pool_.size()));
  pool_.parallel_for(n_tiles, [&](int64_t tb, int64_t te, int worker) {
    for (int64_t tile = tb; tile < te; ++tile) {
      const int64_t r0 = tile * tile_rows, n = std::min(tile_rows, rows - r0);
      const float* wf;
      if (w.dtype == DType::F32) {
        wf = static_cast<const float*>(w.data) + r0 * cols;
      } else {
        std::vector<float>& buf = tiles_[size_t(worker)];
        if (buf.size() < size_t(tile_rows * cols)) buf.resize(size_t(tile_rows * cols));
        convert_to_f32(w.dtype, static_cast<const char*>(w.data) + size_t(r0 * cols) * esz, buf.data(), size_t(n * cols));
        wf = buf.data();
      }
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(T), int(n), int(cols), 1.0f, x, int(cols), wf, int(cols),
                  0.0f, y + r0, int(rows));
    }
  });
}

void CpuKernels::embed(const Matrix& e, const int32_t* tokens, int64_t T, float* y) {
  const size_t esz = dtype_size(e.dtype);
  for (int64_t t = 0; t < T; ++t)
    convert_to_f32(e.dtype, static_cast<const char*>(e.data) + size_t(tokens[t]) * size_t(e.cols) * esz,
                   y + t * e.cols, size_t(e.cols));
}

static void rms_row(const float* x, const float* w, int64_t dim, float eps, float* y) {
  float ss = 0;
  for (int64_t i = 0; i < dim; ++i) ss += x[i] * x[i];
  const float inv = 1.0f / std::sqrt(ss / float(dim) + eps);
  for (int64_t i = 0; i < dim; ++i) y[i] = x[i] * inv * w[i];
}

void CpuKernels::rms_norm(const float* x, const float* w, int64_t T, int64_t dim, float eps, float* y) {
  pool_.parallel_for(T, [&](int64_t b, int64_t e, int) {
    for (int64_t t = b; t < e; ++t) rms_row(x + t * dim, w, dim, eps, y + t * dim);
  });
}

void CpuKernels::head_rms_norm(float* x, int64_t T, int64_t heads, int64_t dim, int64_t head_stride, int64_t stride,
                               const float* w, float eps) {
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < heads; ++h) {
      float* p = x + t * stride + h * head_stride;
      rms_row(p, w, dim, eps, p);
    }
}

void CpuKernels::rope(float* x, int64_t T, int64_t heads, int64_t, int64_t head_stride, int64_t stride,
                      int rotary_dim, double theta, DType freq_dtype, const int64_t* positions) {
  const int half = rotary_dim / 2;
  std::vector<float> inv_freq(static_cast<size_t>(half)), cs(static_cast<size_t>(half)), sn(static_cast<size_t>(half));
  // As transformers: inv_freq = 1 / theta^(2i/R) in fp32, angle = p · inv_freq in fp32.
  for (int i = 0; i < half; ++i) {
    float f = 1.0f / std::pow(float(theta), float(2 * i) / float(rotary_dim));
    if (freq_dtype == DType::BF16) f = bf16_to_f32(f32_to_bf16(f));
    else if (freq_dtype == DType::F16) f = f16_to_f32(f32_to_f16(f));
    inv_freq[size_t(i)] = f;
  }
  for (int64_t t = 0; t < T; ++t) {
    const float p = float(positions[t]);
    for (int i = 0; i < half; ++i) {
      const float ang = p * inv_freq[size_t(i)];
      cs[size_t(i)] = std::cos(ang);
      sn[size_t(i)] = std::sin(ang);
    }
    for (int64_t h = 0; h < heads; ++h) {
      float* v = x + t * stride + h * head_stride;
      for (int i = 0; i < half; ++i) {
        const float a = v[i], b = v[i + half];
        v[i] = a * cs[size_t(i)] - b * sn[size_t(i)];
        v[i + half] = b * cs[size_t(i)] + a * sn[size_t(i)];
      }
    }
  }
}

void CpuKernels::attention(const float* q, int64_t q_head_stride, int64_t q_stride, int64_t T, const float* k_cache, const float* v_cache,
                           int64_t cap, int64_t start, int nh, int nkv, int D, float* out) {
  const int64_t P = start + T;  // keys visible to the last query
  const float scale = 1.0f / std::sqrt(float(D));
  const int group = nh / nkv;
  if (T <= 4) {
    // Decode-sized: one task per head, scores in a per-task buffer.
    pool_.parallel_for(nh, [&](int64_t hb, int64_t he, int) {
      std::vector<float> s(static_cast<size_t>(P));
      for (int64_t h = hb; h < he; ++h) {
        const int64_t g = h / group;
        const float* K = k_cache + g * cap * D;
        const float* V = v_cache + g * cap * D;
        for (int64_t t = 0; t < T; ++t) {
          const float* qh = q + t * q_stride + h * q_head_stride;
          const int64_t n = start + t + 1;
          float mx = -INFINITY;
          for (int64_t j = 0; j < n; ++j) {
            float d = 0;
            const float* kj = K + j * D;
            for (int i = 0; i < D; ++i) d += qh[i] * kj[i];
            s[size_t(j)] = d * scale;
            mx = std::max(mx, s[size_t(j)]);
          }
          float sum = 0;
          for (int64_t j = 0; j < n; ++j) {
            s[size_t(j)] = std::exp(s[size_t(j)] - mx);
            sum += s[size_t(j)];
          }
          float* o = out + t * int64_t(nh) * D + h * D;
          std::fill(o, o + D, 0.0f);
          const float inv = 1.0f / sum;
          for (int64_t j = 0; j < n; ++j) {
            const float p = s[size_t(j)] * inv;
            const float* vj = V + j * D;
            for (int i = 0; i < D; ++i) o[i] += p * vj[i];
          }
        }
      }
    });
    return;
  }
  // Prefill-sized: heads in parallel, single-threaded BLAS per head, one score buffer per thread.
  if (scores_.size() < size_t(pool_.size())) scores_.resize(size_t(pool_.size()));
  pool_.parallel_for(nh, [&](int64_t hb, int64_t he, int worker) {
    std::vector<float>& buf = scores_[size_t(worker)];
    if (buf.size() < size_t(T * P)) buf.resize(size_t(T * P));
    float* S = buf.data();
    for (int64_t h = hb; h < he; ++h) {
      const int64_t g = h / group;
      const float* K = k_cache + g * cap * D;
      const float* V = v_cache + g * cap * D;
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(T), int(P), D, scale, q + h * q_head_stride,
                  int(q_stride), K, D, 0.0f, S, int(P));
      for (int64_t t = 0; t < T; ++t) {
        float* row = S + t * P;
        const int64_t n = start + t + 1;
        float mx = -INFINITY;
        for (int64_t j = 0; j < n; ++j) mx = std::max(mx, row[j]);
        float sum = 0;
        for (int64_t j = 0; j < n; ++j) {
          row[j] = std::exp(row[j] - mx);
          sum += row[j];
        }
        const float inv = 1.0f / sum;
        for (int64_t j = 0; j < n; ++j) row[j] *= inv;
        for (int64_t j = n; j < P; ++j) row[j] = 0.0f;
      }
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(T), D, int(P), 1.0f, S, int(P), V, D, 0.0f,
                  out + h * D, nh * D);
    }
  });
}

void CpuKernels::causal_conv_silu(const float* m, int64_t T, int64_t C, int K, const float* taps, float* window,
                                  float* c) {
  const int W = K - 1;
  pool_.parallel_for(C, [&](int64_t cb, int64_t ce, int) {
    for (int64_t t = 0; t < T; ++t) {
      for (int64_t ch = cb; ch < ce; ++ch) {
        // Input at relative time t − (K−1) + j: from the window when negative, else from m.
        float acc = 0;
        for (int j = 0; j < K; ++j) {
          const int64_t src = t - W + j;
          const float in = src < 0 ? window[(W + src) * C + ch] : m[src * C + ch];
          acc += taps[j * C + ch] * in;
        }
        c[t * C + ch] = silu(acc);
      }
    }
    // Advance the window: the last K−1 inputs of (window ++ m).
    for (int64_t ch = cb; ch < ce; ++ch) {
      for (int j = 0; j < W; ++j) {
        const int64_t src = T - W + j;  // index into m, or into the old window when negative
        window[j * C + ch] = src < 0 ? window[(W + src) * C + ch] : m[src * C + ch];
      }
    }
  });
}

void CpuKernels::gated_delta_rule(const float* qkv, const float* b, const float* a, int64_t T, const ModelConfig& cfg,
                                  const DeltaNetWeights& w, float* state, float* o) {
  const int Hk = cfg.lin_k_heads, Hv = cfg.lin_v_heads, Dk = cfg.lin_k_dim, Dv = cfg.lin_v_dim;
  const int64_t C = cfg.conv_dim(), key_dim = cfg.key_dim();
  const int ratio = Hv / Hk;
  const float q_scale = 1.0f / std::sqrt(float(Dk));
  pool_.parallel_for(Hv, [&](int64_t hb, int64_t he, int) {
    std::vector<float> qn(static_cast<size_t>(Dk)), kn(static_cast<size_t>(Dk)), u(static_cast<size_t>(Dv)), delta(static_cast<size_t>(Dv));
    for (int64_t h = hb; h < he; ++h) {
      const int64_t kh = h / ratio;  // repeat_interleave: value head h reads key head h / (Hv/Hk)
      float* S = state + h * Dk * Dv;
      for (int64_t t = 0; t < T; ++t) {
        const float* row = qkv + t * C;
        const float* q = row + kh * Dk;
        const float* k = row + key_dim + kh * Dk;
        const float* v = row + 2 * key_dim + h * Dv;
        float qs = 0, ks = 0;
        for (int i = 0; i < Dk; ++i) {
          qs += q[i] * q[i];
          ks += k[i] * k[i];
        }
        const float qi = 1.0f / std::sqrt(qs + 1e-6f) * q_scale, ki = 1.0f / std::sqrt(ks + 1e-6f);
        for (int i = 0; i < Dk; ++i) {
          qn[size_t(i)] = q[i] * qi;
          kn[size_t(i)] = k[i] * ki;
        }
        const float beta = sigmoid(b[t * Hv + h]);
        const float g = w.neg_exp_a[size_t(h)] * softplus(a[t * Hv + h] + w.dt_bias[size_t(h)]);
        const float decay = std::exp(g);
        // u = (decay·S)ᵀ k
        std::fill(u.begin(), u.end(), 0.0f);
        for (int i = 0; i < Dk; ++i) {
          const float ki_ = kn[size_t(i)];
          const float* Si = S + i * Dv;
          for (int j = 0; j < Dv; ++j) u[size_t(j)] += Si[j] * ki_;
        }
        for (int j = 0; j < Dv; ++j) delta[size_t(j)] = beta * (v[j] - decay * u[size_t(j)]);
        // S ← decay·S + k δᵀ;  o = Sᵀ q
        float* ot = o + t * int64_t(Hv) * Dv + h * Dv;
        std::fill(ot, ot + Dv, 0.0f);
        for (int i = 0; i < Dk; ++i) {
          const float ki_ = kn[size_t(i)], qi_ = qn[size_t(i)];
          float* Si = S + i * Dv;
          for (int j = 0; j < Dv; ++j) {
            Si[j] = decay * Si[j] + ki_ * delta[size_t(j)];
            ot[j] += Si[j] * qi_;
          }
        }
      }
    }
  });
}

void CpuKernels::gated_rms_norm(float* o, const float* z, int64_t T, int64_t heads, int64_t dim, const float* w,
                                float eps) {
  pool_.parallel_for(T * heads, [&](int64_t b, int64_t e, int) {
    for (int64_t r = b; r < e; ++r) {
      float* x = o + r * dim;
      const float* zz = z + r * dim;
      float ss = 0;
      for (int64_t i = 0; i < dim; ++i) ss += x[i] * x[i];
      const float inv = 1.0f / std::sqrt(ss / float(dim) + eps);
      for (int64_t i = 0; i < dim; ++i) x[i] = w[i] * (x[i] * inv) * silu(zz[i]);
    }
  });
}

void CpuKernels::swiglu(const float* gate, const float* up, int64_t n, float* out) {
  pool_.parallel_for(n, [&](int64_t b, int64_t e, int) {
    for (int64_t i = b; i < e; ++i) out[i] = silu(gate[i]) * up[i];
  });
}

void CpuKernels::sigmoid_gate(float* x, int64_t x_stride, const float* gate, int64_t gate_stride, int64_t T,
                              int64_t n) {
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = 0; i < n; ++i) x[t * x_stride + i] *= sigmoid(gate[t * gate_stride + i]);
}

void CpuKernels::add(float* y, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

}  // namespace tandem
