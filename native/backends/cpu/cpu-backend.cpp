// The CPU backend: HostForward over CpuKernels, state in host memory (fp32).
#include <algorithm>
#include <functional>
#include <thread>

#include "cpu-kernels.h"
#include "tandem/backend.h"
#include "tandem/blas.h"
#include "tandem/errors.h"
#include "tandem/host-forward.h"
#include "tandem/state-schema.h"

namespace tandem {

namespace {

class HostSequenceState : public SequenceState {
 public:
  explicit HostSequenceState(HostSequence s) : s(std::move(s)) {}
  int64_t length() const override { return s.length(); }
  const std::vector<int32_t>& tokens() const override { return s.tokens; }
  size_t bytes() const override { return s.bytes(); }
  HostSequence s;
};

class CpuBackend : public Backend {
 public:
  CpuBackend(const ModelConfig& cfg, const ModelWeights& w, int threads)
      : cfg_(cfg), pool_(threads), kernels_(pool_), forward_(cfg, w, kernels_),
        pfor_([this](size_t n, const std::function<void(size_t)>& body) {
          pool_.parallel_for(int64_t(n), [&](int64_t b, int64_t e, int) {
            for (int64_t i = b; i < e; ++i) body(size_t(i));
          });
        }) {
    blas_set_threads(1);  // parallelism comes from the pool (see cpu-kernels.h)
  }

  const char* name() const override { return "cpu"; }

  std::unique_ptr<SequenceState> new_sequence() override {
    std::unique_ptr<HostSequenceState> s = take_recycled();
    if (!s) return std::make_unique<HostSequenceState>(make_host_sequence(cfg_));
    for (auto& L : s->s.layers) {
      std::fill(L.conv.begin(), L.conv.end(), 0.0f);
      std::fill(L.rec.begin(), L.rec.end(), 0.0f);
    }
    return s;
  }

  // Freed sequences keep their buffers (up to kRecycled of them): reusing them spares the
  // page faults and zeroing of fresh allocations, which dominate a state import otherwise.
  void release(std::unique_ptr<SequenceState> s) override {
    if (recycled_.size() >= kRecycled) return;
    auto* h = static_cast<HostSequenceState*>(s.release());
    h->s.tokens.clear();
    recycled_.emplace_back(h);
  }

  void forward(const std::vector<BackendItem>& items, bool all_logits, float* logits) override {
    std::vector<ForwardItem> f;
    f.reserve(items.size());
    for (const auto& it : items) f.push_back({&host(*it.seq).s, it.tokens, it.n});
    forward_.run(f, all_logits, logits);
  }

  size_t export_state(const SequenceState& seq, const std::string& path, uint64_t fingerprint) override {
    const HostSequence& s = host(seq).s;
    const int64_t n = s.length();
    std::vector<StateTensorOut> out;
    for (const StateTensorSpec& spec : state_schema(cfg_, n)) {
      StateTensorOut t{spec.name, DType::F32, spec.shape, {}};
      if (spec.kind == StateTensorKind::Tokens) {
        t.dtype = DType::I32;
        t.parts.push_back({s.tokens.data(), size_t(n) * 4});
      } else {
        const HostLayerState& L = s.layers[size_t(spec.layer)];
        if (spec.kind == StateTensorKind::Conv) t.parts.push_back({L.conv.data(), L.conv.size() * 4});
        else if (spec.kind == StateTensorKind::Recurrent) t.parts.push_back({L.rec.data(), L.rec.size() * 4});
        else {
          const std::vector<float>& src = spec.kind == StateTensorKind::Keys ? L.k : L.v;
          const int64_t D = cfg_.head_dim;
          for (int64_t h = 0; h < cfg_.n_kv_heads && n > 0; ++h)
            t.parts.push_back({src.data() + h * L.cap * D, size_t(n * D) * 4});
        }
      }
      out.push_back(std::move(t));
    }
    return write_state_file(path, fingerprint, n, out, pfor_);
  }

  std::unique_ptr<SequenceState> import_state(const StateFileReader& r) override {
    const int64_t n = r.n_tokens();
    std::unique_ptr<HostSequenceState> holder = take_recycled();
    if (!holder) holder = std::make_unique<HostSequenceState>(make_host_sequence(cfg_));
    HostSequence& s = holder->s;  // every byte the state needs is overwritten below
    reserve_kv(s, cfg_, n);
    // Every tensor is checked (presence, shape, dtype) first, then copied in parallel,
    // each verified against its checksum as it is copied.
    std::vector<std::function<void()>> copies;
    for (const StateTensorSpec& spec : state_schema(cfg_, n)) {
      const StateEntry& e = r.require(spec.name, spec.shape);
      if (spec.kind == StateTensorKind::Tokens) {
        if (e.dtype != DType::I32) fail(ErrorCode::StateFile, "state file " + r.path() + ": tokens must be i32");
        s.tokens.resize(size_t(n));
        r.read_raw(e, {{s.tokens.data(), size_t(n) * 4}});
        validate_state_tokens(s.tokens, cfg_, r.path());
        continue;
      }
      if (spec.recurrent() && e.dtype != DType::F32)
        fail(ErrorCode::StateFile, "state file " + r.path() + ": " + spec.name + " must be f32");
      if (e.dtype == DType::I32) fail(ErrorCode::StateFile, "state file " + r.path() + ": " + spec.name + " must be floating point");
      HostLayerState& L = s.layers[size_t(spec.layer)];
      std::vector<MutSpan> parts;
      if (spec.kind == StateTensorKind::Conv) parts.push_back({L.conv.data(), L.conv.size() * 4});
      else if (spec.kind == StateTensorKind::Recurrent) parts.push_back({L.rec.data(), L.rec.size() * 4});
      else {
        std::vector<float>& dst = spec.kind == StateTensorKind::Keys ? L.k : L.v;
        const int64_t D = cfg_.head_dim;
        for (int64_t h = 0; h < cfg_.n_kv_heads && n > 0; ++h) parts.push_back({dst.data() + h * L.cap * D, size_t(n * D) * 4});
      }
      copies.push_back([&r, &e, parts] { r.read_f32(e, parts); });
    }
    pfor_(copies.size(), [&](size_t i) { copies[i](); });
    return holder;
  }

  size_t scratch_bytes() const override {
    size_t n = kernels_.scratch_bytes() + forward_.scratch_bytes();
    for (const auto& r : recycled_) n += r->bytes();
    return n;
  }

 private:
  static HostSequenceState& host(SequenceState& s) { return static_cast<HostSequenceState&>(s); }
  static const HostSequenceState& host(const SequenceState& s) { return static_cast<const HostSequenceState&>(s); }
  std::unique_ptr<HostSequenceState> take_recycled() {
    if (recycled_.empty()) return nullptr;
    std::unique_ptr<HostSequenceState> s = std::move(recycled_.back());
    recycled_.pop_back();
    return s;
  }

  static constexpr size_t kRecycled = 4;
  const ModelConfig& cfg_;
  std::vector<std::unique_ptr<HostSequenceState>> recycled_;
  ThreadPool pool_;
  CpuKernels kernels_;
  HostForward forward_;
  ParallelFor pfor_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(const ModelConfig& cfg, const ModelWeights& w, const BackendOptions& o) {
  int threads = o.threads > 0 ? o.threads : int(std::thread::hardware_concurrency());
  if (threads <= 0) threads = 1;
  if (threads > 256) fail(ErrorCode::InvalidArgument, "threads must be at most 256");
  return std::make_unique<CpuBackend>(cfg, w, threads);
}

}  // namespace tandem
