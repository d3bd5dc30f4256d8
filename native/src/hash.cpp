#include "tandem/hash.h"

#include <cstring>
#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace tandem {

uint64_t fnv1a64(const void* data, size_t n, uint64_t h) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

namespace {

inline void scalar_block(uint64_t* a, uint64_t* b, const unsigned char* p) {
  for (int l = 0; l < 8; ++l) {
    uint32_t w;
    std::memcpy(&w, p + 4 * l, 4);
    a[l] += w;
    b[l] += a[l];
  }
}

// Processes whole 32-byte blocks of src (n a multiple of 32), copying to dst when non-null.
void blocks(uint64_t* a, uint64_t* b, const unsigned char* s, unsigned char* d, size_t n) {
  size_t i = 0;
#if defined(__AVX2__)
  __m256i a_lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a));
  __m256i a_hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 4));
  __m256i b_lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
  __m256i b_hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 4));
  for (; i + 32 <= n; i += 32) {
    __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i));
    if (d) _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i), v);
    a_lo = _mm256_add_epi64(a_lo, _mm256_cvtepu32_epi64(_mm256_castsi256_si128(v)));
    a_hi = _mm256_add_epi64(a_hi, _mm256_cvtepu32_epi64(_mm256_extracti128_si256(v, 1)));
    b_lo = _mm256_add_epi64(b_lo, a_lo);
    b_hi = _mm256_add_epi64(b_hi, a_hi);
  }
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(a), a_lo);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(a + 4), a_hi);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(b), b_lo);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(b + 4), b_hi);
#endif
  for (; i + 32 <= n; i += 32) {
    if (d) std::memcpy(d + i, s + i, 32);
    scalar_block(a, b, s + i);
  }
}

}  // namespace

void ChecksumStream::update(const void* src, size_t n, void* dst) {
  const unsigned char* s = static_cast<const unsigned char*>(src);
  unsigned char* d = static_cast<unsigned char*>(dst);
  total_ += n;
  if (pending_n_ > 0) {
    const size_t take = n < 32 - pending_n_ ? n : 32 - pending_n_;
    std::memcpy(pending_ + pending_n_, s, take);
    if (d) std::memcpy(d, s, take);
    pending_n_ += take;
    s += take;
    if (d) d += take;
    n -= take;
    if (pending_n_ < 32) return;
    scalar_block(a_, b_, pending_);
    pending_n_ = 0;
  }
  const size_t whole = n & ~size_t(31);
  blocks(a_, b_, s, d, whole);
  if (whole < n) {
    pending_n_ = n - whole;
    std::memcpy(pending_, s + whole, pending_n_);
    if (d) std::memcpy(d + whole, s + whole, pending_n_);
  }
}

uint64_t ChecksumStream::finish() {
  if (pending_n_ > 0) {
    std::memset(pending_ + pending_n_, 0, 32 - pending_n_);
    scalar_block(a_, b_, pending_);
    pending_n_ = 0;
  }
  unsigned char buf[8 * 17];
  for (int l = 0; l < 8; ++l) std::memcpy(buf + 8 * l, &a_[l], 8);
  for (int l = 0; l < 8; ++l) std::memcpy(buf + 64 + 8 * l, &b_[l], 8);
  uint64_t n64 = total_;
  std::memcpy(buf + 128, &n64, 8);
  return fnv1a64(buf, sizeof buf, kFnvOffset);
}

uint64_t checksum(const void* data, size_t n) {
  ChecksumStream s;
  s.update(data, n);
  return s.finish();
}

}  // namespace tandem
