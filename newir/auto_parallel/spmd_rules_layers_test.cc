// The SPMD rules of a transformer's layers and of reshape pinned against Paddle's own rule tests
// (test/auto_parallel/spmd_rules/test_reshape_rule.py, test_embedding_rule.py,
// test_layer_norm_rule.py; each case names its test and repeats Paddle's case comment), plus the
// rules those tests leave out (softmax, dropout, scale, add_n, triu, transpose and the grads)
// on the layouts a Megatron gpt step makes, worked out by hand from
// paddle/phi/infermeta/spmd_rules/*.cc.
#include <gtest/gtest.h>

#include <set>

#include "newir/auto_parallel/spmd_rules.h"
#include "newir/auto_parallel/spmd_rules_test_support.h"

namespace irm::newir {
namespace {

using testing::Dims;
using testing::MappingOf;
using testing::Mesh;
using testing::Partials;
using testing::Spec;

const ProcessMesh kMesh2x3 = Mesh({2, 3}, {0, 1, 2, 3, 4, 5});
const ProcessMesh kMesh2x4 = Mesh({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
const ProcessMesh kMesh2 = Mesh({2}, {0, 1});

Partials PartialOf(const std::optional<TensorDistAttr>& dist) {
  return dist ? dist->partial_status : Partials{{-99, ReduceType::kSum}};
}

const Partials kSumOn0 = {{0, ReduceType::kSum}};

struct ReshapeCase {
  const char* paddle_comment;
  Dims x_shape, out_shape, x_mapping, want_x, want_out;
};

TEST(SpmdRulesLayersTest, ReshapeAsTestReshapeRule) {
  // Mesh [[0, 1, 2], [3, 4, 5]]; the output shapes with 0 and -1 resolved as the op's result
  // type holds them.
  const std::vector<ReshapeCase> cases = {
      {"[6, 12, 48, 24] --> [1, 72, 48, 4, 6], [0, -1, 1, -1]",
       {6, 12, 48, 24},
       {1, 72, 48, 4, 6},
       {0, -1, 1, -1},
       {0, -1, 1, -1},
       {-1, 0, 1, -1, -1}},
      {"[6, 12, 48, 24] --> [1, 72, 48, 4, 6], [-1, 0, -1, 1]",
       {6, 12, 48, 24},
       {1, 72, 48, 4, 6},
       {-1, 0, -1, 1},
       {-1, -1, -1, -1},
       {-1, -1, -1, -1, -1}},
      {"[6, 12, 48, 24] --> [1, 72, 48, 4, 6], [1, -1, -1, 0]",
       {6, 12, 48, 24},
       {1, 72, 48, 4, 6},
       {1, -1, -1, 0},
       {1, -1, -1, 0},
       {-1, 1, -1, 0, -1}},
      {"[6, 12, 48, 24] --> [3, 24, 6, 8, 24], [0, 1, -1, -1]",
       {6, 12, 48, 24},
       {3, 24, 6, 8, 24},
       {0, 1, -1, -1},
       {-1, -1, -1, -1},
       {-1, -1, -1, -1, -1}},
      {"[6, 12, 48, 24] --> [3, 24, 6, 8, 24], [1, -1, -1, 0]",
       {6, 12, 48, 24},
       {3, 24, 6, 8, 24},
       {1, -1, -1, 0},
       {1, -1, -1, 0},
       {1, -1, -1, -1, 0}},
      {"[6, 12, 48, 24] --> [3, 24, 6, -1, 24], [-1, -1, 0, 1]",
       {6, 12, 48, 24},
       {3, 24, 6, 8, 24},
       {-1, -1, 0, 1},
       {-1, -1, 0, 1},
       {-1, -1, 0, -1, 1}},
      {"[6, 12, 48, 24] --> [6, 12, 48, 24], [-1, -1, 0, 1]",
       {6, 12, 48, 24},
       {6, 12, 48, 24},
       {-1, -1, 0, 1},
       {-1, -1, 0, 1},
       {-1, -1, 0, 1}},
      {"[6, 12, 48, 24] --> [72, 3, 16, 24], [0, -1, 1, -1]",
       {6, 12, 48, 24},
       {72, 3, 16, 24},
       {0, -1, 1, -1},
       {0, -1, 1, -1},
       {0, 1, -1, -1}},
      {"[6, 12, 48, 24] --> [72, 3, 16, 24], [1, -1, 0, -1]",
       {6, 12, 48, 24},
       {72, 3, 16, 24},
       {1, -1, 0, -1},
       {1, -1, -1, -1},
       {1, -1, -1, -1}},
      {"[1, 72, 48, 4, 6] --> [6, 12, 48, 24], [-1, 1, -1, 0, -1]",
       {1, 72, 48, 4, 6},
       {6, 12, 48, 24},
       {-1, 1, -1, 0, -1},
       {-1, 1, -1, 0, -1},
       {1, -1, -1, 0}},
      {"[8, 1024, 3072] --> [0, 0, -1, 192], [0, 1, -1]",
       {8, 1024, 3072},
       {8, 1024, 16, 192},
       {0, 1, -1},
       {0, 1, -1},
       {0, 1, -1, -1}},
      {"[-1, -1, 3072] --> [0, 0, -1, 192], [0, 1, -1]",
       {-1, -1, 3072},
       {-1, -1, 16, 192},
       {0, 1, -1},
       {0, 1, -1},
       {0, 1, -1, -1}},
      {"[-1, -1, 3072] --> [0, 0, -1, 192], [0, -1, 1]",
       {-1, -1, 3072},
       {-1, -1, 16, 192},
       {0, -1, 1},
       {0, -1, -1},
       {0, -1, -1, -1}},
      {"[-1, -1, 3072] --> [0, 0, -1, 192], [1, -1, 0]",
       {-1, -1, 3072},
       {-1, -1, 16, 192},
       {1, -1, 0},
       {1, -1, 0},
       {1, -1, 0, -1}},
      {"[1, 2048, 12288] --> [0, 0, 6, 2048], [0, -1, 1]",
       {1, 2048, 12288},
       {1, 2048, 6, 2048},
       {0, -1, 1},
       {0, -1, 1},
       {0, -1, 1, -1}},
  };
  for (const ReshapeCase& c : cases) {
    SCOPED_TRACE(c.paddle_comment);
    StatusOr<SpmdDecision> d = ReshapeSpmd(Spec(c.x_shape, kMesh2x3, c.x_mapping), c.out_shape);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    EXPECT_EQ(MappingOf(d->inputs[0]), c.want_x);
    EXPECT_EQ(MappingOf(d->outputs[0]), c.want_out);
  }
}

TEST(SpmdRulesLayersTest, ReshapeOfTheAttentionHeadsAndWhatItRefuses) {
  // The gpt's q [b, s, h*d] -> [b, s, h, d] with the hidden dim column-parallel: the heads take
  // the sharding; merged back, the hidden dim does. 4 heads over 3 ranks do not divide: they are
  // gathered first (the merge) or the hidden dim is (the split).
  StatusOr<SpmdDecision> split = ReshapeSpmd(Spec({-1, 4, 8}, kMesh2, {-1, -1, 0}), {-1, 4, 4, 2});
  ASSERT_TRUE(split.ok());
  EXPECT_EQ(MappingOf(split->outputs[0]), (Dims{-1, -1, 0, -1}));
  StatusOr<SpmdDecision> merge =
      ReshapeSpmd(Spec({-1, 4, 4, 2}, kMesh2x3, {0, -1, 1, -1}), {-1, 4, 8});
  ASSERT_TRUE(merge.ok());
  EXPECT_EQ(MappingOf(merge->inputs[0]), (Dims{0, -1, -1, -1}));
  EXPECT_EQ(MappingOf(merge->outputs[0]), (Dims{0, -1, -1}));
  merge = ReshapeSpmd(Spec({-1, 4, 4, 2}, kMesh2, {-1, -1, 0, -1}), {-1, 4, 8});
  ASSERT_TRUE(merge.ok());
  EXPECT_EQ(MappingOf(merge->outputs[0]), (Dims{-1, -1, 0}));
  const ProcessMesh three = Mesh({3}, {0, 1, 2});
  StatusOr<SpmdDecision> uneven = ReshapeSpmd(Spec({2, 4, 8}, three, {-1, -1, 0}), {2, 4, 4, 2});
  ASSERT_TRUE(uneven.ok());
  EXPECT_EQ(MappingOf(uneven->inputs[0]), (Dims{-1, -1, -1}));
  EXPECT_EQ(MappingOf(uneven->outputs[0]), (Dims{-1, -1, -1, -1}));
  // Products that never meet, and a dynamic dim against a static one.
  EXPECT_FALSE(ReshapeSpmd(Spec({6, 4}, kMesh2, {-1, -1}), {5, 5}).ok());
  EXPECT_FALSE(ReshapeSpmd(Spec({-1, 4}, kMesh2, {-1, -1}), {4, -1}).ok());
}

struct EmbeddingCase {
  const char* paddle_comment;
  Dims x_mapping, table_mapping, want_x, want_table, want_out;
  Partials want_partial;
};

TEST(SpmdRulesLayersTest, EmbeddingAsTestEmbeddingRule) {
  // x [4, 1024], table [512, 768], mesh [[0, 1, 2, 3], [4, 5, 6, 7]].
  const std::vector<EmbeddingCase> cases = {
      {"data parallel", {1, -1}, {-1, -1}, {1, -1}, {-1, -1}, {1, -1, -1}, {}},
      {"table col-wise parallel & dp", {1, -1}, {-1, 0}, {1, -1}, {-1, 0}, {1, -1, 0}, {}},
      {"table row-wise parallel & dp", {1, -1}, {0, -1}, {1, -1}, {0, -1}, {1, -1, -1}, kSumOn0},
  };
  for (const EmbeddingCase& c : cases) {
    SCOPED_TRACE(c.paddle_comment);
    StatusOr<SpmdDecision> d =
        EmbeddingSpmd(Spec({4, 1024}, kMesh2x4, c.x_mapping),
                      Spec({512, 768}, kMesh2x4, c.table_mapping), -1, false);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    EXPECT_EQ(MappingOf(d->inputs[0]), c.want_x);
    EXPECT_EQ(MappingOf(d->inputs[1]), c.want_table);
    EXPECT_EQ(MappingOf(d->outputs[0]), c.want_out);
    EXPECT_EQ(PartialOf(d->outputs[0]), c.want_partial);
  }
  // "table row-wise parallel & padding_idx" and "& sparse": ValueError.
  const DistTensorSpec rows = Spec({512, 768}, kMesh2x4, {0, -1});
  StatusOr<SpmdDecision> padded =
      EmbeddingSpmd(Spec({4, 1024}, kMesh2x4, {1, -1}), rows, 128, false);
  ASSERT_FALSE(padded.ok());
  EXPECT_EQ(padded.status().message(),
            "row-wise parallel of the embedding table (rows sharded by mesh dim 0) does not "
            "support padding_idx 128");
  EXPECT_FALSE(EmbeddingSpmd(Spec({4, 1024}, kMesh2x4, {1, -1}), rows, -1, true).ok());
}

TEST(SpmdRulesLayersTest, EmbeddingGradGathersTheRowsAndSumsOverTheBatch) {
  // embedding.cc EmbeddingGradInferSpmd: w_grad = einsum("..j,..k->jk", onehot(x), out_grad)
  // with j unsharded: a vocabulary-parallel table is asked for whole rows, and the batch sharding
  // of the ids makes w_grad Partial(sum); a sharded hidden dim stays on w_grad's columns.
  StatusOr<SpmdDecision> d =
      EmbeddingGradSpmd(Spec({4, 1024}, kMesh2x4, {0, -1}), Spec({512, 768}, kMesh2x4, {1, -1}),
                        Spec({4, 1024, 768}, kMesh2x4, {0, -1, 1}), false);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(MappingOf(d->inputs[0]), (Dims{0, -1}));
  EXPECT_EQ(MappingOf(d->inputs[1]), (Dims{-1, -1}));
  EXPECT_EQ(MappingOf(d->inputs[2]), (Dims{0, -1, 1}));
  EXPECT_EQ(MappingOf(d->outputs[0]), (Dims{-1, 1}));
  EXPECT_EQ(PartialOf(d->outputs[0]), kSumOn0);
  EXPECT_FALSE(EmbeddingGradSpmd(Spec({4, 1024}, kMesh2x4, {0, -1}),
                                 Spec({512, 768}, kMesh2x4, {1, -1}),
                                 Spec({4, 1024, 768}, kMesh2x4, {0, -1, 1}), true)
                   .ok());
}

TEST(SpmdRulesLayersTest, LayerNormAsTestLayerNormRule) {
  // x [64, 32, 1024], mesh [[0, 1, 2], [3, 4, 5]], mean and variance of begin_norm_axis dims.
  struct Case {
    const char* paddle_comment;
    Dims x_mapping, scale_mapping;
    int64_t begin;
    Dims want_x, want_mean;
  };
  const std::vector<Case> cases = {
      {"ijk[1, -1, -1], k[-1], k[-1], begin_norm_axis=2",
       {1, -1, -1},
       {-1},
       2,
       {1, -1, -1},
       {1, -1}},
      {"ijk[1, 0, -1],k[0],k[0], begin_norm_axis=2", {1, 0, -1}, {0}, 2, {1, 0, -1}, {1, 0}},
      {"ijk[0, -1, -1],y[-1],y[1], begin_norm_axis=1", {0, -1, -1}, {-1}, 1, {0, -1, -1}, {0}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.paddle_comment);
    const int64_t norm = c.begin == 2 ? 1024 : 32 * 1024;
    StatusOr<SpmdDecision> d = LayerNormSpmd(
        Spec({64, 32, 1024}, kMesh2x3, c.x_mapping), Spec({norm}, kMesh2x3, c.scale_mapping),
        Spec({norm}, kMesh2x3, c.scale_mapping), c.begin, static_cast<size_t>(c.begin));
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    EXPECT_EQ(MappingOf(d->inputs[0]), c.want_x);
    EXPECT_EQ(MappingOf(d->inputs[1]), Dims{-1});
    EXPECT_EQ(MappingOf(d->inputs[2]), Dims{-1});
    EXPECT_EQ(MappingOf(d->outputs[0]), c.want_x);
    EXPECT_EQ(MappingOf(d->outputs[1]), c.want_mean);
    EXPECT_EQ(MappingOf(d->outputs[2]), c.want_mean);
  }
  // The translator's flattened mean [b*s]: only x's dim 0 can stay sharded, and the normalised
  // dim never is.
  StatusOr<SpmdDecision> flat =
      LayerNormSpmd(Spec({-1, 4, 8}, kMesh2x3, {0, 1, -1}), Spec({8}, kMesh2x3, {-1}),
                    Spec({8}, kMesh2x3, {-1}), 2, 1);
  ASSERT_TRUE(flat.ok());
  EXPECT_EQ(MappingOf(flat->inputs[0]), (Dims{0, -1, -1}));
  EXPECT_EQ(MappingOf(flat->outputs[1]), Dims{0});
  StatusOr<SpmdDecision> normalised = LayerNormSpmd(
      Spec({4, 8}, kMesh2, {-1, 0}), Spec({8}, kMesh2, {0}), Spec({8}, kMesh2, {0}), 1, 1);
  ASSERT_TRUE(normalised.ok());
  EXPECT_EQ(MappingOf(normalised->inputs[0]), (Dims{-1, -1}));
  EXPECT_EQ(MappingOf(normalised->inputs[1]), Dims{-1});
}

TEST(SpmdRulesLayersTest, LayerNormGradSumsScaleAndBiasGradsOverTheBatch) {
  // layer_norm.cc LayerNormGradInferSpmd: x, mean, variance and out_grad (its Partial dropped)
  // merged on the dims before begin_norm_axis; scale_grad and bias_grad are Partial(sum) on the
  // mesh dims that shard those dims.
  StatusOr<SpmdDecision> d =
      LayerNormGradSpmd(Spec({-1, 4, 8}, kMesh2, {0, -1, -1}), Spec({8}, kMesh2, {-1}),
                        Spec({8}, kMesh2, {-1}), Spec({-1}, kMesh2, {0}), Spec({-1}, kMesh2, {0}),
                        Spec({-1, 4, 8}, kMesh2, {-1, -1, -1}, kSumOn0), 2);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(MappingOf(d->inputs[0]), (Dims{0, -1, -1}));
  EXPECT_EQ(MappingOf(d->inputs[3]), Dims{0});
  EXPECT_EQ(MappingOf(d->inputs[5]), (Dims{0, -1, -1}));
  EXPECT_TRUE(PartialOf(d->inputs[5]).empty());
  EXPECT_EQ(MappingOf(d->outputs[0]), (Dims{0, -1, -1}));
  EXPECT_EQ(MappingOf(d->outputs[1]), Dims{-1});
  EXPECT_EQ(PartialOf(d->outputs[1]), kSumOn0);
  EXPECT_EQ(PartialOf(d->outputs[2]), kSumOn0);
}

TEST(SpmdRulesLayersTest, SoftmaxAndItsGradUnshardTheAxis) {
  // softmax.cc: the heads stay sharded, the softmax axis is asked whole.
  StatusOr<SpmdDecision> d = SoftmaxSpmd(Spec({2, 4, 4, 4}, kMesh2, {-1, 0, -1, -1}), -1);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(MappingOf(d->outputs[0]), (Dims{-1, 0, -1, -1}));
  d = SoftmaxSpmd(Spec({4, 6}, kMesh2, {-1, 0}), 1);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(MappingOf(d->inputs[0]), (Dims{-1, -1}));
  StatusOr<SpmdDecision> g =
      SoftmaxGradSpmd(Spec({4, 6}, kMesh2, {0, -1}), Spec({4, 6}, kMesh2, {-1, 0}, kSumOn0), -1);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(MappingOf(g->inputs[0]), (Dims{0, -1}));
  EXPECT_EQ(MappingOf(g->inputs[1]), (Dims{0, -1}));
  EXPECT_TRUE(PartialOf(g->inputs[1]).empty());
  EXPECT_EQ(MappingOf(g->outputs[0]), (Dims{0, -1}));
  EXPECT_FALSE(SoftmaxSpmd(Spec({4, 6}, kMesh2, {-1, 0}), 2).ok());
}

TEST(SpmdRulesLayersTest, DropoutScaleTriuAndTranspose) {
  const DistTensorSpec heads = Spec({2, 4, 3, 3}, kMesh2, {-1, 0, -1, -1});
  // dropout.cc: out and mask as x; the grad elementwise over mask and out_grad.
  StatusOr<SpmdDecision> drop = DropoutSpmd(heads, std::nullopt);
  ASSERT_TRUE(drop.ok());
  EXPECT_EQ(MappingOf(drop->outputs[0]), (Dims{-1, 0, -1, -1}));
  EXPECT_EQ(MappingOf(drop->outputs[1]), (Dims{-1, 0, -1, -1}));
  EXPECT_FALSE(drop->inputs[1].has_value());
  StatusOr<SpmdDecision> drop_grad =
      DropoutGradSpmd(heads, Spec({2, 4, 3, 3}, kMesh2, {-1, -1, -1, -1}));
  ASSERT_TRUE(drop_grad.ok());
  EXPECT_EQ(MappingOf(drop_grad->inputs[1]), (Dims{-1, 0, -1, -1}));
  EXPECT_EQ(MappingOf(drop_grad->outputs[0]), (Dims{-1, 0, -1, -1}));
  // scale: unary, the scale tensor replicated, a Partial x asked without it.
  const SpmdDecision scale =
      ScaleSpmd(Spec({4, 6}, kMesh2, {0, -1}, kSumOn0), Spec({1}, kMesh2, {0}));
  EXPECT_EQ(MappingOf(scale.inputs[0]), (Dims{0, -1}));
  EXPECT_TRUE(PartialOf(scale.inputs[0]).empty());
  EXPECT_EQ(MappingOf(scale.inputs[1]), Dims{-1});
  // triu.cc: the matrix dims whole.
  StatusOr<SpmdDecision> triu = TriuSpmd(Spec({2, 4, 4}, kMesh2x3, {0, 1, -1}));
  ASSERT_TRUE(triu.ok());
  EXPECT_EQ(MappingOf(triu->outputs[0]), (Dims{0, -1, -1}));
  // transpose.cc: [b, s, h, d] -> [b, h, s, d] moves the heads' sharding; the grad moves it back.
  StatusOr<SpmdDecision> t =
      TransposeSpmd(Spec({2, 3, 4, 2}, kMesh2x3, {0, -1, 1, -1}), {0, 2, 1, 3});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(MappingOf(t->outputs[0]), (Dims{0, 1, -1, -1}));
  StatusOr<SpmdDecision> tg =
      TransposeGradSpmd(Spec({2, 4, 3, 2}, kMesh2x3, {0, 1, -1, -1}), {0, 2, 1, 3});
  ASSERT_TRUE(tg.ok());
  EXPECT_EQ(MappingOf(tg->outputs[0]), (Dims{0, -1, 1, -1}));
  // A perm of [1, 2, 0]: out dim i is x dim perm[i].
  t = TransposeSpmd(Spec({2, 3, 4}, kMesh2x3, {0, 1, -1}), {1, 2, 0});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(MappingOf(t->outputs[0]), (Dims{1, -1, 0}));
  EXPECT_FALSE(TransposeSpmd(Spec({2, 3}, kMesh2, {0, -1}), {0, 0}).ok());
}

TEST(SpmdRulesLayersTest, AddNKeepsACommonPartialOnly) {
  // add_n.cc AddNInferSpmd: the merged sharding for all; Partial kept only when every input has
  // the same one (the three Partial dx of a column-parallel q, k, v summed once).
  StatusOr<SpmdDecision> same =
      AddNSpmd({Spec({4, 8}, kMesh2, {-1, -1}, kSumOn0), Spec({4, 8}, kMesh2, {-1, -1}, kSumOn0)});
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(PartialOf(same->inputs[1]), kSumOn0);
  EXPECT_EQ(PartialOf(same->outputs[0]), kSumOn0);
  StatusOr<SpmdDecision> mixed =
      AddNSpmd({Spec({4, 8}, kMesh2, {0, -1}, kSumOn0), Spec({4, 8}, kMesh2, {-1, -1})});
  ASSERT_TRUE(mixed.ok());
  EXPECT_TRUE(PartialOf(mixed->inputs[0]).empty());
  EXPECT_EQ(MappingOf(mixed->inputs[1]), (Dims{0, -1}));
  EXPECT_EQ(MappingOf(mixed->outputs[0]), (Dims{0, -1}));
  EXPECT_TRUE(PartialOf(mixed->outputs[0]).empty());
  EXPECT_FALSE(AddNSpmd({Spec({4, 8}, kMesh2, {-1, -1}), Spec({8}, kMesh2, {-1})}).ok());
}

TEST(SpmdRulesLayersTest, CrossEntropyDynamicRuleGathersTheVocabulary) {
  // cross_entropy_with_softmax.cc, CrossEntropyWithSoftmaxInferSpmd (support_shard_softmax_dim
  // false): "GPT MP-DP case" asks the input and gives the softmax with the axis as '1'.
  StatusOr<SpmdDecision> d = CrossEntropyWithSoftmaxSpmd(
      Spec({8, 1024, 50304}, kMesh2x4, {-1, -1, 0}), Spec({8, 1024, 1}, kMesh2x4, {1, -1, -1}), -1,
      false, /*support_shard_softmax_dim=*/false);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(MappingOf(d->inputs[0]), (Dims{1, -1, -1}));
  EXPECT_EQ(MappingOf(d->inputs[1]), (Dims{1, -1, -1}));
  EXPECT_EQ(MappingOf(d->outputs[0]), (Dims{1, -1, -1}));
  EXPECT_EQ(MappingOf(d->outputs[1]), (Dims{1, -1, -1}));
}

TEST(SpmdRulesLayersTest, SliceAsTestSliceRule) {
  // "axes = [1, 2], [-1, -1, 0] --> [-1, -1, -1], [-1, -1, -1]" (x [64, 32, 48], mesh [0..3]).
  StatusOr<SpmdDecision> d =
      SliceSpmd(Spec({64, 32, 48}, Mesh({4}, {0, 1, 2, 3}), {-1, -1, 0}), {1, 2}, {});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(MappingOf(d->inputs[0]), (Dims{-1, -1, -1}));
  EXPECT_EQ(MappingOf(d->outputs[0]), (Dims{-1, -1, -1}));
  // "axes: [-1], dims_mapping: [-1, 0, 1, -1] --> [-1, 0, 1, -1] [-1, 0, 1, -1]" with
  // decrease_axis [0] (x [8, 8, 16, 16], mesh [[0, 1, 2, 3], [4, 5, 6, 7]]).
  d = SliceSpmd(Spec({8, 8, 16, 16}, kMesh2x4, {-1, 0, 1, -1}), {-1}, {0});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(MappingOf(d->inputs[0]), (Dims{-1, 0, 1, -1}));
  EXPECT_EQ(MappingOf(d->outputs[0]), (Dims{-1, 0, 1, -1}));
  // A decreased sliced axis leaves the output.
  d = SliceSpmd(Spec({8, 8, 16}, kMesh2x4, {0, -1, 1}), {1}, {1});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(MappingOf(d->outputs[0]), (Dims{0, 1}));
}

TEST(SpmdRulesLayersTest, ConcatAndSplitUnshardTheirAxis) {
  // concat.cc: the inputs merged, the axis '1'; split.cc: the axis unsharded, every piece as x.
  StatusOr<SpmdDecision> c =
      ConcatSpmd({Spec({4, 6}, kMesh2x3, {0, 1}), Spec({4, 2}, kMesh2x3, {-1, -1})}, -1);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(MappingOf(c->inputs[0]), (Dims{0, -1}));
  EXPECT_EQ(MappingOf(c->inputs[1]), (Dims{0, -1}));
  EXPECT_EQ(MappingOf(c->outputs[0]), (Dims{0, -1}));
  EXPECT_FALSE(ConcatSpmd({Spec({4, 6}, kMesh2, {0, -1})}, 2).ok());
  StatusOr<SpmdDecision> s = SplitSpmd(Spec({4, 6, 8}, kMesh2x3, {0, 1, -1}), 1, 3);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(MappingOf(s->inputs[0]), (Dims{0, -1, -1}));
  ASSERT_EQ(s->outputs.size(), 3u);
  for (const auto& piece : s->outputs) EXPECT_EQ(MappingOf(piece), (Dims{0, -1, -1}));
}

}  // namespace
}  // namespace irm::newir
