// An engine backend: owns the compute for one model on one device. The CPU backend is the
// reference; others (CUDA, Metal, ANE) implement the same contract and are tested against it.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tandem/model-config.h"
#include "tandem/state-file.h"
#include "tandem/weights.h"

namespace tandem {

// One sequence's state, in whatever memory the backend keeps it.
class SequenceState {
 public:
  virtual ~SequenceState() = default;
  virtual int64_t length() const = 0;
  virtual const std::vector<int32_t>& tokens() const = 0;
  virtual size_t bytes() const = 0;
};

struct BackendItem {
  SequenceState* seq;
  const int32_t* tokens;  // validated ids
  int64_t n;              // ≥ 1
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  virtual std::unique_ptr<SequenceState> new_sequence() = 0;
  // Takes back a sequence the engine freed; a backend may keep its buffers for reuse.
  virtual void release(std::unique_ptr<SequenceState> s) { s.reset(); }
  // Runs each item's tokens on top of its sequence and appends them to it. Logits (host,
  // fp32): [Σn, V] when all_logits, else [items, V] for the last token of each item; none
  // when logits is null.
  virtual void forward(const std::vector<BackendItem>& items, bool all_logits, float* logits) = 0;
  // Writes the sequence's state file (see state-schema.h for its tensors). Returns its bytes.
  virtual size_t export_state(const SequenceState& s, const std::string& path, uint64_t fingerprint) = 0;
  // Builds a sequence from a validated reader whose fingerprint matched; E_STATE_FILE on any
  // missing or mis-shaped tensor, bad token id or checksum mismatch.
  virtual std::unique_ptr<SequenceState> import_state(const StateFileReader& r) = 0;
  virtual size_t scratch_bytes() const = 0;
};

struct BackendOptions {
  int threads = 0;
  int device = 0;
};

// The CPU backend (BLAS + threads). Always available.
std::unique_ptr<Backend> make_cpu_backend(const ModelConfig& cfg, const ModelWeights& w, const BackendOptions& o);

}  // namespace tandem
