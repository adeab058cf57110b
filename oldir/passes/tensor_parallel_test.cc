// The tensor-parallel pass on the zoo's mlp and gpt as programs: where each communication op
// goes, what it carries, the local shapes of the rank, the startup shards, the refusals, and that
// every output validates. The expected layouts are Paddle's dist op impls
// (python/paddle/distributed/auto_parallel/static/operators/dist_matmul.py, dist_embedding.py,
// dist_cross_entropy.py), written out by hand here.
#include "oldir/passes/tensor_parallel.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "oldir/models/gpt.h"
#include "oldir/models/mlp.h"
#include "oldir/models/training.h"
#include "oldir/passes/tensor_parallel_completion.h"
#include "oldir/validator.h"

namespace irm::oldir::passes {
namespace {

// A zoo training program, built.
struct Serial {
  Program startup;
  Program main;
};

Serial Built(const models::ModelPrograms& model) {
  return {model.startup.Build(), model.main.Build()};
}

// The diff tests' zoo programs (diff_tests/serial_reference_test_support.cc, BuildZooTraining).
Serial Mlp(OptimizerKind kind) {
  models::MlpConfig config;
  config.depth = 4;
  config.in_features = 4;
  config.width = 8;
  config.classes = 3;
  models::ModelPrograms model;
  EXPECT_TRUE(models::BuildMlp(config, &model).ok());
  OptimizerOptions optimizer;
  optimizer.kind = kind;
  EXPECT_TRUE(models::AddTraining(&model, optimizer).ok());
  return Built(model);
}

Serial Gpt(int64_t hidden, int64_t heads, int64_t vocab) {
  models::GptConfig config;
  config.layers = 2;
  config.hidden = hidden;
  config.heads = heads;
  config.vocab = vocab;
  config.seq = 4;
  config.dropout = 0.0f;
  models::ModelPrograms model;
  EXPECT_TRUE(models::BuildGpt(config, &model).ok());
  OptimizerOptions optimizer;
  optimizer.kind = OptimizerKind::kAdamW;
  EXPECT_TRUE(models::AddTraining(&model, optimizer).ok());
  return Built(model);
}

StatusOr<RankPrograms> Apply(const Serial& model, int mp, int rank, int ring = 0) {
  const Program& main = model.main;
  IRM_ASSIGN_OR_RETURN(Placements placements, MegatronPlacements(main));
  TensorParallelOptions options;
  options.mp_degree = mp;
  options.mp_rank = rank;
  options.ring_id = ring;
  options.placements = std::move(placements);
  return ApplyTensorParallel(model.startup, main, options);
}

std::vector<std::string> Types(const Program& program) {
  std::vector<std::string> types;
  for (int i = 0; i < program.root().num_ops(); ++i) types.push_back(program.root().op(i).type());
  return types;
}

std::vector<int64_t> DimsOf(const Program& program, const std::string& var) {
  std::optional<Var> found = program.root().FindVar(var);
  EXPECT_TRUE(found.has_value()) << var;
  return found ? found->dims() : std::vector<int64_t>{};
}

int Find(const Program& program, const std::string& type, int from = 0) {
  for (int i = from; i < program.root().num_ops(); ++i) {
    if (program.root().op(i).type() == type) return i;
  }
  return -1;
}

void ExpectValid(const RankPrograms& rank) {
  const Diagnostics main = ValidateProgram(rank.main);
  EXPECT_FALSE(main.HasErrors()) << main.Render();
  const Diagnostics startup = ValidateProgram(rank.startup);
  EXPECT_FALSE(startup.HasErrors()) << startup.Render();
}

TEST(TensorParallelTest, MlpPairsGetColumnAndRowCommunicationWherePaddlePutsThem) {
  const Serial model = Mlp(OptimizerKind::kSgd);
  StatusOr<RankPrograms> rank = Apply(model, 2, 1, /*ring=*/3);
  ASSERT_TRUE(rank.ok()) << rank.status().ToString();
  std::vector<std::string> expected = {
      "feed", "feed",
      // linear_0 column, linear_1 row (the bias added after the all-reduce)
      "c_identity", "matmul_v2", "elementwise_add", "relu", "matmul_v2", "c_allreduce_sum",
      "elementwise_add", "relu",
      // linear_2 column, linear_3 row
      "c_identity", "matmul_v2", "elementwise_add", "relu", "matmul_v2", "c_allreduce_sum",
      "elementwise_add", "softmax_with_cross_entropy", "mean",
      // backward: row grads read c_identity of Out@GRAD, column grads all-reduce X@GRAD
      "fill_constant", "mean_grad", "softmax_with_cross_entropy_grad", "elementwise_add_grad",
      "c_identity", "matmul_v2_grad", "relu_grad", "elementwise_add_grad", "matmul_v2_grad",
      "c_allreduce_sum", "relu_grad", "elementwise_add_grad", "c_identity", "matmul_v2_grad",
      "relu_grad", "elementwise_add_grad",
      // linear_0's input is the feed x: no gradient, no all-reduce
      "matmul_v2_grad"};
  for (int i = 0; i < 8; ++i) expected.push_back("sgd");
  expected.push_back("fetch");
  EXPECT_EQ(Types(rank->main), expected);

  const Block root = rank->main.root();
  // Forward: c_identity of x feeds the column matmul; the row matmul writes a partial sum.
  const Op identity = root.op(2);
  EXPECT_EQ(identity.SingleInput("X"), "x");
  EXPECT_EQ(identity.SingleOutput("Out"), "c_identity.tmp_0");
  EXPECT_EQ(root.op(3).SingleInput("X"), "c_identity.tmp_0");
  EXPECT_EQ(identity.AttrOr<int32_t>("ring_id", -1), 3);
  EXPECT_TRUE(identity.AttrOr<bool>("use_calc_stream", false));
  EXPECT_TRUE(identity.AttrOr<bool>("use_model_parallel", false));
  EXPECT_EQ(identity.role(), kForward);
  EXPECT_EQ(root.op(6).SingleOutput("Out"), "c_allreduce_sum.tmp_0");
  EXPECT_EQ(root.op(7).SingleInput("X"), "c_allreduce_sum.tmp_0");
  EXPECT_EQ(root.op(7).SingleOutput("Out"), "linear_5.tmp_0");
  EXPECT_EQ(root.op(8).SingleInput("X"), "linear_5.tmp_0");
  EXPECT_EQ(root.op(8).SingleInput("Y"), "linear_1.b_0");
  EXPECT_EQ(root.op(10).SingleOutput("Out"), "c_identity.tmp_1");
  EXPECT_EQ(root.op(15).SingleOutput("Out"), "linear_7.tmp_0");
  // Backward, one counter per prefix over forward and backward as Paddle's unique_name.
  EXPECT_EQ(root.op(23).SingleInput("X"), "linear_7.tmp_0@GRAD");
  EXPECT_EQ(root.op(23).SingleOutput("Out"), "c_identity.tmp_2@GRAD");
  EXPECT_EQ(root.op(23).role(), kBackward);
  EXPECT_EQ(root.op(24).SingleInput("Out@GRAD"), "c_identity.tmp_2@GRAD");
  EXPECT_EQ(root.op(27).SingleOutput("X@GRAD"), "c_identity.tmp_3@GRAD");
  EXPECT_EQ(root.op(28).SingleInput("X"), "c_identity.tmp_3@GRAD");
  EXPECT_EQ(root.op(28).SingleOutput("Out"), "relu_1.tmp_0@GRAD");
  EXPECT_EQ(root.op(28).AttrOr<int32_t>("ring_id", -1), 3);
  EXPECT_EQ(root.op(28).role(), kBackward);
  EXPECT_EQ(root.op(31).SingleOutput("Out"), "c_identity.tmp_4@GRAD");

  // Local shapes: parameters, their gradients, activations.
  const Program& main = rank->main;
  EXPECT_EQ(DimsOf(main, "linear_0.w_0"), (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(DimsOf(main, "linear_0.b_0"), (std::vector<int64_t>{4}));
  EXPECT_EQ(DimsOf(main, "linear_1.w_0"), (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(DimsOf(main, "linear_1.b_0"), (std::vector<int64_t>{8}));
  EXPECT_EQ(DimsOf(main, "linear_3.w_0"), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(DimsOf(main, "linear_3.b_0"), (std::vector<int64_t>{3}));
  EXPECT_EQ(DimsOf(main, "linear_0.w_0@GRAD"), (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(DimsOf(main, "linear_3.w_0@GRAD"), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(DimsOf(main, "linear_4.tmp_0"), (std::vector<int64_t>{-1, 4}));
  EXPECT_EQ(DimsOf(main, "relu_0.tmp_0"), (std::vector<int64_t>{-1, 4}));
  EXPECT_EQ(DimsOf(main, "relu_0.tmp_0@GRAD"), (std::vector<int64_t>{-1, 4}));
  EXPECT_EQ(DimsOf(main, "c_allreduce_sum.tmp_0"), (std::vector<int64_t>{-1, 8}));
  EXPECT_EQ(DimsOf(main, "linear_5.tmp_0"), (std::vector<int64_t>{-1, 8}));
  EXPECT_EQ(DimsOf(main, "c_identity.tmp_3@GRAD"), (std::vector<int64_t>{-1, 8}));
  ExpectValid(*rank);
}

TEST(TensorParallelTest, MlpStartupInitialisesTheRanksSliceOfEveryShardedVar) {
  const Serial model = Mlp(OptimizerKind::kAdamW);
  StatusOr<RankPrograms> rank = Apply(model, 2, 1);
  ASSERT_TRUE(rank.ok()) << rank.status().ToString();
  const Block startup = rank->startup.root();
  bool saw_weight = false;
  bool saw_moment = false;
  for (int i = 0; i < startup.num_ops(); ++i) {
    const Op op = startup.op(i);
    if (op.SingleOutput("Out") == "linear_0.w_0") {
      saw_weight = true;
      EXPECT_EQ(op.AttrOr<std::vector<int64_t>>("shape", {}), (std::vector<int64_t>{4, 4}));
    }
    if (op.SingleOutput("Out") == "linear_1.w_0_moment1_0") {
      saw_moment = true;
      EXPECT_EQ(op.type(), "fill_constant");
      EXPECT_EQ(op.AttrOr<std::vector<int64_t>>("shape", {}), (std::vector<int64_t>{4, 8}));
    }
    if (op.SingleOutput("Out") == "linear_1.b_0") {  // row parallel: the bias is replicated
      EXPECT_EQ(op.AttrOr<std::vector<int64_t>>("shape", {}), (std::vector<int64_t>{8}));
    }
  }
  EXPECT_TRUE(saw_weight);
  EXPECT_TRUE(saw_moment);
  EXPECT_EQ(DimsOf(rank->startup, "linear_0.w_0"), (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(DimsOf(rank->main, "linear_2.w_0_moment2_0"), (std::vector<int64_t>{8, 4}));
  EXPECT_EQ(DimsOf(rank->main, "linear_2.w_0_beta1_pow_acc_0"), (std::vector<int64_t>{1}));

  // Rank 1 holds the second half of a column shard and of a row shard.
  ASSERT_TRUE(rank->shards.count("linear_0.w_0"));
  EXPECT_EQ(rank->shards.at("linear_0.w_0").global_shape, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(rank->shards.at("linear_0.w_0").offsets, (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(rank->shards.at("linear_0.b_0").offsets, (std::vector<int64_t>{4}));
  EXPECT_EQ(rank->shards.at("linear_1.w_0").offsets, (std::vector<int64_t>{4, 0}));
  EXPECT_EQ(rank->shards.at("linear_1.w_0_moment1_0").offsets, (std::vector<int64_t>{4, 0}));
  EXPECT_FALSE(rank->shards.count("linear_1.b_0"));
  EXPECT_FALSE(rank->shards.count("linear_1.w_0_beta1_pow_acc_0"));
  // Four weights, two column biases, each with two moments.
  EXPECT_EQ(rank->shards.size(), 6u * 3u);
  ExpectValid(*rank);
}

TEST(TensorParallelTest, GptIsMegatronSharded) {
  const Serial model = Gpt(8, 4, 12);
  StatusOr<RankPrograms> rank = Apply(model, 2, 1);
  ASSERT_TRUE(rank.ok()) << rank.status().ToString();
  const Program& main = rank->main;
  const Block root = main.root();

  // Vocabulary-parallel word embedding: rank 1 holds rows 6..11.
  const int embedding = Find(main, "c_embedding");
  ASSERT_GE(embedding, 0);
  EXPECT_EQ(root.op(embedding).SingleInput("W"), "embedding_0.w_0");
  EXPECT_EQ(root.op(embedding).AttrOr<int64_t>("start_index", -1), 6);
  EXPECT_EQ(root.op(embedding + 1).type(), "c_allreduce_sum");
  EXPECT_EQ(root.op(embedding + 1).SingleInput("X"), root.op(embedding).SingleOutput("Out"));
  EXPECT_EQ(root.op(embedding + 1).SingleOutput("Out"), "embedding_2.tmp_0");
  // The position embedding stays a replicated lookup.
  EXPECT_EQ(root.op(embedding + 3).type(), "lookup_table_v2");
  EXPECT_EQ(root.op(embedding + 3).SingleInput("W"), "embedding_1.w_0");

  // Heads split over the ranks: 4 heads of 2 become 2 local heads, and back to hidden 8 / 2.
  int reshapes = 0;
  for (int i = 0; i < root.num_ops(); ++i) {
    const Op op = root.op(i);
    if (op.type() != "reshape2" && op.type() != "reshape2_grad") continue;
    const std::vector<int32_t> shape = op.AttrOr<std::vector<int32_t>>("shape", {});
    EXPECT_TRUE(shape == (std::vector<int32_t>{0, 0, 2, 2}) ||
                shape == (std::vector<int32_t>{0, 0, 4}))
        << "op " << i;
    ++reshapes;
  }
  EXPECT_EQ(reshapes, 2 * 2 * 4);  // 4 per block, forward and backward
  // The attention-out projection is row parallel: the bias is added after the all-reduce.
  int proj = -1;
  for (int i = 0; i < root.num_ops() && proj < 0; ++i) {
    if (root.op(i).SingleInput("Y") == "linear_3.w_0") proj = i;
  }
  ASSERT_GE(proj, 0);
  EXPECT_EQ(root.op(proj + 1).type(), "c_allreduce_sum");
  EXPECT_EQ(root.op(proj + 2).type(), "elementwise_add");
  EXPECT_EQ(root.op(proj + 2).SingleInput("Y"), "linear_3.b_0");

  // The head is column parallel and the loss the parallel cross entropy over the vocab shard.
  const int loss = Find(main, "c_softmax_with_cross_entropy");
  ASSERT_GE(loss, 2);
  EXPECT_EQ(Find(main, "softmax_with_cross_entropy"), -1);
  EXPECT_EQ(root.op(loss - 1).SingleInput("Y"), "linear_12.w_0");
  EXPECT_EQ(root.op(loss - 2).type(), "c_identity");
  EXPECT_EQ(root.op(loss).AttrOr<int32_t>("rank", -1), 1);
  EXPECT_EQ(root.op(loss).AttrOr<int32_t>("nranks", -1), 2);
  EXPECT_EQ(root.op(loss).AttrOr<int32_t>("ring_id", -1), 0);
  EXPECT_EQ(root.op(loss).AttrOr<int64_t>("ignore_index", 0), -100);
  EXPECT_EQ(root.op(loss + 1).type(), "mean");
  const int loss_grad = Find(main, "c_softmax_with_cross_entropy_grad");
  ASSERT_GE(loss_grad, 0);
  EXPECT_EQ(root.op(loss_grad).AttrOr<int64_t>("ignore_index", 0), -100);
  EXPECT_EQ(root.op(loss_grad).role(), kBackward);
  const int embedding_grad = Find(main, "c_embedding_grad");
  ASSERT_GE(embedding_grad, 0);
  EXPECT_EQ(root.op(embedding_grad).AttrOr<int64_t>("start_index", -1), 6);
  EXPECT_EQ(root.op(embedding_grad).SingleOutput("W@GRAD"), "embedding_0.w_0@GRAD");
  // The position embedding's gradient stays the serial grad op.
  const int position_grad = Find(main, "lookup_table_v2_grad");
  ASSERT_GE(position_grad, 0);
  EXPECT_EQ(root.op(position_grad).SingleInput("W"), "embedding_1.w_0");
  EXPECT_EQ(Find(main, "lookup_table_v2_grad", position_grad + 1), -1);

  // Per block: q, k, v, fc1 column parallel, proj and fc2 row parallel; the head column parallel.
  int forward_identity = 0;
  int forward_reduce = 0;
  int backward_identity = 0;
  int backward_reduce = 0;
  for (int i = 0; i < root.num_ops(); ++i) {
    const Op op = root.op(i);
    const bool backward = IsBackward(op.role());
    if (op.type() == "c_identity") ++(backward ? backward_identity : forward_identity);
    if (op.type() == "c_allreduce_sum") ++(backward ? backward_reduce : forward_reduce);
  }
  EXPECT_EQ(forward_identity, 2 * 4 + 1);
  EXPECT_EQ(forward_reduce, 2 * 2 + 1);  // proj, fc2, and the embedding
  EXPECT_EQ(backward_identity, 2 * 2);
  EXPECT_EQ(backward_reduce, 2 * 4 + 1);

  // Local shapes.
  EXPECT_EQ(DimsOf(main, "embedding_0.w_0"), (std::vector<int64_t>{6, 8}));
  EXPECT_EQ(DimsOf(main, "embedding_1.w_0"), (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(DimsOf(main, "layer_norm_0.w_0"), (std::vector<int64_t>{8}));
  EXPECT_EQ(DimsOf(main, "linear_0.w_0"), (std::vector<int64_t>{8, 4}));
  EXPECT_EQ(DimsOf(main, "linear_0.b_0"), (std::vector<int64_t>{4}));
  EXPECT_EQ(DimsOf(main, "linear_3.w_0"), (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(DimsOf(main, "linear_3.b_0"), (std::vector<int64_t>{8}));
  EXPECT_EQ(DimsOf(main, "linear_4.w_0"), (std::vector<int64_t>{8, 16}));
  EXPECT_EQ(DimsOf(main, "linear_5.w_0"), (std::vector<int64_t>{16, 8}));
  EXPECT_EQ(DimsOf(main, "linear_12.w_0"), (std::vector<int64_t>{8, 6}));
  EXPECT_EQ(DimsOf(main, "linear_12.w_0_moment1_0"), (std::vector<int64_t>{8, 6}));
  EXPECT_EQ(DimsOf(main, "reshape2_0.tmp_0"), (std::vector<int64_t>{-1, 4, 2, 2}));
  EXPECT_EQ(DimsOf(main, "transpose_0.tmp_0"), (std::vector<int64_t>{-1, 2, 4, 2}));
  EXPECT_EQ(DimsOf(main, "reshape2_3.tmp_0"), (std::vector<int64_t>{-1, 4, 4}));
  EXPECT_EQ(DimsOf(main, "linear_25.tmp_0"), (std::vector<int64_t>{-1, 4, 6}));
  EXPECT_EQ(DimsOf(main, "softmax_with_cross_entropy_0.tmp_0"), (std::vector<int64_t>{-1, 4, 6}));
  EXPECT_EQ(DimsOf(main, "softmax_with_cross_entropy_0.tmp_1"), (std::vector<int64_t>{-1, 4, 1}));
  EXPECT_EQ(rank->shards.at("embedding_0.w_0").offsets, (std::vector<int64_t>{6, 0}));
  ExpectValid(*rank);
}

TEST(TensorParallelTest, Tp4OfGptValidatesOnEveryRank) {
  const Serial model = Gpt(8, 4, 12);
  const Program& main = model.main;
  StatusOr<Placements> placements = MegatronPlacements(main);
  ASSERT_TRUE(placements.ok());
  StatusOr<DistributedPrograms> world =
      ApplyTensorParallelWorld(model.startup, main, 4, *placements);
  ASSERT_TRUE(world.ok()) << world.status().ToString();
  ASSERT_EQ(world->ranks.size(), 4u);
  ASSERT_EQ(world->process_groups.size(), 1u);
  EXPECT_EQ(world->process_groups[0].ranks, (std::vector<int>{0, 1, 2, 3}));
  for (int r = 0; r < 4; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    const RankPrograms& rank = world->ranks[r];
    EXPECT_EQ(DimsOf(rank.main, "reshape2_0.tmp_0"), (std::vector<int64_t>{-1, 4, 1, 2}));
    EXPECT_EQ(rank.shards.at("linear_12.w_0").offsets, (std::vector<int64_t>{0, 3 * r}));
    ExpectValid(rank);
  }
}

TEST(TensorParallelTest, MegatronPlacementsOfTheZoo) {
  StatusOr<Placements> gpt = MegatronPlacements(Gpt(8, 4, 12).main);
  ASSERT_TRUE(gpt.ok()) << gpt.status().ToString();
  EXPECT_EQ(gpt->at("embedding_0.w_0"), (DimsMapping{0, -1}));
  EXPECT_EQ(gpt->at("embedding_1.w_0"), (DimsMapping{-1, -1}));
  for (int block = 0; block < 2; ++block) {
    const int l = 6 * block;
    for (int column : {l, l + 1, l + 2, l + 4}) {
      EXPECT_EQ(gpt->at(fmt::format("linear_{}.w_0", column)), (DimsMapping{-1, 0}));
      EXPECT_EQ(gpt->at(fmt::format("linear_{}.b_0", column)), (DimsMapping{0}));
    }
    for (int row : {l + 3, l + 5}) {
      EXPECT_EQ(gpt->at(fmt::format("linear_{}.w_0", row)), (DimsMapping{0, -1}));
      EXPECT_EQ(gpt->at(fmt::format("linear_{}.b_0", row)), (DimsMapping{-1}));
    }
  }
  EXPECT_EQ(gpt->at("linear_12.w_0"), (DimsMapping{-1, 0}));
  EXPECT_EQ(gpt->at("layer_norm_4.w_0"), (DimsMapping{-1}));

  StatusOr<Placements> mlp = MegatronPlacements(Mlp(OptimizerKind::kSgd).main);
  ASSERT_TRUE(mlp.ok());
  EXPECT_EQ(mlp->at("linear_0.w_0"), (DimsMapping{-1, 0}));
  EXPECT_EQ(mlp->at("linear_1.w_0"), (DimsMapping{0, -1}));
  EXPECT_EQ(mlp->at("linear_2.b_0"), (DimsMapping{0}));
  EXPECT_EQ(mlp->at("linear_3.b_0"), (DimsMapping{-1}));
  EXPECT_EQ(mlp->size(), 8u);
}

dist_proto::DistAttrSidecar SidecarOf(const Placements& placements, int mp) {
  dist_proto::DistAttrSidecar sidecar;
  for (const auto& [name, mapping] : placements) {
    auto* entry = sidecar.add_vars();
    entry->set_block_idx(0);
    entry->set_var_name(name);
    auto* mesh = entry->mutable_dist_attr()->mutable_process_mesh();
    mesh->add_shape(mp);
    for (int r = 0; r < mp; ++r) mesh->add_process_ids(r);
    for (int64_t m : mapping) entry->mutable_dist_attr()->add_dims_mapping(m);
  }
  return sidecar;
}

TEST(TensorParallelTest, SidecarPlacementsNeedEveryParameter) {
  const Program main = Mlp(OptimizerKind::kSgd).main;
  StatusOr<Placements> megatron = MegatronPlacements(main);
  ASSERT_TRUE(megatron.ok());
  StatusOr<Placements> read = PlacementsFromSidecar(SidecarOf(*megatron, 2), main);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, *megatron);

  Placements missing = *megatron;
  missing.erase("linear_2.w_0");
  StatusOr<Placements> refused = PlacementsFromSidecar(SidecarOf(missing, 2), main);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().ToString().find("linear_2.w_0"), std::string::npos)
      << refused.status().ToString();
  EXPECT_NE(refused.status().ToString().find("no dist attr"), std::string::npos);
}

TEST(TensorParallelTest, HeadsThatMpDoesNotDivideAreRefusedAtTheReshape) {
  // hidden 12, vocab 12 and every linear divide by 3; the 4 heads do not.
  StatusOr<RankPrograms> rank = Apply(Gpt(12, 4, 12), 3, 0);
  ASSERT_FALSE(rank.ok());
  EXPECT_EQ(rank.status().code(), StatusCode::kInvalidArgument);
  const std::string message = rank.status().ToString();
  EXPECT_NE(message.find("reshape2"), std::string::npos) << message;
  EXPECT_NE(message.find("heads"), std::string::npos) << message;
  EXPECT_NE(message.find("mp_degree 3"), std::string::npos) << message;
}

TEST(TensorParallelTest, AVocabularyThatMpDoesNotDivideIsRefused) {
  StatusOr<RankPrograms> rank = Apply(Gpt(8, 4, 12), 8, 0);
  ASSERT_FALSE(rank.ok());
  EXPECT_EQ(rank.status().code(), StatusCode::kInvalidArgument);
  const std::string message = rank.status().ToString();
  EXPECT_NE(message.find("embedding_0.w_0"), std::string::npos) << message;
  EXPECT_NE(message.find("vocabulary of 12"), std::string::npos) << message;
}

TEST(TensorParallelTest, AnMpRankOutsideTheGroupIsRefused) {
  StatusOr<RankPrograms> rank = Apply(Mlp(OptimizerKind::kSgd), 2, 2);
  ASSERT_FALSE(rank.ok());
  EXPECT_EQ(rank.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(rank.status().ToString().find("mp_rank 2"), std::string::npos);
}

TEST(TensorParallelTest, AShardedInputWithoutARuleIsALocatedError) {
  // linear_0 column parallel without its row partner: linear_1 reads a split activation with a
  // replicated weight, which needs a reshard the pass does not insert.
  const Serial model = Mlp(OptimizerKind::kSgd);
  const Program& main = model.main;
  TensorParallelOptions options;
  options.mp_degree = 2;
  StatusOr<Placements> placements = MegatronPlacements(main);
  ASSERT_TRUE(placements.ok());
  options.placements = *placements;
  options.placements["linear_1.w_0"] = {-1, -1};
  StatusOr<RankPrograms> rank = ApplyTensorParallel(model.startup, main, options);
  ASSERT_FALSE(rank.ok());
  EXPECT_EQ(rank.status().code(), StatusCode::kInvalidArgument);
  const std::string message = rank.status().ToString();
  EXPECT_NE(message.find("op 5 (matmul_v2)"), std::string::npos) << message;
  EXPECT_NE(message.find("relu_0.tmp_0"), std::string::npos) << message;
}

TEST(TensorParallelTest, OneRankIsTheSerialProgram) {
  const Serial model = Mlp(OptimizerKind::kSgd);
  StatusOr<RankPrograms> rank = Apply(model, 1, 0);
  ASSERT_TRUE(rank.ok());
  EXPECT_EQ(Types(rank->main), Types(model.main));
  EXPECT_TRUE(rank->shards.empty());
}

}  // namespace
}  // namespace irm::oldir::passes
