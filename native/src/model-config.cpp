#include "tandem/model-config.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include "tandem/errors.h"
#include "tandem/json.h"

namespace tandem {

namespace {

class Fields {
 public:
  Fields(const Json& primary, const Json* fallback, std::string source)
      : primary_(primary), fallback_(fallback), source_(std::move(source)) {}

  const Json* get(const std::string& key) const {
    const Json* v = primary_.find(key);
    if ((!v || v->is_null()) && fallback_) v = fallback_->find(key);
    return (v && !v->is_null()) ? v : nullptr;
  }

  [[noreturn]] void bad(const std::string& key, const std::string& why) const {
    fail(ErrorCode::ModelConfig, source_ + ": field " + key + " " + why);
  }

  int integer(const std::string& key, int lo, int hi) const {
    const Json* v = get(key);
    if (!v) bad(key, "is missing");
    return check_int(key, *v, lo, hi);
  }

  int integer_or(const std::string& key, int lo, int hi, int dflt) const {
    const Json* v = get(key);
    return v ? check_int(key, *v, lo, hi) : dflt;
  }

  double number_or(const std::string& key, double lo, double hi, double dflt) const {
    const Json* v = get(key);
    if (!v) return dflt;
    if (!v->is_number() || !(v->number() >= lo && v->number() <= hi))
      bad(key, "must be a number in [" + fmt(lo) + ", " + fmt(hi) + "]");
    return v->number();
  }

  bool boolean_or(const std::string& key, bool dflt) const {
    const Json* v = get(key);
    if (!v) return dflt;
    if (!v->is_bool()) bad(key, "must be true or false");
    return v->boolean();
  }

  int check_int(const std::string& key, const Json& v, int lo, int hi) const {
    if (!v.is_number() || v.number() != std::floor(v.number()) || v.number() < lo || v.number() > hi)
      bad(key, "must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return int(v.number());
  }

  const std::string& source() const { return source_; }

 private:
  static std::string fmt(double d) {
    std::ostringstream o;
    o << d;
    return o.str();
  }
  const Json& primary_;
  const Json* fallback_;
  std::string source_;
};

void read_eos(const Json* v, std::vector<int>* out) {
  if (!v) return;
  if (v->is_number()) out->push_back(int(v->number()));
  if (v->is_array())
    for (const Json& e : v->array())
      if (e.is_number()) out->push_back(int(e.number()));
}

std::string read_file(const std::string& path, bool* ok) {
  std::ifstream in(path, std::ios::binary);
  *ok = bool(in);
  std::stringstream ss;
  if (*ok) ss << in.rdbuf();
  return ss.str();
}

}  // namespace

ModelConfig parse_model_config(const std::string& text, const std::string& src) {
  Json root;
  try {
    root = Json::parse(text);
  } catch (const std::exception& e) {
    fail(ErrorCode::ModelConfig, src + ": not valid JSON: " + e.what());
  }
  if (!root.is_object()) fail(ErrorCode::ModelConfig, src + ": not a JSON object");
  const Json* mt = root.find("model_type");
  if (!mt || !mt->is_string()) fail(ErrorCode::ModelConfig, src + ": field model_type is missing");

  ModelConfig c;
  c.model_type = mt->str();
  const Json* text_cfg = &root;
  const Json* fallback = nullptr;
  if (c.model_type == "qwen3_5") {
    const Json* tc = root.find("text_config");
    if (!tc || !tc->is_object()) fail(ErrorCode::ModelConfig, src + ": model_type qwen3_5 needs a text_config object");
    text_cfg = tc;
    fallback = &root;
    c.arch = Architecture::Qwen35;
  } else if (c.model_type == "qwen3_5_text") {
    c.arch = Architecture::Qwen35;
  } else if (c.model_type == "qwen3") {
    c.arch = Architecture::Qwen3;
  } else {
    fail(ErrorCode::ModelConfig, src + ": unknown architecture model_type \"" + c.model_type +
                                     "\" (supported: qwen3_5, qwen3_5_text, qwen3)");
  }
  Fields f(*text_cfg, fallback, src);

  c.vocab_size = f.integer("vocab_size", 1, 4 << 20);
  c.hidden = f.integer("hidden_size", 8, 1 << 16);
  c.n_layers = f.integer("num_hidden_layers", 1, 1024);
  c.intermediate = f.integer("intermediate_size", 1, 1 << 18);
  c.rms_eps = float(f.number_or("rms_norm_eps", 0, 1, 1e-6));
  c.max_positions = f.integer_or("max_position_embeddings", 1, 1 << 24, 32768);
  c.n_heads = f.integer("num_attention_heads", 1, 1024);
  c.n_kv_heads = f.integer_or("num_key_value_heads", 1, 1024, c.n_heads);
  c.head_dim = f.integer_or("head_dim", 1, 4096, c.hidden / c.n_heads);
  if (c.head_dim % 2 != 0) f.bad("head_dim", "must be even");
  if (c.n_heads % c.n_kv_heads != 0) f.bad("num_key_value_heads", "must divide num_attention_heads");
  const Json* act = f.get("hidden_act");
  if (act && (!act->is_string() || act->str() != "silu")) f.bad("hidden_act", "must be \"silu\"");
  if (f.boolean_or("attention_bias", false)) f.bad("attention_bias", "true is not supported (no biases)");

  // Tie: the text config wins, then the top level; HF's default is false.
  c.tied_embeddings = f.boolean_or("tie_word_embeddings", false);

  // RoPE: rope_parameters first, then legacy top-level keys.
  const Json* rp = f.get("rope_parameters");
  if (!rp) rp = f.get("rope_scaling");
  if (rp && !rp->is_object()) f.bad("rope_parameters", "must be an object");
  Json empty;
  Fields rope(rp ? *rp : empty, text_cfg, src);
  const Json* rtype = rp ? rp->find("rope_type") : nullptr;
  if (rtype && (!rtype->is_string() || rtype->str() != "default"))
    f.bad("rope_parameters.rope_type", "\"" + (rtype->is_string() ? rtype->str() : std::string("?")) +
                                           "\" is not supported (only \"default\")");
  c.rope_theta = rope.number_or("rope_theta", 1, 1e12, c.arch == Architecture::Qwen35 ? 1e7 : 1e6);
  if (c.arch == Architecture::Qwen35) {
    double prf = rope.number_or("partial_rotary_factor", 0, 1, 0.25);
    if (!(prf > 0)) f.bad("partial_rotary_factor", "must be in (0, 1]");
    c.rotary_dim = int(c.head_dim * prf);
    if (c.rotary_dim < 2 || c.rotary_dim % 2 != 0) f.bad("partial_rotary_factor", "gives an odd or zero rotary dimension");
    c.attn_output_gate = f.boolean_or("attn_output_gate", true);
    c.lin_k_heads = f.integer("linear_num_key_heads", 1, 1024);
    c.lin_v_heads = f.integer("linear_num_value_heads", 1, 1024);
    c.lin_k_dim = f.integer("linear_key_head_dim", 1, 4096);
    c.lin_v_dim = f.integer("linear_value_head_dim", 1, 4096);
    c.conv_kernel = f.integer_or("linear_conv_kernel_dim", 2, 64, 4);
    if (c.lin_v_heads % c.lin_k_heads != 0) f.bad("linear_num_value_heads", "must be a multiple of linear_num_key_heads");
  } else {
    c.rotary_dim = c.head_dim;
    c.attn_output_gate = false;
  }

  const Json* lt = f.get("layer_types");
  if (lt) {
    if (!lt->is_array() || int(lt->array().size()) != c.n_layers)
      f.bad("layer_types", "must be a list of num_hidden_layers strings");
    for (const Json& e : lt->array()) {
      if (!e.is_string()) f.bad("layer_types", "must hold strings");
      if (e.str() == "full_attention") c.layers.push_back(LayerKind::FullAttention);
      else if (e.str() == "linear_attention" && c.arch == Architecture::Qwen35) c.layers.push_back(LayerKind::LinearAttention);
      else f.bad("layer_types", "has unsupported layer type \"" + e.str() + "\"");
    }
  } else if (c.arch == Architecture::Qwen35) {
    int interval = f.integer_or("full_attention_interval", 1, 1024, 4);
    for (int i = 0; i < c.n_layers; ++i)
      c.layers.push_back((i + 1) % interval == 0 ? LayerKind::FullAttention : LayerKind::LinearAttention);
  } else {
    c.layers.assign(size_t(c.n_layers), LayerKind::FullAttention);
  }
  if (c.arch == Architecture::Qwen3) {
    if (f.boolean_or("use_sliding_window", false)) f.bad("use_sliding_window", "true is not supported");
  }

  const Json* dt = f.get("dtype");
  if (!dt) dt = f.get("torch_dtype");
  if (dt && dt->is_string()) {
    if (dt->str() == "bfloat16") c.rope_freq_dtype = "bf16";
    else if (dt->str() == "float16") c.rope_freq_dtype = "f16";
  }
  read_eos(f.get("eos_token_id"), &c.eos_token_ids);
  return c;
}

ModelConfig load_model_config(const std::string& dir) {
  const std::string path = dir + "/config.json";
  bool ok = false;
  std::string text = read_file(path, &ok);
  if (!ok) fail(ErrorCode::ModelConfig, "cannot read " + path + " (is " + dir + " a model folder?)");
  ModelConfig c = parse_model_config(text, path);
  bool gok = false;
  std::string gen = read_file(dir + "/generation_config.json", &gok);
  if (gok) {
    try {
      Json g = Json::parse(gen);
      std::vector<int> extra;
      read_eos(g.find("eos_token_id"), &extra);
      for (int e : extra) {
        bool seen = false;
        for (int x : c.eos_token_ids) seen = seen || x == e;
        if (!seen) c.eos_token_ids.push_back(e);
      }
    } catch (const std::exception& e) {
      fail(ErrorCode::ModelConfig, dir + "/generation_config.json: not valid JSON: " + e.what());
    }
  }
  for (int e : c.eos_token_ids)
    if (e < 0 || e >= c.vocab_size) fail(ErrorCode::ModelConfig, path + ": eos_token_id " + std::to_string(e) + " is outside the vocabulary");
  return c;
}

std::string ModelConfig::canonical() const {
  std::ostringstream o;
  o << "arch=" << (arch == Architecture::Qwen35 ? "qwen3_5" : "qwen3") << ";V=" << vocab_size << ";H=" << hidden
    << ";L=" << n_layers << ";I=" << intermediate << ";eps=" << rms_eps << ";tied=" << tied_embeddings
    << ";nh=" << n_heads << ";nkv=" << n_kv_heads << ";D=" << head_dim << ";R=" << rotary_dim
    << ";theta=" << rope_theta << ";rfd=" << rope_freq_dtype << ";gate=" << attn_output_gate << ";hk=" << lin_k_heads << ";hv=" << lin_v_heads
    << ";dk=" << lin_k_dim << ";dv=" << lin_v_dim << ";K=" << conv_kernel << ";layers=";
  for (LayerKind k : layers) o << (k == LayerKind::FullAttention ? 'F' : 'L');
  return o.str();
}

}  // namespace tandem
