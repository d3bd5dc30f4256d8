// Hashes: FNV-1a (fingerprints of small descriptions) and the state-file checksum.
#pragma once
#include <cstddef>
#include <cstdint>

namespace tandem {

constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ull;
uint64_t fnv1a64(const void* data, size_t n, uint64_t seed);

// The state file's per-tensor checksum ("lanes-fletcher64"): the bytes, zero-padded to a
// multiple of 32, are read as little-endian u32 words w[i]; lane l = i mod 8 keeps
// A_l += w[i], B_l += A_l (mod 2^64) in order; the result is
// fnv1a64 over (A_0..A_7, B_0..B_7, n as u64), each as 8 little-endian bytes.
uint64_t checksum(const void* data, size_t n);

// The same checksum over bytes fed in pieces of any size; each piece may also be copied
// to `dst` in the same pass.
class ChecksumStream {
 public:
  void update(const void* src, size_t n, void* dst = nullptr);
  uint64_t finish();

 private:
  uint64_t a_[8] = {0}, b_[8] = {0};
  unsigned char pending_[32];
  size_t pending_n_ = 0;
  size_t total_ = 0;
};

}  // namespace tandem
