#include "tandem/state-file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "tandem/errors.h"
#include "tandem/hash.h"

namespace tandem {

namespace {

constexpr char kMagic[8] = {'T', 'N', 'D', 'M', 'S', 'T', 'A', 'T'};
constexpr size_t kNameBytes = 64;
constexpr size_t kChecksumFieldOffset = 48;

// Header field offsets.
struct HeaderLayout {
  static constexpr size_t magic = 0, version = 8, header_bytes = 12, file_bytes = 16, fingerprint = 24,
                          n_tokens = 32, n_tensors = 40, reserved = 44, checksum = kChecksumFieldOffset;
};
// Entry field offsets.
struct EntryLayout {
  static constexpr size_t name = 0, dtype = 64, ndim = 68, shape = 72, offset = 104, bytes = 112, checksum = 120;
};

size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

template <typename T>
void put(unsigned char* base, size_t off, T v) {
  std::memcpy(base + off, &v, sizeof v);
}
template <typename T>
T get(const unsigned char* base, size_t off) {
  T v;
  std::memcpy(&v, base + off, sizeof v);
  return v;
}

uint64_t header_checksum(const unsigned char* header, size_t bytes) {
  ChecksumStream s;
  s.update(header, kChecksumFieldOffset);
  const unsigned char zero[8] = {0};
  s.update(zero, 8);
  s.update(header + kChecksumFieldOffset + 8, bytes - kChecksumFieldOffset - 8);
  return s.finish();
}

std::string temp_name(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  const uint64_t t = uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
  return path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(t) + "-" + std::to_string(counter++);
}

}  // namespace

void serial_for(size_t n, const std::function<void(size_t)>& body) {
  for (size_t i = 0; i < n; ++i) body(i);
}

size_t write_state_file(const std::string& path, uint64_t fingerprint, int64_t n_tokens,
                        const std::vector<StateTensorOut>& tensors, const ParallelFor& pfor) {
  TANDEM_ASSERT(tensors.size() <= kStateMaxTensors);
  const size_t table_end = kStateHeaderBytes + kStateEntryBytes * tensors.size();
  std::vector<uint64_t> offsets, sizes;
  size_t cursor = align_up(table_end, kStateAlign);
  for (const auto& t : tensors) {
    TANDEM_ASSERT(t.name.size() < kNameBytes && t.shape.size() <= 4);
    size_t bytes = 0;
    for (const auto& p : t.parts) bytes += p.bytes;
    size_t numel = 1;
    for (int64_t d : t.shape) numel *= size_t(d);
    TANDEM_ASSERT(numel * dtype_size(t.dtype) == bytes);
    offsets.push_back(cursor);
    sizes.push_back(bytes);
    cursor = align_up(cursor + bytes, kStateAlign);
  }
  const size_t file_bytes = tensors.empty() ? table_end : size_t(offsets.back() + sizes.back());

  // Header and table are built in memory; tensor bytes are checksummed from the source and
  // written with pwrite (on tmpfs this is about twice as fast as faulting in a fresh mapping).
  std::vector<unsigned char> head(table_end, 0);
  unsigned char* base = head.data();
  std::vector<uint64_t> sums(tensors.size());
  pfor(tensors.size(), [&](size_t i) {
    ChecksumStream cs;
    for (const auto& p : tensors[i].parts) cs.update(p.data, p.bytes);
    sums[i] = cs.finish();
  });
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto& t = tensors[i];
    unsigned char* e = base + kStateHeaderBytes + kStateEntryBytes * i;
    std::memcpy(e + EntryLayout::name, t.name.data(), t.name.size());
    put<uint32_t>(e, EntryLayout::dtype, uint32_t(t.dtype));
    put<uint32_t>(e, EntryLayout::ndim, uint32_t(t.shape.size()));
    for (size_t d = 0; d < t.shape.size(); ++d) put<uint64_t>(e, EntryLayout::shape + 8 * d, uint64_t(t.shape[d]));
    put<uint64_t>(e, EntryLayout::offset, offsets[i]);
    put<uint64_t>(e, EntryLayout::bytes, sizes[i]);
    put<uint64_t>(e, EntryLayout::checksum, sums[i]);
  }
  std::memcpy(base + HeaderLayout::magic, kMagic, 8);
  put<uint32_t>(base, HeaderLayout::version, kStateFileVersion);
  put<uint32_t>(base, HeaderLayout::header_bytes, uint32_t(table_end));
  put<uint64_t>(base, HeaderLayout::file_bytes, file_bytes);
  put<uint64_t>(base, HeaderLayout::fingerprint, fingerprint);
  put<uint64_t>(base, HeaderLayout::n_tokens, uint64_t(n_tokens));
  put<uint32_t>(base, HeaderLayout::n_tensors, uint32_t(tensors.size()));
  put<uint64_t>(base, HeaderLayout::checksum, header_checksum(base, table_end));

  const std::string tmp = temp_name(path);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) fail(ErrorCode::Io, "cannot create state file " + tmp + ": " + std::strerror(errno));
  auto cleanup_fail = [&](const std::string& what) {
    const int e = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    fail(ErrorCode::Io, what + " " + tmp + ": " + std::strerror(e));
  };
  // Returns errno, 0 on success (callable from any thread).
  auto write_all = [fd](const void* data, size_t n, size_t off) -> int {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
      const ssize_t w = ::pwrite(fd, p, n, off_t(off));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return w < 0 ? errno : EIO;
      p += w;
      n -= size_t(w);
      off += size_t(w);
    }
    return 0;
  };
  if (::ftruncate(fd, off_t(file_bytes)) != 0) cleanup_fail("cannot size state file");
  std::vector<int> errs(tensors.size() + 1, 0);
  errs[tensors.size()] = write_all(base, table_end, 0);
  pfor(tensors.size(), [&](size_t i) {
    size_t off = offsets[i];
    for (const auto& p : tensors[i].parts) {
      if (errs[i] == 0) errs[i] = write_all(p.data, p.bytes, off);
      off += p.bytes;
    }
  });
  for (int e : errs)
    if (e != 0) {
      errno = e;
      cleanup_fail("cannot write state file");
    }
  if (::close(fd) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    fail(ErrorCode::Io, "cannot close state file " + tmp + ": " + std::strerror(e));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    fail(ErrorCode::Io, "cannot rename state file to " + path + ": " + std::strerror(e));
  }
  return file_bytes;
}

void StateFileReader::bad(const std::string& why) const {
  fail(ErrorCode::StateFile, "state file " + file_.path() + ": " + why);
}

StateFileReader::StateFileReader(const std::string& path)
    : file_(path, static_cast<int>(ErrorCode::StateFile)) {
  const unsigned char* b = file_.data();
  const size_t size = file_.size();
  if (size < kStateHeaderBytes) bad("truncated (" + std::to_string(size) + " bytes, header needs 128)");
  if (std::memcmp(b, kMagic, 8) != 0) bad("bad magic (not a Tandem state file)");
  version_ = get<uint32_t>(b, HeaderLayout::version);
  if (version_ != kStateFileVersion)
    bad("unsupported version " + std::to_string(version_) + " (this engine reads version " +
        std::to_string(kStateFileVersion) + ")");
  const uint32_t header_bytes = get<uint32_t>(b, HeaderLayout::header_bytes);
  const uint64_t file_bytes = get<uint64_t>(b, HeaderLayout::file_bytes);
  const uint32_t n = get<uint32_t>(b, HeaderLayout::n_tensors);
  if (n > kStateMaxTensors) bad("absurd tensor count " + std::to_string(n));
  if (header_bytes != kStateHeaderBytes + kStateEntryBytes * n) bad("header length disagrees with tensor count");
  if (file_bytes != size)
    bad("truncated or padded: header says " + std::to_string(file_bytes) + " bytes, file has " + std::to_string(size));
  if (header_bytes > size) bad("tensor table runs past the end of the file");
  if (get<uint64_t>(b, HeaderLayout::checksum) != header_checksum(b, header_bytes)) bad("header checksum mismatch");
  fingerprint_ = get<uint64_t>(b, HeaderLayout::fingerprint);
  const uint64_t nt = get<uint64_t>(b, HeaderLayout::n_tokens);
  if (nt > (uint64_t(1) << 31)) bad("absurd token count " + std::to_string(nt));
  n_tokens_ = int64_t(nt);

  for (uint32_t i = 0; i < n; ++i) {
    const unsigned char* e = b + kStateHeaderBytes + kStateEntryBytes * i;
    StateEntry en;
    const char* name = reinterpret_cast<const char*>(e + EntryLayout::name);
    const size_t len = strnlen(name, kNameBytes);
    if (len == 0 || len == kNameBytes) bad("tensor " + std::to_string(i) + " has a bad name");
    en.name.assign(name, len);
    const uint32_t dt = get<uint32_t>(e, EntryLayout::dtype);
    if (dt > uint32_t(DType::I32)) bad("tensor " + en.name + " has unknown dtype " + std::to_string(dt));
    en.dtype = DType(dt);
    const uint32_t ndim = get<uint32_t>(e, EntryLayout::ndim);
    if (ndim > 4) bad("tensor " + en.name + " has " + std::to_string(ndim) + " dimensions");
    uint64_t numel = 1;
    for (uint32_t d = 0; d < ndim; ++d) {
      const uint64_t dim = get<uint64_t>(e, EntryLayout::shape + 8 * d);
      if (dim > (uint64_t(1) << 31)) bad("tensor " + en.name + " has an absurd dimension " + std::to_string(dim));
      numel *= dim;
      if (numel > (uint64_t(1) << 40)) bad("tensor " + en.name + " is absurdly large");
      en.shape.push_back(int64_t(dim));
    }
    en.offset = get<uint64_t>(e, EntryLayout::offset);
    en.bytes = get<uint64_t>(e, EntryLayout::bytes);
    en.checksum = get<uint64_t>(e, EntryLayout::checksum);
    if (en.bytes != numel * dtype_size(en.dtype)) bad("tensor " + en.name + " size disagrees with its shape");
    if (en.offset % kStateAlign != 0) bad("tensor " + en.name + " is not 16 KiB aligned");
    if (en.offset < header_bytes || en.offset > size || en.bytes > size - en.offset)
      bad("tensor " + en.name + " lies outside the file");
    for (const auto& other : entries_)
      if (other.name == en.name) bad("tensor " + en.name + " appears twice");
    entries_.push_back(std::move(en));
  }
  std::vector<const StateEntry*> by_offset;
  for (const auto& en : entries_) by_offset.push_back(&en);
  std::sort(by_offset.begin(), by_offset.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < by_offset.size(); ++i)
    if (by_offset[i - 1]->offset + by_offset[i - 1]->bytes > by_offset[i]->offset)
      bad("tensors " + by_offset[i - 1]->name + " and " + by_offset[i]->name + " overlap");
}

const StateEntry& StateFileReader::require(const std::string& name, const std::vector<int64_t>& shape) const {
  for (const auto& e : entries_) {
    if (e.name != name) continue;
    if (e.shape != shape) bad("tensor " + name + " has the wrong shape for this model");
    return e;
  }
  bad("tensor " + name + " is missing");
}

void StateFileReader::read_raw(const StateEntry& e, const std::vector<MutSpan>& parts) const {
  size_t total = 0;
  for (const auto& p : parts) total += p.bytes;
  TANDEM_ASSERT(total == e.bytes);
  const unsigned char* src = file_.data() + e.offset;
  ChecksumStream cs;
  for (const auto& p : parts) {
    cs.update(src, p.bytes, p.data);
    src += p.bytes;
  }
  if (cs.finish() != e.checksum) bad("checksum mismatch in tensor " + e.name + " (corrupted)");
}

void StateFileReader::read_f32(const StateEntry& e, const std::vector<MutSpan>& parts) const {
  if (e.dtype == DType::F32) return read_raw(e, parts);
  if (e.dtype == DType::I32) bad("tensor " + e.name + " holds integers where floats are expected");
  const unsigned char* src = file_.data() + e.offset;
  if (checksum(src, e.bytes) != e.checksum) bad("checksum mismatch in tensor " + e.name + " (corrupted)");
  const size_t esz = dtype_size(e.dtype);
  size_t total = 0;
  for (const auto& p : parts) total += p.bytes / 4;
  TANDEM_ASSERT(total * esz == e.bytes);
  for (const auto& p : parts) {
    convert_to_f32(e.dtype, src, static_cast<float*>(p.data), p.bytes / 4);
    src += (p.bytes / 4) * esz;
  }
}

}  // namespace tandem
