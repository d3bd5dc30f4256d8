#include "tandem/sampling.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "tandem/errors.h"

namespace tandem {

void validate_sampling(const SamplingParams& p) {
  if (!std::isfinite(p.temperature) || p.temperature < 0 || p.temperature > 100)
    fail(ErrorCode::InvalidArgument, "temperature must be a number in [0, 100]");
  if (p.top_k < 0) fail(ErrorCode::InvalidArgument, "top_k must be ≥ 0");
  if (!(p.top_p > 0.0f && p.top_p <= 1.0f)) fail(ErrorCode::InvalidArgument, "top_p must be in (0, 1]");
}

static uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

double counter_uniform(uint64_t seed, uint64_t position) {
  const uint64_t h = splitmix64(splitmix64(seed) ^ (position * 0xd1342543de82ef95ull + 0x2545f4914f6cdd1dull));
  return double(h >> 11) * (1.0 / 9007199254740992.0);
}

int32_t argmax(const float* logits, int64_t n) {
  int64_t best = -1;
  float bv = 0;
  for (int64_t i = 0; i < n; ++i)
    if (!std::isnan(logits[i]) && (best < 0 || logits[i] > bv)) {
      best = i;
      bv = logits[i];
    }
  return int32_t(best < 0 ? 0 : best);
}

int32_t sample_token(const float* logits, int64_t n, const SamplingParams& p, uint64_t position) {
  validate_sampling(p);
  if (p.temperature <= 0.0f || p.top_k == 1) return argmax(logits, n);
  // Candidates are walked in descending logit order (ties: lower index first). Only a
  // prefix is sorted up front; the rest is sorted if the walk ever reaches it.
  const int64_t k = p.top_k > 0 ? std::min<int64_t>(p.top_k, n) : n;
  auto value = [&](int32_t i) { return std::isnan(logits[i]) ? -INFINITY : logits[i]; };
  auto better = [&](int32_t a, int32_t b) { return value(a) > value(b) || (value(a) == value(b) && a < b); };
  std::vector<int32_t> idx(static_cast<size_t>(n));
  std::iota(idx.begin(), idx.end(), 0);
  int64_t sorted = std::min<int64_t>(k, 4096);
  std::partial_sort(idx.begin(), idx.begin() + sorted, idx.end(), better);
  auto sort_rest = [&] {
    if (sorted == k) return;
    if (k == n) std::sort(idx.begin() + sorted, idx.end(), better);
    else std::partial_sort(idx.begin() + sorted, idx.begin() + k, idx.end(), better);
    sorted = k;
  };
  if (k < n) sort_rest();  // an explicit top-k needs its exact set
  const double top = double(value(idx[0]));
  if (!std::isfinite(top)) return argmax(logits, n);
  const double inv_t = 1.0 / double(p.temperature);
  auto weight = [&](int32_t i) { return std::exp((double(value(i)) - top) * inv_t); };
  double total = 0;
  if (k == n) {
    for (int64_t i = 0; i < n; ++i) total += weight(int32_t(i));
  } else {
    for (int64_t i = 0; i < k; ++i) total += weight(idx[size_t(i)]);
  }
  // Nucleus: the smallest prefix whose mass reaches top_p·total (at least one token).
  double kept = total;
  int64_t keep = k;
  if (p.top_p < 1.0f) {
    double acc = 0;
    for (int64_t i = 0; i < k; ++i) {
      if (i == sorted) sort_rest();
      acc += weight(idx[size_t(i)]);
      if (acc >= double(p.top_p) * total) {
        keep = i + 1;
        kept = acc;
        break;
      }
    }
  }
  const double r = counter_uniform(p.seed, position) * kept;
  double acc = 0;
  for (int64_t i = 0; i < keep; ++i) {
    if (i == sorted) sort_rest();
    acc += weight(idx[size_t(i)]);
    if (r < acc) return idx[size_t(i)];
  }
  if (keep > sorted) sort_rest();
  return idx[size_t(keep - 1)];
}

}  // namespace tandem
