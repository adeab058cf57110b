// An example legacy training program shaped like what Paddle's static graph writes for an MLP
// classifier (paddle.nn.Linear + relu, softmax_with_cross_entropy, mean, append_backward, SGD):
// same op types, slot and attribute names, var naming and op roles. Used by the demo, the
// benchmarks (scaled to tens of thousands of ops) and as fuzzing seeds.
#pragma once

#include "oldir/program.h"

namespace irm::examples {

struct MlpOptions {
  int layers = 2;  // Linear layers; relu between them
  int in_features = 4;
  int hidden = 8;
  int classes = 3;
  bool with_callstack = true;  // Paddle saves a Python traceback on every op
};

oldir::Program MakeMlpTrainingProgram(const MlpOptions& options = {});

}  // namespace irm::examples
