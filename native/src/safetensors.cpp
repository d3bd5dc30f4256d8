#include "tandem/safetensors.h"

#include <sys/stat.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "tandem/errors.h"
#include "tandem/json.h"

namespace tandem {

namespace {
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;  // the format's own limit is 100 MB

bool file_exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string read_text_file(const std::string& path, ErrorCode code) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(code, "cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

int64_t TensorRef::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

void SafetensorsSet::add_file(const std::string& path) {
  auto file = std::make_unique<MappedFile>(path, static_cast<int>(ErrorCode::ModelWeights));
  const size_t size = file->size();
  if (size < 8) fail(ErrorCode::ModelWeights, path + ": truncated safetensors file (" + std::to_string(size) + " bytes)");
  uint64_t header_len = 0;
  std::memcpy(&header_len, file->data(), 8);
  if (header_len > kMaxHeaderBytes || header_len > size - 8)
    fail(ErrorCode::ModelWeights, path + ": safetensors header length " + std::to_string(header_len) +
                                      " exceeds the file (" + std::to_string(size) + " bytes): truncated or not safetensors");
  std::string header(reinterpret_cast<const char*>(file->data() + 8), header_len);
  Json j;
  try {
    j = Json::parse(header);
  } catch (const std::exception& e) {
    fail(ErrorCode::ModelWeights, path + ": bad safetensors header: " + e.what());
  }
  if (!j.is_object()) fail(ErrorCode::ModelWeights, path + ": safetensors header is not a JSON object");
  const size_t data_start = 8 + header_len;
  const size_t data_bytes = size - data_start;
  for (const auto& kv : j.object()) {
    if (kv.first == "__metadata__") continue;
    const std::string& name = kv.first;
    const Json& t = kv.second;
    const Json* dt = t.find("dtype");
    const Json* shape = t.find("shape");
    const Json* offs = t.find("data_offsets");
    if (!dt || !dt->is_string() || !shape || !shape->is_array() || !offs || !offs->is_array() ||
        offs->array().size() != 2)
      fail(ErrorCode::ModelWeights, path + ": tensor " + name + " has a malformed header entry");
    TensorRef ref;
    ref.name = name;
    ref.file = path;
    if (!dtype_from_safetensors(dt->str(), &ref.dtype))
      fail(ErrorCode::ModelWeights, path + ": tensor " + name + " has unsupported dtype " + dt->str());
    int64_t numel = 1;
    for (const Json& d : shape->array()) {
      if (!d.is_number() || d.number() < 0 || d.number() > 1e12 || d.number() != double(int64_t(d.number())))
        fail(ErrorCode::ModelWeights, path + ": tensor " + name + " has a bad shape");
      ref.shape.push_back(int64_t(d.number()));
      numel *= ref.shape.back();
      if (numel > (int64_t(1) << 40)) fail(ErrorCode::ModelWeights, path + ": tensor " + name + " is absurdly large");
    }
    auto is_offset = [](const Json& v) {
      return v.is_number() && v.number() >= 0 && v.number() <= 9007199254740992.0 && v.number() == std::floor(v.number());
    };
    if (!is_offset(offs->array()[0]) || !is_offset(offs->array()[1]))
      fail(ErrorCode::ModelWeights, path + ": tensor " + name + " has bad data_offsets (must be two integers ≥ 0)");
    double b = offs->array()[0].number(), e = offs->array()[1].number();
    if (e < b || e > double(data_bytes))
      fail(ErrorCode::ModelWeights, path + ": tensor " + name + " lies outside the file (offsets " +
                                        std::to_string(int64_t(b)) + ".." + std::to_string(int64_t(e)) + ", data " +
                                        std::to_string(data_bytes) + " bytes): truncated file?");
    ref.bytes = size_t(e - b);
    if (ref.bytes != size_t(numel) * dtype_size(ref.dtype))
      fail(ErrorCode::ModelWeights, path + ": tensor " + name + " holds " + std::to_string(ref.bytes) +
                                        " bytes but its shape and dtype need " +
                                        std::to_string(size_t(numel) * dtype_size(ref.dtype)));
    ref.data = file->data() + data_start + size_t(b);
    if (tensors_.count(name)) fail(ErrorCode::ModelWeights, path + ": tensor " + name + " appears twice");
    tensors_.emplace(name, std::move(ref));
  }
  files_.push_back(std::move(file));
}

std::unique_ptr<SafetensorsSet> SafetensorsSet::open_file(const std::string& path) {
  auto set = std::unique_ptr<SafetensorsSet>(new SafetensorsSet());
  set->add_file(path);
  return set;
}

std::unique_ptr<SafetensorsSet> SafetensorsSet::open_model_dir(const std::string& dir) {
  auto set = std::unique_ptr<SafetensorsSet>(new SafetensorsSet());
  const std::string index = dir + "/model.safetensors.index.json";
  const std::string single = dir + "/model.safetensors";
  if (file_exists(index)) {
    Json j;
    try {
      j = Json::parse(read_text_file(index, ErrorCode::ModelWeights));
    } catch (const TandemError&) {
      throw;
    } catch (const std::exception& e) {
      fail(ErrorCode::ModelWeights, index + ": " + e.what());
    }
    const Json* map = j.find("weight_map");
    if (!map || !map->is_object()) fail(ErrorCode::ModelWeights, index + ": no weight_map object");
    std::vector<std::string> shards;
    for (const auto& kv : map->object()) {
      if (!kv.second.is_string()) fail(ErrorCode::ModelWeights, index + ": weight_map entry " + kv.first + " is not a file name");
      const std::string& f = kv.second.str();
      if (f.find('/') != std::string::npos || f.empty() || f == "..")
        fail(ErrorCode::ModelWeights, index + ": shard name " + f + " is not a plain file name");
      bool seen = false;
      for (const auto& s : shards) seen = seen || s == f;
      if (!seen) shards.push_back(f);
    }
    if (shards.empty()) fail(ErrorCode::ModelWeights, index + ": weight_map is empty");
    for (const auto& s : shards) set->add_file(dir + "/" + s);
    for (const auto& kv : map->object())
      if (!set->find(kv.first))
        fail(ErrorCode::ModelWeights, index + ": tensor " + kv.first + " is listed in " + kv.second.str() + " but not there");
  } else if (file_exists(single)) {
    set->add_file(single);
  } else {
    fail(ErrorCode::ModelWeights, dir + ": no model.safetensors or model.safetensors.index.json");
  }
  return set;
}

const TensorRef* SafetensorsSet::find(const std::string& name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

size_t SafetensorsSet::mapped_bytes() const {
  size_t n = 0;
  for (const auto& f : files_) n += f->size();
  return n;
}

}  // namespace tandem
