#include "tandem/mapped-file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tandem/errors.h"

namespace tandem {

MappedFile::MappedFile(const std::string& path, int code_on_error_as_int) : path_(path) {
  ErrorCode code = static_cast<ErrorCode>(code_on_error_as_int);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(code, "cannot open " + path + ": " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    fail(code, "cannot stat " + path + ": " + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(code, path + " is not a regular file");
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) {
    data_ = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
    if (data_ == MAP_FAILED) {
      int e = errno;
      data_ = nullptr;
      ::close(fd);
      fail(code, "cannot mmap " + path + ": " + std::strerror(e));
    }
  }
  ::close(fd);
}

MappedFile::~MappedFile() { reset(); }

void MappedFile::reset() {
  if (data_) ::munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
}

MappedFile::MappedFile(MappedFile&& o) noexcept : data_(o.data_), size_(o.size_), path_(std::move(o.path_)) {
  o.data_ = nullptr;
  o.size_ = 0;
}

MappedFile& MappedFile::operator=(MappedFile&& o) noexcept {
  if (this != &o) {
    reset();
    data_ = o.data_;
    size_ = o.size_;
    path_ = std::move(o.path_);
    o.data_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

}  // namespace tandem
