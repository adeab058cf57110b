// The SPMD rules' decisions pinned against Paddle's own rule tests
// (test/auto_parallel/spmd_rules/test_*_rule.py; each case names its test and the case comment
// Paddle gives it), plus the grad and optimizer rules on the layouts a DP or TP mlp step makes,
// worked out by hand from paddle/phi/infermeta/spmd_rules/*.cc.
#include "newir/auto_parallel/spmd_rules.h"
#include "newir/auto_parallel/spmd_rules_test_support.h"

#include <gtest/gtest.h>

#include <set>

namespace irm::newir {
namespace {

using testing::Dims;
using testing::MappingOf;
using testing::Mesh;
using testing::Spec;

// The meshes of Paddle's tests.
const ProcessMesh kMesh2x3 = Mesh({2, 3}, {0, 1, 2, 3, 4, 5});
const ProcessMesh kMesh2x4 = Mesh({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
const ProcessMesh kMesh4 = Mesh({4}, {0, 1, 2, 3});

std::set<int64_t> PartialDims(const std::optional<TensorDistAttr>& dist) {
  std::set<int64_t> dims;
  if (dist) {
    for (const auto& [mesh_dim, reduce] : dist->partial_status) dims.insert(mesh_dim);
  }
  return dims;
}

// One matmul case of test_matmul_rule.py (x [64, 32] or [512, 48, 64, 32], y [32, 48], mesh
// [[0, 1, 2], [3, 4, 5]]).
struct MatmulCase {
  const char* paddle_comment;
  Dims x_shape, x_mapping, y_mapping;
  bool trans_x, trans_y;
  Dims want_x, want_y, want_out;
  std::set<int64_t> want_partial;
};

TEST(SpmdRulesTest, MatmulForwardAsTestMatmulRule) {
  const Dims x2 = {64, 32}, x4 = {512, 48, 64, 32};
  const std::vector<MatmulCase> cases = {
      {"mk[1, 0],kn[0, -1] --> mk[1, 0],kn[0, -1] = nm[1, -1] partial[0]",
       x2,
       {1, 0},
       {0, -1},
       false,
       false,
       {1, 0},
       {0, -1},
       {1, -1},
       {0}},
      {"row parallel: mk[1, -1],kn[-1, -1] --> mk[1, -1],kn[-1, -1] = nm[1, -1] partial[]",
       x2,
       {1, -1},
       {-1, -1},
       false,
       false,
       {1, -1},
       {-1, -1},
       {1, -1},
       {}},
      {"n parallel: mk[-1, -1],kn[-1, 0] --> mk[-1, -1],kn[-1, 0] = nm[-1, 0] partial[]",
       x2,
       {-1, -1},
       {-1, 0},
       false,
       false,
       {-1, -1},
       {-1, 0},
       {-1, 0},
       {}},
      {"partial with propogation: mk[1, 0],kn[-1,-1] --> mk[1, 0],kn[0, -1] = nm[1, -1] "
       "partial[0]",
       x2,
       {1, 0},
       {-1, -1},
       false,
       false,
       {1, 0},
       {0, -1},
       {1, -1},
       {0}},
      {"mk[-1,-1],kn[1,0] --> mk[-1, 1],kn[1, 0] = nm[-1, 0] partial[1]",
       x2,
       {-1, -1},
       {1, 0},
       false,
       false,
       {-1, 1},
       {1, 0},
       {-1, 0},
       {1}},
      {"abcmk[1, 0, -1, -1],kn[-1, -1] --> abcmk[1, 0, -1, -1],kn[-1, -1] = abcmn[1, 0, -1, -1]",
       x4,
       {0, 1, -1, -1},
       {-1, -1},
       false,
       false,
       {0, 1, -1, -1},
       {-1, -1},
       {0, 1, -1, -1},
       {}},
      {"abcmk[1, -1, -1, 0],kn[-1, -1] --> abcmk[1, -1, -1, 0],kn[0, -1] = abcmn[1,-1, -1, -1] "
       "partial[0]",
       x4,
       {1, -1, -1, 0},
       {-1, -1},
       false,
       false,
       {1, -1, -1, 0},
       {0, -1},
       {1, -1, -1, -1},
       {0}},
      {"trans_x = True, abcmk[1, -1, -1, 0], kn[-1, -1] --> ... = abcmn[1, -1, 0, -1] partial[]",
       x4,
       {1, -1, -1, 0},
       {-1, -1},
       true,
       false,
       {1, -1, -1, 0},
       {-1, -1},
       {1, -1, 0, -1},
       {}},
      {"trans_y = True, abcmk[-1, -1, -1, -1], kn[1, 0] --> abcmk[-1, -1, -1, 0],kn[1, 0] = "
       "abcmn[-1, -1, -1, 1] partial[0]",
       x4,
       {-1, -1, -1, -1},
       {1, 0},
       false,
       true,
       {-1, -1, -1, 0},
       {1, 0},
       {-1, -1, -1, 1},
       {0}},
      {"trans_y = True, trans_x = True, abcmk[-1, -1, 0, 1], kn[1, 0] --> abcmk[-1, -1, 0, 1]],"
       "kn[-1, 0] = abcmn[-1, -1, 1, -1] partial[0]",
       x4,
       {-1, -1, 0, 1},
       {1, 0},
       true,
       true,
       {-1, -1, 0, 1},
       {-1, 0},
       {-1, -1, 1, -1},
       {0}},
  };
  for (const MatmulCase& c : cases) {
    SCOPED_TRACE(c.paddle_comment);
    StatusOr<SpmdDecision> d =
        MatmulSpmd(Spec(c.x_shape, kMesh2x3, c.x_mapping), Spec({32, 48}, kMesh2x3, c.y_mapping),
                   c.trans_x, c.trans_y);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    ASSERT_EQ(d->inputs.size(), 2u);
    ASSERT_EQ(d->outputs.size(), 1u);
    EXPECT_EQ(MappingOf(d->inputs[0]), c.want_x);
    EXPECT_EQ(MappingOf(d->inputs[1]), c.want_y);
    EXPECT_EQ(MappingOf(d->outputs[0]), c.want_out);
    EXPECT_EQ(PartialDims(d->outputs[0]), c.want_partial);
    EXPECT_EQ(d->outputs[0]->mesh, kMesh2x3);
  }
}

TEST(SpmdRulesTest, MatmulRefusesOneAxisShardedByTwoMeshDims) {
  // test_matmul_rule.py: "trans_y = True, trans_x = True, abcmk[-1, -1, 1, 0], kn[1, 0] -->
  // error: one mesh dim shard multiple tensor axes" (NotImplementedError): k is sharded by mesh
  // dim 1 in x and mesh dim 0 in y.
  StatusOr<SpmdDecision> d = MatmulSpmd(Spec({512, 48, 64, 32}, kMesh2x3, {-1, -1, 1, 0}),
                                        Spec({32, 48}, kMesh2x3, {1, 0}), true, true);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(d.status().message(), "tensor axis 'k' is sharded by two mesh dims, 1 and 0");
}

struct ElementwiseCase {
  const char* paddle_comment;
  ProcessMesh mesh;
  Dims x_shape, y_shape, x_mapping, y_mapping;
  Dims want_x, want_y, want_out;
};

TEST(SpmdRulesTest, ElementwiseBinaryAsTestElementwiseRule) {
  const std::vector<ElementwiseCase> cases = {
      {"test_single_mesh_dim: [0, -1], [-1, -1] --> [0, -1], [0, -1], [0, -1]",
       kMesh4,
       {64, 36},
       {64, 36},
       {0, -1},
       {-1, -1},
       {0, -1},
       {0, -1},
       {0, -1}},
      {"test_single_mesh_dim: [0, -1], [-1, 0] --> [0, -1], [0, -1], [0, -1]",
       kMesh4,
       {64, 36},
       {64, 36},
       {0, -1},
       {-1, 0},
       {0, -1},
       {0, -1},
       {0, -1}},
      {"broadcast: [-1, -1, 0], [-1] --> [-1, -1, 0], [0], [-1, -1, 0]",
       kMesh4,
       {64, 36, 12},
       {12},
       {-1, -1, 0},
       {-1},
       {-1, -1, 0},
       {0},
       {-1, -1, 0}},
      {"broadcast: [-1, -1, -1], [0] --> [-1, -1, 0], [0], [-1, -1, 0]",
       kMesh4,
       {64, 36, 12},
       {12},
       {-1, -1, -1},
       {0},
       {-1, -1, 0},
       {0},
       {-1, -1, 0}},
      {"broadcast [1, 12]: [-1, 0, -1], [-1, -1] --> [-1, 0, -1], [-1, -1], [-1, 0, -1]",
       kMesh4,
       {64, 36, 12},
       {1, 12},
       {-1, 0, -1},
       {-1, -1},
       {-1, 0, -1},
       {-1, -1},
       {-1, 0, -1}},
      {"broadcast [64, 1, 1, 12]: [-1, -1, -1, -1], [0, -1, -1] --> [-1, -1, -1, -1], "
       "[0, -1, -1], [-1, 0, -1, -1]",
       kMesh4,
       {64, 1, 1, 12},
       {64, 32, 12},
       {-1, -1, -1, -1},
       {0, -1, -1},
       {-1, -1, -1, -1},
       {0, -1, -1},
       {-1, 0, -1, -1}},
      {"test_multi_mesh_dim: [0, -1, -1], [-1, 1, 0] --> [0, 1, -1], [0, 1, -1], [0, 1, -1]",
       kMesh2x3,
       {96, 24, 48},
       {96, 24, 48},
       {0, -1, -1},
       {-1, 1, 0},
       {0, 1, -1},
       {0, 1, -1},
       {0, 1, -1}},
      {"test_multi_mesh_dim_broadcast: [0, -1, -1], [1] --> [0, -1, 1], [1], [0, -1, 1]",
       kMesh2x3,
       {96, 24, 48},
       {48},
       {0, -1, -1},
       {1},
       {0, -1, 1},
       {1},
       {0, -1, 1}},
      {"test_multi_mesh_dim_broadcast: [0, 1, -1], [0] --> [0, 1, -1], [-1], [0, 1, -1]",
       kMesh2x3,
       {96, 24, 48},
       {48},
       {0, 1, -1},
       {0},
       {0, 1, -1},
       {-1},
       {0, 1, -1}},
      {"test_multi_mesh_dim_broadcast: [-1, -1, -1, 1], [0, -1, 1] --> [-1, -1, -1, 1], "
       "[0, -1, 1], [-1, 0, -1, 1]",
       kMesh2x3,
       {96, 1, 1, 48},
       {96, 24, 48},
       {-1, -1, -1, 1},
       {0, -1, 1},
       {-1, -1, -1, 1},
       {0, -1, 1},
       {-1, 0, -1, 1}},
  };
  for (const ElementwiseCase& c : cases) {
    SCOPED_TRACE(c.paddle_comment);
    StatusOr<SpmdDecision> d = ElementwiseBinarySpmd(Spec(c.x_shape, c.mesh, c.x_mapping),
                                                     Spec(c.y_shape, c.mesh, c.y_mapping));
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    EXPECT_EQ(MappingOf(d->inputs[0]), c.want_x);
    EXPECT_EQ(MappingOf(d->inputs[1]), c.want_y);
    EXPECT_EQ(MappingOf(d->outputs[0]), c.want_out);
    EXPECT_TRUE(PartialDims(d->outputs[0]).empty());
  }
}

TEST(SpmdRulesTest, ElementwiseUnaryKeepsTheShardingAndAsksAPartialInputReplicated) {
  // test_elementwise_rule.py, relu: "[-1, 0]--> [-1, 0], [-1, 0]".
  SpmdDecision d = ElementwiseUnarySpmd(Spec({64, 36}, kMesh4, {-1, 0}));
  EXPECT_EQ(MappingOf(d.inputs[0]), (Dims{-1, 0}));
  EXPECT_EQ(MappingOf(d.outputs[0]), (Dims{-1, 0}));
  // elementwise.cc builds the input's layout with CopyTensorDistAttrForOutput, which drops a
  // Partial status: relu of a partial sum is asked for the summed tensor.
  SpmdDecision p = ElementwiseUnarySpmd(Spec({64, 36}, kMesh4, {-1, -1}, {{0, ReduceType::kSum}}));
  EXPECT_TRUE(PartialDims(p.inputs[0]).empty());
  EXPECT_TRUE(PartialDims(p.outputs[0]).empty());
}

struct ReductionCase {
  const char* paddle_comment;
  ProcessMesh mesh;
  Dims shape, mapping, axes;
  bool keep_dim;
  Dims want_out;
  std::set<int64_t> want_partial;
};

TEST(SpmdRulesTest, ReductionAsTestReductionRule) {
  const std::vector<ReductionCase> cases = {
      {"reduce on dim 0, keep_dim = false: [0, -1] --> [0, -1], [-1], partial_on_dim:[0]",
       kMesh4,
       {64, 32},
       {0, -1},
       {0},
       false,
       {-1},
       {0}},
      {"reduce on dim 0, keep_dim = true: [0, -1] --> [0, -1], [-1, -1], partial_on_dim:[0]",
       kMesh4,
       {64, 32},
       {0, -1},
       {0},
       true,
       {-1, -1},
       {0}},
      {"reduce on dim 1, keep_dim = false: [0, -1] --> [0, -1], [0], partial_on_dim:[]",
       kMesh4,
       {64, 32},
       {0, -1},
       {1},
       false,
       {0},
       {}},
      {"reduce on dim 0 and 1, keep_dim = false: [0, -1] --> [0, -1], [], partial_on_dim:[0]",
       kMesh4,
       {64, 32},
       {0, -1},
       {0, 1},
       false,
       {},
       {0}},
      {"test_multi_mesh_dim: [-1, 0, 1] --> [-1, 0, 1], [-1], partial_on_dim:[0, 1]",
       kMesh2x3,
       {96, 24, 48},
       {-1, 0, 1},
       {1, 2},
       false,
       {-1},
       {0, 1}},
      {"test_multi_mesh_dim keep_dim = true: [0, 1, -1] --> [0, 1, -1], [0, -1, -1], "
       "partial_on_dim:[1]",
       kMesh2x3,
       {96, 24, 48},
       {0, 1, -1},
       {1, 2},
       true,
       {0, -1, -1},
       {1}},
  };
  for (const ReductionCase& c : cases) {
    SCOPED_TRACE(c.paddle_comment);
    SpmdDecision d =
        ReductionSpmd(Spec(c.shape, c.mesh, c.mapping), c.axes, c.keep_dim, ReduceType::kMax);
    EXPECT_EQ(MappingOf(d.inputs[0]), c.mapping);
    EXPECT_EQ(MappingOf(d.outputs[0]), c.want_out);
    EXPECT_EQ(PartialDims(d.outputs[0]), c.want_partial);
    for (const auto& [mesh_dim, reduce] : d.outputs[0]->partial_status) {
      EXPECT_EQ(reduce, ReduceType::kMax);
    }
  }
}

TEST(SpmdRulesTest, MeanAllIsPartialAvgAndItsGradAsksForTheReplicatedInput) {
  // reduction.cc: ReductionMeanInferSpmdDynamic passes kRedAvg; an empty axis list reduces all.
  SpmdDecision d = ReductionSpmd(Spec({-1, 1}, kMesh4, {0, -1}), {}, false, ReduceType::kAvg);
  EXPECT_EQ(MappingOf(d.outputs[0]), Dims{});
  ASSERT_TRUE(d.outputs[0].has_value());
  EXPECT_EQ(d.outputs[0]->partial_status, (std::map<int64_t, ReduceType>{{0, ReduceType::kAvg}}));
  // ReductionGradInferSpmd: out_grad without Partial; x and x_grad take out_grad's mapping with
  // -1 inserted at every reduced dim, so a batch-sharded loss is gathered for mean_all_grad.
  SpmdDecision g = ReductionGradSpmd(Spec({-1, 1}, kMesh4, {0, -1}),
                                     Spec({}, kMesh4, {}, {{0, ReduceType::kAvg}}), {}, false);
  EXPECT_EQ(MappingOf(g.inputs[0]), (Dims{-1, -1}));
  EXPECT_EQ(MappingOf(g.inputs[1]), Dims{});
  EXPECT_TRUE(PartialDims(g.inputs[1]).empty());
  EXPECT_EQ(MappingOf(g.outputs[0]), (Dims{-1, -1}));
}

struct CrossEntropyCase {
  const char* paddle_comment;
  Dims x_mapping, label_mapping;
  int64_t axis;
  Dims want_x, want_label, want_softmax, want_loss;
};

TEST(SpmdRulesTest, CrossEntropyWithSoftmaxAsTestCrossEntropyWithSoftmaxRule) {
  // x [8, 1024, 50304], label [8, 1024, 1], mesh [[0, 1, 2, 3], [4, 5, 6, 7]], hard labels.
  const std::vector<CrossEntropyCase> cases = {
      {"GPT DP case", {1, -1, -1}, {-1, 0, -1}, -1, {1, 0, -1}, {1, 0, -1}, {1, 0, -1}, {1, 0, -1}},
      {"GPT MP case, shard normalized axis",
       {-1, -1, 0},
       {-1, -1, -1},
       -1,
       {-1, -1, 0},
       {-1, -1, -1},
       {-1, -1, 0},
       {-1, -1, -1}},
      {"GPT MP-DP case",
       {-1, -1, 0},
       {1, -1, -1},
       -1,
       {1, -1, 0},
       {1, -1, -1},
       {1, -1, 0},
       {1, -1, -1}},
      {"Normalized axis (axis = 1)",
       {1, -1, 0},
       {-1, -1, -1},
       1,
       {1, -1, 0},
       {1, -1, 0},
       {1, -1, 0},
       {1, -1, 0}},
  };
  for (const CrossEntropyCase& c : cases) {
    SCOPED_TRACE(c.paddle_comment);
    StatusOr<SpmdDecision> d =
        CrossEntropyWithSoftmaxSpmd(Spec({8, 1024, 50304}, kMesh2x4, c.x_mapping),
                                    Spec({8, 1024, 1}, kMesh2x4, c.label_mapping), c.axis, false);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    EXPECT_EQ(MappingOf(d->inputs[0]), c.want_x);
    EXPECT_EQ(MappingOf(d->inputs[1]), c.want_label);
    EXPECT_EQ(MappingOf(d->outputs[0]), c.want_softmax);
    EXPECT_EQ(MappingOf(d->outputs[1]), c.want_loss);
  }
}

TEST(SpmdRulesTest, CrossEntropyWithSoftmaxRefusesWhatPaddleRaisesOn) {
  // "Soft Label Error": soft labels with a sharded softmax axis.
  StatusOr<SpmdDecision> soft =
      CrossEntropyWithSoftmaxSpmd(Spec({8, 1024, 50304}, kMesh2x4, {-1, -1, 0}),
                                  Spec({8, 1024, 50304}, kMesh2x4, {1, -1, -1}), -1, true);
  ASSERT_FALSE(soft.ok());
  EXPECT_EQ(soft.status().message(),
            "the softmax axis 2 is sharded by mesh dim 0, which soft labels do not allow");
  // "Soft Normalized axis Error": axis 1 sharded.
  StatusOr<SpmdDecision> axis1 =
      CrossEntropyWithSoftmaxSpmd(Spec({8, 1024, 50304}, kMesh2x4, {-1, 0, -1}),
                                  Spec({8, 1024, 1}, kMesh2x4, {1, -1, -1}), 1, false);
  ASSERT_FALSE(axis1.ok());
  EXPECT_EQ(axis1.status().message(),
            "the softmax axis 1 is sharded by mesh dim 0, which is allowed on the last axis only");
}

// cross_entropy_with_softmax.cc CrossEntropyWithSoftmaxGradInferSpmd (hard labels): the batch
// sharding of any input spreads to all; a vocab-sharded softmax is asked for whole rows.
TEST(SpmdRulesTest, CrossEntropyWithSoftmaxGradUnshardsTheSoftmaxAxis) {
  StatusOr<SpmdDecision> d = CrossEntropyWithSoftmaxGradSpmd(
      Spec({8, 1024, 1}, kMesh2x4, {1, -1, -1}), Spec({8, 1024, 50304}, kMesh2x4, {-1, -1, 0}),
      Spec({8, 1024, 1}, kMesh2x4, {-1, -1, -1}), -1, false);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(MappingOf(d->inputs[0]), (Dims{1, -1, -1}));
  EXPECT_EQ(MappingOf(d->inputs[1]), (Dims{1, -1, -1}));
  EXPECT_EQ(MappingOf(d->inputs[2]), (Dims{1, -1, -1}));
  EXPECT_EQ(MappingOf(d->outputs[0]), (Dims{1, -1, -1}));
}

// The grads of a DP mlp step on 2 ranks: activations batch-sharded ([0, -1]), weights
// replicated. matmul.cc MatmulGradInferSpmd, no transposes: dX = matmul(G, Y^T) keeps the batch
// sharding; dY = matmul(X^T, G) contracts the batch, so the weight grad is Partial(sum) on mesh
// dim 0 — the all_reduce of data parallelism.
TEST(SpmdRulesTest, MatmulGradOfDataParallelIsPartialWeightGrad) {
  const ProcessMesh mesh = Mesh({2}, {0, 1});
  StatusOr<SpmdDecision> d =
      MatmulGradSpmd(Spec({6, 4}, mesh, {0, -1}), Spec({4, 8}, mesh, {-1, -1}),
                     Spec({6, 8}, mesh, {0, -1}), false, false);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_EQ(d->inputs.size(), 3u);
  EXPECT_EQ(MappingOf(d->inputs[0]), (Dims{0, -1}));
  EXPECT_EQ(MappingOf(d->inputs[1]), (Dims{-1, -1}));
  EXPECT_EQ(MappingOf(d->inputs[2]), (Dims{0, -1}));
  EXPECT_EQ(MappingOf(d->outputs[0]), (Dims{0, -1}));
  EXPECT_TRUE(PartialDims(d->outputs[0]).empty());
  EXPECT_EQ(MappingOf(d->outputs[1]), (Dims{-1, -1}));
  EXPECT_EQ(PartialDims(d->outputs[1]), std::set<int64_t>{0});
}

// Column-parallel weight ([-1, 0]) with a replicated x: dX contracts the sharded n, so x_grad is
// Partial; the weight grad keeps the column sharding.
TEST(SpmdRulesTest, MatmulGradOfColumnParallel) {
  const ProcessMesh mesh = Mesh({2}, {0, 1});
  StatusOr<SpmdDecision> d =
      MatmulGradSpmd(Spec({6, 4}, mesh, {-1, -1}), Spec({4, 8}, mesh, {-1, 0}),
                     Spec({6, 8}, mesh, {-1, 0}), false, false);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(MappingOf(d->outputs[0]), (Dims{-1, -1}));
  EXPECT_EQ(PartialDims(d->outputs[0]), std::set<int64_t>{0});
  EXPECT_EQ(MappingOf(d->outputs[1]), (Dims{-1, 0}));
  EXPECT_TRUE(PartialDims(d->outputs[1]).empty());
}

// elementwise.cc ElementwiseBinaryGradInferSpmd: the bias of a batch-sharded add is broadcast over
// the batch, so its grad is Partial(sum) on the mesh dim that shards the batch.
TEST(SpmdRulesTest, AddGradOfBroadcastBiasIsPartial) {
  const ProcessMesh mesh = Mesh({2}, {0, 1});
  SpmdDecision d = ElementwiseBinaryGradSpmd(Spec({6, 8}, mesh, {0, -1}), Spec({8}, mesh, {-1}),
                                             Spec({6, 8}, mesh, {0, -1}));
  EXPECT_EQ(MappingOf(d.inputs[1]), Dims{-1});
  EXPECT_EQ(MappingOf(d.outputs[0]), (Dims{0, -1}));
  EXPECT_TRUE(PartialDims(d.outputs[0]).empty());
  EXPECT_EQ(MappingOf(d.outputs[1]), Dims{-1});
  EXPECT_EQ(PartialDims(d.outputs[1]), std::set<int64_t>{0});
  // A size-1 dim broadcast along a sharded one (GetExplicitReduceDim): unsharded and Partial
  // there; a partial out_grad is asked for summed (clean_partial_status).
  SpmdDecision e =
      ElementwiseBinaryGradSpmd(Spec({6, 8}, mesh, {0, -1}), Spec({1, 8}, mesh, {-1, -1}),
                                Spec({6, 8}, mesh, {0, -1}, {{0, ReduceType::kSum}}));
  EXPECT_EQ(MappingOf(e.inputs[1]), (Dims{-1, -1}));
  EXPECT_TRUE(PartialDims(e.inputs[2]).empty());
  EXPECT_EQ(MappingOf(e.outputs[1]), (Dims{-1, -1}));
  EXPECT_EQ(PartialDims(e.outputs[1]), std::set<int64_t>{0});
  EXPECT_TRUE(PartialDims(e.outputs[0]).empty());
}

// elementwise.cc ElementwiseUnaryGradInferSpmd: everything as out_grad, Partial dropped.
TEST(SpmdRulesTest, ReluGradTakesOutGradsShardingWithoutPartial) {
  const ProcessMesh mesh = Mesh({2}, {0, 1});
  SpmdDecision d = ElementwiseUnaryGradSpmd(Spec({6, 8}, mesh, {-1, -1}),
                                            Spec({6, 8}, mesh, {0, -1}, {{0, ReduceType::kSum}}));
  EXPECT_EQ(MappingOf(d.inputs[0]), (Dims{0, -1}));
  EXPECT_EQ(MappingOf(d.inputs[1]), (Dims{0, -1}));
  EXPECT_TRUE(PartialDims(d.inputs[1]).empty());
  EXPECT_EQ(MappingOf(d.outputs[0]), (Dims{0, -1}));
  EXPECT_TRUE(PartialDims(d.outputs[0]).empty());
}

// optimizer.cc SgdInferSpmd: a partial grad is asked for summed (CopyTensorDistAttrForOutput),
// sharded as the param.
TEST(SpmdRulesTest, SgdAsksForTheSummedGradSharedAsTheParam) {
  const ProcessMesh mesh = Mesh({2}, {0, 1});
  StatusOr<SpmdDecision> d =
      SgdSpmd(Spec({4, 8}, mesh, {-1, 0}), Spec({1}, mesh, {-1}),
              Spec({4, 8}, mesh, {-1, -1}, {{0, ReduceType::kSum}}), std::nullopt);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_EQ(d->inputs.size(), 4u);
  EXPECT_EQ(MappingOf(d->inputs[0]), (Dims{-1, 0}));
  EXPECT_EQ(MappingOf(d->inputs[2]), (Dims{-1, 0}));
  EXPECT_TRUE(PartialDims(d->inputs[2]).empty());
  EXPECT_FALSE(d->inputs[3].has_value());
  EXPECT_EQ(MappingOf(d->outputs[0]), (Dims{-1, 0}));
  EXPECT_FALSE(d->outputs[1].has_value());
}

// optimizer.cc AdamInferSpmdDynamic: a dim stays sharded only where param, grad and the moments
// agree on the mesh dim; one disagreement unshards it for all.
TEST(SpmdRulesTest, AdamKeepsOnlyAgreedShardings) {
  const ProcessMesh mesh = Mesh({2, 2}, {0, 1, 2, 3});
  std::vector<std::optional<DistTensorSpec>> in(13);
  in[0] = Spec({4, 8}, mesh, {0, 1});    // param
  in[1] = Spec({4, 8}, mesh, {0, -1});   // grad
  in[2] = Spec({1}, mesh, {-1});         // learning_rate
  in[3] = Spec({4, 8}, mesh, {-1, 0});   // moment1: dim 1 on mesh dim 0, param has 1
  in[4] = Spec({4, 8}, mesh, {-1, -1});  // moment2
  in[6] = Spec({1}, mesh, {-1});         // beta1_pow
  in[7] = Spec({1}, mesh, {-1});         // beta2_pow
  StatusOr<SpmdDecision> d = AdamSpmd(in);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(MappingOf(d->inputs[0]), (Dims{0, -1}));
  EXPECT_EQ(MappingOf(d->inputs[1]), (Dims{0, -1}));
  EXPECT_EQ(MappingOf(d->inputs[3]), (Dims{0, -1}));
  EXPECT_FALSE(d->inputs[5].has_value());
  ASSERT_EQ(d->outputs.size(), 7u);
  EXPECT_EQ(MappingOf(d->outputs[0]), (Dims{0, -1}));
  EXPECT_FALSE(d->outputs[6].has_value());
}

TEST(SpmdRulesTest, MergeShardingsKeepsAMeshDimOnItsFirstLetter) {
  // utils.cc ShardingMergeForTensors: mesh dim 0 reaches 'a' first, then 'c'; 'c' loses it.
  StatusOr<AxisShardings> merged = MergeShardings({{"abc", {0, 1, -1}}, {"c", {0}}});
  ASSERT_TRUE(merged.ok());
  EXPECT_EQ(*merged, (AxisShardings{{'a', 0}, {'b', 1}, {'c', -1}}));
}

}  // namespace
}  // namespace irm::newir
