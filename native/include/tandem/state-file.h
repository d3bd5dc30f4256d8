// The state file: one sequence's model state, handed from one engine to another.
// Byte layout (little-endian; documented in native/STATE-FILE.md):
//   [0, 128)            header: magic "TNDMSTAT", version, header bytes, file bytes,
//                       model fingerprint, token count, tensor count, header checksum
//   [128, 128 + 128·n)  tensor table: name[64], dtype, ndim, shape[4], offset, bytes, checksum
//   tensors, each at a multiple of 16 KiB, in table order, zero padding between.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tandem/dtype.h"
#include "tandem/mapped-file.h"

namespace tandem {

constexpr uint32_t kStateFileVersion = 1;
constexpr size_t kStateAlign = 16384;
constexpr size_t kStateHeaderBytes = 128;
constexpr size_t kStateEntryBytes = 128;
constexpr size_t kStateMaxTensors = 4096;

struct ConstSpan {
  const void* data;
  size_t bytes;
};
struct MutSpan {
  void* data;
  size_t bytes;
};

// A tensor to write: its bytes are the concatenation of `parts`.
struct StateTensorOut {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<ConstSpan> parts;
};

// Runs body(i) for every i in [0, n), possibly in parallel; returns when all are done and
// rethrows the first exception.
using ParallelFor = std::function<void(size_t n, const std::function<void(size_t)>& body)>;
void serial_for(size_t n, const std::function<void(size_t)>& body);

// Writes the file at `path` through a temporary name in the same directory and renames it
// into place, tensors spread over `pfor`. Returns the file's size. Throws E_IO (the
// temporary file is removed).
size_t write_state_file(const std::string& path, uint64_t fingerprint, int64_t n_tokens,
                        const std::vector<StateTensorOut>& tensors, const ParallelFor& pfor = serial_for);

struct StateEntry {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t offset;
  uint64_t bytes;
  uint64_t checksum;
};

// Maps a state file read-only and validates its header and tensor table: magic, version,
// sizes, header checksum, bounds, alignment, overlaps, dtype/shape/byte agreement. Tensor
// bytes are checked against their checksums as they are read. Every problem throws
// E_STATE_FILE naming the file.
class StateFileReader {
 public:
  explicit StateFileReader(const std::string& path);

  uint32_t version() const { return version_; }
  uint64_t fingerprint() const { return fingerprint_; }
  int64_t n_tokens() const { return n_tokens_; }
  size_t file_bytes() const { return file_.size(); }
  const std::string& path() const { return file_.path(); }
  const std::vector<StateEntry>& entries() const { return entries_; }
  // The entry of that name with exactly that dtype-independent shape, or throws E_STATE_FILE.
  const StateEntry& require(const std::string& name, const std::vector<int64_t>& shape) const;

  // Copies the tensor's bytes into `parts` (which must add up to its size), verifying the checksum.
  void read_raw(const StateEntry& e, const std::vector<MutSpan>& parts) const;
  // Copies the tensor as fp32 into `parts` (in floats' bytes), converting from bf16/f16.
  void read_f32(const StateEntry& e, const std::vector<MutSpan>& parts) const;

 private:
  [[noreturn]] void bad(const std::string& why) const;
  MappedFile file_;
  uint32_t version_ = 0;
  uint64_t fingerprint_ = 0;
  int64_t n_tokens_ = 0;
  std::vector<StateEntry> entries_;
};

}  // namespace tandem
