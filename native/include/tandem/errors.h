// Engine errors: every failure the engine reports is a TandemError with a stable code.
// The addon turns them into JS errors whose `code` is the string form (see native/index.ts).
#pragma once
#include <stdexcept>
#include <string>

namespace tandem {

enum class ErrorCode {
  ModelConfig,      // E_MODEL_CONFIG
  ModelWeights,     // E_MODEL_WEIGHTS
  StateFile,        // E_STATE_FILE
  StateMismatch,    // E_STATE_MISMATCH
  InvalidArgument,  // E_INVALID_ARGUMENT
  EngineUnavailable,// E_ENGINE_UNAVAILABLE
  Io,               // E_IO
  Internal,         // E_INTERNAL
};

const char* error_code_name(ErrorCode code);

class TandemError : public std::runtime_error {
 public:
  TandemError(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

[[noreturn]] void fail(ErrorCode code, const std::string& message);

// Internal invariant: a violated check is a bug in the engine, reported as E_INTERNAL.
#define TANDEM_ASSERT(cond)                                                                   \
  do {                                                                                        \
    if (!(cond)) ::tandem::fail(::tandem::ErrorCode::Internal,                                \
                                std::string("internal check failed: " #cond " at ") +         \
                                    __FILE__ + ":" + std::to_string(__LINE__));               \
  } while (0)

}  // namespace tandem
