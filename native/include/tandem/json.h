// A small strict JSON parser for config.json, safetensors headers and index files.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tandem {

class Json {
 public:
  enum class Kind { Null, Bool, Number, String, Array, Object };

  Json() = default;
  static Json parse(const std::string& text);  // throws std::runtime_error with position on bad input

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::Null; }
  bool is_number() const { return kind_ == Kind::Number; }
  bool is_string() const { return kind_ == Kind::String; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  bool is_array() const { return kind_ == Kind::Array; }
  bool is_object() const { return kind_ == Kind::Object; }

  double number() const { return number_; }
  bool boolean() const { return bool_; }
  const std::string& str() const { return string_; }
  const std::vector<Json>& array() const { return array_; }
  const std::vector<std::pair<std::string, Json>>& object() const { return object_; }

  // Object member or nullptr (objects keep insertion order; the last duplicate wins).
  const Json* find(const std::string& key) const;

 private:
  friend class JsonParser;
  Kind kind_ = Kind::Null;
  double number_ = 0;
  bool bool_ = false;
  std::string string_;
  std::vector<Json> array_;
  std::vector<std::pair<std::string, Json>> object_;
};

}  // namespace tandem
