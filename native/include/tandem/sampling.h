// Token sampling from logits. Deterministic in (logits, params, position): the one random
// draw is a counter-based hash of (seed, position), so any process that samples the same
// logits for the same position of a request picks the same token.
#pragma once
#include <cstdint>

namespace tandem {

struct SamplingParams {
  float temperature = 0.0f;  // ≤ 0: greedy
  int top_k = 0;             // 0: no cut
  float top_p = 1.0f;        // in (0, 1]; 1: no cut
  uint64_t seed = 0;
};

// Throws E_INVALID_ARGUMENT for NaN/negative/huge temperature, top_p outside (0, 1], top_k < 0.
void validate_sampling(const SamplingParams& p);
// Uniform double in [0, 1) from (seed, position): splitmix64 over both, 53 bits.
double counter_uniform(uint64_t seed, uint64_t position);
// Index of the largest logit (lowest index on ties; NaN never wins).
int32_t argmax(const float* logits, int64_t n);
int32_t sample_token(const float* logits, int64_t n, const SamplingParams& p, uint64_t position);

}  // namespace tandem
