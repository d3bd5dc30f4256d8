// A read-only memory mapping of a whole file. Move-only; unmaps on destruction.
#pragma once
#include <cstddef>
#include <string>

namespace tandem {

class MappedFile {
 public:
  MappedFile() = default;
  // Maps `path` read-only. Throws TandemError(`code_on_error`) naming the file on failure.
  explicit MappedFile(const std::string& path, int code_on_error_as_int);
  ~MappedFile();
  MappedFile(MappedFile&& o) noexcept;
  MappedFile& operator=(MappedFile&& o) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const unsigned char* data() const { return static_cast<const unsigned char*>(data_); }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  void reset();
  void* data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

}  // namespace tandem
