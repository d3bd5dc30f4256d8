// N-API binding of the engine (contract: native/index.ts). C++ exceptions never cross into
// JS: every failure becomes a JS Error with a stable `code`.
#include <napi.h>

#include <memory>
#include <vector>

#include "tandem/blas.h"
#include "tandem/engine.h"
#include "tandem/errors.h"
#include "tandem/measure.h"
#include "tandem/sampling.h"
#include "tandem/state-file.h"

namespace {

using tandem::ErrorCode;
using tandem::TandemError;

struct Failure {
  std::string code;
  std::string message;
};

Failure capture() {
  try {
    throw;
  } catch (const TandemError& e) {
    return {tandem::error_code_name(e.code()), e.what()};
  } catch (const std::bad_alloc&) {
    return {"E_INTERNAL", "out of memory"};
  } catch (const std::exception& e) {
    return {"E_INTERNAL", e.what()};
  } catch (...) {
    return {"E_INTERNAL", "unknown error"};
  }
}

Napi::Error to_js(Napi::Env env, const Failure& f) {
  Napi::Error err = Napi::Error::New(env, f.message);
  err.Set("code", Napi::String::New(env, f.code));
  return err;
}

[[noreturn]] void throw_js(Napi::Env env, const Failure& f) { throw to_js(env, f); }

[[noreturn]] void bad_arg(Napi::Env env, const std::string& msg) { throw_js(env, {"E_INVALID_ARGUMENT", msg}); }

// Runs `work` on a libuv thread; resolves with `done(env)` or rejects with a coded error.
class PromiseWorker : public Napi::AsyncWorker {
 public:
  PromiseWorker(Napi::Env env, std::function<void()> work, std::function<Napi::Value(Napi::Env)> done)
      : Napi::AsyncWorker(env), deferred_(Napi::Promise::Deferred::New(env)), work_(std::move(work)),
        done_(std::move(done)) {}
  Napi::Promise promise() { return deferred_.Promise(); }

 protected:
  void Execute() override {
    try {
      work_();
    } catch (...) {
      failure_ = std::make_unique<Failure>(capture());
    }
  }
  void OnOK() override {
    Napi::Env env = Env();
    Napi::HandleScope scope(env);
    if (failure_) {
      deferred_.Reject(to_js(env, *failure_).Value());
      return;
    }
    try {
      deferred_.Resolve(done_(env));
    } catch (const Napi::Error& e) {
      deferred_.Reject(e.Value());
    }
  }

 private:
  Napi::Promise::Deferred deferred_;
  std::function<void()> work_;
  std::function<Napi::Value(Napi::Env)> done_;
  std::unique_ptr<Failure> failure_;
};

Napi::Float32Array to_float32(Napi::Env env, std::vector<float>&& v) {
  auto* holder = new std::vector<float>(std::move(v));
  Napi::ArrayBuffer buf = Napi::ArrayBuffer::New(env, holder->data(), holder->size() * sizeof(float),
                                                 [](Napi::Env, void*, std::vector<float>* h) { delete h; }, holder);
  return Napi::Float32Array::New(env, holder->size(), buf, 0);
}

std::vector<int32_t> int32_arg(const Napi::Value& v, const char* what) {
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_int32_array)
    bad_arg(v.Env(), std::string(what) + " must be an Int32Array");
  Napi::Int32Array a = v.As<Napi::Int32Array>();
  return std::vector<int32_t>(a.Data(), a.Data() + a.ElementLength());
}

int int_arg(const Napi::Value& v, const char* what) {
  if (!v.IsNumber()) bad_arg(v.Env(), std::string(what) + " must be an integer");
  const double d = v.As<Napi::Number>().DoubleValue();
  if (d != double(int64_t(d)) || d < -2147483648.0 || d > 2147483647.0)
    bad_arg(v.Env(), std::string(what) + " must be an integer");
  return int(d);
}

std::string string_arg(const Napi::Value& v, const char* what) {
  if (!v.IsString()) bad_arg(v.Env(), std::string(what) + " must be a string");
  std::string s = v.As<Napi::String>().Utf8Value();
  // Every string argument is a path or a name: the OS would silently cut a path at a NUL
  // byte (opening another file), and an empty one names nothing.
  if (s.empty() || s.find('\0') != std::string::npos)
    bad_arg(v.Env(), std::string(what) + " must be a non-empty string without NUL bytes");
  return s;
}

class EngineWrap : public Napi::ObjectWrap<EngineWrap> {
 public:
  static Napi::Function Init(Napi::Env env) {
    return DefineClass(env, "Engine",
                       {InstanceAccessor<&EngineWrap::Info>("info"), InstanceAccessor<&EngineWrap::Kind>("kind"),
                        InstanceMethod<&EngineWrap::CreateSequence>("createSequence"),
                        InstanceMethod<&EngineWrap::FreeSequence>("freeSequence"),
                        InstanceMethod<&EngineWrap::SequenceLength>("sequenceLength"),
                        InstanceMethod<&EngineWrap::SequenceTokens>("sequenceTokens"),
                        InstanceMethod<&EngineWrap::Prefill>("prefill"), InstanceMethod<&EngineWrap::Decode>("decode"),
                        InstanceMethod<&EngineWrap::Sample>("sample"),
                        InstanceMethod<&EngineWrap::ExportState>("exportState"),
                        InstanceMethod<&EngineWrap::ImportState>("importState"),
                        InstanceMethod<&EngineWrap::Stats>("stats"), InstanceMethod<&EngineWrap::Close>("close")});
  }

  EngineWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<EngineWrap>(info) {
    Napi::Env env = info.Env();
    const std::string dir = string_arg(info[0], "modelDir");
    tandem::EngineOptions o;
    if (info.Length() > 1 && !info[1].IsUndefined()) {
      if (!info[1].IsObject()) bad_arg(env, "options must be an object");
      Napi::Object opts = info[1].As<Napi::Object>();
      if (opts.Has("engine") && !opts.Get("engine").IsUndefined()) o.engine = string_arg(opts.Get("engine"), "engine");
      if (opts.Has("threads") && !opts.Get("threads").IsUndefined()) o.threads = int_arg(opts.Get("threads"), "threads");
      if (opts.Has("device") && !opts.Get("device").IsUndefined()) o.device = int_arg(opts.Get("device"), "device");
    }
    try {
      engine_ = std::make_shared<tandem::Engine>(dir, o);
    } catch (...) {
      throw_js(env, capture());
    }
  }

 private:
  template <typename F>
  auto guarded(Napi::Env env, F&& f) -> decltype(f()) {
    try {
      return f();
    } catch (const Napi::Error&) {
      throw;
    } catch (...) {
      throw_js(env, capture());
    }
  }

  Napi::Value Info(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    guarded(env, [&] { engine_->check_open(); });  // the weights' figures are gone after close()
    const auto& c = engine_->config();
    const auto& w = engine_->weights();
    Napi::Object o = Napi::Object::New(env);
    o.Set("architecture", c.arch == tandem::Architecture::Qwen35 ? "qwen3_5" : "qwen3");
    o.Set("modelType", c.model_type);
    o.Set("vocabSize", c.vocab_size);
    o.Set("hiddenSize", c.hidden);
    o.Set("numLayers", c.n_layers);
    Napi::Array lt = Napi::Array::New(env, c.layers.size());
    for (size_t i = 0; i < c.layers.size(); ++i)
      lt.Set(uint32_t(i), c.layers[i] == tandem::LayerKind::FullAttention ? "full_attention" : "linear_attention");
    o.Set("layerTypes", lt);
    o.Set("weightDtype", tandem::dtype_name(w.dtype));
    o.Set("fingerprint", engine_->fingerprint_hex());
    o.Set("maxPositionEmbeddings", c.max_positions);
    o.Set("parameterCount", double(w.parameter_count));
    o.Set("decodeWeightBytes", double(w.decode_weight_bytes));
    o.Set("weightBytes", double(w.weight_bytes));
    Napi::Array eos = Napi::Array::New(env, c.eos_token_ids.size());
    for (size_t i = 0; i < c.eos_token_ids.size(); ++i) eos.Set(uint32_t(i), c.eos_token_ids[i]);
    o.Set("eosTokenIds", eos);
    o.Set("tiedEmbeddings", c.tied_embeddings);
    return o;
  }

  Napi::Value Kind(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), engine_->kind()); }

  Napi::Value CreateSequence(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), guarded(info.Env(), [&] { return engine_->create_sequence(); }));
  }

  Napi::Value FreeSequence(const Napi::CallbackInfo& info) {
    const int seq = int_arg(info[0], "seq");
    guarded(info.Env(), [&] { engine_->free_sequence(seq); });
    return info.Env().Undefined();
  }

  Napi::Value SequenceLength(const Napi::CallbackInfo& info) {
    const int seq = int_arg(info[0], "seq");
    return Napi::Number::New(info.Env(), double(guarded(info.Env(), [&] { return engine_->sequence_length(seq); })));
  }

  Napi::Value SequenceTokens(const Napi::CallbackInfo& info) {
    const int seq = int_arg(info[0], "seq");
    std::vector<int32_t> t = guarded(info.Env(), [&] { return engine_->sequence_tokens(seq); });
    Napi::Int32Array a = Napi::Int32Array::New(info.Env(), t.size());
    std::copy(t.begin(), t.end(), a.Data());
    return a;
  }

  Napi::Value Prefill(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const int seq = int_arg(info[0], "seq");
    auto tokens = std::make_shared<std::vector<int32_t>>(int32_arg(info[1], "tokens"));
    bool all = false;
    int64_t chunk = 512;
    if (info.Length() > 2 && !info[2].IsUndefined()) {
      if (!info[2].IsObject()) bad_arg(env, "options must be an object");
      Napi::Object o = info[2].As<Napi::Object>();
      if (o.Has("allLogits") && !o.Get("allLogits").IsUndefined()) {
        if (!o.Get("allLogits").IsBoolean()) bad_arg(env, "allLogits must be a boolean");
        all = o.Get("allLogits").As<Napi::Boolean>().Value();
      }
      if (o.Has("chunkSize") && !o.Get("chunkSize").IsUndefined()) chunk = int_arg(o.Get("chunkSize"), "chunkSize");
    }
    auto engine = engine_;
    auto out = std::make_shared<std::vector<float>>();
    auto* w = new PromiseWorker(
        env, [=] { *out = engine->prefill(seq, tokens->data(), int64_t(tokens->size()), all, chunk); },
        [=](Napi::Env e) -> Napi::Value { return to_float32(e, std::move(*out)); });
    Napi::Promise p = w->promise();
    w->Queue();
    return p;
  }

  Napi::Value Decode(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto seqs = std::make_shared<std::vector<int32_t>>(int32_arg(info[0], "seqs"));
    auto tokens = std::make_shared<std::vector<int32_t>>(int32_arg(info[1], "tokens"));
    if (seqs->size() != tokens->size()) bad_arg(env, "seqs and tokens must have the same length");
    auto engine = engine_;
    auto out = std::make_shared<std::vector<float>>();
    auto* w = new PromiseWorker(
        env, [=] { *out = engine->decode(seqs->data(), tokens->data(), int64_t(seqs->size())); },
        [=](Napi::Env e) -> Napi::Value { return to_float32(e, std::move(*out)); });
    Napi::Promise p = w->promise();
    w->Queue();
    return p;
  }

  Napi::Value Sample(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    guarded(env, [&] { engine_->check_open(); });
    if (!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array)
      bad_arg(env, "logits must be a Float32Array");
    Napi::Float32Array logits = info[0].As<Napi::Float32Array>();
    const int row = int_arg(info[1], "row");
    if (!info[2].IsObject()) bad_arg(env, "params must be an object");
    Napi::Object po = info[2].As<Napi::Object>();
    auto num = [&](const char* k) {
      Napi::Value v = po.Get(k);
      if (!v.IsNumber()) bad_arg(env, std::string("params.") + k + " must be a number");
      return v.As<Napi::Number>().DoubleValue();
    };
    tandem::SamplingParams p;
    p.temperature = float(num("temperature"));
    const double top_k = num("topK");
    if (top_k != double(int64_t(top_k)) || top_k < 0 || top_k > 1e9) bad_arg(env, "params.topK must be an integer ≥ 0");
    p.top_k = int(top_k);
    p.top_p = float(num("topP"));
    const double seed = num("seed");
    if (seed != double(int64_t(seed)) || seed < 0 || seed > 9007199254740991.0)
      bad_arg(env, "params.seed must be an integer in [0, 2^53)");
    p.seed = uint64_t(seed);
    const double pos = [&] {
      if (!info[3].IsNumber()) bad_arg(env, "position must be an integer ≥ 0");
      return info[3].As<Napi::Number>().DoubleValue();
    }();
    if (pos != double(int64_t(pos)) || pos < 0) bad_arg(env, "position must be an integer ≥ 0");
    const int64_t V = engine_->config().vocab_size;
    if (int64_t(logits.ElementLength()) % V != 0) bad_arg(env, "logits length must be a multiple of the vocabulary size");
    if (row < 0 || int64_t(row) >= int64_t(logits.ElementLength()) / V) bad_arg(env, "row is outside the logits");
    const int32_t tok =
        guarded(env, [&] { return tandem::sample_token(logits.Data() + int64_t(row) * V, V, p, uint64_t(pos)); });
    return Napi::Number::New(env, tok);
  }

  Napi::Value ExportState(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const int seq = int_arg(info[0], "seq");
    const std::string path = string_arg(info[1], "path");
    auto engine = engine_;
    auto bytes = std::make_shared<size_t>(0);
    auto tokens = std::make_shared<int64_t>(0);
    auto* w = new PromiseWorker(
        env,
        [=] {
          *bytes = engine->export_state(seq, path);
          *tokens = engine->sequence_length(seq);
        },
        [=](Napi::Env e) -> Napi::Value {
          Napi::Object o = Napi::Object::New(e);
          o.Set("bytes", double(*bytes));
          o.Set("tokens", double(*tokens));
          return o;
        });
    Napi::Promise p = w->promise();
    w->Queue();
    return p;
  }

  Napi::Value ImportState(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const std::string path = string_arg(info[0], "path");
    auto engine = engine_;
    auto id = std::make_shared<int>(0);
    auto* w = new PromiseWorker(
        env, [=] { *id = engine->import_state(path); },
        [=](Napi::Env e) -> Napi::Value { return Napi::Number::New(e, *id); });
    Napi::Promise p = w->promise();
    w->Queue();
    return p;
  }

  Napi::Value Stats(const Napi::CallbackInfo& info) {
    tandem::EngineStats s = engine_->stats();
    Napi::Object o = Napi::Object::New(info.Env());
    o.Set("stateBytes", double(s.state_bytes));
    o.Set("scratchBytes", double(s.scratch_bytes));
    o.Set("sequences", double(s.sequences));
    return o;
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    engine_->close();
    return info.Env().Undefined();
  }

  std::shared_ptr<tandem::Engine> engine_;
};

Napi::Value AvailableEngines(const Napi::CallbackInfo& info) {
  auto e = tandem::available_engines();
  Napi::Array a = Napi::Array::New(info.Env(), e.size());
  for (size_t i = 0; i < e.size(); ++i) a.Set(uint32_t(i), e[i]);
  return a;
}

Napi::Value InspectStateFile(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string path = string_arg(info[0], "path");
  try {
    tandem::StateFileReader r(path);
    Napi::Object o = Napi::Object::New(env);
    o.Set("version", double(r.version()));
    char fp[17];
    std::snprintf(fp, sizeof fp, "%016llx", static_cast<unsigned long long>(r.fingerprint()));
    o.Set("fingerprint", fp);
    o.Set("tokens", double(r.n_tokens()));
    o.Set("fileBytes", double(r.file_bytes()));
    Napi::Array ts = Napi::Array::New(env, r.entries().size());
    for (size_t i = 0; i < r.entries().size(); ++i) {
      const auto& e = r.entries()[i];
      Napi::Object t = Napi::Object::New(env);
      t.Set("name", e.name);
      t.Set("dtype", tandem::dtype_name(e.dtype));
      Napi::Array sh = Napi::Array::New(env, e.shape.size());
      for (size_t d = 0; d < e.shape.size(); ++d) sh.Set(uint32_t(d), double(e.shape[d]));
      t.Set("shape", sh);
      t.Set("offset", double(e.offset));
      t.Set("bytes", double(e.bytes));
      ts.Set(uint32_t(i), t);
    }
    o.Set("tensors", ts);
    return o;
  } catch (const Napi::Error&) {
    throw;
  } catch (...) {
    throw_js(env, capture());
  }
}

Napi::Value MeasureReadBandwidth(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsNumber()) bad_arg(env, "bytes must be a number");
  const double bytes = info[0].As<Napi::Number>().DoubleValue();
  const int threads = int_arg(info[1], "threads");
  try {
    return Napi::Number::New(env, tandem::measure_read_bandwidth(size_t(bytes), threads));
  } catch (...) {
    throw_js(env, capture());
  }
}

Napi::Value MeasureSgemm(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int n = int_arg(info[0], "n");
  const int threads = int_arg(info[1], "threads");
  try {
    return Napi::Number::New(env, tandem::measure_sgemm(n, threads));
  } catch (...) {
    throw_js(env, capture());
  }
}

Napi::Value BlasInfo(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), tandem::blas_info()); }

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("Engine", EngineWrap::Init(env));
  exports.Set("availableEngines", Napi::Function::New(env, AvailableEngines));
  exports.Set("inspectStateFile", Napi::Function::New(env, InspectStateFile));
  exports.Set("measureReadBandwidth", Napi::Function::New(env, MeasureReadBandwidth));
  exports.Set("measureSgemm", Napi::Function::New(env, MeasureSgemm));
  exports.Set("blasInfo", Napi::Function::New(env, BlasInfo));
  return exports;
}

}  // namespace

NODE_API_MODULE(tandem_native, Init)
