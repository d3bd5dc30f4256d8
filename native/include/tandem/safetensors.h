// Read-only access to Hugging Face safetensors files (single or sharded), mmap'd.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tandem/dtype.h"
#include "tandem/mapped-file.h"

namespace tandem {

struct TensorRef {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  const void* data;  // into the mapping; valid while the SafetensorsSet lives
  size_t bytes;
  std::string file;
  int64_t numel() const;
};

// All tensors of a model folder: `model.safetensors`, or the shards listed in
// `model.safetensors.index.json`. Every header is validated at open (JSON, dtypes, offsets
// inside the file, sizes matching shapes); a bad file throws E_MODEL_WEIGHTS naming it.
class SafetensorsSet {
 public:
  static std::unique_ptr<SafetensorsSet> open_model_dir(const std::string& dir);
  static std::unique_ptr<SafetensorsSet> open_file(const std::string& path);

  const TensorRef* find(const std::string& name) const;
  const std::map<std::string, TensorRef>& tensors() const { return tensors_; }
  size_t mapped_bytes() const;

 private:
  void add_file(const std::string& path);
  std::vector<std::unique_ptr<MappedFile>> files_;
  std::map<std::string, TensorRef> tensors_;
};

}  // namespace tandem
