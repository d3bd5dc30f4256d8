// The model's forward pass on host memory, written once for both architectures and for
// prefill and decode alike: a call runs any number of sequences, each consuming its own
// run of tokens at its own position. Every operation goes through a Kernels instance.
#pragma once
#include <cstdint>
#include <vector>

#include "tandem/host-sequence.h"
#include "tandem/kernels.h"
#include "tandem/model-config.h"
#include "tandem/weights.h"

namespace tandem {

struct ForwardItem {
  HostSequence* seq;
  const int32_t* tokens;  // validated ids
  int64_t n;              // ≥ 1
};

class HostForward {
 public:
  HostForward(const ModelConfig& cfg, const ModelWeights& w, Kernels& k);

  // Runs every item and appends its tokens to its sequence. Writes logits [Σn, V] (all rows,
  // item order) when all_logits, else [items, V] (the last row of each item); none when
  // logits is null.
  void run(const std::vector<ForwardItem>& items, bool all_logits, float* logits);
  size_t scratch_bytes() const;

 private:
  void attention_layer(const LayerWeights& L, int layer, const std::vector<ForwardItem>& items);
  void delta_layer(const LayerWeights& L, int layer, const std::vector<ForwardItem>& items);
  void mlp(const LayerWeights& L);

  const ModelConfig& c_;
  const ModelWeights& w_;
  Kernels& k_;
  DType rope_freq_dtype_;
  int64_t N_ = 0;
  std::vector<int64_t> row0_;      // first row of each item
  std::vector<int64_t> positions_; // [N]
  std::vector<float> x_, xn_, a_, b_, c_buf_, d_, e_, f_;
};

}  // namespace tandem
