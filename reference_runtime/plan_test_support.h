// What the plan tests share (plan_executor_test.cc, translator/plan_run_test.cc): a small legacy
// training program with gradient merge, split into the forward, backward and optimizer jobs of a
// pipeline plan the way Paddle's passes write them (pipelines.md §1.3, §2.1 with k = m), the
// programs the bit-identical references run, and a legacy bundle of it in a temp folder.
//
// The model: y = x·W + b (x [B, in], W [in, out], b [out]), loss = mean((y - label)^2); SGD.
// Gradient merge: persistable `<param>@GRAD@MERGE` buffers zeroed in startup; each backward adds
// its micro-batch's gradient (`elementwise_add(merge, grad) -> merge`); the optimizer job scales
// the buffers by 1/m into the gradient vars, runs SGD and zeroes the buffers.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "oldir/backward.h"
#include "oldir/bundle.h"
#include "oldir/program.h"

namespace irm::rt::testing {

struct GradMergeModel {
  int micro_batches = 1;
  int64_t in = 4, out = 3;
  float learning_rate = 0.1f;
  oldir::Program startup;
  // Forward (feed ops, the loss, its fetch op), backward plus the merge adds, and the optimizer
  // job (scale, sgd, zeroing), split by op role from one program.
  std::map<std::string, oldir::Program> jobs;
  // The forward and backward jobs as one program: run once per micro-batch, it is what the plan
  // computes without micro-batch scopes.
  oldir::Program forward_backward;
  // The same model without gradient merge: one SGD step per run on the whole batch.
  oldir::Program plain;
  oldir::Program plain_startup;
  std::vector<oldir::ParamGrad> params_grads;
  std::string loss;
};

// kInvalidArgument for micro_batches < 1; the builders' errors otherwise.
StatusOr<GradMergeModel> BuildGradMergeModel(int micro_batches, int32_t seed = 11);

// FThenB: forward 0..m-1, backward 0..m-1, optimizer on micro-batch 0.
std::vector<oldir::PlanJob> FThenBPlan(int micro_batches);
// Each micro-batch's forward then backward (1F1B's order on a single stage), then the optimizer.
std::vector<oldir::PlanJob> InterleavedPlan(int micro_batches);

// Writes a one-rank legacy bundle of the model to `dir`: startup, the three jobs, `plan`; feeds x
// and label split by batch, the loss fetched, `steps` steps, the seed.
Status WriteGradMergeBundle(const GradMergeModel& model, const std::vector<oldir::PlanJob>& plan,
                            int steps, int64_t seed, const std::string& dir);

// A fresh folder under the test temp dir, named after the running test; removed by the caller.
std::string TestDir(const std::string& tag);

}  // namespace irm::rt::testing
