// LoadProgramForRun (program_file.h).
#include "reference_runtime/program_file.h"

#include "common/file_io.h"
#include "newir/program_io.h"
#include "newir/verifier.h"
#include "oldir/program_io.h"
#include "oldir/validator.h"
#include "reference_runtime/legacy_executor.h"
#include "reference_runtime/pir_executor.h"

namespace irm::rt {

StatusOr<LoadedProgram> LoadProgramForRun(const std::string& path, ExecutorOptions options) {
  LoadedProgram loaded;
  loaded.file = path;
  options.file = path;
  IRM_ASSIGN_OR_RETURN(const std::string bytes, ReadFile(path));
  if (newir::DetectFileFormat(bytes).has_value()) {
    loaded.new_ir = true;
    IRM_ASSIGN_OR_RETURN(newir::Program program, newir::ParseProgramFile(bytes, path));
    IRM_RETURN_IF_ERROR(newir::VerifyProgram(program, {.file = path}));
    loaded.pir = std::make_unique<newir::Program>(std::move(program));
    loaded.executor = std::make_unique<PirExecutor>(*loaded.pir, std::move(options));
    return loaded;
  }
  IRM_ASSIGN_OR_RETURN(oldir::Program program, oldir::ParseProgram(bytes, path));
  oldir::ValidateOptions validate;
  validate.file = path;
  const Diagnostics findings = oldir::ValidateProgram(program, validate);
  for (const Diagnostic& d : findings.items()) {
    if (d.severity == Severity::kError) return Status(StatusCode::kInvalid, d);
  }
  loaded.legacy = std::make_unique<oldir::Program>(std::move(program));
  auto executor = std::make_unique<LegacyExecutor>(*loaded.legacy, std::move(options));
  IRM_RETURN_IF_ERROR(executor->plan_status());
  loaded.executor = std::move(executor);
  return loaded;
}

}  // namespace irm::rt
