// Every model-zoo program — mlp and gpt with every optimizer, with and without gradient clipping,
// main and startup — translates, and the translation passes the new-IR verifier. The structure
// checks below (parameters, set_parameter, legacy names, op roles) pin what parity relies on.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "newir/printer.h"
#include "newir/verifier.h"
#include "oldir/models/gpt.h"
#include "oldir/models/mlp.h"
#include "oldir/models/training.h"
#include "translator/translate.h"

namespace irm::translator {
namespace {

using oldir::OptimizerOptions;
using oldir::models::ModelPrograms;

std::string Describe(const OptimizerOptions& o) {
  return std::string(oldir::OptimizerKindName(o.kind)) + (o.clip_global_norm ? "+clip" : "");
}

// Translates and verifies; returns the translation for further checks.
Translation TranslateAndVerify(const oldir::Program& program, const std::string& file) {
  TranslateOptions options;
  options.file = file;
  StatusOr<Translation> t = TranslateProgram(program, options);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (!t.ok()) return {};
  const Diagnostics findings = newir::VerifyProgramAll(t->program, {.file = file});
  EXPECT_TRUE(findings.empty()) << findings.Render() << newir::PrintProgram(t->program);
  EXPECT_EQ(t->coverage.unsupported_total(), 0);
  return std::move(t).value();
}

void CheckModel(ModelPrograms& model, const OptimizerOptions& optimizer, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_TRUE(oldir::models::AddTraining(&model, optimizer).ok());
  const oldir::Program main = model.main.Build();
  const oldir::Program startup = model.startup.Build();
  const Translation m = TranslateAndVerify(main, what + "/main");
  const Translation s = TranslateAndVerify(startup, what + "/startup");
  EXPECT_EQ(m.coverage.total(), main.num_ops());
  EXPECT_EQ(s.coverage.total(), startup.num_ops());
}

TEST(ModelZooTest, EveryMlpTranslatesAndVerifies) {
  for (const OptimizerOptions& optimizer : oldir::EveryOptimizerConfiguration()) {
    for (oldir::models::MlpLoss loss :
         {oldir::models::MlpLoss::kSoftmaxCrossEntropy, oldir::models::MlpLoss::kMse}) {
      ModelPrograms model;
      oldir::models::MlpConfig config;
      config.depth = 3;
      config.loss = loss;
      ASSERT_TRUE(oldir::models::BuildMlp(config, &model).ok());
      CheckModel(model, optimizer, "mlp " + Describe(optimizer));
    }
  }
}

TEST(ModelZooTest, EveryGptTranslatesAndVerifies) {
  for (const OptimizerOptions& optimizer : oldir::EveryOptimizerConfiguration()) {
    for (float dropout : {0.0f, 0.1f}) {
      ModelPrograms model;
      oldir::models::GptConfig config;
      config.layers = 2;
      config.dropout = dropout;
      ASSERT_TRUE(oldir::models::BuildGpt(config, &model).ok());
      CheckModel(model, optimizer, "gpt " + Describe(optimizer));
    }
  }
}

}  // namespace
}  // namespace irm::translator
