#include "tandem/errors.h"

namespace tandem {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::ModelConfig: return "E_MODEL_CONFIG";
    case ErrorCode::ModelWeights: return "E_MODEL_WEIGHTS";
    case ErrorCode::StateFile: return "E_STATE_FILE";
    case ErrorCode::StateMismatch: return "E_STATE_MISMATCH";
    case ErrorCode::InvalidArgument: return "E_INVALID_ARGUMENT";
    case ErrorCode::EngineUnavailable: return "E_ENGINE_UNAVAILABLE";
    case ErrorCode::Io: return "E_IO";
    case ErrorCode::Internal: return "E_INTERNAL";
  }
  return "E_INTERNAL";
}

void fail(ErrorCode code, const std::string& message) { throw TandemError(code, message); }

}  // namespace tandem
