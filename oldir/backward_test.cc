// Tests of append_backward: the exact grad-op layout Paddle's backward.py writes (types, slots,
// roles, op_role_var, grad var declarations, @RENAME@ partials and their sums), the pruning of
// stop_gradient / no-grad / unused branches, the grad makers, and the errors. Every expectation
// below was derived by hand from backward.py and the grad makers, not from this code's output.
#include "oldir/backward.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "oldir/dump.h"
#include "oldir/program.h"
#include "oldir/validator.h"

namespace irm::oldir {
namespace {

using Strings = std::vector<std::string>;
constexpr auto kFp32 = proto::VarType::FP32;

// "X=[a, b], Y=[]": slots in stored order.
std::string Slots(const google::protobuf::RepeatedPtrField<proto::OpDesc::Var>& slots) {
  Strings parts;
  for (const proto::OpDesc::Var& slot : slots) {
    parts.push_back(fmt::format("{}=[{}]", slot.parameter(), fmt::join(slot.arguments(), ", ")));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

// "type(inputs) -> (outputs)".
std::string Summary(const proto::OpDesc& op) {
  return fmt::format("{}({}) -> ({})", op.type(), Slots(op.inputs()), Slots(op.outputs()));
}

// The ops from index `first` on, summarised.
Strings OpsFrom(const ProgramBuilder& b, int first) {
  Strings out;
  const proto::BlockDesc& block = b.desc().blocks(0);
  for (int i = first; i < block.ops_size(); ++i) out.push_back(Summary(block.ops(i)));
  return out;
}

std::vector<int> RolesFrom(const ProgramBuilder& b, int first) {
  std::vector<int> out;
  const proto::BlockDesc& block = b.desc().blocks(0);
  for (int i = first; i < block.ops_size(); ++i) out.push_back(Op(&block.ops(i)).role());
  return out;
}

// Op `i` of the root block; an empty op (and a test failure) when there is none.
const proto::OpDesc& OpAt(const ProgramBuilder& b, int i) {
  static const proto::OpDesc kNone;
  const proto::BlockDesc& block = b.desc().blocks(0);
  if (i >= 0 && i < block.ops_size()) return block.ops(i);
  ADD_FAILURE() << "no op " << i << " (the block has " << block.ops_size() << ")";
  return kNone;
}

Strings RoleVar(const ProgramBuilder& b, int op) {
  return Op(&OpAt(b, op)).AttrOr<Strings>(kOpRoleVarAttr, {"(missing)"});
}

Strings VarsFrom(const ProgramBuilder& b, int first) {
  Strings out;
  const proto::BlockDesc& block = b.desc().blocks(0);
  for (int i = first; i < block.vars_size(); ++i) out.push_back(block.vars(i).name());
  return out;
}

Strings AttrNames(const ProgramBuilder& b, int op) {
  Strings out;
  for (const auto& attr : OpAt(b, op).attrs()) out.push_back(attr.name());
  return out;
}

template <typename T>
T AttrOf(const ProgramBuilder& b, int op, const std::string& name) {
  StatusOr<T> value = Op(&OpAt(b, op)).Attr<T>(name);
  EXPECT_TRUE(value.ok()) << name << ": " << value.status().ToString();
  return value.ok() ? *value : T{};
}

const proto::VarDesc* FindVar(const ProgramBuilder& b, const std::string& name) {
  for (const proto::VarDesc& var : b.desc().blocks(0).vars()) {
    if (var.name() == name) return &var;
  }
  return nullptr;
}

std::vector<int64_t> DimsOf(const ProgramBuilder& b, const std::string& name) {
  const proto::VarDesc* var = FindVar(b, name);
  return var == nullptr ? std::vector<int64_t>{-999} : Var(var).dims();
}

void Data(ProgramBuilder& b, const std::string& name, std::vector<int64_t> dims,
          proto::VarType::Type dtype = kFp32) {
  b.root().CreateVar(name, dtype, dims, {.stop_gradient = true, .need_check_feed = true});
}

void Param(ProgramBuilder& b, const std::string& name, std::vector<int64_t> dims) {
  b.root().CreateVar(name, kFp32, dims, {.persistable = true, .is_parameter = true});
}

void Tmp(ProgramBuilder& b, const std::string& name, std::vector<int64_t> dims,
         proto::VarType::Type dtype = kFp32) {
  b.root().CreateVar(name, dtype, dims);
}

void ExpectValid(const ProgramBuilder& b) {
  const Program program = b.Build();
  const Diagnostics findings = ValidateProgram(program);
  EXPECT_TRUE(findings.empty()) << findings.Render() << DumpProgram(program);
}

// x @ w + b, mean: the program every optimizer test starts from.
void BuildLinear(ProgramBuilder& b) {
  Data(b, "x", {-1, 4});
  Param(b, "w", {4, 3});
  Param(b, "b", {3});
  Tmp(b, "h", {-1, 3});
  Tmp(b, "y", {-1, 3});
  Tmp(b, "loss", {});
  b.root().AppendOp("matmul_v2", {{"X", {"x"}}, {"Y", {"w"}}}, {{"Out", {"h"}}},
                    {{"trans_x", false}, {"trans_y", false}});
  b.root().AppendOp("elementwise_add", {{"X", {"h"}}, {"Y", {"b"}}}, {{"Out", {"y"}}},
                    {{"axis", -1}});
  b.root().AppendOp("mean", {{"X", {"y"}}}, {{"Out", {"loss"}}});
}

TEST(AppendBackwardTest, LinearModel) {
  ProgramBuilder b;
  BuildLinear(b);
  StatusOr<std::vector<ParamGrad>> result = AppendBackward(b, "loss");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(*result, (std::vector<ParamGrad>{{"w", "w@GRAD"}, {"b", "b@GRAD"}}));

  EXPECT_EQ(OpsFrom(b, 0),
            (Strings{
                "matmul_v2(X=[x], Y=[w]) -> (Out=[h])",
                "elementwise_add(X=[h], Y=[b]) -> (Out=[y])",
                "mean(X=[y]) -> (Out=[loss])",
                "fill_constant() -> (Out=[loss@GRAD])",
                "mean_grad(Out@GRAD=[loss@GRAD], X=[y]) -> (X@GRAD=[y@GRAD])",
                "elementwise_add_grad(Out@GRAD=[y@GRAD], X=[h], Y=[b]) -> "
                "(X@GRAD=[h@GRAD], Y@GRAD=[b@GRAD])",
                // x is fed data (stop_gradient): its gradient slot stays, empty.
                "matmul_v2_grad(Out@GRAD=[h@GRAD], X=[x], Y=[w]) -> (X@GRAD=[], Y@GRAD=[w@GRAD])",
            }))
      << DumpProgram(b.Build());
  EXPECT_EQ(RolesFrom(b, 0), (std::vector<int>{0, 0, 256, 257, 1, 1, 1}));
  EXPECT_EQ(RoleVar(b, 3), Strings{});
  EXPECT_EQ(RoleVar(b, 4), Strings{});
  EXPECT_EQ(RoleVar(b, 5), (Strings{"b", "b@GRAD"}));
  EXPECT_EQ(RoleVar(b, 6), (Strings{"w", "w@GRAD"}));

  // The seed: a 0-D loss gets shape [] (LONGS), value 1.0, the loss dtype.
  EXPECT_EQ(AttrOf<std::vector<int64_t>>(b, 3, "shape"), std::vector<int64_t>{});
  EXPECT_EQ(AttrOf<float>(b, 3, "value"), 1.0f);
  EXPECT_EQ(AttrOf<int32_t>(b, 3, "dtype"), 5);
  // Grad ops carry the forward attributes (SetAttrMap); mean's maker sets none.
  EXPECT_EQ(AttrOf<int32_t>(b, 5, "axis"), -1);
  EXPECT_EQ(AttrNames(b, 5), (Strings{"axis", "op_callstack", "op_device", "op_namescope",
                                      "op_role", "op_role_var", "with_quant_attr"}));
  EXPECT_EQ(AttrOf<bool>(b, 6, "trans_x"), false);
  EXPECT_EQ(AttrOf<bool>(b, 6, "trans_y"), false);
  EXPECT_EQ(AttrNames(b, 4), (Strings{"op_callstack", "op_device", "op_namescope", "op_role",
                                      "op_role_var", "with_quant_attr"}));

  // Grad vars, in the order the grad ops write them, with the forward var's dtype and shape.
  EXPECT_EQ(VarsFrom(b, 6), (Strings{"loss@GRAD", "y@GRAD", "h@GRAD", "b@GRAD", "w@GRAD"}));
  EXPECT_EQ(DimsOf(b, "loss@GRAD"), std::vector<int64_t>{});
  EXPECT_EQ(DimsOf(b, "y@GRAD"), (std::vector<int64_t>{-1, 3}));
  EXPECT_EQ(DimsOf(b, "w@GRAD"), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(DimsOf(b, "b@GRAD"), (std::vector<int64_t>{3}));
  const proto::VarDesc* w_grad = FindVar(b, "w@GRAD");
  ASSERT_NE(w_grad, nullptr);
  EXPECT_EQ(Var(w_grad).dtype(), kFp32);
  EXPECT_FALSE(w_grad->persistable());
  EXPECT_FALSE(w_grad->stop_gradient());
  EXPECT_EQ(FindVar(b, "x@GRAD"), nullptr);
  ExpectValid(b);
}

// A var read by two ops gets two partial gradients, summed right before the first grad op that
// reads the total: here after the grad of an unrelated op (scale of p) that comes in between.
TEST(AppendBackwardTest, FanOutIsSummedBeforeTheFirstReader) {
  ProgramBuilder b;
  Param(b, "w", {2, 2});
  Param(b, "p", {2, 2});
  for (const char* name : {"h", "t", "a", "bb", "c", "d"}) Tmp(b, name, {2, 2});
  Tmp(b, "loss", {1});
  auto scale = [](float s) -> AttrList {
    return {{"scale", s}, {"bias", 0.0f}, {"bias_after_scale", true}};
  };
  b.root().AppendOp("scale", {{"X", {"w"}}}, {{"Out", {"h"}}}, scale(2.0f));
  b.root().AppendOp("scale", {{"X", {"p"}}}, {{"Out", {"t"}}}, scale(3.0f));
  b.root().AppendOp("tanh", {{"X", {"h"}}}, {{"Out", {"a"}}});
  b.root().AppendOp("sigmoid", {{"X", {"h"}}}, {{"Out", {"bb"}}});
  b.root().AppendOp("elementwise_add", {{"X", {"a"}}, {"Y", {"bb"}}}, {{"Out", {"c"}}},
                    {{"axis", -1}});
  b.root().AppendOp("elementwise_add", {{"X", {"c"}}, {"Y", {"t"}}}, {{"Out", {"d"}}},
                    {{"axis", -1}});
  b.root().AppendOp(
      "reduce_mean", {{"X", {"d"}}}, {{"Out", {"loss"}}},
      {{"dim", std::vector<int32_t>{0, 1}}, {"keep_dim", false}, {"reduce_all", true}});
  StatusOr<std::vector<ParamGrad>> result = AppendBackward(b, "loss");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(*result, (std::vector<ParamGrad>{{"w", "w@GRAD"}, {"p", "p@GRAD"}}));
  EXPECT_EQ(OpsFrom(b, 7),
            (Strings{
                "fill_constant() -> (Out=[loss@GRAD])",
                "reduce_mean_grad(Out@GRAD=[loss@GRAD], X=[d]) -> (X@GRAD=[d@GRAD])",
                "elementwise_add_grad(Out@GRAD=[d@GRAD], X=[c], Y=[t]) -> "
                "(X@GRAD=[c@GRAD], Y@GRAD=[t@GRAD])",
                "elementwise_add_grad(Out@GRAD=[c@GRAD], X=[a], Y=[bb]) -> "
                "(X@GRAD=[a@GRAD], Y@GRAD=[bb@GRAD])",
                "sigmoid_grad(Out=[bb], Out@GRAD=[bb@GRAD]) -> (X@GRAD=[h@GRAD@RENAME@block0@0])",
                "tanh_grad(Out=[a], Out@GRAD=[a@GRAD]) -> (X@GRAD=[h@GRAD@RENAME@block0@1])",
                "scale(X=[t@GRAD]) -> (Out=[p@GRAD])",
                "sum(X=[h@GRAD@RENAME@block0@0, h@GRAD@RENAME@block0@1]) -> (Out=[h@GRAD])",
                "scale(X=[h@GRAD]) -> (Out=[w@GRAD])",
            }))
      << DumpProgram(b.Build());
  EXPECT_EQ(RolesFrom(b, 6), (std::vector<int>{256, 257, 1, 1, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(RoleVar(b, 13), (Strings{"p", "p@GRAD"}));
  EXPECT_EQ(RoleVar(b, 14), Strings{});
  EXPECT_EQ(RoleVar(b, 15), (Strings{"w", "w@GRAD"}));
  // A [1] loss seeds shape [1]. ScaleGradMaker: same scale, no bias.
  EXPECT_EQ(AttrOf<std::vector<int64_t>>(b, 7, "shape"), std::vector<int64_t>{1});
  EXPECT_EQ(AttrOf<float>(b, 15, "scale"), 2.0f);
  EXPECT_EQ(AttrOf<float>(b, 15, "bias"), 0.0f);
  EXPECT_EQ(AttrOf<bool>(b, 15, "bias_after_scale"), true);
  EXPECT_EQ(AttrOf<bool>(b, 14, "use_mkldnn"), false);
  EXPECT_EQ(VarsFrom(b, 9), (Strings{"loss@GRAD", "d@GRAD", "c@GRAD", "t@GRAD", "a@GRAD", "bb@GRAD",
                                     "h@GRAD@RENAME@block0@0", "h@GRAD@RENAME@block0@1", "p@GRAD",
                                     "h@GRAD", "w@GRAD"}));
  EXPECT_EQ(DimsOf(b, "h@GRAD@RENAME@block0@1"), (std::vector<int64_t>{2, 2}));
  ExpectValid(b);
}

// A parameter used by two ops: partials from both grad ops, summed at the end of the backward
// pass (nothing reads a parameter's gradient); op_role_var goes on the sum, the last op writing
// w@GRAD, as append_backward sets it. Grad ops, sums and the seed keep the forward op's device.
TEST(AppendBackwardTest, SharedParameterGradientIsSummed) {
  ProgramBuilder b;
  b.set_device("gpu:0");
  Data(b, "x", {-1, 2});
  Param(b, "w", {2, 2});
  Tmp(b, "h1", {-1, 2});
  Tmp(b, "h2", {-1, 2});
  Tmp(b, "loss", {});
  b.root().AppendOp("matmul_v2", {{"X", {"x"}}, {"Y", {"w"}}}, {{"Out", {"h1"}}},
                    {{"trans_x", false}, {"trans_y", false}});
  b.root().AppendOp("matmul_v2", {{"X", {"h1"}}, {"Y", {"w"}}}, {{"Out", {"h2"}}},
                    {{"trans_x", false}, {"trans_y", false}});
  b.root().AppendOp("mean", {{"X", {"h2"}}}, {{"Out", {"loss"}}});
  b.set_device("");
  StatusOr<std::vector<ParamGrad>> result = AppendBackward(b, "loss");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(*result, (std::vector<ParamGrad>{{"w", "w@GRAD"}}));
  EXPECT_EQ(OpsFrom(b, 3),
            (Strings{
                "fill_constant() -> (Out=[loss@GRAD])",
                "mean_grad(Out@GRAD=[loss@GRAD], X=[h2]) -> (X@GRAD=[h2@GRAD])",
                "matmul_v2_grad(Out@GRAD=[h2@GRAD], X=[h1], Y=[w]) -> "
                "(X@GRAD=[h1@GRAD], Y@GRAD=[w@GRAD@RENAME@block0@0])",
                "matmul_v2_grad(Out@GRAD=[h1@GRAD], X=[x], Y=[w]) -> "
                "(X@GRAD=[], Y@GRAD=[w@GRAD@RENAME@block0@1])",
                "sum(X=[w@GRAD@RENAME@block0@0, w@GRAD@RENAME@block0@1]) -> (Out=[w@GRAD])",
            }))
      << DumpProgram(b.Build());
  EXPECT_EQ(RolesFrom(b, 3), (std::vector<int>{257, 1, 1, 1, 1}));
  EXPECT_EQ(RoleVar(b, 5), Strings{});
  EXPECT_EQ(RoleVar(b, 6), Strings{});
  EXPECT_EQ(RoleVar(b, 7), (Strings{"w", "w@GRAD"}));
  for (int op = 3; op <= 7; ++op) {
    EXPECT_EQ(AttrOf<std::string>(b, op, kOpDeviceAttr), "gpu:0") << op;
  }
  EXPECT_EQ(b.device(), "");
  EXPECT_EQ(DimsOf(b, "w@GRAD@RENAME@block0@0"), (std::vector<int64_t>{2, 2}));
  ExpectValid(b);
}

// No gradient flows into a stop_gradient var, nor through it to what produced it.
TEST(AppendBackwardTest, StopGradientVarCutsThePath) {
  ProgramBuilder b;
  Param(b, "w", {3});
  Param(b, "b", {3});
  b.root().CreateVar("h", kFp32, {3}, {.stop_gradient = true});
  Tmp(b, "y", {3});
  Tmp(b, "loss", {});
  b.root().AppendOp("relu", {{"X", {"w"}}}, {{"Out", {"h"}}});
  b.root().AppendOp("elementwise_add", {{"X", {"h"}}, {"Y", {"b"}}}, {{"Out", {"y"}}},
                    {{"axis", -1}});
  b.root().AppendOp("mean", {{"X", {"y"}}}, {{"Out", {"loss"}}});
  StatusOr<std::vector<ParamGrad>> result = AppendBackward(b, "loss");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(*result, (std::vector<ParamGrad>{{"b", "b@GRAD"}}));
  EXPECT_EQ(OpsFrom(b, 3), (Strings{"fill_constant() -> (Out=[loss@GRAD])",
                                    "mean_grad(Out@GRAD=[loss@GRAD], X=[y]) -> (X@GRAD=[y@GRAD])",
                                    "elementwise_add_grad(Out@GRAD=[y@GRAD], X=[h], Y=[b]) -> "
                                    "(X@GRAD=[], Y@GRAD=[b@GRAD])"}))
      << DumpProgram(b.Build());
  EXPECT_EQ(FindVar(b, "h@GRAD"), nullptr);
  EXPECT_EQ(FindVar(b, "w@GRAD"), nullptr);
  EXPECT_EQ(RolesFrom(b, 0), (std::vector<int>{0, 0, 256, 257, 1, 1}));
  ExpectValid(b);
}

// Ops whose outputs never reach the loss get no grad op; a parameter only they read gets no
// gradient and is not returned.
TEST(AppendBackwardTest, UnusedBranchGetsNoGradOps) {
  ProgramBuilder b;
  Data(b, "x", {-1, 2});
  Param(b, "w", {2, 2});
  Param(b, "w2", {2, 2});
  for (const char* name : {"h", "u", "v"}) Tmp(b, name, {-1, 2});
  Tmp(b, "loss", {});
  b.root().AppendOp("matmul_v2", {{"X", {"x"}}, {"Y", {"w"}}}, {{"Out", {"h"}}},
                    {{"trans_x", false}, {"trans_y", false}});
  b.root().AppendOp("relu", {{"X", {"h"}}}, {{"Out", {"u"}}});
  b.root().AppendOp("matmul_v2", {{"X", {"u"}}, {"Y", {"w2"}}}, {{"Out", {"v"}}},
                    {{"trans_x", false}, {"trans_y", false}});
  b.root().AppendOp("mean", {{"X", {"h"}}}, {{"Out", {"loss"}}});
  StatusOr<std::vector<ParamGrad>> result = AppendBackward(b, "loss");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(*result, (std::vector<ParamGrad>{{"w", "w@GRAD"}}));
  EXPECT_EQ(OpsFrom(b, 4), (Strings{"fill_constant() -> (Out=[loss@GRAD])",
                                    "mean_grad(Out@GRAD=[loss@GRAD], X=[h]) -> (X@GRAD=[h@GRAD])",
                                    "matmul_v2_grad(Out@GRAD=[h@GRAD], X=[x], Y=[w]) -> "
                                    "(X@GRAD=[], Y@GRAD=[w@GRAD])"}))
      << DumpProgram(b.Build());
  EXPECT_EQ(RolesFrom(b, 0), (std::vector<int>{0, 0, 0, 256, 257, 1, 1}));
  EXPECT_EQ(FindVar(b, "w2@GRAD"), nullptr);
  EXPECT_EQ(FindVar(b, "u@GRAD"), nullptr);
  ExpectValid(b);
}

TEST(AppendBackwardTest, NoGradVarsStopGradients) {
  {  // A parameter in no_grad_vars: its gradient slot is emptied and it is not returned.
    ProgramBuilder b;
    BuildLinear(b);
    StatusOr<std::vector<ParamGrad>> result = AppendBackward(b, "loss", {.no_grad_vars = {"b"}});
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(*result, (std::vector<ParamGrad>{{"w", "w@GRAD"}}));
    EXPECT_EQ(OpsFrom(b, 5), (Strings{"elementwise_add_grad(Out@GRAD=[y@GRAD], X=[h], Y=[b]) -> "
                                      "(X@GRAD=[h@GRAD], Y@GRAD=[])",
                                      "matmul_v2_grad(Out@GRAD=[h@GRAD], X=[x], Y=[w]) -> "
                                      "(X@GRAD=[], Y@GRAD=[w@GRAD])"}));
    EXPECT_EQ(RoleVar(b, 5), Strings{});
    EXPECT_EQ(FindVar(b, "b@GRAD"), nullptr);
    ExpectValid(b);
  }
  {  // An intermediate var: nothing upstream of it gets a gradient.
    ProgramBuilder b;
    BuildLinear(b);
    StatusOr<std::vector<ParamGrad>> result = AppendBackward(b, "loss", {.no_grad_vars = {"h"}});
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(*result, (std::vector<ParamGrad>{{"b", "b@GRAD"}}));
    EXPECT_EQ(OpsFrom(b, 3), (Strings{"fill_constant() -> (Out=[loss@GRAD])",
                                      "mean_grad(Out@GRAD=[loss@GRAD], X=[y]) -> (X@GRAD=[y@GRAD])",
                                      "elementwise_add_grad(Out@GRAD=[y@GRAD], X=[h], Y=[b]) -> "
                                      "(X@GRAD=[], Y@GRAD=[b@GRAD])"}));
    ExpectValid(b);
  }
}

// layer_norm with both parameters: one grad op writes both gradients, and op_role_var holds
// both pairs, the later parameter first (append_backward prepends each pair).
TEST(AppendBackwardTest, OneGradOpWritingTwoParameterGradients) {
  ProgramBuilder b;
  Data(b, "x", {-1, 8});
  Param(b, "ln.w", {8});
  Param(b, "ln.b", {8});
  Tmp(b, "y", {-1, 8});
  b.root().CreateVar("y.mean", kFp32, {-1}, {.stop_gradient = true});
  b.root().CreateVar("y.var", kFp32, {-1}, {.stop_gradient = true});
  Tmp(b, "loss", {});
  b.root().AppendOp("layer_norm", {{"X", {"x"}}, {"Scale", {"ln.w"}}, {"Bias", {"ln.b"}}},
                    {{"Y", {"y"}}, {"Mean", {"y.mean"}}, {"Variance", {"y.var"}}},
                    {{"epsilon", 1e-5f}, {"begin_norm_axis", 1}});
  b.root().AppendOp("mean", {{"X", {"y"}}}, {{"Out", {"loss"}}});
  StatusOr<std::vector<ParamGrad>> result = AppendBackward(b, "loss");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(*result, (std::vector<ParamGrad>{{"ln.w", "ln.w@GRAD"}, {"ln.b", "ln.b@GRAD"}}));
  EXPECT_EQ(OpsFrom(b, 4), (Strings{"layer_norm_grad(Bias=[ln.b], Mean=[y.mean], Scale=[ln.w], "
                                    "Variance=[y.var], X=[x], Y@GRAD=[y@GRAD]) -> "
                                    "(Bias@GRAD=[ln.b@GRAD], Scale@GRAD=[ln.w@GRAD], X@GRAD=[])"}))
      << DumpProgram(b.Build());
  EXPECT_EQ(RoleVar(b, 4), (Strings{"ln.b", "ln.b@GRAD", "ln.w", "ln.w@GRAD"}));
  EXPECT_EQ(AttrOf<float>(b, 4, "epsilon"), 1e-5f);
  EXPECT_EQ(AttrOf<int32_t>(b, 4, "begin_norm_axis"), 1);
  ExpectValid(b);
}

// An output of a path op that nothing reads (split's second half) becomes a no-grad var; the
// grad op still reads its gradient, so a zero fill_any_like is inserted before it. split's grad
// is a concat carrying split's attributes.
TEST(AppendBackwardTest, UnreadOutputGradientIsFilledWithZeros) {
  ProgramBuilder b;
  Param(b, "w", {4, 2});
  Tmp(b, "o1", {2, 2});
  Tmp(b, "o2", {2, 2});
  Tmp(b, "loss", {});
  b.root().AppendOp("split", {{"X", {"w"}}}, {{"Out", {"o1", "o2"}}},
                    {{"axis", 0}, {"num", 2}, {"sections", std::vector<int32_t>{}}});
  b.root().AppendOp("mean", {{"X", {"o1"}}}, {{"Out", {"loss"}}});
  StatusOr<std::vector<ParamGrad>> result = AppendBackward(b, "loss");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(*result, (std::vector<ParamGrad>{{"w", "w@GRAD"}}));
  EXPECT_EQ(OpsFrom(b, 2), (Strings{"fill_constant() -> (Out=[loss@GRAD])",
                                    "mean_grad(Out@GRAD=[loss@GRAD], X=[o1]) -> (X@GRAD=[o1@GRAD])",
                                    "fill_any_like(X=[o2]) -> (Out=[o2@GRAD])",
                                    "concat(X=[o1@GRAD, o2@GRAD]) -> (Out=[w@GRAD])"}))
      << DumpProgram(b.Build());
  EXPECT_EQ(RolesFrom(b, 2), (std::vector<int>{257, 1, 1, 1}));
  EXPECT_EQ(AttrOf<float>(b, 4, "value"), 0.0f);
  EXPECT_EQ(AttrOf<int32_t>(b, 4, "dtype"), -1);
  EXPECT_EQ(AttrOf<int32_t>(b, 5, "axis"), 0);
  EXPECT_EQ(AttrOf<int32_t>(b, 5, "num"), 2);
  EXPECT_EQ(RoleVar(b, 5), (Strings{"w", "w@GRAD"}));
  EXPECT_EQ(VarsFrom(b, 4), (Strings{"loss@GRAD", "o1@GRAD", "o2@GRAD", "w@GRAD"}));
  ExpectValid(b);
}

// sum's grad is one scale per input; the one for a no-grad input writes @EMPTY@ and is dropped.
// concat's grad keeps @EMPTY@ in place of the no-grad input's gradient.
TEST(AppendBackwardTest, DuplicableSlotsKeepOrDropEmptyGradients) {
  ProgramBuilder b;
  Data(b, "x", {2, 2});
  Param(b, "w", {2, 2});
  Tmp(b, "s", {2, 2});
  Tmp(b, "c", {4, 2});
  Tmp(b, "m", {});
  Tmp(b, "loss", {});
  b.root().AppendOp("sum", {{"X", {"w", "x"}}}, {{"Out", {"s"}}});
  b.root().AppendOp("concat", {{"X", {"s", "x"}}}, {{"Out", {"c"}}}, {{"axis", 0}});
  b.root().AppendOp("mean", {{"X", {"c"}}}, {{"Out", {"loss"}}});
  StatusOr<std::vector<ParamGrad>> result = AppendBackward(b, "loss");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(OpsFrom(b, 3),
            (Strings{"fill_constant() -> (Out=[loss@GRAD])",
                     "mean_grad(Out@GRAD=[loss@GRAD], X=[c]) -> (X@GRAD=[c@GRAD])",
                     "concat_grad(Out@GRAD=[c@GRAD], X=[s, x]) -> (X@GRAD=[s@GRAD, @EMPTY@])",
                     "scale(X=[s@GRAD]) -> (Out=[w@GRAD])"}))
      << DumpProgram(b.Build());
  EXPECT_EQ(AttrOf<float>(b, 6, "scale"), 1.0f);
  EXPECT_EQ(RoleVar(b, 6), (Strings{"w", "w@GRAD"}));
  EXPECT_EQ(FindVar(b, "@EMPTY@"), nullptr);
  ExpectValid(b);
}

// _find_not_need_ops: a chain of grad ops that reads only the loss gradient and never a forward
// var (here sum's scale into w1's gradient) is dropped when other grad ops remain. This is
// Paddle's behaviour, kept as is: w1 gets no gradient.
TEST(AppendBackwardTest, GradIslandsReadingNoForwardVarAreDropped) {
  ProgramBuilder b;
  Data(b, "x", {2, 2});
  Param(b, "w1", {});
  Param(b, "w2", {2, 2});
  Tmp(b, "h", {2, 2});
  Tmp(b, "m", {});
  Tmp(b, "loss", {});
  b.root().AppendOp("matmul_v2", {{"X", {"x"}}, {"Y", {"w2"}}}, {{"Out", {"h"}}},
                    {{"trans_x", false}, {"trans_y", false}});
  b.root().AppendOp("mean", {{"X", {"h"}}}, {{"Out", {"m"}}});
  b.root().AppendOp("sum", {{"X", {"w1", "m"}}}, {{"Out", {"loss"}}});
  StatusOr<std::vector<ParamGrad>> result = AppendBackward(b, "loss");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(*result, (std::vector<ParamGrad>{{"w2", "w2@GRAD"}}));
  EXPECT_EQ(OpsFrom(b, 3), (Strings{"fill_constant() -> (Out=[loss@GRAD])",
                                    "scale(X=[loss@GRAD]) -> (Out=[m@GRAD])",
                                    "mean_grad(Out@GRAD=[m@GRAD], X=[h]) -> (X@GRAD=[h@GRAD])",
                                    "matmul_v2_grad(Out@GRAD=[h@GRAD], X=[x], Y=[w2]) -> "
                                    "(X@GRAD=[], Y@GRAD=[w2@GRAD])"}))
      << DumpProgram(b.Build());
  ExpectValid(b);
}

// The whole backward pass of a program is kept when it is one such island.
TEST(AppendBackwardTest, GradOnlyBackwardIsKeptWhole) {
  ProgramBuilder b;
  Param(b, "w", {3});
  Tmp(b, "loss", {3});
  b.root().AppendOp("scale", {{"X", {"w"}}}, {{"Out", {"loss"}}},
                    {{"scale", 4.0f}, {"bias", 1.0f}, {"bias_after_scale", true}});
  StatusOr<std::vector<ParamGrad>> result = AppendBackward(b, "loss");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(*result, (std::vector<ParamGrad>{{"w", "w@GRAD"}}));
  EXPECT_EQ(OpsFrom(b, 1), (Strings{"fill_constant() -> (Out=[loss@GRAD])",
                                    "scale(X=[loss@GRAD]) -> (Out=[w@GRAD])"}));
  EXPECT_EQ(AttrOf<std::vector<int64_t>>(b, 1, "shape"), std::vector<int64_t>{1});
  EXPECT_EQ(AttrOf<float>(b, 2, "scale"), 4.0f);
  EXPECT_EQ(AttrOf<float>(b, 2, "bias"), 0.0f);
  ExpectValid(b);
}

// Every grad maker at once, in a transformer-like chain; the layout below was worked out by hand
// from the makers and the renaming rules.
TEST(AppendBackwardTest, EveryGradMakerValidates) {
  ProgramBuilder b;
  Data(b, "ids", {-1, 8}, proto::VarType::INT64);
  Data(b, "label", {-1, 8, 1}, proto::VarType::INT64);
  Param(b, "emb", {100, 16});
  Param(b, "ln_w", {16});
  Param(b, "ln_b", {16});
  Param(b, "w", {16, 16});
  auto stop = [&](const std::string& name, std::vector<int64_t> dims,
                  proto::VarType::Type dtype = kFp32) {
    b.root().CreateVar(name, dtype, dims, {.stop_gradient = true});
  };
  const std::vector<int64_t> d3 = {-1, 8, 16}, d4 = {-1, 8, 4, 4}, d4t = {-1, 4, 8, 4},
                             d4h = {-1, 4, 8, 2};
  Tmp(b, "e", d3);
  Tmp(b, "n", d3);
  stop("n_mean", {-1});
  stop("n_var", {-1});
  Tmp(b, "r", d4);
  stop("r_xs", {0, -1, 8, 16});
  Tmp(b, "tr", d4t);
  stop("tr_xs", {0, -1, 8, 4, 4});
  Tmp(b, "dr", d4t);
  stop("dr_mask", d4t, proto::VarType::UINT8);
  Tmp(b, "g", d4t);
  Tmp(b, "c", d4t, proto::VarType::FP16);
  Tmp(b, "c2", d4t);
  Tmp(b, "s1", d4h);
  Tmp(b, "s2", d4h);
  for (const char* name : {"cc", "sl", "as", "sm", "tt", "su"}) Tmp(b, name, d4t);
  Tmp(b, "h", d3);
  stop("h_xs", {0, -1, 4, 8, 4});
  for (const char* name : {"m", "em", "dv", "rl", "swce_sm"}) Tmp(b, name, d3);
  Tmp(b, "swce_loss", {-1, 8, 1});
  Tmp(b, "rs", {-1});
  Tmp(b, "rm", {});
  Tmp(b, "loss", {});
  BlockBuilder& r = b.root();
  r.AppendOp("lookup_table_v2", {{"W", {"emb"}}, {"Ids", {"ids"}}}, {{"Out", {"e"}}},
             {{"padding_idx", int64_t{-1}}, {"is_sparse", false}, {"is_distributed", false}});
  r.AppendOp("layer_norm", {{"X", {"e"}}, {"Scale", {"ln_w"}}, {"Bias", {"ln_b"}}},
             {{"Y", {"n"}}, {"Mean", {"n_mean"}}, {"Variance", {"n_var"}}},
             {{"epsilon", 1e-5f}, {"begin_norm_axis", 2}});
  r.AppendOp("reshape2", {{"X", {"n"}}}, {{"Out", {"r"}}, {"XShape", {"r_xs"}}},
             {{"shape", std::vector<int32_t>{0, 8, 4, 4}}});
  r.AppendOp("transpose2", {{"X", {"r"}}}, {{"Out", {"tr"}}, {"XShape", {"tr_xs"}}},
             {{"axis", std::vector<int32_t>{0, 2, 1, 3}}});
  r.AppendOp("dropout", {{"X", {"tr"}}}, {{"Out", {"dr"}}, {"Mask", {"dr_mask"}}},
             {{"dropout_prob", 0.1f},
              {"is_test", false},
              {"fix_seed", false},
              {"seed", 0},
              {"dropout_implementation", std::string("upscale_in_train")}});
  r.AppendOp("gelu", {{"X", {"dr"}}}, {{"Out", {"g"}}}, {{"approximate", false}});
  r.AppendOp("cast", {{"X", {"g"}}}, {{"Out", {"c"}}}, {{"in_dtype", 5}, {"out_dtype", 4}});
  r.AppendOp("cast", {{"X", {"c"}}}, {{"Out", {"c2"}}}, {{"in_dtype", 4}, {"out_dtype", 5}});
  r.AppendOp("split", {{"X", {"c2"}}}, {{"Out", {"s1", "s2"}}},
             {{"axis", 3}, {"num", 2}, {"sections", std::vector<int32_t>{}}});
  r.AppendOp("concat", {{"X", {"s2", "s1"}}}, {{"Out", {"cc"}}}, {{"axis", 3}});
  r.AppendOp("slice", {{"Input", {"cc"}}}, {{"Out", {"sl"}}},
             {{"axes", std::vector<int32_t>{1}},
              {"starts", std::vector<int32_t>{0}},
              {"ends", std::vector<int32_t>{4}},
              {"infer_flags", std::vector<int32_t>{1}},
              {"decrease_axis", std::vector<int32_t>{}}});
  r.AppendOp("assign", {{"X", {"sl"}}}, {{"Out", {"as"}}});
  r.AppendOp("softmax", {{"X", {"as"}}}, {{"Out", {"sm"}}}, {{"axis", -1}});
  r.AppendOp("tril_triu", {{"X", {"sm"}}}, {{"Out", {"tt"}}}, {{"diagonal", 0}, {"lower", true}});
  r.AppendOp("sum", {{"X", {"tt", "as"}}}, {{"Out", {"su"}}});
  r.AppendOp("reshape2", {{"X", {"su"}}}, {{"Out", {"h"}}, {"XShape", {"h_xs"}}},
             {{"shape", std::vector<int32_t>{0, 8, 16}}});
  r.AppendOp("matmul_v2", {{"X", {"h"}}, {"Y", {"w"}}}, {{"Out", {"m"}}},
             {{"trans_x", false}, {"trans_y", false}});
  r.AppendOp("elementwise_mul", {{"X", {"m"}}, {"Y", {"h"}}}, {{"Out", {"em"}}}, {{"axis", -1}});
  r.AppendOp("elementwise_div", {{"X", {"em"}}, {"Y", {"ln_w"}}}, {{"Out", {"dv"}}},
             {{"axis", -1}});
  r.AppendOp("relu", {{"X", {"dv"}}}, {{"Out", {"rl"}}});
  r.AppendOp("softmax_with_cross_entropy", {{"Logits", {"rl"}}, {"Label", {"label"}}},
             {{"Softmax", {"swce_sm"}}, {"Loss", {"swce_loss"}}},
             {{"soft_label", false},
              {"ignore_index", -100},
              {"numeric_stable_mode", true},
              {"use_softmax", true},
              {"axis", -1}});
  r.AppendOp("reduce_sum", {{"X", {"swce_loss"}}}, {{"Out", {"rs"}}},
             {{"dim", std::vector<int32_t>{1, 2}}, {"keep_dim", false}, {"reduce_all", false}});
  r.AppendOp("reduce_mean", {{"X", {"rs"}}}, {{"Out", {"rm"}}},
             {{"dim", std::vector<int32_t>{0}}, {"keep_dim", false}, {"reduce_all", true}});
  r.AppendOp("scale", {{"X", {"rm"}}}, {{"Out", {"loss"}}},
             {{"scale", 0.5f}, {"bias", 0.0f}, {"bias_after_scale", true}});
  const int forward_ops = r.num_ops();
  ASSERT_EQ(forward_ops, 24);

  StatusOr<std::vector<ParamGrad>> result = AppendBackward(b, "loss");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(
      *result,
      (std::vector<ParamGrad>{
          {"emb", "emb@GRAD"}, {"ln_w", "ln_w@GRAD"}, {"ln_b", "ln_b@GRAD"}, {"w", "w@GRAD"}}));
  EXPECT_EQ(
      OpsFrom(b, forward_ops),
      (Strings{
          "fill_constant() -> (Out=[loss@GRAD])",                                // 24
          "scale(X=[loss@GRAD]) -> (Out=[rm@GRAD])",                             // 25
          "reduce_mean_grad(Out@GRAD=[rm@GRAD], X=[rs]) -> (X@GRAD=[rs@GRAD])",  // 26
          "reduce_sum_grad(Out@GRAD=[rs@GRAD], X=[swce_loss]) -> (X@GRAD=[swce_loss@GRAD])",
          "softmax_with_cross_entropy_grad(Label=[label], Loss@GRAD=[swce_loss@GRAD], "
          "Softmax=[swce_sm]) -> (Logits@GRAD=[rl@GRAD])",                  // 28
          "relu_grad(Out=[rl], Out@GRAD=[rl@GRAD]) -> (X@GRAD=[dv@GRAD])",  // 29
          "elementwise_div_grad(Out=[dv], Out@GRAD=[dv@GRAD], X=[em], Y=[ln_w]) -> "
          "(X@GRAD=[em@GRAD], Y@GRAD=[ln_w@GRAD@RENAME@block0@0])",  // 30
          "elementwise_mul_grad(Out@GRAD=[em@GRAD], X=[m], Y=[h]) -> "
          "(X@GRAD=[m@GRAD], Y@GRAD=[h@GRAD@RENAME@block0@0])",  // 31
          "matmul_v2_grad(Out@GRAD=[m@GRAD], X=[h], Y=[w]) -> "
          "(X@GRAD=[h@GRAD@RENAME@block0@1], Y@GRAD=[w@GRAD])",                         // 32
          "sum(X=[h@GRAD@RENAME@block0@0, h@GRAD@RENAME@block0@1]) -> (Out=[h@GRAD])",  // 33
          "reshape2_grad(Out@GRAD=[h@GRAD], XShape=[h_xs]) -> (X@GRAD=[su@GRAD])",      // 34
          "scale(X=[su@GRAD]) -> (Out=[tt@GRAD])",                                      // 35
          "scale(X=[su@GRAD]) -> (Out=[as@GRAD@RENAME@block0@0])",                      // 36
          "tril_triu_grad(Out@GRAD=[tt@GRAD]) -> (X@GRAD=[sm@GRAD])",                   // 37
          "softmax_grad(Out=[sm], Out@GRAD=[sm@GRAD]) -> (X@GRAD=[as@GRAD@RENAME@block0@1])",
          "sum(X=[as@GRAD@RENAME@block0@0, as@GRAD@RENAME@block0@1]) -> (Out=[as@GRAD])",
          "assign(X=[as@GRAD]) -> (Out=[sl@GRAD])",                                // 40
          "slice_grad(Input=[cc], Out@GRAD=[sl@GRAD]) -> (Input@GRAD=[cc@GRAD])",  // 41
          "concat_grad(Out@GRAD=[cc@GRAD], X=[s2, s1]) -> (X@GRAD=[s2@GRAD, s1@GRAD])",
          "concat(X=[s1@GRAD, s2@GRAD]) -> (Out=[c2@GRAD])",                           // 43
          "cast(X=[c2@GRAD]) -> (Out=[c@GRAD])",                                       // 44
          "cast(X=[c@GRAD]) -> (Out=[g@GRAD])",                                        // 45
          "gelu_grad(Out@GRAD=[g@GRAD], X=[dr]) -> (X@GRAD=[dr@GRAD])",                // 46
          "dropout_grad(Mask=[dr_mask], Out@GRAD=[dr@GRAD]) -> (X@GRAD=[tr@GRAD])",    // 47
          "transpose2_grad(Out@GRAD=[tr@GRAD], XShape=[tr_xs]) -> (X@GRAD=[r@GRAD])",  // 48
          "reshape2_grad(Out@GRAD=[r@GRAD], XShape=[r_xs]) -> (X@GRAD=[n@GRAD])",      // 49
          "layer_norm_grad(Bias=[ln_b], Mean=[n_mean], Scale=[ln_w], Variance=[n_var], "
          "X=[e], Y@GRAD=[n@GRAD]) -> (Bias@GRAD=[ln_b@GRAD], "
          "Scale@GRAD=[ln_w@GRAD@RENAME@block0@1], X@GRAD=[e@GRAD])",  // 50
          "lookup_table_v2_grad(Ids=[ids], Out@GRAD=[e@GRAD], W=[emb]) -> "
          "(W@GRAD=[emb@GRAD])",  // 51
          "sum(X=[ln_w@GRAD@RENAME@block0@0, ln_w@GRAD@RENAME@block0@1]) -> (Out=[ln_w@GRAD])",
      }))
      << DumpProgram(b.Build());
  EXPECT_EQ(RoleVar(b, 32), (Strings{"w", "w@GRAD"}));
  EXPECT_EQ(RoleVar(b, 50), (Strings{"ln_b", "ln_b@GRAD"}));
  EXPECT_EQ(RoleVar(b, 51), (Strings{"emb", "emb@GRAD"}));
  EXPECT_EQ(RoleVar(b, 52), (Strings{"ln_w", "ln_w@GRAD"}));
  EXPECT_EQ(RoleVar(b, 30), Strings{});
  // The cast back swaps the dtypes; the grad var of the fp16 cast output is fp16.
  EXPECT_EQ(AttrOf<int32_t>(b, 44, "in_dtype"), 5);
  EXPECT_EQ(AttrOf<int32_t>(b, 44, "out_dtype"), 4);
  ASSERT_NE(FindVar(b, "c@GRAD"), nullptr);
  EXPECT_EQ(Var(FindVar(b, "c@GRAD")).dtype(), proto::VarType::FP16);
  EXPECT_EQ(AttrOf<std::vector<int32_t>>(b, 48, "axis"), (std::vector<int32_t>{0, 2, 1, 3}));
  EXPECT_EQ(AttrOf<float>(b, 47, "dropout_prob"), 0.1f);
  EXPECT_EQ(AttrOf<int64_t>(b, 51, "padding_idx"), -1);
  EXPECT_EQ(AttrOf<int32_t>(b, 43, "axis"), 3);
  EXPECT_EQ(AttrOf<float>(b, 25, "scale"), 0.5f);
  EXPECT_EQ(FindVar(b, "swce_sm@GRAD"), nullptr);
  EXPECT_EQ(FindVar(b, "label@GRAD"), nullptr);
  EXPECT_EQ(FindVar(b, "ids@GRAD"), nullptr);
  ExpectValid(b);
}

// ---- errors: each leaves the program as it was ------------------------------------------------

TEST(AppendBackwardErrorTest, OpWithoutGradRuleOnThePath) {
  ProgramBuilder b;
  BuildLinear(b);
  Tmp(b, "z", {});
  Tmp(b, "loss2", {});
  b.root().AppendOp("my_custom_op", {{"X", {"loss"}}}, {{"Out", {"z"}}});
  b.root().AppendOp("mean", {{"X", {"z"}}}, {{"Out", {"loss2"}}});
  const std::string before = b.desc().SerializeAsString();
  StatusOr<std::vector<ParamGrad>> result = AppendBackward(b, "loss2");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(result.status().message(),
            "op 'my_custom_op' is on the path to the loss 'loss2' but has no grad rule");
  EXPECT_EQ(result.status().location().block, 0);
  EXPECT_EQ(result.status().location().op, 3);
  EXPECT_EQ(result.status().location().op_type, "my_custom_op");
  EXPECT_EQ(b.desc().SerializeAsString(), before);
}

TEST(AppendBackwardErrorTest, OpsWithoutGradientStopThePath) {
  // fill_constant has no gradient: it is not an error on the path, just where it stops.
  ProgramBuilder b;
  Param(b, "w", {2});
  Tmp(b, "k", {2});
  Tmp(b, "y", {2});
  Tmp(b, "loss", {});
  b.root().AppendOp("fill_constant", {}, {{"Out", {"k"}}},
                    {{"shape", std::vector<int64_t>{2}}, {"value", 1.0f}, {"dtype", 5}});
  b.root().AppendOp("elementwise_mul", {{"X", {"k"}}, {"Y", {"w"}}}, {{"Out", {"y"}}},
                    {{"axis", -1}});
  b.root().AppendOp("mean", {{"X", {"y"}}}, {{"Out", {"loss"}}});
  StatusOr<std::vector<ParamGrad>> result = AppendBackward(b, "loss");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(OpsFrom(b, 3), (Strings{"fill_constant() -> (Out=[loss@GRAD])",
                                    "mean_grad(Out@GRAD=[loss@GRAD], X=[y]) -> (X@GRAD=[y@GRAD])",
                                    "elementwise_mul_grad(Out@GRAD=[y@GRAD], X=[k], Y=[w]) -> "
                                    "(X@GRAD=[k@GRAD], Y@GRAD=[w@GRAD])"}));
  ExpectValid(b);
}

TEST(AppendBackwardErrorTest, UnknownLoss) {
  ProgramBuilder b;
  BuildLinear(b);
  StatusOr<std::vector<ParamGrad>> result = AppendBackward(b, "nope");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(result.status().message(), "the loss var 'nope' is not declared in the root block");
  EXPECT_EQ(result.status().location().var, "nope");
}

TEST(AppendBackwardErrorTest, LossWrittenByNoOp) {
  ProgramBuilder b;
  BuildLinear(b);
  StatusOr<std::vector<ParamGrad>> result = AppendBackward(b, "w");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(result.status().message(), "no op of the root block writes the loss var 'w'");
}

TEST(AppendBackwardErrorTest, SecondBackwardIsRefused) {
  ProgramBuilder b;
  BuildLinear(b);
  ASSERT_TRUE(AppendBackward(b, "loss").ok());
  const std::string before = b.desc().SerializeAsString();
  StatusOr<std::vector<ParamGrad>> result = AppendBackward(b, "loss");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(result.status().message(),
            "the program already has backward ops; a second append_backward (double grad) is "
            "not supported");
  EXPECT_EQ(result.status().location().op, 3);
  EXPECT_EQ(result.status().location().op_type, "fill_constant");
  EXPECT_EQ(b.desc().SerializeAsString(), before);
}

TEST(AppendBackwardErrorTest, SparseEmbeddingIsRefused) {
  ProgramBuilder b;
  Data(b, "ids", {-1, 4}, proto::VarType::INT64);
  Param(b, "emb", {10, 4});
  Tmp(b, "e", {-1, 4, 4});
  Tmp(b, "loss", {});
  b.root().AppendOp("lookup_table_v2", {{"W", {"emb"}}, {"Ids", {"ids"}}}, {{"Out", {"e"}}},
                    {{"padding_idx", int64_t{-1}}, {"is_sparse", true}});
  b.root().AppendOp("mean", {{"X", {"e"}}}, {{"Out", {"loss"}}});
  StatusOr<std::vector<ParamGrad>> result = AppendBackward(b, "loss");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(result.status().message(),
            "sparse embedding gradients (SELECTED_ROWS) are not supported");
  EXPECT_EQ(result.status().location().attr, "is_sparse");
}

TEST(AppendBackwardErrorTest, ForwardOpMissingASlotItsGradMakerNeeds) {
  ProgramBuilder b;
  Param(b, "w", {2});
  Tmp(b, "y", {2});
  Tmp(b, "loss", {});
  b.root().AppendOp("dropout", {{"X", {"w"}}}, {{"Out", {"y"}}}, {{"dropout_prob", 0.5f}});
  b.root().AppendOp("mean", {{"X", {"y"}}}, {{"Out", {"loss"}}});
  StatusOr<std::vector<ParamGrad>> result = AppendBackward(b, "loss");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(result.status().message(),
            "the grad maker of 'dropout' needs output slot 'Mask', which the op lacks");
  EXPECT_EQ(result.status().location().op, 0);
}

}  // namespace
}  // namespace irm::oldir
