// The whole-program parity tests' programs (parity_test_support.h).
#include "diff_tests/parity_test_support.h"

#include "common/file_io.h"
#include "oldir/models/gpt.h"
#include "oldir/models/mlp.h"
#include "oldir/models/training.h"
#include "oldir/optimizer.h"
#include "oldir/program_io.h"

namespace irm::diff::testing {
namespace {

std::string Describe(const oldir::OptimizerOptions& o) {
  return std::string(oldir::OptimizerKindName(o.kind)) + (o.clip_global_norm ? "+clip" : "");
}

}  // namespace

std::vector<ZooCase> EveryZooCase() {
  std::vector<ZooCase> cases;
  for (const oldir::OptimizerOptions& optimizer : oldir::EveryOptimizerConfiguration()) {
    for (int model = 0; model < 2; ++model) {
      oldir::models::ModelPrograms programs;
      Status built = Status::Ok();
      if (model == 0) {
        oldir::models::MlpConfig config;
        config.depth = 3;
        built = oldir::models::BuildMlp(config, &programs);
      } else {
        oldir::models::GptConfig config;
        config.layers = 2;
        config.dropout = 0.1f;  // random ops draw the same numbers on both sides
        built = oldir::models::BuildGpt(config, &programs);
      }
      if (built.ok()) built = oldir::models::AddTraining(&programs, optimizer);
      if (!built.ok()) continue;  // the test counts the cases
      cases.push_back({std::string(model == 0 ? "mlp " : "gpt ") + Describe(optimizer),
                       programs.main.Build(), programs.startup.Build()});
    }
  }
  return cases;
}

StatusOr<oldir::Program> LoadTestProgram(const std::string& name) {
  const std::string path = std::string(IRM_PARITY_TESTDATA) + "/" + name;
  IRM_ASSIGN_OR_RETURN(const std::string text, ReadFile(path));
  return oldir::ParseProgram(text, name, oldir::ProgramFormat::kText);
}

}  // namespace irm::diff::testing
