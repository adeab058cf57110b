// Every model-zoo configuration, trained with every optimizer, with and without gradient clipping,
// gives a startup and a main program that validate with no findings; and the training glue puts
// the fetch op last.
#include "oldir/models/training.h"

#include <gtest/gtest.h>

#include <map>

#include "oldir/dump.h"
#include "oldir/models/gpt.h"
#include "oldir/models/mlp.h"
#include "oldir/validator.h"

namespace irm::oldir::models {
namespace {

void ExpectValidTraining(ModelPrograms& model, const OptimizerOptions& optimizer,
                         const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_TRUE(AddTraining(&model, optimizer).ok());
  const Program main = model.main.Build();
  const Program startup = model.startup.Build();
  ValidateOptions options;
  options.file = "main";
  const Diagnostics main_findings = ValidateProgram(main, options);
  options.file = "startup";
  const Diagnostics startup_findings = ValidateProgram(startup, options);
  EXPECT_TRUE(main_findings.empty()) << main_findings.Render();
  EXPECT_TRUE(startup_findings.empty()) << startup_findings.Render();
  ASSERT_GT(main.root().num_ops(), 0);
  const Op last = main.root().op(main.root().num_ops() - 1);
  EXPECT_EQ(last.type(), "fetch");
  EXPECT_EQ(last.SingleInput("X"), model.loss);
  EXPECT_EQ(model.fetches, std::vector<std::string>{model.loss});
}

TEST(TrainingTest, EveryMlpConfigurationValidates) {
  for (const OptimizerOptions& optimizer : EveryOptimizerConfiguration()) {
    for (MlpActivation activation : {MlpActivation::kRelu, MlpActivation::kGelu,
                                     MlpActivation::kTanh, MlpActivation::kSigmoid}) {
      for (MlpLoss loss : {MlpLoss::kSoftmaxCrossEntropy, MlpLoss::kMse}) {
        for (int depth : {1, 3}) {
          ModelPrograms model;
          MlpConfig config;
          config.depth = depth;
          config.activation = activation;
          config.loss = loss;
          ASSERT_TRUE(BuildMlp(config, &model).ok());
          ExpectValidTraining(model, optimizer,
                              std::string("mlp ") + MlpActivationName(activation) + " " +
                                  MlpLossName(loss) + " depth " + std::to_string(depth) + " " +
                                  OptimizerKindName(optimizer.kind) +
                                  (optimizer.clip_global_norm ? " clip" : ""));
        }
      }
    }
  }
}

TEST(TrainingTest, EveryGptConfigurationValidates) {
  for (const OptimizerOptions& optimizer : EveryOptimizerConfiguration()) {
    for (int layers : {1, 2}) {
      for (float dropout : {0.0f, 0.1f}) {
        ModelPrograms model;
        GptConfig config;
        config.layers = layers;
        config.hidden = 64;
        config.heads = 4;
        config.vocab = 128;
        config.seq = 16;
        config.dropout = dropout;
        ASSERT_TRUE(BuildGpt(config, &model).ok());
        ExpectValidTraining(model, optimizer,
                            "gpt layers " + std::to_string(layers) + " dropout " +
                                std::to_string(dropout) + " " + OptimizerKindName(optimizer.kind) +
                                (optimizer.clip_global_norm ? " clip" : ""));
      }
    }
  }
}

TEST(TrainingTest, EveryParameterGetsExactlyOneUpdate) {
  ModelPrograms model;
  GptConfig config;
  ASSERT_TRUE(BuildGpt(config, &model).ok());
  OptimizerOptions optimizer;
  optimizer.kind = OptimizerKind::kAdamW;
  ASSERT_TRUE(AddTraining(&model, optimizer).ok());
  const Program main = model.main.Build();
  std::map<std::string, int> updates;
  for (int i = 0; i < main.root().num_ops(); ++i) {
    const Op op = main.root().op(i);
    if (op.type() != "adamw") continue;
    EXPECT_EQ(op.role(), kOptimize);
    ++updates[op.SingleInput("Param").value_or("?")];
  }
  int params = 0;
  for (int v = 0; v < main.root().num_vars(); ++v) {
    const Var var = main.root().var(v);
    if (!var.is_parameter()) continue;
    ++params;
    EXPECT_EQ(updates[var.name()], 1) << var.name();
  }
  EXPECT_EQ(static_cast<int>(updates.size()), params);
}

TEST(TrainingTest, FailsCleanlyWithoutALoss) {
  ModelPrograms model;
  ASSERT_TRUE(BuildMlp({}, &model).ok());
  model.loss = "no_such_var";
  const Status status = AddTraining(&model, OptimizerOptions{});
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("no_such_var"), std::string::npos) << status.ToString();
}

}  // namespace
}  // namespace irm::oldir::models
