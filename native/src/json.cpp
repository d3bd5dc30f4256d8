#include "tandem/json.h"

#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace tandem {

class JsonParser {
 public:
  explicit JsonParser(const std::string& s) : s_(s) {}

  Json parse_document() {
    Json v = parse_value(0);
    skip_ws();
    if (i_ != s_.size()) error("trailing characters");
    return v;
  }

 private:
  static constexpr int kMaxDepth = 64;
  const std::string& s_;
  size_t i_ = 0;

  [[noreturn]] void error(const char* what) const {
    throw std::runtime_error(std::string("JSON ") + what + " at byte " + std::to_string(i_));
  }
  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
  }
  bool consume(const char* lit) {
    size_t n = 0;
    while (lit[n]) ++n;
    if (s_.compare(i_, n, lit) == 0) {
      i_ += n;
      return true;
    }
    return false;
  }

  Json parse_value(int depth) {
    if (depth > kMaxDepth) error("nested too deeply");
    skip_ws();
    if (i_ >= s_.size()) error("unexpected end");
    Json v;
    char c = s_[i_];
    if (c == '{') {
      v.kind_ = Json::Kind::Object;
      ++i_;
      skip_ws();
      if (i_ < s_.size() && s_[i_] == '}') { ++i_; return v; }
      for (;;) {
        skip_ws();
        if (i_ >= s_.size() || s_[i_] != '"') error("expected object key");
        std::string key = parse_string();
        skip_ws();
        if (i_ >= s_.size() || s_[i_] != ':') error("expected ':'");
        ++i_;
        v.object_.emplace_back(std::move(key), parse_value(depth + 1));
        skip_ws();
        if (i_ < s_.size() && s_[i_] == ',') { ++i_; continue; }
        if (i_ < s_.size() && s_[i_] == '}') { ++i_; return v; }
        error("expected ',' or '}'");
      }
    }
    if (c == '[') {
      v.kind_ = Json::Kind::Array;
      ++i_;
      skip_ws();
      if (i_ < s_.size() && s_[i_] == ']') { ++i_; return v; }
      for (;;) {
        v.array_.push_back(parse_value(depth + 1));
        skip_ws();
        if (i_ < s_.size() && s_[i_] == ',') { ++i_; continue; }
        if (i_ < s_.size() && s_[i_] == ']') { ++i_; return v; }
        error("expected ',' or ']'");
      }
    }
    if (c == '"') {
      v.kind_ = Json::Kind::String;
      v.string_ = parse_string();
      return v;
    }
    if (consume("true")) { v.kind_ = Json::Kind::Bool; v.bool_ = true; return v; }
    if (consume("false")) { v.kind_ = Json::Kind::Bool; v.bool_ = false; return v; }
    if (consume("null")) return v;
    // Python's json module writes these for non-finite floats; accept them.
    if (consume("NaN")) { v.kind_ = Json::Kind::Number; v.number_ = NAN; return v; }
    if (consume("Infinity")) { v.kind_ = Json::Kind::Number; v.number_ = INFINITY; return v; }
    if (consume("-Infinity")) { v.kind_ = Json::Kind::Number; v.number_ = -INFINITY; return v; }
    if (c == '-' || (c >= '0' && c <= '9')) {
      size_t start = i_;
      if (s_[i_] == '-') ++i_;
      while (i_ < s_.size() && ((s_[i_] >= '0' && s_[i_] <= '9') || s_[i_] == '.' || s_[i_] == 'e' ||
                                s_[i_] == 'E' || s_[i_] == '+' || s_[i_] == '-'))
        ++i_;
      std::string num = s_.substr(start, i_ - start);
      char* end = nullptr;
      v.kind_ = Json::Kind::Number;
      v.number_ = std::strtod(num.c_str(), &end);
      if (end != num.c_str() + num.size()) error("bad number");
      return v;
    }
    error("unexpected character");
  }

  static void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) out += char(cp);
    else if (cp < 0x800) { out += char(0xC0 | (cp >> 6)); out += char(0x80 | (cp & 0x3F)); }
    else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12)); out += char(0x80 | ((cp >> 6) & 0x3F)); out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18)); out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F)); out += char(0x80 | (cp & 0x3F));
    }
  }

  uint32_t parse_hex4() {
    if (i_ + 4 > s_.size()) error("bad \\u escape");
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      char h = s_[i_++];
      v <<= 4;
      if (h >= '0' && h <= '9') v |= h - '0';
      else if (h >= 'a' && h <= 'f') v |= h - 'a' + 10;
      else if (h >= 'A' && h <= 'F') v |= h - 'A' + 10;
      else error("bad \\u escape");
    }
    return v;
  }

  std::string parse_string() {
    ++i_;  // opening quote
    std::string out;
    for (;;) {
      if (i_ >= s_.size()) error("unterminated string");
      char c = s_[i_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) error("control character in string");
      if (c != '\\') { out += c; continue; }
      if (i_ >= s_.size()) error("unterminated escape");
      char e = s_[i_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t cp = parse_hex4();
          if (cp >= 0xD800 && cp < 0xDC00 && i_ + 6 <= s_.size() && s_[i_] == '\\' && s_[i_ + 1] == 'u') {
            i_ += 2;
            uint32_t lo = parse_hex4();
            if (lo < 0xDC00 || lo > 0xDFFF) error("bad surrogate pair");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          append_utf8(out, cp);
          break;
        }
        default: error("bad escape");
      }
    }
  }
};

Json Json::parse(const std::string& text) { return JsonParser(text).parse_document(); }

const Json* Json::find(const std::string& key) const {
  if (kind_ != Kind::Object) return nullptr;
  const Json* found = nullptr;
  for (const auto& kv : object_)
    if (kv.first == key) found = &kv.second;
  return found;
}

}  // namespace tandem
