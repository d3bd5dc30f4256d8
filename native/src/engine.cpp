#include "tandem/engine.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "tandem/errors.h"
#include "tandem/state-file.h"

namespace tandem {

#if defined(TANDEM_WITH_CUDA)
bool cuda_device_available();
std::unique_ptr<Backend> make_cuda_backend(const ModelConfig& cfg, const ModelWeights& w, const BackendOptions& o);
#endif

std::vector<std::string> available_engines() {
  std::vector<std::string> e{"cpu"};
#if defined(TANDEM_WITH_CUDA)
  if (cuda_device_available()) e.push_back("cuda");
#endif
  return e;
}

Engine::Engine(const std::string& dir, const EngineOptions& o) : kind_(o.engine) {
  if (o.threads < 0 || o.threads > 256) fail(ErrorCode::InvalidArgument, "threads must be in [0, 256]");
  if (o.device < 0) fail(ErrorCode::InvalidArgument, "device must be ≥ 0");
  cfg_ = load_model_config(dir);
  files_ = SafetensorsSet::open_model_dir(dir);
  weights_ = bind_weights(cfg_, *files_);
  BackendOptions bo{o.threads, o.device};
  if (kind_ == "cpu") {
    backend_ = make_cpu_backend(cfg_, weights_, bo);
  } else if (kind_ == "cuda") {
#if defined(TANDEM_WITH_CUDA)
    if (!cuda_device_available()) fail(ErrorCode::EngineUnavailable, "engine cuda: no CUDA device is present");
    backend_ = make_cuda_backend(cfg_, weights_, bo);
#else
    fail(ErrorCode::EngineUnavailable, "engine cuda: this build has no CUDA backend (nvcc was not found at build time)");
#endif
  } else {
    fail(ErrorCode::EngineUnavailable, "unknown engine \"" + kind_ + "\" (available: cpu" +
#if defined(TANDEM_WITH_CUDA)
                                           std::string(", cuda") +
#else
                                           std::string() +
#endif
                                           ")");
  }
}

Engine::~Engine() = default;

std::string Engine::fingerprint_hex() const {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(weights_.fingerprint));
  return buf;
}

void Engine::check_open() const {
  if (closed_) fail(ErrorCode::InvalidArgument, "engine is closed");
}

SequenceState& Engine::get(int seq) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) fail(ErrorCode::InvalidArgument, "unknown sequence " + std::to_string(seq));
  return *it->second;
}

void Engine::check_tokens(const int32_t* tokens, int64_t n) const {
  for (int64_t i = 0; i < n; ++i)
    if (tokens[i] < 0 || tokens[i] >= cfg_.vocab_size)
      fail(ErrorCode::InvalidArgument, "token id " + std::to_string(tokens[i]) + " at index " + std::to_string(i) +
                                           " is outside the vocabulary [0, " + std::to_string(cfg_.vocab_size) + ")");
}

int Engine::create_sequence() {
  std::lock_guard<std::mutex> lock(mu_);
  check_open();
  const int id = next_id_++;
  seqs_.emplace(id, backend_->new_sequence());
  return id;
}

void Engine::free_sequence(int seq) {
  std::lock_guard<std::mutex> lock(mu_);
  check_open();
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) fail(ErrorCode::InvalidArgument, "unknown sequence " + std::to_string(seq));
  backend_->release(std::move(it->second));
  seqs_.erase(it);
}

int64_t Engine::sequence_length(int seq) {
  std::lock_guard<std::mutex> lock(mu_);
  check_open();
  return get(seq).length();
}

std::vector<int32_t> Engine::sequence_tokens(int seq) {
  std::lock_guard<std::mutex> lock(mu_);
  check_open();
  return get(seq).tokens();
}

std::vector<float> Engine::prefill(int seq, const int32_t* tokens, int64_t n, bool all_logits, int64_t chunk) {
  std::lock_guard<std::mutex> lock(mu_);
  check_open();
  SequenceState& s = get(seq);
  if (n < 1) fail(ErrorCode::InvalidArgument, "prefill needs at least one token");
  if (chunk < 1) fail(ErrorCode::InvalidArgument, "chunk size must be ≥ 1");
  if (s.length() + n > cfg_.max_positions)
    fail(ErrorCode::InvalidArgument, "sequence would reach " + std::to_string(s.length() + n) +
                                         " tokens, beyond max_position_embeddings " + std::to_string(cfg_.max_positions));
  check_tokens(tokens, n);
  const int64_t V = cfg_.vocab_size;
  std::vector<float> logits(static_cast<size_t>(all_logits ? n * V : V));
  for (int64_t off = 0; off < n; off += chunk) {
    const int64_t m = std::min(chunk, n - off);
    const bool last = off + m == n;
    float* out = all_logits ? logits.data() + off * V : (last ? logits.data() : nullptr);
    backend_->forward({{&s, tokens + off, m}}, all_logits, out);
  }
  return logits;
}

std::vector<float> Engine::decode(const int32_t* seqs, const int32_t* tokens, int64_t B) {
  std::lock_guard<std::mutex> lock(mu_);
  check_open();
  if (B < 1) fail(ErrorCode::InvalidArgument, "decode needs at least one sequence");
  check_tokens(tokens, B);
  std::set<int> seen;
  std::vector<BackendItem> items;
  for (int64_t i = 0; i < B; ++i) {
    if (!seen.insert(seqs[i]).second)
      fail(ErrorCode::InvalidArgument, "sequence " + std::to_string(seqs[i]) + " appears twice in one decode step");
    SequenceState& s = get(seqs[i]);
    if (s.length() + 1 > cfg_.max_positions)
      fail(ErrorCode::InvalidArgument, "sequence " + std::to_string(seqs[i]) + " is at max_position_embeddings");
    items.push_back({&s, tokens + i, 1});
  }
  std::vector<float> logits(static_cast<size_t>(B * cfg_.vocab_size));
  backend_->forward(items, false, logits.data());
  return logits;
}

size_t Engine::export_state(int seq, const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  check_open();
  return backend_->export_state(get(seq), path, weights_.fingerprint);
}

int Engine::import_state(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  check_open();
  StateFileReader r(path);
  if (r.fingerprint() != weights_.fingerprint) {
    char buf[80];
    std::snprintf(buf, sizeof buf, "%016llx, this model is %016llx", static_cast<unsigned long long>(r.fingerprint()),
                  static_cast<unsigned long long>(weights_.fingerprint));
    fail(ErrorCode::StateMismatch, "state file " + path + " was made by another model (fingerprint " + buf + ")");
  }
  if (r.n_tokens() > cfg_.max_positions)
    fail(ErrorCode::StateFile, "state file " + path + ": token count exceeds max_position_embeddings");
  auto s = backend_->import_state(r);
  const int id = next_id_++;
  seqs_.emplace(id, std::move(s));
  return id;
}

EngineStats Engine::stats() {
  std::lock_guard<std::mutex> lock(mu_);
  EngineStats st;
  if (closed_) return st;
  for (const auto& kv : seqs_) st.state_bytes += kv.second->bytes();
  st.scratch_bytes = backend_->scratch_bytes();
  st.sequences = seqs_.size();
  return st;
}

void Engine::close() {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return;
  seqs_.clear();
  backend_.reset();
  weights_ = ModelWeights();
  files_.reset();
  closed_ = true;
}

}  // namespace tandem
