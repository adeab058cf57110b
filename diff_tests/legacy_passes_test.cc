// The legacy data-parallel pass (oldir/passes/data_parallel.h) against the serial run: a zoo
// training program (mlp; gpt with 2 layers; SGD and AdamW) made into the bundle of dp2 and dp4
// replicas validates, runs 3 steps on the thread backend with each replica reading its rows of
// the global batch, and ends where the serial program ends after 3 steps on the global batches
// from the same initial parameters: the losses (the serial loss is the mean of the replicas'),
// every parameter and every piece of optimizer state, within the reordered tier of
// docs/parity.md, on every rank, and the replicas bit for bit equal to each other. What makes it
// so is the gradient synchronisation Paddle's legacy auto-parallel inserts
// (python/paddle/distributed/auto_parallel/static/operators/common.py,
// sync_and_scale_gradients: c_allreduce_sum on the dp group, then scale 1/dp): the sum over the
// replicas of their local-mean gradients, divided by dp, is the global-mean gradient.
//
// Where the reordered tier fails, an fp64 shadow of the serial run arbitrates
// (serial_reference_test_support.h, AgainstSerial): gpt's key-projection biases have an exactly
// zero gradient, so their AdamW updates are rounding noise scaled to learning-rate size in every
// run (`noise_floor`), and their second moments are squares of that noise, in which the serial
// fp32 run has no significant digit (`no_signal`). Both lists are printed and recorded as the
// test's properties.
//
// The bucketed variant (dp_optimization, Paddle's fused all-reduce) is checked as programs (at
// least 3 buckets, one all-reduce per bucket, a bundle that validates) and run: the gradients
// become views of each bucket's coalesce_tensor buffer, so the one all-reduce of the buffer is
// what the optimizer reads; the bucketed and unbucketed dp2 runs agree bit for bit, and each
// rank's communication trace holds exactly one all-reduce per bucket per step.
//
// Data parallelism with gradient merge (oldir/passes/apply_strategy.h; Paddle's order in
// parallelizer_v2.py: the dp sync in backward, then auto_parallel_gradient_merge_pass in
// _apply_post_optimization, gradient_sync_after_accumulate false): the dp2 x k=2 bundle's first
// executor step leaves every parameter and optimizer state bit for bit as initialised, and its
// second ends where one serial step on all 2 x 2 micro-batch row blocks ends, within the
// reordered tier with the same arbitration; the all-reduce runs on every micro-step.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "common/scratch_dir_test_support.h"
#include "diff_tests/serial_reference_test_support.h"
#include "diff_tests/tensor_compare.h"
#include "oldir/bundle.h"
#include "oldir/float64_shadow.h"
#include "oldir/models/gpt.h"
#include "oldir/models/mlp.h"
#include "oldir/models/training.h"
#include "oldir/params_io.h"
#include "oldir/passes/apply_strategy.h"
#include "oldir/passes/bundle_output.h"
#include "oldir/passes/data_parallel.h"
#include "reference_runtime/comm/comm_trace.h"
#include "reference_runtime/legacy_executor.h"
#include "reference_runtime/multi_rank_run.h"
#include "reference_runtime/run.h"

namespace irm::diff {
namespace {

using rt::FeedMap;
using rt::Scope;
using rt::Tensor;

constexpr int kSteps = 3;
constexpr int64_t kRowsPerReplica = 2;

using Case = ZooCase;  // degree: dp_degree

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  return ZooCaseName(info.param, "dp");
}

// Applies the strategy and writes the bundle; ASSERTs that it validates.
void WriteDataParallelBundle(const oldir::models::ModelPrograms& model,
                             const oldir::passes::Strategy& strategy, const std::string& dir,
                             oldir::passes::DistributedPrograms* programs, int steps = kSteps) {
  StatusOr<oldir::passes::DistributedPrograms> dp =
      oldir::passes::ApplyStrategy(model.startup.Build(), model.main.Build(), strategy);
  ASSERT_TRUE(dp.ok()) << dp.status().ToString();
  StatusOr<oldir::Bundle> written =
      oldir::passes::WriteDistributedBundle(*dp, ZooBundleJson(model, strategy, steps), dir);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  StatusOr<oldir::Bundle> read = oldir::ReadBundle(dir);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  const Diagnostics findings = oldir::ValidateBundle(*read, dir);
  ASSERT_FALSE(findings.HasErrors()) << findings.Render();
  EXPECT_EQ(read->world_size, strategy.dp_degree);
  if (programs != nullptr) *programs = std::move(dp).value();
}

StatusOr<rt::MultiRankResult> RunBundle(const std::string& dir) {
  rt::MultiRankConfig config;
  config.rank_config.random_feeds = true;
  config.rank_config.batch_size = kRowsPerReplica;
  config.world.trace = true;
  return rt::RunBundleRanks(dir, config);
}

class DataParallelPassTest : public ::testing::TestWithParam<Case> {};

TEST_P(DataParallelPassTest, ReplicasMatchTheSerialRunOfTheGlobalBatch) {
  const Case c = GetParam();
  oldir::models::ModelPrograms model;
  ASSERT_TRUE(BuildZooTraining(c.model, c.optimizer, &model).ok());
  oldir::passes::Strategy strategy;
  strategy.dp_degree = c.degree;
  ScratchDir dir(CaseName({c, 0}));
  ASSERT_NO_FATAL_FAILURE(WriteDataParallelBundle(model, strategy, dir / "dp", nullptr));
  StatusOr<rt::MultiRankResult> dp = RunBundle(dir / "dp");
  ASSERT_TRUE(dp.ok()) << dp.status().ToString();
  ASSERT_EQ(dp->ranks.size(), static_cast<size_t>(c.degree));

  // The serial twin and its fp64 shadow, on the global batch the replicas drew together.
  StatusOr<std::unique_ptr<SerialReference>> reference = SerialReference::Create(model);
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();
  SerialReference& ref = **reference;
  Scope& serial = ref.serial();
  Scope& shadow = ref.shadow();
  const std::vector<std::string>& state = ref.state();
  const int64_t global_rows = kRowsPerReplica * c.degree;
  for (int s = 1; s <= kSteps; ++s) {
    SCOPED_TRACE("step " + std::to_string(s));
    FeedMap feeds;
    for (const rt::FeedSpec& spec : ref.FeedSpecs()) {
      feeds[spec.name] = rt::RandomFeed(spec, ref.seed(), s, global_rows);
    }
    StatusOr<std::vector<rt::Fetch>> loss = ref.Step(feeds);
    ASSERT_TRUE(loss.ok()) << loss.status().ToString();
    // The mean of the replicas' mean losses is the global batch's mean loss.
    double sum = 0;
    for (const rt::RankOutcome& rank : dp->ranks) {
      ASSERT_EQ(rank.steps.size(), static_cast<size_t>(kSteps));
      sum += Scalar(rank.steps[s - 1].merged[0].tensor);
    }
    const Tensor mean = Tensor::FromVector(std::vector<float>{static_cast<float>(sum / c.degree)},
                                           (*loss)[0].tensor.shape());
    const Comparison cmp = CompareTensors(mean, (*loss)[0].tensor, Tier::kReordered);
    EXPECT_TRUE(cmp.pass) << "loss: " << cmp.reason;
  }

  std::string arbitrated;
  std::string no_signal;
  int compared = 0;
  Scope& rank0 = *dp->ranks[0].scope;
  for (const std::string& name : state) {
    const Tensor* expected = serial.FindLocal(name);
    if (expected == nullptr || !expected->defined()) continue;
    SCOPED_TRACE(name);
    const Tensor* got = rank0.FindLocal(name);
    ASSERT_NE(got, nullptr);
    for (size_t r = 1; r < dp->ranks.size(); ++r) {
      const Tensor* other = dp->ranks[r].scope->FindLocal(name);
      ASSERT_NE(other, nullptr);
      EXPECT_TRUE(SameBits(*got, *other)) << "rank " << r << " drifted from rank 0";
    }
    ++compared;
    const Arbitration verdict = AgainstSerial(*got, *expected, shadow.FindLocal(name));
    EXPECT_NE(verdict.agreement, Agreement::kMismatch) << verdict.reason;
    if (verdict.agreement == Agreement::kNoiseFloor) {
      arbitrated += (arbitrated.empty() ? "" : " ") + name;
    }
    if (verdict.agreement == Agreement::kNoSignal) {
      no_signal += (no_signal.empty() ? "" : " ") + name;
    }
  }
  EXPECT_GE(compared, 6);
  // One all-reduce per parameter per step on every rank.
  StatusOr<std::vector<oldir::ParamGrad>> grads = oldir::passes::OptimizerParamGrads(ref.main());
  ASSERT_TRUE(grads.ok());
  for (int r = 0; r < c.degree; ++r) {
    const rt::CommTrace* trace = dp->world->trace(r);
    ASSERT_NE(trace, nullptr);
    EXPECT_EQ(trace->records().size(), grads->size() * kSteps) << "rank " << r;
  }
  if (!arbitrated.empty()) {
    std::cout << "noise-floor arbitration: " << arbitrated << "\n";
    RecordProperty("noise_floor", arbitrated);
  }
  if (!no_signal.empty()) {
    std::cout << "no signal (rounding noise in the serial run too): " << no_signal << "\n";
    RecordProperty("no_signal", no_signal);
  }
}

INSTANTIATE_TEST_SUITE_P(ZooModels, DataParallelPassTest, ::testing::ValuesIn(ZooCases({2, 4})),
                         CaseName);

// Bucket bounds that give each model at least 3 buckets, two or more of them fused.
double BucketMegabytes(const std::string& model) {
  return (model == "mlp" ? 314.0 : 1024.0) / (1 << 20);
}

class BucketedDataParallelTest : public ::testing::TestWithParam<const char*> {};

TEST_P(BucketedDataParallelTest, EachBucketIsAllReducedOnceAndTheBundleValidates) {
  const std::string name = GetParam();
  oldir::models::ModelPrograms model;
  ASSERT_TRUE(BuildZooTraining(GetParam(), oldir::OptimizerKind::kAdamW, &model).ok());
  oldir::passes::Strategy strategy;
  strategy.dp_degree = 2;
  strategy.dp_optimization.enable = true;
  strategy.dp_optimization.fuse_grad_size_in_MB = BucketMegabytes(name);
  ScratchDir dir("bucketed_" + name);
  oldir::passes::DistributedPrograms programs;
  ASSERT_NO_FATAL_FAILURE(WriteDataParallelBundle(model, strategy, dir / "dp", &programs));

  // The buckets, as the pass groups them on the unfused program.
  const oldir::Program main = model.main.Build();
  StatusOr<std::vector<oldir::ParamGrad>> grads = oldir::passes::OptimizerParamGrads(main);
  ASSERT_TRUE(grads.ok());
  StatusOr<oldir::Program> synced = oldir::passes::InsertGradientSync(main, *grads, 2);
  ASSERT_TRUE(synced.ok());
  StatusOr<std::vector<oldir::passes::GradientBucket>> buckets = oldir::passes::GroupGradients(
      *synced, static_cast<int64_t>(BucketMegabytes(name) * (1 << 20)));
  ASSERT_TRUE(buckets.ok());
  ASSERT_GE(buckets->size(), 3u);
  size_t fused = 0;
  size_t members = 0;
  for (const oldir::passes::GradientBucket& b : *buckets) {
    fused += b.grads.size() > 1 ? 1 : 0;
    members += b.grads.size();
  }
  EXPECT_GE(fused, 2u);
  EXPECT_EQ(members, grads->size());  // every gradient in exactly one bucket

  for (const oldir::passes::RankPrograms& rank : programs.ranks) {
    int reduces = 0;
    int coalesces = 0;
    for (int i = 0; i < rank.main.root().num_ops(); ++i) {
      reduces += rank.main.root().op(i).type() == "c_allreduce_sum";
      coalesces += rank.main.root().op(i).type() == "coalesce_tensor";
    }
    EXPECT_EQ(static_cast<size_t>(reduces), buckets->size());
    EXPECT_EQ(static_cast<size_t>(coalesces), fused);
  }
}

TEST_P(BucketedDataParallelTest, BucketedAndUnbucketedRunsAgreeBitForBit) {
  const std::string name = GetParam();
  oldir::models::ModelPrograms model;
  ASSERT_TRUE(BuildZooTraining(GetParam(), oldir::OptimizerKind::kAdamW, &model).ok());
  oldir::passes::Strategy plain;
  plain.dp_degree = 2;
  oldir::passes::Strategy bucketed = plain;
  bucketed.dp_optimization.enable = true;
  bucketed.dp_optimization.fuse_grad_size_in_MB = BucketMegabytes(name);
  ScratchDir dir("bucketed_run_" + name);
  oldir::passes::DistributedPrograms programs;
  ASSERT_NO_FATAL_FAILURE(WriteDataParallelBundle(model, bucketed, dir / "bucketed", &programs));
  ASSERT_NO_FATAL_FAILURE(WriteDataParallelBundle(model, plain, dir / "plain", nullptr));
  StatusOr<rt::MultiRankResult> a = RunBundle(dir / "plain");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  StatusOr<rt::MultiRankResult> b = RunBundle(dir / "bucketed");
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  for (size_t r = 0; r < a->ranks.size(); ++r) {
    for (const std::string& var : a->ranks[r].scope->LocalNames()) {
      const Tensor* x = a->ranks[r].scope->FindLocal(var);
      const Tensor* y = b->ranks[r].scope->FindLocal(var);
      ASSERT_NE(y, nullptr) << var;
      if (!x->defined()) continue;
      EXPECT_TRUE(SameBits(*x, *y)) << "rank " << r << ": " << var;
    }
  }

  // Each rank all-reduces each bucket exactly once a step, in program order, a fused bucket as
  // one buffer laid out as Paddle's coalesce_tensor lays it out on CPU: every gradient's part
  // rounded up to 4 KiB (paddle/phi/kernels/coalesce_tensor_kernel.cc with phi::Alignment and
  // CpuMinChunkSize, paddle/phi/backends/cpu/cpu_info.cc).
  const oldir::Program main = model.main.Build();
  StatusOr<std::vector<oldir::ParamGrad>> grads = oldir::passes::OptimizerParamGrads(main);
  ASSERT_TRUE(grads.ok());
  StatusOr<oldir::Program> synced = oldir::passes::InsertGradientSync(main, *grads, 2);
  ASSERT_TRUE(synced.ok());
  StatusOr<std::vector<oldir::passes::GradientBucket>> buckets = oldir::passes::GroupGradients(
      *synced, static_cast<int64_t>(BucketMegabytes(name) * (1 << 20)));
  ASSERT_TRUE(buckets.ok());
  std::map<std::string, int64_t> numel;
  for (const oldir::proto::VarDesc& var : main.root().desc().vars()) {
    int64_t n = 1;
    for (int64_t d : var.type().dense_tensor().tensor().dims()) n *= d;
    numel[var.name()] = n;
  }
  std::vector<int64_t> per_step;  // the element count of each step's all-reduces, as expected
  for (const oldir::passes::GradientBucket& bucket : *buckets) {
    int64_t count = 0;
    for (const std::string& g : bucket.grads) {
      count += bucket.grads.size() == 1 ? numel.at(g) : (numel.at(g) * 4 + 4095) / 4096 * 1024;
    }
    per_step.push_back(count);
  }
  std::sort(per_step.begin(), per_step.end());
  for (size_t r = 0; r < b->ranks.size(); ++r) {
    const rt::CommTrace* trace = b->world->trace(static_cast<int>(r));
    ASSERT_NE(trace, nullptr);
    ASSERT_EQ(trace->records().size(), buckets->size() * kSteps) << "rank " << r;
    for (int step = 0; step < kSteps; ++step) {
      std::vector<int64_t> counts;
      for (size_t i = 0; i < buckets->size(); ++i) {
        const rt::CommRecord& record = trace->records()[step * buckets->size() + i];
        EXPECT_EQ(record.kind, rt::CommKind::kAllReduce) << rt::DescribeRecord(record);
        counts.push_back(record.count);
      }
      std::sort(counts.begin(), counts.end());
      EXPECT_EQ(counts, per_step) << "rank " << r << ", step " << step;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(ZooModels, BucketedDataParallelTest, ::testing::Values("mlp", "gpt"));

// `a` then `b`, row blocks stacked along the batch dimension (the first).
FeedMap StackRows(const FeedMap& a, const FeedMap& b) {
  FeedMap both;
  for (const auto& [name, top] : a) {
    const Tensor& bottom = b.at(name);
    std::vector<int64_t> shape = top.shape();
    shape[0] += bottom.shape()[0];
    Tensor t = Tensor::ZerosUnchecked(top.dtype(), shape);
    std::memcpy(t.raw(), top.raw(), top.nbytes());
    std::memcpy(static_cast<char*>(t.raw()) + top.nbytes(), bottom.raw(), bottom.nbytes());
    both[name] = std::move(t);
  }
  return both;
}

struct MergeCase {
  const char* model;
  oldir::OptimizerKind optimizer;
};

std::string MergeCaseName(const ::testing::TestParamInfo<MergeCase>& info) {
  return std::string(info.param.model) + "_" + oldir::OptimizerKindName(info.param.optimizer);
}

class DataParallelGradientMergeTest : public ::testing::TestWithParam<MergeCase> {};

// Pins the combination Paddle's test/auto_parallel/test_dist_gradient_merge* runs (dp with
// gradient_merge.enable, k_steps, avg) against its serial baseline: k micro-steps of the
// replicas equal one step on their micro-batches together.
TEST_P(DataParallelGradientMergeTest, TwoMicroStepsOfDp2MatchOneSerialStep) {
  constexpr int kDp = 2;
  constexpr int kMerge = 2;
  const MergeCase c = GetParam();
  oldir::models::ModelPrograms model;
  ASSERT_TRUE(BuildZooTraining(c.model, c.optimizer, &model).ok());
  oldir::passes::Strategy strategy;
  strategy.dp_degree = kDp;
  strategy.gradient_merge.enable = true;
  strategy.gradient_merge.k_steps = kMerge;
  ScratchDir dir("dp_gm_" + MergeCaseName({c, 0}));
  ASSERT_NO_FATAL_FAILURE(WriteDataParallelBundle(model, strategy, dir / "one", nullptr, 1));
  ASSERT_NO_FATAL_FAILURE(WriteDataParallelBundle(model, strategy, dir / "two", nullptr, kMerge));
  StatusOr<rt::MultiRankResult> one = RunBundle(dir / "one");
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  StatusOr<rt::MultiRankResult> two = RunBundle(dir / "two");
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  ASSERT_EQ(two->ranks.size(), static_cast<size_t>(kDp));

  StatusOr<std::unique_ptr<SerialReference>> reference = SerialReference::Create(model);
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();
  SerialReference& ref = **reference;
  Scope& serial = ref.serial();
  Scope& shadow = ref.shadow();
  const std::vector<std::string>& state = ref.state();

  // After the first micro-step nothing the optimizer owns has moved, on any rank.
  int unchanged = 0;
  for (const rt::RankOutcome& rank : one->ranks) {
    for (const std::string& name : state) {
      const Tensor* initial = serial.FindLocal(name);
      if (initial == nullptr || !initial->defined()) continue;
      const Tensor* got = rank.scope->FindLocal(name);
      ASSERT_NE(got, nullptr) << name;
      EXPECT_TRUE(SameBits(*got, *initial)) << name << " changed before the k-th step";
      ++unchanged;
    }
  }
  EXPECT_GE(unchanged, 6 * kDp);

  // The serial step reads both executor steps' global batches (each of kDp row blocks).
  const int64_t global_rows = kRowsPerReplica * kDp;
  FeedMap feeds;
  for (int s = 1; s <= kMerge; ++s) {
    FeedMap batch;
    for (const rt::FeedSpec& spec : ref.FeedSpecs()) {
      batch[spec.name] = rt::RandomFeed(spec, ref.seed(), s, global_rows);
    }
    feeds = s == 1 ? batch : StackRows(feeds, batch);
  }
  StatusOr<std::vector<rt::Fetch>> loss = ref.Step(feeds);
  ASSERT_TRUE(loss.ok()) << loss.status().ToString();
  double sum = 0;
  for (const rt::RankOutcome& rank : two->ranks) {
    ASSERT_EQ(rank.steps.size(), static_cast<size_t>(kMerge));
    for (const auto& s : rank.steps) sum += Scalar(s.merged[0].tensor);
  }
  const Tensor mean = Tensor::FromVector(
      std::vector<float>{static_cast<float>(sum / (kDp * kMerge))}, (*loss)[0].tensor.shape());
  const Comparison cmp = CompareTensors(mean, (*loss)[0].tensor, Tier::kReordered);
  EXPECT_TRUE(cmp.pass) << "loss: " << cmp.reason;

  std::string arbitrated;
  int moved = 0;
  Scope& rank0 = *two->ranks[0].scope;
  for (const std::string& name : state) {
    const Tensor* expected = serial.FindLocal(name);
    if (expected == nullptr || !expected->defined()) continue;
    SCOPED_TRACE(name);
    const Tensor* got = rank0.FindLocal(name);
    ASSERT_NE(got, nullptr);
    EXPECT_TRUE(SameBits(*got, *two->ranks[1].scope->FindLocal(name))) << "ranks drifted";
    const Arbitration verdict = AgainstSerial(*got, *expected, shadow.FindLocal(name));
    EXPECT_NE(verdict.agreement, Agreement::kMismatch) << verdict.reason;
    if (verdict.agreement != Agreement::kReordered) {
      arbitrated += (arbitrated.empty() ? "" : " ") + name;
    }
    if (!SameBits(*got, *one->ranks[0].scope->FindLocal(name))) ++moved;
  }
  EXPECT_GT(moved, 0);  // the k-th step did update
  // gradient_sync_after_accumulate false: one all-reduce per parameter on every micro-step.
  StatusOr<std::vector<oldir::ParamGrad>> grads = oldir::passes::OptimizerParamGrads(ref.main());
  ASSERT_TRUE(grads.ok());
  for (int r = 0; r < kDp; ++r) {
    EXPECT_EQ(two->world->trace(r)->records().size(), grads->size() * kMerge) << "rank " << r;
  }
  if (!arbitrated.empty()) {
    std::cout << "noise-floor arbitration: " << arbitrated << "\n";
    RecordProperty("noise_floor", arbitrated);
  }
}

INSTANTIATE_TEST_SUITE_P(ZooModels, DataParallelGradientMergeTest,
                         ::testing::Values(MergeCase{"mlp", oldir::OptimizerKind::kSgd},
                                           MergeCase{"mlp", oldir::OptimizerKind::kAdamW},
                                           MergeCase{"gpt", oldir::OptimizerKind::kSgd},
                                           MergeCase{"gpt", oldir::OptimizerKind::kAdamW}),
                         MergeCaseName);

}  // namespace
}  // namespace irm::diff
