// The zoo gpt training program the GPU executor tests run (what `ir-migrate build gpt` writes, at
// small sizes: 2 layers, hidden 64, AdamW, attention dropout 0.1), shared by
// gpu_executor_test.cc and gpu_resident_test.cc.
#pragma once

#include <gtest/gtest.h>

#include "oldir/models/gpt.h"
#include "oldir/models/training.h"
#include "oldir/optimizer.h"

namespace irm::rt::cuda {

struct GptPrograms {
  oldir::Program main;
  oldir::Program startup;
};

inline GptPrograms SmallGpt() {
  oldir::models::GptConfig config;
  config.layers = 2;
  config.hidden = 64;
  config.heads = 4;
  config.vocab = 128;
  config.seq = 16;
  config.dropout = 0.1f;
  config.seed = 7;
  oldir::models::ModelPrograms programs;
  Status built = oldir::models::BuildGpt(config, &programs);
  oldir::OptimizerOptions adamw;
  adamw.kind = oldir::OptimizerKind::kAdamW;
  if (built.ok()) built = oldir::models::AddTraining(&programs, adamw);
  EXPECT_TRUE(built.ok()) << built.ToString();
  return {programs.main.Build(), programs.startup.Build()};
}

}  // namespace irm::rt::cuda
