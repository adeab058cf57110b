// Tests of the pd_op and pd_dist op tables: unique names in the right dialect, hand-checked
// signatures of representative ops (from Paddle's ops.yaml, op_compat.yaml and
// paddle/fluid/pir/dialect/distributed/ir/), the
// in-place and side-effect flags, the dist_op prefix mapping, and building ops against the tables.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "newir/builder.h"
#include "newir/dialect.h"
#include "newir/pd_op_catalog.h"
#include "newir/program.h"

namespace irm::newir {
namespace {

const OpRegistry& Tables() {
  static const OpRegistry* const kRegistry = [] {
    auto* r = new OpRegistry();
    Status s = RegisterAllDialects(*r);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return r;
  }();
  return *kRegistry;
}

const OpInfo& Get(std::string_view name) {
  const OpInfo* info = Tables().Lookup(name);
  EXPECT_NE(info, nullptr) << name;
  static const OpInfo kEmpty;
  return info != nullptr ? *info : kEmpty;
}

std::vector<std::string> OperandNames(const OpInfo& info) {
  std::vector<std::string> out;
  for (const OperandSpec& o : info.operands) out.push_back(o.name);
  return out;
}
std::vector<std::string> ResultNames(const OpInfo& info) {
  std::vector<std::string> out;
  for (const ResultSpec& r : info.results) out.push_back(r.name);
  return out;
}
std::vector<std::string> AttrNames(const OpInfo& info) {
  std::vector<std::string> out;
  for (const AttrSpec& a : info.attributes) out.push_back(a.name);
  return out;
}

TEST(PdOpDialectTest, RegistersOnceAndRejectsASecondRegistration) {
  OpRegistry r;
  ASSERT_TRUE(RegisterPdOpDialect(r).ok());
  ASSERT_TRUE(RegisterDistDialect(r).ok());
  EXPECT_EQ(RegisterPdOpDialect(r).message(), "op 'pd_op.matmul' is registered twice");
  EXPECT_EQ(RegisterDistDialect(r).message(), "op 'dist_op.shard_tensor' is registered twice");
}

TEST(PdOpDialectTest, EveryRequestedOpIsRegisteredInItsDialect) {
  const std::vector<std::string> pd_ops = {"matmul",
                                           "matmul_grad",
                                           "add",
                                           "add_",
                                           "add_grad",
                                           "subtract",
                                           "subtract_grad",
                                           "multiply",
                                           "multiply_grad",
                                           "divide",
                                           "divide_grad",
                                           "relu",
                                           "relu_",
                                           "relu_grad",
                                           "gelu",
                                           "gelu_grad",
                                           "tanh",
                                           "tanh_grad",
                                           "sigmoid",
                                           "sigmoid_grad",
                                           "softmax",
                                           "softmax_grad",
                                           "layer_norm",
                                           "layer_norm_grad",
                                           "embedding",
                                           "embedding_grad",
                                           "reshape",
                                           "reshape_",
                                           "reshape_grad",
                                           "transpose",
                                           "transpose_grad",
                                           "scale",
                                           "scale_",
                                           "cast",
                                           "dropout",
                                           "dropout_grad",
                                           "mean",
                                           "mean_grad",
                                           "sum",
                                           "sum_grad",
                                           "mean_all",
                                           "mean_all_grad",
                                           "cross_entropy_with_softmax",
                                           "cross_entropy_with_softmax_grad",
                                           "concat",
                                           "concat_grad",
                                           "split",
                                           "split_with_num",
                                           "slice",
                                           "slice_grad",
                                           "set_value",
                                           "set_value_",
                                           "set_value_with_tensor",
                                           "set_value_with_tensor_",
                                           "set_value_grad",
                                           "set_value_with_tensor_grad",
                                           "full",
                                           "full_int_array",
                                           "full_like",
                                           "assign",
                                           "assign_out_",
                                           "assign_value_",
                                           "add_n",
                                           "tril",
                                           "triu",
                                           "data",
                                           "fetch",
                                           "feed",
                                           "sgd_",
                                           "momentum_",
                                           "adam_",
                                           "adamw_",
                                           "uniform",
                                           "gaussian",
                                           "increment",
                                           "increment_",
                                           "maximum",
                                           "remainder",
                                           "remainder_",
                                           "sqrt",
                                           "sqrt_",
                                           "squared_l2_norm",
                                           "tril_grad",
                                           "triu_grad",
                                           "add_n_",
                                           "share_data",
                                           "share_data_",
                                           "sync_calc_stream_",
                                           "sync_comm_stream_",
                                           "equal",
                                           "less_than",
                                           "logical_not",
                                           "if",
                                           "while",
                                           "all_reduce",
                                           "all_gather",
                                           "reduce_scatter",
                                           "broadcast",
                                           "all_to_all",
                                           "p_send",
                                           "p_recv",
                                           "barrier",
                                           "c_allreduce_sum",
                                           "c_allreduce_sum_",
                                           "c_allreduce_max",
                                           "c_allreduce_max_",
                                           "c_allreduce_min",
                                           "c_allreduce_min_",
                                           "c_allreduce_prod",
                                           "c_allreduce_prod_",
                                           "c_allgather",
                                           "c_broadcast",
                                           "c_broadcast_",
                                           "c_reducescatter",
                                           "c_identity",
                                           "c_identity_",
                                           "c_split",
                                           "c_concat",
                                           "c_embedding",
                                           "c_embedding_grad",
                                           "c_softmax_with_cross_entropy",
                                           "c_softmax_with_cross_entropy_grad",
                                           "send_v2",
                                           "recv_v2"};
  for (const std::string& op : pd_ops) {
    const OpInfo* info = Tables().Lookup("pd_op." + op);
    ASSERT_NE(info, nullptr) << op;
    EXPECT_EQ(info->dialect(), "pd_op");
    EXPECT_FALSE(info->summary.empty()) << op;
  }
  std::set<std::string> names;
  for (const OpInfo* info : Tables().OpsOfDialect("pd_op")) names.insert(info->name);
  EXPECT_EQ(names.size(), Tables().OpsOfDialect("pd_op").size());
  EXPECT_GE(names.size(), pd_ops.size());

  std::vector<std::string> dist;
  for (const OpInfo* info : Tables().OpsOfDialect("dist_op")) {
    dist.push_back(info->name);
    EXPECT_EQ(DialectOfOpName(info->name), "pd_dist");
  }
  EXPECT_THAT(dist, ::testing::ElementsAre("dist_op.dtensor_from_local", "dist_op.dtensor_to_local",
                                           "dist_op.reshard", "dist_op.shard_tensor"));
}

TEST(PdOpDialectTest, DistOpPrefixMapsToPdDist) {
  EXPECT_EQ(DialectOfOpName("dist_op.reshard"), "pd_dist");
  EXPECT_EQ(DialectOfOpName("pd_op.matmul"), "pd_op");
  EXPECT_EQ(DialectOfOpName("builtin.combine"), "builtin");
  EXPECT_EQ(DialectOfOpName("nodot"), "");
  EXPECT_EQ(OpNamePrefixOfDialect("pd_dist"), "dist_op");
  EXPECT_EQ(OpNamePrefixOfDialect("pd_op"), "pd_op");
  EXPECT_EQ(DialectJsonId(DialectOfOpName("dist_op.reshard")), 4);
}

TEST(PdOpDialectTest, MatmulSignature) {
  const OpInfo& m = Get("pd_op.matmul");
  EXPECT_THAT(OperandNames(m), ::testing::ElementsAre("x", "y"));
  EXPECT_THAT(ResultNames(m), ::testing::ElementsAre("out"));
  EXPECT_THAT(AttrNames(m), ::testing::ElementsAre("transpose_x", "transpose_y"));
  const AttrSpec* tx = m.FindAttribute("transpose_x");
  ASSERT_NE(tx, nullptr);
  EXPECT_EQ(tx->kind, AttrKind::kBool);
  EXPECT_FALSE(tx->required);
  EXPECT_EQ(tx->default_value, Attribute::Bool(false));
  EXPECT_FALSE(m.inplace);
  EXPECT_FALSE(m.side_effect);
  EXPECT_EQ(m.num_regions, 0u);
  const OpInfo& g = Get("pd_op.matmul_grad");
  EXPECT_THAT(OperandNames(g), ::testing::ElementsAre("x", "y", "out_grad"));
  EXPECT_THAT(ResultNames(g), ::testing::ElementsAre("x_grad", "y_grad"));
}

TEST(PdOpDialectTest, AdamSignature) {
  const OpInfo& a = Get("pd_op.adam_");
  EXPECT_TRUE(a.inplace);
  EXPECT_THAT(OperandNames(a),
              ::testing::ElementsAre("param", "grad", "learning_rate", "moment1", "moment2",
                                     "moment2_max", "beta1_pow", "beta2_pow", "master_param",
                                     "skip_update", "beta1", "beta2", "epsilon"));
  std::vector<std::string> optional;
  for (const OperandSpec& o : a.operands) {
    if (o.optional) optional.push_back(o.name);
  }
  EXPECT_THAT(optional, ::testing::ElementsAre("moment2_max", "master_param", "skip_update"));
  EXPECT_THAT(ResultNames(a),
              ::testing::ElementsAre("param_out", "moment1_out", "moment2_out", "moment2_max_out",
                                     "beta1_pow_out", "beta2_pow_out", "master_param_out"));
  const AttrSpec* rows = a.FindAttribute("min_row_size_to_use_multithread");
  ASSERT_NE(rows, nullptr);
  EXPECT_EQ(rows->default_value, Attribute::Int64(1000));
  EXPECT_EQ(Tables().Lookup("pd_op.adam"), nullptr);  // only the in-place form exists
  const OpInfo& w = Get("pd_op.adamw_");
  EXPECT_EQ(w.FindAttribute("coeff")->default_value, Attribute::Float(0.01f));
  EXPECT_EQ(w.FindAttribute("with_decay")->kind, AttrKind::kBool);
  EXPECT_EQ(w.operands.size(), 13u);
}

TEST(PdOpDialectTest, CommunicationSignatures) {
  const OpInfo& ar = Get("pd_op.all_reduce");
  EXPECT_THAT(OperandNames(ar), ::testing::ElementsAre("x"));
  EXPECT_THAT(AttrNames(ar), ::testing::ElementsAre("ring_id", "reduce_type"));
  EXPECT_EQ(ar.FindAttribute("reduce_type")->default_value, Attribute::Int32(0));
  EXPECT_TRUE(ar.side_effect);
  EXPECT_FALSE(ar.inplace);

  const OpInfo& c = Get("pd_op.c_allreduce_sum_");
  EXPECT_TRUE(c.inplace);
  EXPECT_TRUE(c.side_effect);
  EXPECT_THAT(OperandNames(c), ::testing::ElementsAre("x"));
  EXPECT_THAT(ResultNames(c), ::testing::ElementsAre("out"));
  EXPECT_THAT(AttrNames(c),
              ::testing::ElementsAre("ring_id", "use_calc_stream", "use_model_parallel"));
  EXPECT_FALSE(Get("pd_op.c_allreduce_sum").inplace);
  EXPECT_TRUE(Get("pd_op.send_v2").results.empty());
  EXPECT_TRUE(Get("pd_op.recv_v2").operands.empty());
  EXPECT_EQ(Get("pd_op.recv_v2").FindAttribute("dtype")->kind, AttrKind::kDataType);
}

// paddle/phi/ops/yaml/inconsistent/static_ops.yaml (c_embedding), static_backward.yaml
// (c_embedding_grad: start_index only), ops.yaml and backward.yaml (the cross entropy).
TEST(PdOpDialectTest, VocabParallelOpsHavePaddleSignatures) {
  const OpInfo& embedding = Get("pd_op.c_embedding");
  EXPECT_THAT(OperandNames(embedding), ::testing::ElementsAre("weight", "x"));
  EXPECT_THAT(ResultNames(embedding), ::testing::ElementsAre("out"));
  EXPECT_THAT(AttrNames(embedding), ::testing::ElementsAre("start_index", "vocab_size"));
  EXPECT_EQ(embedding.FindAttribute("start_index")->kind, AttrKind::kInt64);
  EXPECT_EQ(embedding.FindAttribute("vocab_size")->default_value, Attribute::Int64(-1));
  const OpInfo& embedding_grad = Get("pd_op.c_embedding_grad");
  EXPECT_THAT(OperandNames(embedding_grad), ::testing::ElementsAre("weight", "x", "out_grad"));
  EXPECT_THAT(ResultNames(embedding_grad), ::testing::ElementsAre("weight_grad"));
  EXPECT_THAT(AttrNames(embedding_grad), ::testing::ElementsAre("start_index"));
  const OpInfo& ce = Get("pd_op.c_softmax_with_cross_entropy");
  EXPECT_THAT(OperandNames(ce), ::testing::ElementsAre("logits", "label"));
  EXPECT_THAT(ResultNames(ce), ::testing::ElementsAre("softmax", "loss"));
  EXPECT_THAT(AttrNames(ce), ::testing::ElementsAre("ignore_index", "ring_id", "rank", "nranks"));
  EXPECT_EQ(ce.FindAttribute("ignore_index")->default_value, Attribute::Int64(-100));
  EXPECT_EQ(ce.FindAttribute("nranks")->default_value, Attribute::Int32(0));
  const OpInfo& ce_grad = Get("pd_op.c_softmax_with_cross_entropy_grad");
  EXPECT_THAT(OperandNames(ce_grad), ::testing::ElementsAre("softmax", "label", "loss_grad"));
  EXPECT_THAT(ResultNames(ce_grad), ::testing::ElementsAre("logits_grad"));
  EXPECT_THAT(AttrNames(ce_grad),
              ::testing::ElementsAre("ignore_index", "ring_id", "rank", "nranks"));
}

TEST(PdOpDialectTest, InplaceNamesEndWithUnderscoreAndCommOpsHaveSideEffects) {
  const std::set<std::string> comm = {
      "all_reduce",       "all_reduce_",       "all_gather",      "reduce_scatter",
      "broadcast",        "broadcast_",        "all_to_all",      "p_send",
      "p_recv",           "barrier",           "c_allreduce_sum", "c_allreduce_sum_",
      "c_allreduce_max",  "c_allreduce_max_",  "c_allreduce_min", "c_allreduce_min_",
      "c_allreduce_prod", "c_allreduce_prod_", "c_allgather",     "c_reducescatter",
      "c_broadcast",      "c_broadcast_",      "c_identity",      "c_identity_",
      "c_split",          "c_concat",          "send_v2",         "recv_v2"};
  // A computation whose all-reduces every rank of its ring must reach.
  const std::string parallel_cross_entropy = "c_softmax_with_cross_entropy";
  // Stream synchronization orders the communication around it: kept like it.
  const std::set<std::string> stream_sync = {"sync_calc_stream_", "sync_comm_stream_"};
  size_t inplace = 0;
  for (const OpInfo* info : Tables().OpsOfDialect("pd_op")) {
    const bool underscore = info->name.back() == '_';
    EXPECT_EQ(info->inplace, underscore) << info->name;
    // The catalog's ops carry Paddle's own SideEffectTrait (pd_op_catalog_test.cc).
    if (IsPdOpCatalogOnly(info->name)) continue;
    inplace += info->inplace ? 1 : 0;
    const std::string short_name = info->name.substr(std::string("pd_op.").size());
    // Besides communication, the program's inputs and fetch must survive dead-code elimination.
    const bool program_io = short_name == "fetch" || short_name == "data" || short_name == "feed";
    EXPECT_EQ(info->side_effect, comm.contains(short_name) || stream_sync.contains(short_name) ||
                                     program_io || short_name == parallel_cross_entropy)
        << info->name;
  }
  EXPECT_GE(inplace, 20u);
  for (const std::string& name : comm) EXPECT_NE(Tables().Lookup("pd_op." + name), nullptr);
  for (const std::string& name : stream_sync) {
    EXPECT_NE(Tables().Lookup("pd_op." + name), nullptr);
  }
}

TEST(PdOpDialectTest, ControlFlowRegionsAndMutableOperands) {
  const OpInfo& if_op = Get("pd_op.if");
  EXPECT_EQ(if_op.num_regions, 2u);
  EXPECT_THAT(OperandNames(if_op), ::testing::ElementsAre("cond"));
  EXPECT_TRUE(if_op.results.at(0).variadic);
  const OpInfo& while_op = Get("pd_op.while");
  EXPECT_EQ(while_op.num_regions, 1u);
  EXPECT_THAT(OperandNames(while_op), ::testing::ElementsAre("cond", "inputs"));
  EXPECT_TRUE(while_op.operands.at(1).variadic);
  EXPECT_FALSE(while_op.operands.at(0).variadic);

  // Mutable IntArray/Scalar attributes are operands; full keeps its own as attributes.
  EXPECT_THAT(OperandNames(Get("pd_op.reshape")), ::testing::ElementsAre("x", "shape"));
  EXPECT_THAT(ResultNames(Get("pd_op.reshape")), ::testing::ElementsAre("out", "xshape"));
  EXPECT_THAT(OperandNames(Get("pd_op.scale")), ::testing::ElementsAre("x", "scale"));
  EXPECT_THAT(OperandNames(Get("pd_op.concat")), ::testing::ElementsAre("x", "axis"));
  EXPECT_TRUE(Get("pd_op.concat").operands.at(0).variadic);
  EXPECT_THAT(OperandNames(Get("pd_op.split")), ::testing::ElementsAre("x", "sections", "axis"));
  EXPECT_THAT(AttrNames(Get("pd_op.full")),
              ::testing::ElementsAre("shape", "value", "dtype", "place"));
  EXPECT_EQ(Get("pd_op.full").FindAttribute("shape")->kind, AttrKind::kIntArray);
  EXPECT_EQ(Get("pd_op.full").FindAttribute("place")->default_value, Attribute::PlaceAttr(Place{}));
  EXPECT_THAT(ResultNames(Get("pd_op.layer_norm")),
              ::testing::ElementsAre("out", "mean", "variance"));
  EXPECT_THAT(ResultNames(Get("pd_op.cross_entropy_with_softmax")),
              ::testing::ElementsAre("softmax", "loss"));
  EXPECT_EQ(Get("pd_op.cross_entropy_with_softmax").FindAttribute("ignore_index")->default_value,
            Attribute::Int32(-100));
  EXPECT_EQ(Get("pd_op.cast").FindAttribute("dtype")->required, true);
  EXPECT_EQ(Get("pd_op.transpose").FindAttribute("perm")->kind, AttrKind::kArray);
}

// The ops gradient-merge, gradient-clipping and loop programs translate to (ops.yaml,
// backward.yaml, static_ops.yaml and the manual AddN_Op).
TEST(PdOpDialectTest, GradientMergeAndLoopOpSignatures) {
  for (const char* name : {"pd_op.maximum", "pd_op.remainder", "pd_op.remainder_"}) {
    SCOPED_TRACE(name);
    const OpInfo& op = Get(name);
    EXPECT_THAT(OperandNames(op), ::testing::ElementsAre("x", "y"));
    EXPECT_THAT(ResultNames(op), ::testing::ElementsAre("out"));
    EXPECT_TRUE(op.attributes.empty());
    EXPECT_EQ(op.verify, Get("pd_op.add").verify);  // broadcast-compatible shapes, like add
  }
  EXPECT_TRUE(Get("pd_op.remainder_").inplace);
  EXPECT_FALSE(Get("pd_op.remainder").inplace);
  EXPECT_EQ(Tables().Lookup("pd_op.maximum_"), nullptr);  // the yaml has no in-place maximum

  for (const char* name : {"pd_op.sqrt", "pd_op.sqrt_", "pd_op.squared_l2_norm", "pd_op.share_data",
                           "pd_op.share_data_", "pd_op.sync_calc_stream_"}) {
    SCOPED_TRACE(name);
    const OpInfo& op = Get(name);
    EXPECT_THAT(OperandNames(op), ::testing::ElementsAre("x"));
    EXPECT_THAT(ResultNames(op), ::testing::ElementsAre("out"));
    EXPECT_TRUE(op.attributes.empty());
    EXPECT_FALSE(op.operands.at(0).variadic);
  }
  EXPECT_EQ(Tables().Lookup("pd_op.squared_l2_norm_"), nullptr);
  EXPECT_TRUE(Get("pd_op.share_data_").inplace);
  EXPECT_FALSE(Get("pd_op.share_data_").side_effect);
  // The hand row is the in-place form only; ops.yaml's `inplace:` makes Paddle register the
  // plain form too, which comes from the catalog.
  EXPECT_TRUE(IsPdOpCatalogOnly("pd_op.sync_calc_stream"));
  EXPECT_FALSE(IsPdOpCatalogOnly("pd_op.sync_calc_stream_"));

  for (const char* name : {"pd_op.tril_grad", "pd_op.triu_grad"}) {
    SCOPED_TRACE(name);
    const OpInfo& op = Get(name);
    EXPECT_THAT(OperandNames(op), ::testing::ElementsAre("out_grad"));
    EXPECT_THAT(ResultNames(op), ::testing::ElementsAre("x_grad"));
    EXPECT_THAT(AttrNames(op), ::testing::ElementsAre("diagonal"));
    EXPECT_EQ(op.FindAttribute("diagonal")->kind, AttrKind::kInt32);
    EXPECT_TRUE(op.FindAttribute("diagonal")->required);
    EXPECT_FALSE(op.inplace);
  }

  for (const char* name : {"pd_op.increment", "pd_op.increment_"}) {
    SCOPED_TRACE(name);
    const OpInfo& op = Get(name);
    EXPECT_THAT(OperandNames(op), ::testing::ElementsAre("x"));
    EXPECT_THAT(AttrNames(op), ::testing::ElementsAre("value"));
    EXPECT_EQ(op.FindAttribute("value")->default_value, Attribute::Float(1.0f));
  }
  EXPECT_FALSE(Get("pd_op.increment").inplace);
  EXPECT_TRUE(Get("pd_op.increment_").inplace);

  const OpInfo& add_n = Get("pd_op.add_n_");
  EXPECT_TRUE(add_n.inplace);
  EXPECT_FALSE(add_n.side_effect);
  EXPECT_THAT(OperandNames(add_n), ::testing::ElementsAre("inputs"));
  EXPECT_TRUE(add_n.operands.at(0).variadic);
  EXPECT_THAT(ResultNames(add_n), ::testing::ElementsAre("out"));
  EXPECT_FALSE(add_n.results.at(0).variadic);

  const OpInfo& comm = Get("pd_op.sync_comm_stream_");
  EXPECT_TRUE(comm.inplace);
  EXPECT_TRUE(comm.side_effect);
  EXPECT_THAT(OperandNames(comm), ::testing::ElementsAre("x"));
  EXPECT_TRUE(comm.operands.at(0).variadic);
  EXPECT_THAT(ResultNames(comm), ::testing::ElementsAre("out"));
  EXPECT_TRUE(comm.results.at(0).variadic);
  EXPECT_THAT(AttrNames(comm), ::testing::ElementsAre("ring_id"));
  EXPECT_EQ(comm.FindAttribute("ring_id")->default_value, Attribute::Int32(0));
  const OpInfo& calc = Get("pd_op.sync_calc_stream_");
  EXPECT_TRUE(calc.inplace);
  EXPECT_TRUE(calc.side_effect);
}

// static_ops.yaml's set_value, ops.yaml's set_value_with_tensor (both with inplace x -> out),
// static_backward.yaml's set_value_grad and backward.yaml's set_value_with_tensor_grad.
TEST(PdOpDialectTest, SetValueSignatures) {
  for (const char* name : {"pd_op.set_value", "pd_op.set_value_"}) {
    SCOPED_TRACE(name);
    const OpInfo& op = Get(name);
    EXPECT_THAT(OperandNames(op), ::testing::ElementsAre("x", "starts", "ends", "steps"));
    EXPECT_THAT(ResultNames(op), ::testing::ElementsAre("out"));
    EXPECT_THAT(AttrNames(op),
                ::testing::ElementsAre("axes", "decrease_axes", "none_axes", "shape", "values"));
    EXPECT_FALSE(op.operands.at(0).int_array);
    for (size_t i = 1; i < 4; ++i) EXPECT_TRUE(op.operands.at(i).int_array) << i;
    for (const char* attr : {"axes", "decrease_axes", "none_axes", "shape"}) {
      const AttrSpec* spec = op.FindAttribute(attr);
      ASSERT_NE(spec, nullptr) << attr;
      EXPECT_TRUE(spec->required) << attr;
      EXPECT_EQ(spec->kind, AttrKind::kArray) << attr;
      EXPECT_EQ(spec->element_kind, AttrKind::kInt64) << attr;
    }
    EXPECT_TRUE(op.FindAttribute("values")->required);
    EXPECT_EQ(op.FindAttribute("values")->kind, AttrKind::kArray);
  }
  for (const char* name : {"pd_op.set_value_with_tensor", "pd_op.set_value_with_tensor_"}) {
    SCOPED_TRACE(name);
    const OpInfo& op = Get(name);
    EXPECT_THAT(OperandNames(op), ::testing::ElementsAre("x", "values", "starts", "ends", "steps"));
    EXPECT_THAT(ResultNames(op), ::testing::ElementsAre("out"));
    EXPECT_THAT(AttrNames(op), ::testing::ElementsAre("axes", "decrease_axes", "none_axes"));
    EXPECT_FALSE(op.operands.at(1).int_array);
    EXPECT_TRUE(op.operands.at(2).int_array);
  }
  EXPECT_TRUE(Get("pd_op.set_value_").inplace);
  EXPECT_FALSE(Get("pd_op.set_value").inplace);
  EXPECT_TRUE(Get("pd_op.set_value_with_tensor_").inplace);
  EXPECT_FALSE(Get("pd_op.set_value_with_tensor").inplace);

  const OpInfo& grad = Get("pd_op.set_value_grad");
  EXPECT_THAT(OperandNames(grad), ::testing::ElementsAre("out_grad"));
  EXPECT_THAT(ResultNames(grad), ::testing::ElementsAre("x_grad"));
  EXPECT_TRUE(grad.attributes.empty());
  const OpInfo& tensor_grad = Get("pd_op.set_value_with_tensor_grad");
  EXPECT_THAT(OperandNames(tensor_grad),
              ::testing::ElementsAre("values", "out_grad", "starts", "ends", "steps"));
  EXPECT_THAT(ResultNames(tensor_grad), ::testing::ElementsAre("x_grad", "values_grad"));
  EXPECT_TRUE(tensor_grad.results.at(0).optional);
  EXPECT_TRUE(tensor_grad.results.at(1).optional);
  EXPECT_THAT(AttrNames(tensor_grad), ::testing::ElementsAre("axes", "decrease_axes", "none_axes"));
  EXPECT_EQ(Tables().Lookup("pd_op.set_value_grad_"), nullptr);
}

TEST(PdOpDialectTest, DistReshardSignature) {
  const OpInfo& r = Get("dist_op.reshard");
  EXPECT_THAT(OperandNames(r), ::testing::ElementsAre("x"));
  EXPECT_THAT(ResultNames(r), ::testing::ElementsAre("out"));
  const AttrSpec* a = r.FindAttribute("op_dist_attr");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->kind, AttrKind::kOperationDist);
  EXPECT_TRUE(a->required);
  EXPECT_THAT(OperandNames(Get("dist_op.shard_tensor")), ::testing::ElementsAre("input"));
}

TEST(PdOpDialectTest, BuilderResolvesOpsAgainstTheTables) {
  Program p;
  Builder b(p.block(), Tables());
  const Type t = Type::DenseTensor(Type::F32(), {4, 8});
  Operation* x = b.Create("pd_op.data", {}, {t},
                          {{"name", Attribute::String("x")},
                           {"shape", Attribute::IntArrayAttr({4, 8})},
                           {"dtype", Attribute::DataTypeAttr(DataType::kFloat32)}});
  Operation* mm =
      b.Create("pd_op.matmul", {x->result(0), x->result(0)},
               {Type::DenseTensor(Type::F32(), {4, 4})}, {{"transpose_y", Attribute::Bool(true)}});
  Operation* ar = b.Create("pd_op.c_allreduce_sum_", {mm->result(0)}, {mm->result(0)->type()});
  Operation* cond = b.Create("pd_op.full", {}, {Type::DenseTensor(Type::Bool(), {1})});
  Operation* if_op = b.Create("pd_op.if", {cond->result(0)}, {}, {}, 2);
  Operation* unknown = b.Create("pd_op.not_an_op", {}, {});
  ASSERT_EQ(mm->info(), Tables().Lookup("pd_op.matmul"));
  EXPECT_EQ(x->info()->name, "pd_op.data");
  EXPECT_TRUE(ar->info()->side_effect);
  EXPECT_TRUE(ar->info()->inplace);
  EXPECT_EQ(if_op->info()->num_regions, 2u);
  EXPECT_EQ(if_op->num_regions(), 2u);
  EXPECT_EQ(unknown->info(), nullptr);
}

}  // namespace
}  // namespace irm::newir
