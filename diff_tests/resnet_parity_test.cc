// The model zoo's ResNet (oldir/models/resnet.h: bottleneck blocks, conv2d + batch_norm in
// training mode, max and adaptive pools, fc) trained by momentum — plain, and nesterov with
// l2_decay — under a piecewise learning rate whose boundary falls inside the run (the rate lives
// in conditional_blocks): old vs translated new bit-identical (exact tier) over every step in both
// GEMM modes, the running statistics, velocities, rate and step counter included; and the legacy
// run against its float64 shadow (oldir/float64_shadow.h) within the reordered tier after every
// step: the loss and accuracies, every parameter and running statistic, the rate (momentum's
// velocities, raw gradients, are left to the parameters they move: see IsVelocity). The program
// cloned for test (is_test, as Program.clone(for_test=True) writes it) is checked the same two
// ways, its batch_norms reading the running statistics training left.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "diff_tests/parity_run.h"
#include "diff_tests/serial_reference_test_support.h"
#include "diff_tests/tensor_compare.h"
#include "oldir/float64_shadow.h"
#include "oldir/models/resnet.h"
#include "oldir/models/training.h"
#include "reference_runtime/legacy_executor.h"

namespace irm::diff {
namespace {

namespace pf = oldir::proto;
using oldir::models::ModelPrograms;

// Four steps: the rate's step counter reads 0, 1, 2, 3, so the boundary at 2 switches the rate
// from 0.1 to 0.01 halfway.
constexpr int kSteps = 4;
constexpr int64_t kBoundary = 2;
constexpr float kRates[] = {0.1f, 0.01f};
constexpr int64_t kBatch = 4;
constexpr int32_t kSeed = 7;

// Two bottleneck stages, 16 x 16 images: stage 0 has two blocks (a projection shortcut, then an
// identity one), stage 1 one block of stride 2 (projection), so the last batch_norms normalise over
// 2 x 2 pixels; eleven conv_bn pairs besides the stem, a fraction of a second per test.
oldir::models::ResnetConfig TinyBottleneck() {
  oldir::models::ResnetConfig config;
  config.block = oldir::models::ResnetBlock::kBottleneck;
  config.depth = {2, 1};
  config.width = 2;
  config.channels = 3;
  config.image_size = 16;
  config.classes = 4;
  config.top_k = 2;
  config.seed = kSeed;
  return config;
}

struct ResnetPrograms {
  oldir::Program main;
  oldir::Program startup;
  // The forward pass cloned for test, with the fetch ops of the loss and both accuracies.
  oldir::Program inference;
  oldir::Program inference_startup;
};

// What Program.clone(for_test=True) does to a forward program (python/paddle/fluid/framework.py,
// Program._inference_optimize, Paddle 2.4): every op's `is_test` becomes true and batch_norm's
// ReserveSpace output is removed.
void MakeInference(oldir::Program& program) {
  for (pf::BlockDesc& block : *program.mutable_desc()->mutable_blocks()) {
    for (pf::OpDesc& op : *block.mutable_ops()) {
      for (pf::OpDesc::Attr& attr : *op.mutable_attrs()) {
        if (attr.name() == "is_test" && attr.type() == pf::BOOLEAN) attr.set_b(true);
      }
      if (op.type() != "batch_norm") continue;
      auto* outputs = op.mutable_outputs();
      outputs->erase(std::remove_if(outputs->begin(), outputs->end(),
                                    [](const pf::OpDesc::Var& slot) {
                                      return slot.parameter() == "ReserveSpace";
                                    }),
                     outputs->end());
    }
  }
}

StatusOr<ResnetPrograms> BuildResnetTraining(bool nesterov_l2) {
  // The scripts clone the test program before minimize: the same forward pass, built again (the
  // builder's names are deterministic, so both programs name every var alike).
  ModelPrograms forward;
  oldir::models::ResnetMetrics forward_metrics;
  IRM_RETURN_IF_ERROR(oldir::models::BuildResnet(TinyBottleneck(), &forward, &forward_metrics));
  forward.main.root().CreateTypedVar("fetch", pf::VarType::FETCH_LIST, true);
  int32_t col = 0;
  for (const std::string& name :
       {forward.loss, forward_metrics.acc_top1, forward_metrics.acc_topk}) {
    forward.main.root().AppendOp("fetch", {{"X", {name}}}, {{"Out", {"fetch"}}}, {{"col", col++}});
  }
  oldir::Program inference = forward.main.Build();
  MakeInference(inference);

  ModelPrograms model;
  oldir::models::ResnetMetrics metrics;
  IRM_RETURN_IF_ERROR(oldir::models::BuildResnet(TinyBottleneck(), &model, &metrics));
  oldir::models::TrainingOptions options;
  options.optimizer.kind = oldir::OptimizerKind::kMomentum;
  options.optimizer.momentum = 0.9f;
  options.optimizer.use_nesterov = nesterov_l2;
  // Momentum(weight_decay=L2Decay(c)): fused into the op (regularization_method "l2_decay").
  if (nesterov_l2) options.optimizer.l2_decay = 1e-3f;
  options.lr_schedule.decay = oldir::models::LrDecay::kPiecewise;
  options.lr_schedule.boundaries = {kBoundary};
  options.lr_schedule.values = {kRates[0], kRates[1]};
  options.extra_fetches = {metrics.acc_top1, metrics.acc_topk};
  IRM_RETURN_IF_ERROR(oldir::models::AddTraining(&model, options));
  return ResnetPrograms{model.main.Build(), model.startup.Build(), std::move(inference),
                        forward.startup.Build()};
}

const char* VariantName(bool nesterov_l2) { return nesterov_l2 ? "nesterov+l2_decay" : "momentum"; }

int CountOps(const oldir::Program& program, const std::string& type) {
  int count = 0;
  for (const pf::BlockDesc& block : program.desc().blocks()) {
    for (const pf::OpDesc& op : block.ops()) count += op.type() == type ? 1 : 0;
  }
  return count;
}

// The momentum ops with use_nesterov and an l2_decay of their own.
int CountNesterovL2(const oldir::Program& program) {
  int count = 0;
  for (const pf::OpDesc& op : program.desc().blocks(0).ops()) {
    if (op.type() != "momentum") continue;
    bool nesterov = false, l2 = false;
    for (const pf::OpDesc::Attr& attr : op.attrs()) {
      nesterov |= attr.name() == "use_nesterov" && attr.b();
      l2 |= attr.name() == "regularization_method" && attr.s() == "l2_decay";
    }
    count += nesterov && l2 ? 1 : 0;
  }
  return count;
}

// The names of the persistable vars the report compared in `group` at `step`.
std::set<std::string> ComparedNames(const ParityReport& report, int step) {
  std::set<std::string> names;
  for (const ComparedTensor& t : report.tensors) {
    if (t.group == TensorGroup::kParameter && t.step == step && t.compared) names.insert(t.name);
  }
  return names;
}

TEST(ResnetParityTest, ProgramIsTheOneTheAcceptanceNames) {
  for (bool nesterov_l2 : {false, true}) {
    SCOPED_TRACE(VariantName(nesterov_l2));
    StatusOr<ResnetPrograms> programs = BuildResnetTraining(nesterov_l2);
    ASSERT_TRUE(programs.ok()) << programs.status().ToString();
    // Stem + 3 per bottleneck block + 1 projection per stage: 12 conv_bn pairs, each with a grad.
    EXPECT_EQ(CountOps(programs->main, "conv2d"), 12);
    EXPECT_EQ(CountOps(programs->main, "batch_norm"), 12);
    EXPECT_EQ(CountOps(programs->main, "batch_norm_grad"), 12);
    EXPECT_EQ(CountOps(programs->main, "pool2d"), 2);
    // One conditional_block per piece of the schedule: the boundary's case and the default.
    EXPECT_EQ(CountOps(programs->main, "conditional_block"), 2);
    // One update per trained parameter: 12 conv2d, 12 x 2 batch_norm, fc's weight and bias.
    EXPECT_EQ(CountOps(programs->main, "momentum"), 12 + 12 * 2 + 2);
    EXPECT_EQ(CountNesterovL2(programs->main), nesterov_l2 ? 12 + 12 * 2 + 2 : 0);
    EXPECT_EQ(CountOps(programs->inference, "batch_norm"), 12);
    EXPECT_EQ(CountOps(programs->inference, "batch_norm_grad"), 0);
    EXPECT_EQ(CountOps(programs->inference, "momentum"), 0);
  }
}

TEST(ResnetParityTest, TrainingIsBitIdenticalToItsTranslation) {
  for (bool nesterov_l2 : {false, true}) {
    StatusOr<ResnetPrograms> programs = BuildResnetTraining(nesterov_l2);
    ASSERT_TRUE(programs.ok()) << programs.status().ToString();
    for (rt::GemmMode gemm : {rt::GemmMode::kBlas, rt::GemmMode::kReference}) {
      const std::string name =
          fmt::format("resnet {} {}", VariantName(nesterov_l2), rt::GemmModeName(gemm));
      SCOPED_TRACE(name);
      ParityPrograms parity{.legacy_main = &programs->main,
                            .legacy_startup = &programs->startup,
                            .new_main = nullptr,
                            .new_startup = nullptr,
                            .legacy_file = name,
                            .new_file = ""};
      ParityOptions options;
      options.steps = kSteps;
      options.seed = kSeed;
      options.batch_size = kBatch;
      options.gemm = gemm;
      StatusOr<ParityResult> result = RunParity(parity, options);
      ASSERT_TRUE(result.ok()) << result.status().ToString();
      const ParityReport& report = result->report;
      EXPECT_TRUE(report.parity()) << RenderMarkdown(report);
      EXPECT_FALSE(report.first_divergence.has_value());
      // The loss and both accuracies of every step.
      EXPECT_EQ(report.Compared(TensorGroup::kFetch), 3 * kSteps);
      EXPECT_GT(report.Compared(TensorGroup::kIntermediate), 0);
      EXPECT_EQ(report.NotCompared(), 0);
      // After the startup and after every step: the weights, the velocities, every batch_norm's
      // running statistics, the scheduled rate and its step counter.
      for (int step = 0; step <= kSteps; ++step) {
        SCOPED_TRACE(fmt::format("step {}", step));
        const std::set<std::string> names = ComparedNames(report, step);
        for (const char* var : {"conv2d_0.w_0", "conv2d_0.w_0_velocity_0", "batch_norm_0.w_1",
                                "batch_norm_0.w_2", "batch_norm_11.w_1", "batch_norm_11.w_2",
                                "fc_0.w_0", "learning_rate", "@LR_DECAY_COUNTER@"}) {
          EXPECT_TRUE(names.contains(var)) << var;
        }
      }
    }
  }
}

TEST(ResnetParityTest, InferenceIsBitIdenticalToItsTranslation) {
  StatusOr<ResnetPrograms> programs = BuildResnetTraining(false);
  ASSERT_TRUE(programs.ok()) << programs.status().ToString();
  ParityPrograms parity{.legacy_main = &programs->inference,
                        .legacy_startup = &programs->inference_startup,
                        .new_main = nullptr,
                        .new_startup = nullptr,
                        .legacy_file = "resnet for test",
                        .new_file = ""};
  ParityOptions options;
  options.steps = 2;
  options.seed = kSeed;
  options.batch_size = kBatch;
  StatusOr<ParityResult> result = RunParity(parity, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const ParityReport& report = result->report;
  EXPECT_TRUE(report.parity()) << RenderMarkdown(report);
  EXPECT_EQ(report.Compared(TensorGroup::kFetch), 3 * 2);
  EXPECT_EQ(report.NotCompared(), 0);
  // The running statistics are compared after each step: in inference mode neither side may
  // move them.
  for (int step = 0; step <= 2; ++step) {
    EXPECT_TRUE(ComparedNames(report, step).contains("batch_norm_0.w_1")) << step;
  }
}

// A float64 tensor narrowed to float32 (other dtypes copied): the shadow's value as the float32
// run should hold it, so that the comparison takes the float32 bounds of the reordered tier.
rt::Tensor ToFloat32(const rt::Tensor& t) {
  if (t.dtype() != DType::kFloat64) return t.Clone();
  std::vector<float> v(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(t.data<double>()[i]);
  return rt::Tensor::FromVector(v, t.shape());
}

rt::FeedMap Widened(const rt::FeedMap& feeds) {
  rt::FeedMap wide;
  for (const auto& [name, tensor] : feeds) wide[name] = ToFloat64(tensor);
  return wide;
}

// One program run in float32 (the legacy executor, as the parity runs above run it) and as its
// float64 shadow, on the same feeds from the same start.
class ShadowedRun {
 public:
  ShadowedRun(const oldir::Program& program, const oldir::Program& shadow_program)
      : single_(program, Seeded()), shadow_(shadow_program, Seeded()) {}

  std::vector<rt::FeedSpec> FeedSpecs() const { return single_.FeedSpecs(); }

  // Both runs' fetches, in fetch order.
  StatusOr<std::pair<std::vector<rt::Fetch>, std::vector<rt::Fetch>>> Run(
      rt::Scope& single, rt::Scope& shadow, const rt::FeedMap& feeds) {
    IRM_ASSIGN_OR_RETURN(std::vector<rt::Fetch> got, single_.Run(single, feeds));
    IRM_ASSIGN_OR_RETURN(std::vector<rt::Fetch> want, shadow_.Run(shadow, Widened(feeds)));
    return std::pair{std::move(got), std::move(want)};
  }

  static rt::ExecutorOptions Seeded() {
    rt::ExecutorOptions options;
    options.seed = kSeed;
    return options;
  }

 private:
  rt::LegacyExecutor single_, shadow_;
};

// A float32 tensor against the shadow's, in the reordered tier.
void ExpectReordered(const std::string& what, const rt::Tensor& got, const rt::Tensor& shadow) {
  const Comparison c = CompareTensors(got, ToFloat32(shadow), Tier::kReordered);
  EXPECT_TRUE(c.pass) << what << ": " << c.reason << " (max abs diff " << c.metrics.max_abs_diff
                      << ")";
}

void ExpectFetchesReordered(const std::string& what, const std::vector<rt::Fetch>& got,
                            const std::vector<rt::Fetch>& shadow) {
  ASSERT_EQ(got.size(), shadow.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ExpectReordered(fmt::format("{} fetch {}", what, got[i].name), got[i].tensor, shadow[i].tensor);
  }
}

// Momentum's velocities (`<param>_velocity_0`) are the raw gradients, which batch_norm's backward
// forms by cancellation (dy less its mean and its projection on x̂): there float32 keeps about four
// correct digits: 1e-5 to 1e-4 normwise from the float64 shadow by the second step (a float32
// run with the reference GEMM errs as much), up to 1e-3 by the fourth. The reordered tier does not
// hold for them; what they feed — every parameter after every step — is held to it. The
// parameters initialised to zero (batch_norm biases, fc's bias) are -lr times the summed
// velocities and so come closest to the tier's normwise bound (within 0.92 of it here).
bool IsVelocity(const std::string& name) { return name.find("_velocity_") != std::string::npos; }

TEST(ResnetParityTest, TrainingMatchesItsFloat64ShadowInTheReorderedTier) {
  for (bool nesterov_l2 : {false, true}) {
    SCOPED_TRACE(VariantName(nesterov_l2));
    StatusOr<ResnetPrograms> programs = BuildResnetTraining(nesterov_l2);
    ASSERT_TRUE(programs.ok()) << programs.status().ToString();
    oldir::Program shadow_main = programs->main;
    ASSERT_GT(oldir::PromoteToFloat64(shadow_main), 0);
    oldir::Program shadow_inference = programs->inference;
    ASSERT_GT(oldir::PromoteToFloat64(shadow_inference), 0);

    // Both runs start from the float32 startup's numbers (widened exactly for the shadow).
    rt::Scope single, shadow;
    rt::LegacyExecutor startup(programs->startup, ShadowedRun::Seeded());
    ASSERT_TRUE(startup.Run(single, {}).ok());
    const std::vector<std::string> state = single.LocalNames();
    for (const std::string& name : state) shadow.Set(name, ToFloat64(*single.FindLocal(name)));
    int judged = 0;
    for (const std::string& name : state) judged += IsVelocity(name) ? 0 : 1;
    // The weights (12 conv2d, 12 x 2 batch_norm, fc's 2), 12 x 2 running statistics, the rate
    // and its step counter.
    EXPECT_EQ(judged, 12 + 12 * 2 + 2 + 12 * 2 + 2);

    ShadowedRun step(programs->main, shadow_main);
    FeedValues values(kSeed);
    for (int s = 0; s < kSteps; ++s) {
      SCOPED_TRACE(fmt::format("step {}", s));
      auto fetched = step.Run(single, shadow, GlobalFeedBatch(step.FeedSpecs(), kBatch, values));
      ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
      ExpectFetchesReordered("training", fetched->first, fetched->second);
      for (const std::string& name : state) {
        if (!IsVelocity(name))
          ExpectReordered(name, *single.FindLocal(name), *shadow.FindLocal(name));
      }
      // piecewise_decay: the rate is values[0] while the counter is below the boundary
      // (learning_rate_scheduler.py's Switch on `step < boundary`), then values[1].
      EXPECT_EQ(Scalar(*single.FindLocal("learning_rate")), kRates[s < kBoundary ? 0 : 1]);
    }
    // Training moved the running statistics off their initial 0 (mean) and 1 (variance).
    for (const char* name : {"batch_norm_0.w_1", "batch_norm_11.w_1"}) {
      const rt::Tensor& mean = *single.FindLocal(name);
      bool moved = false;
      for (int64_t i = 0; i < mean.numel(); ++i) moved |= mean.data<float>()[i] != 0.0f;
      EXPECT_TRUE(moved) << name;
    }

    // The program for test on the trained state: its batch_norms read those statistics.
    ShadowedRun infer(programs->inference, shadow_inference);
    auto fetched = infer.Run(single, shadow, GlobalFeedBatch(infer.FeedSpecs(), kBatch, values));
    ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
    ExpectFetchesReordered("inference", fetched->first, fetched->second);
  }
}

}  // namespace
}  // namespace irm::diff
