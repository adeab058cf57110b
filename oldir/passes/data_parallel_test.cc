// The data-parallel pass on the model zoo's MLP, program by program: each parameter gradient is
// all-reduced on the dp ring and scaled by 1/dp right after the backward op that finishes it,
// with the attributes Paddle gives them (auto_parallel/static/operators/common.py,
// sync_and_scale_gradients); the fused variant groups them in program order by size and syncs
// each bucket of two or more once through coalesce_tensor
// (passes/auto_parallel_data_parallel_optimization.py, _group_grads / _update_program).
#include "oldir/passes/data_parallel.h"

#include <gtest/gtest.h>

#include "oldir/models/mlp.h"
#include "oldir/models/training.h"
#include "oldir/op_role.h"
#include "oldir/validator.h"

namespace irm::oldir::passes {
namespace {

struct Serial {
  Program startup;
  Program main;
};

// The MLP of the parity corpus: 4 -> 8 -> 8 -> 3, so its gradients are, in backward order,
// b2 (12 bytes), w2 (96), b1 (32), w1 (256), b0 (32), w0 (128).
Serial SerialMlp() {
  models::ModelPrograms model;
  models::MlpConfig config;
  config.depth = 3;
  config.in_features = 4;
  config.width = 8;
  config.classes = 3;
  EXPECT_TRUE(models::BuildMlp(config, &model).ok());
  EXPECT_TRUE(models::AddTraining(&model, OptimizerOptions{}).ok());
  return {model.startup.Build(), model.main.Build()};
}

std::vector<int> OpsOfType(const Program& p, const std::string& type) {
  std::vector<int> out;
  for (int i = 0; i < p.root().num_ops(); ++i) {
    if (p.root().op(i).type() == type) out.push_back(i);
  }
  return out;
}

int FirstOptimizeOp(const Program& p) {
  for (int i = 0; i < p.root().num_ops(); ++i) {
    if (IsOptimize(p.root().op(i).role())) return i;
  }
  return -1;
}

bool Writes(const Op& op, const std::string& var) {
  for (const auto& slot : op.desc().outputs()) {
    for (const std::string& arg : slot.arguments()) {
      if (arg == var) return true;
    }
  }
  return false;
}

std::vector<std::string> Names(const google::protobuf::RepeatedPtrField<std::string>& names) {
  return {names.begin(), names.end()};
}

Strategy Dp(int degree, double bucket_mb = 0) {
  Strategy s;
  s.dp_degree = degree;
  if (bucket_mb > 0) {
    s.dp_optimization.enable = true;
    s.dp_optimization.fuse_grad_size_in_MB = bucket_mb;
  }
  return s;
}

TEST(DataParallelTest, EachGradientIsAllReducedAndScaledAfterItsLastBackwardWriter) {
  const Serial serial = SerialMlp();
  StatusOr<DistributedPrograms> dp = ApplyDataParallel(serial.startup, serial.main, Dp(4));
  ASSERT_TRUE(dp.ok()) << dp.status().ToString();
  ASSERT_EQ(dp->world_size, 4);
  ASSERT_EQ(dp->ranks.size(), 4u);
  ASSERT_EQ(dp->process_groups.size(), 1u);
  EXPECT_EQ(dp->process_groups[0].ring_id, kDataParallelRing);
  EXPECT_EQ(dp->process_groups[0].ranks, (std::vector<int>{0, 1, 2, 3}));

  const Program& main = dp->ranks[1].main;
  EXPECT_EQ(main.root().num_ops(), serial.main.root().num_ops() + 12);
  const std::vector<int> reduces = OpsOfType(main, "c_allreduce_sum");
  ASSERT_EQ(reduces.size(), 6u);
  StatusOr<std::vector<ParamGrad>> grads = OptimizerParamGrads(serial.main);
  ASSERT_TRUE(grads.ok());
  std::set<std::string> synced;
  for (int i : reduces) {
    const Op reduce = main.root().op(i);
    const std::string grad = *reduce.SingleInput("X");
    synced.insert(grad);
    EXPECT_EQ(reduce.SingleOutput("Out"), grad);
    EXPECT_EQ(reduce.AttrOr<int32_t>("ring_id", -1), kDataParallelRing);
    EXPECT_TRUE(reduce.AttrOr<bool>("use_calc_stream", false));
    EXPECT_EQ(reduce.role(), kBackward);
    EXPECT_EQ(reduce.AttrOr<std::string>(kOpNamescopeAttr, ""), "/data_parallel");
    const Op scale = main.root().op(i + 1);
    EXPECT_EQ(scale.type(), "scale");
    EXPECT_EQ(scale.SingleInput("X"), grad);
    EXPECT_EQ(scale.SingleOutput("Out"), grad);
    EXPECT_EQ(scale.AttrOr<float>("scale", 0), 0.25f);
    EXPECT_EQ(scale.role(), kBackward);
    // The op before the pair (or before the previous pair of the same writer) writes the grad,
    // and nothing after the pair but the optimizer touches it.
    int writer = i - 1;
    while (main.root().op(writer).AttrOr<std::string>(kOpNamescopeAttr, "") == "/data_parallel") {
      --writer;
    }
    EXPECT_TRUE(Writes(main.root().op(writer), grad)) << grad;
    EXPECT_TRUE(IsBackward(main.root().op(writer).role()));
    for (int j = i + 2; j < FirstOptimizeOp(main); ++j) {
      EXPECT_FALSE(Writes(main.root().op(j), grad)) << grad << " rewritten by op " << j;
    }
  }
  std::set<std::string> expected;
  for (const ParamGrad& pg : *grads) expected.insert(pg.grad);
  EXPECT_EQ(synced, expected);
  // Every rank runs the same programs; startup is the serial one.
  for (const RankPrograms& rank : dp->ranks) {
    EXPECT_EQ(rank.main.desc().SerializeAsString(), main.desc().SerializeAsString());
    EXPECT_EQ(rank.startup.desc().SerializeAsString(), serial.startup.desc().SerializeAsString());
  }
  ValidateOptions options;
  EXPECT_TRUE(ValidateProgram(main, options).empty()) << ValidateProgram(main, options).Render();
}

TEST(DataParallelTest, OneReplicaIsTheSerialProgram) {
  const Serial serial = SerialMlp();
  StatusOr<DistributedPrograms> dp = ApplyDataParallel(serial.startup, serial.main, Dp(1));
  ASSERT_TRUE(dp.ok());
  ASSERT_EQ(dp->ranks.size(), 1u);
  EXPECT_EQ(dp->ranks[0].main.desc().SerializeAsString(), serial.main.desc().SerializeAsString());
}

// _group_grads: program order; a gradient opens a new group when the open one would exceed the
// bound. 314 bytes: {b2, w2, b1} = 140, + w1 = 396 > 314; {w1, b0} = 288, + w0 = 416 > 314; {w0}.
TEST(DataParallelTest, GradientsAreGroupedInProgramOrderBySize) {
  const Serial serial = SerialMlp();
  StatusOr<std::vector<ParamGrad>> grads = OptimizerParamGrads(serial.main);
  ASSERT_TRUE(grads.ok());
  StatusOr<Program> synced = InsertGradientSync(serial.main, *grads, 2);
  ASSERT_TRUE(synced.ok()) << synced.status().ToString();
  StatusOr<std::vector<GradientBucket>> buckets = GroupGradients(*synced, 314);
  ASSERT_TRUE(buckets.ok()) << buckets.status().ToString();
  ASSERT_EQ(buckets->size(), 3u);
  EXPECT_EQ((*buckets)[0].grads, (std::vector<std::string>{"linear_2.b_0@GRAD", "linear_2.w_0@GRAD",
                                                           "linear_1.b_0@GRAD"}));
  EXPECT_EQ((*buckets)[0].bytes, 140);
  EXPECT_EQ((*buckets)[1].grads,
            (std::vector<std::string>{"linear_1.w_0@GRAD", "linear_0.b_0@GRAD"}));
  EXPECT_EQ((*buckets)[1].bytes, 288);
  EXPECT_EQ((*buckets)[2].grads, (std::vector<std::string>{"linear_0.w_0@GRAD"}));
  // A bound below every gradient leaves each alone; a large one takes them all.
  EXPECT_EQ(GroupGradients(*synced, 1)->size(), 6u);
  EXPECT_EQ(GroupGradients(*synced, 1 << 20)->size(), 1u);
}

// _group_grads' fourth condition: an op other than the syncs that reads or writes a gradient of
// the open bucket closes it, so the fused all-reduce never moves past a use of its gradients.
TEST(DataParallelTest, AnOpTouchingABucketsGradientClosesTheBucket) {
  const Serial serial = SerialMlp();
  StatusOr<std::vector<ParamGrad>> grads = OptimizerParamGrads(serial.main);
  ASSERT_TRUE(grads.ok());
  StatusOr<Program> synced = InsertGradientSync(serial.main, *grads, 2);
  ASSERT_TRUE(synced.ok());
  // A backward op reading b2's gradient, right after w2's sync (all-reduce + scale).
  Program touched = *synced;
  proto::BlockDesc* block = touched.mutable_desc()->mutable_blocks(0);
  int after_w2 = -1;
  for (int i = 0; i < block->ops_size(); ++i) {
    const Op op = touched.root().op(i);
    if (op.type() == "scale" && op.SingleInput("X") == "linear_2.w_0@GRAD") after_w2 = i;
  }
  ASSERT_GT(after_w2, 0);
  proto::OpDesc* use = block->mutable_ops()->Add();
  use->set_type("assign");
  auto* in = use->add_inputs();
  in->set_parameter("X");
  in->add_arguments("linear_2.b_0@GRAD");
  auto* out = use->add_outputs();
  out->set_parameter("Out");
  out->add_arguments("b2_copy");
  for (int i = block->ops_size() - 1; i > after_w2 + 1; --i)
    block->mutable_ops()->SwapElements(i, i - 1);
  touched.Reindex();
  StatusOr<std::vector<GradientBucket>> buckets = GroupGradients(touched, 1 << 20);
  ASSERT_TRUE(buckets.ok()) << buckets.status().ToString();
  ASSERT_EQ(buckets->size(), 2u);
  EXPECT_EQ((*buckets)[0].grads,
            (std::vector<std::string>{"linear_2.b_0@GRAD", "linear_2.w_0@GRAD"}));
  EXPECT_EQ((*buckets)[1].grads.size(), 4u);
}

TEST(DataParallelTest, EachBucketOfTwoOrMoreIsCoalescedAndAllReducedOnce) {
  const Serial serial = SerialMlp();
  StatusOr<DistributedPrograms> dp =
      ApplyDataParallel(serial.startup, serial.main, Dp(2, 314.0 / (1 << 20)));
  ASSERT_TRUE(dp.ok()) << dp.status().ToString();
  const Program& main = dp->ranks[0].main;
  const std::vector<int> coalesce = OpsOfType(main, "coalesce_tensor");
  const std::vector<int> reduces = OpsOfType(main, "c_allreduce_sum");
  ASSERT_EQ(coalesce.size(), 2u);
  ASSERT_EQ(reduces.size(), 3u);
  EXPECT_EQ(OpsOfType(main, "scale").size(), OpsOfType(serial.main, "scale").size() + 3);

  // Bucket 0 (numbered 1 by Paddle, which counts the groups in reverse).
  const Op first = main.root().op(coalesce[0]);
  EXPECT_EQ(
      Names(*first.Input("Input")),
      (std::vector<std::string>{"linear_2.b_0@GRAD", "linear_2.w_0@GRAD", "linear_1.b_0@GRAD"}));
  EXPECT_EQ(Names(*first.Output("Output")), Names(*first.Input("Input")));
  EXPECT_EQ(first.SingleOutput("FusedOutput"), "coalesce_grad_2_0");
  EXPECT_TRUE(first.AttrOr<bool>("copy_data", false));
  EXPECT_TRUE(first.AttrOr<bool>("use_align", false));
  EXPECT_EQ(first.AttrOr<int32_t>("dtype", -1), static_cast<int32_t>(proto::VarType::FP32));
  EXPECT_EQ(first.AttrOr<std::vector<int32_t>>("concated_shapes", {}),
            (std::vector<int32_t>{3, 8, 3, 8}));
  EXPECT_EQ(first.AttrOr<std::vector<int32_t>>("concated_ranks", {}),
            (std::vector<int32_t>{1, 2, 1}));
  EXPECT_EQ(first.role(), kBackward);
  // It comes right before the bucket's all-reduce, after the last gradient is written.
  EXPECT_EQ(coalesce[0] + 1, reduces[0]);
  EXPECT_EQ(coalesce[1] + 1, reduces[1]);

  const Op second = main.root().op(coalesce[1]);
  EXPECT_EQ(second.SingleOutput("FusedOutput"), "coalesce_grad_1_0");

  // The all-reduces: bucket 0's buffer, bucket 1's buffer, then w0's own; each with its scale.
  EXPECT_EQ(main.root().op(reduces[0]).SingleInput("X"), "coalesce_grad_2_0");
  EXPECT_EQ(main.root().op(reduces[1]).SingleInput("X"), "coalesce_grad_1_0");
  EXPECT_EQ(main.root().op(reduces[2]).SingleInput("X"), "linear_0.w_0@GRAD");
  for (int i : reduces) {
    const Op scale = main.root().op(i + 1);
    EXPECT_EQ(scale.type(), "scale");
    EXPECT_EQ(scale.SingleInput("X"), main.root().op(i).SingleInput("X"));
    EXPECT_EQ(scale.AttrOr<float>("scale", 0), 0.5f);
  }
  // A bucket's sync follows the writer of its last gradient.
  EXPECT_TRUE(Writes(main.root().op(coalesce[0] - 1), "linear_1.b_0@GRAD"));
  EXPECT_TRUE(Writes(main.root().op(coalesce[1] - 1), "linear_0.b_0@GRAD"));
  std::optional<Var> fused = main.root().FindVar("coalesce_grad_2_0");
  ASSERT_TRUE(fused.has_value());
  EXPECT_EQ(fused->dims(), (std::vector<int64_t>{35}));
  EXPECT_FALSE(fused->persistable());
  EXPECT_TRUE(ValidateProgram(main, {}).empty()) << ValidateProgram(main, {}).Render();
}

TEST(DataParallelTest, AProgramWithoutAnOptimizerIsRefused) {
  models::ModelPrograms model;
  ASSERT_TRUE(models::BuildMlp({}, &model).ok());
  StatusOr<DistributedPrograms> dp =
      ApplyDataParallel(model.startup.Build(), model.main.Build(), Dp(2));
  ASSERT_FALSE(dp.ok());
  EXPECT_EQ(dp.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(dp.status().message().find("no optimizer op"), std::string::npos);
}

TEST(DataParallelTest, OtherParallelAxesAreRefused) {
  const Serial serial = SerialMlp();
  Strategy s = Dp(2);
  s.mp_degree = 2;
  EXPECT_EQ(ApplyDataParallel(serial.startup, serial.main, s).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace irm::oldir::passes
