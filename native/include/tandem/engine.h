// The engine: one model, one backend, many sequences. Every public method is safe to call
// from any thread; calls are serialised (one owner per engine). All failures throw
// TandemError with a stable code.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tandem/backend.h"
#include "tandem/model-config.h"
#include "tandem/safetensors.h"
#include "tandem/sampling.h"
#include "tandem/weights.h"

namespace tandem {

struct EngineOptions {
  std::string engine = "cpu";
  int threads = 0;
  int device = 0;
};

struct EngineStats {
  size_t state_bytes = 0;
  size_t scratch_bytes = 0;
  size_t sequences = 0;
};

// Engine kinds compiled in and usable on this machine.
std::vector<std::string> available_engines();

class Engine {
 public:
  Engine(const std::string& model_dir, const EngineOptions& options);
  ~Engine();

  const ModelConfig& config() const { return cfg_; }
  const ModelWeights& weights() const { return weights_; }
  const std::string& kind() const { return kind_; }
  std::string fingerprint_hex() const;

  int create_sequence();
  void free_sequence(int seq);
  int64_t sequence_length(int seq);
  std::vector<int32_t> sequence_tokens(int seq);

  // Logits [n, V] when all_logits, else [1, V]. chunk ≥ 1.
  std::vector<float> prefill(int seq, const int32_t* tokens, int64_t n, bool all_logits, int64_t chunk);
  // One step for B distinct sequences; logits [B, V].
  std::vector<float> decode(const int32_t* seqs, const int32_t* tokens, int64_t B);

  size_t export_state(int seq, const std::string& path);
  int import_state(const std::string& path);

  EngineStats stats();
  void close();
  // Throws E_INVALID_ARGUMENT once close() has run.
  void check_open() const;

 private:
  SequenceState& get(int seq);
  void check_tokens(const int32_t* tokens, int64_t n) const;

  std::mutex mu_;
  std::string kind_;
  ModelConfig cfg_;
  std::unique_ptr<SafetensorsSet> files_;
  ModelWeights weights_;
  std::unique_ptr<Backend> backend_;
  std::map<int, std::unique_ptr<SequenceState>> seqs_;
  int next_id_ = 1;
  bool closed_ = false;
};

}  // namespace tandem
