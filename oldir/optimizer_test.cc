// Tests of the legacy optimizers: for each kind the exact update op (slots, in-place outputs,
// attributes with their AttrTypes, op_role, op_role_var, namescope), the accumulators and the
// learning rate in both programs with their startup initialisers, global-norm clipping, Paddle's
// ordering, device and multi-precision rules, and the errors. Expectations are written out by hand
// from Paddle's python/paddle/optimizer/*.py and python/paddle/nn/clip.py.
#include "oldir/optimizer.h"

#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "oldir/dump.h"
#include "oldir/editor.h"
#include "oldir/initializer.h"
#include "oldir/validator.h"

namespace irm::oldir {
namespace {

// ---- helpers ------------------------------------------------------------------------------------

std::string Quoted(const std::string& s) { return "'" + s + "'"; }

struct ValueVisitor {
  std::string operator()(int32_t v) const { return std::to_string(v); }
  std::string operator()(int64_t v) const { return std::to_string(v); }
  std::string operator()(float v) const { return fmt::format("{}", v); }
  std::string operator()(bool v) const { return v ? "true" : "false"; }
  std::string operator()(const std::string& v) const { return Quoted(v); }
  std::string operator()(const std::vector<std::string>& v) const {
    std::vector<std::string> quoted;
    for (const std::string& s : v) quoted.push_back(Quoted(s));
    return fmt::format("[{}]", fmt::join(quoted, ", "));
  }
  std::string operator()(const std::vector<int64_t>& v) const {
    return fmt::format("[{}]", fmt::join(v, ", "));
  }
  std::string operator()(const std::vector<int32_t>& v) const {
    return fmt::format("[{}]", fmt::join(v, ", "));
  }
  std::string operator()(const auto&) const { return "<other>"; }  // not written by optimizers
};

std::string ValueText(const AttrValue& value) { return std::visit(ValueVisitor{}, value); }

std::string SlotsText(const google::protobuf::RepeatedPtrField<proto::OpDesc::Var>& slots) {
  std::vector<std::string> parts;
  for (const proto::OpDesc::Var& slot : slots) {
    parts.push_back(fmt::format("{}=[{}]", slot.parameter(), fmt::join(slot.arguments(), ", ")));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

// An op as its type, slots in stored order, then one line per attribute in stored order with its
// AttrType: what a test can compare against text written from Paddle's sources.
std::string Describe(const proto::OpDesc& op) {
  std::string out =
      fmt::format("{}({}) -> ({})\n", op.type(), SlotsText(op.inputs()), SlotsText(op.outputs()));
  for (const proto::OpDesc::Attr& attr : op.attrs()) {
    StatusOr<AttrValue> value = ReadAttrValue(attr);
    out += fmt::format("  {}: {} {}\n", attr.name(), AttrTypeName(attr.type()),
                       value.ok() ? ValueText(*value) : "<unreadable>");
  }
  return out;
}

std::string DescribeOps(const proto::BlockDesc& block, int first = 0) {
  std::string out;
  for (int i = first; i < block.ops_size(); ++i) out += Describe(block.ops(i));
  return out;
}

std::vector<std::string> VarLines(const proto::BlockDesc& block, int first = 0) {
  std::vector<std::string> lines;
  for (int i = first; i < block.vars_size(); ++i) lines.push_back(DumpVar(Var(&block.vars(i))));
  return lines;
}

// A main program with parameters (persistable, is_parameter) and their gradients (declared
// persistable so the validator sees them defined without a backward pass), and an empty startup.
struct Programs {
  ProgramBuilder main;
  ProgramBuilder startup;

  void AddParam(const std::string& name, const std::vector<int64_t>& dims,
                proto::VarType::Type dtype = proto::VarType::FP32) {
    main.root().CreateVar(name, dtype, dims, {.persistable = true, .is_parameter = true});
    main.root().CreateVar(name + "@GRAD", dtype, dims, {.persistable = true});
  }

  void ExpectValid() {
    // note_unknown_ops: every op written must have a schema entry, so it was checked against it.
    ValidateOptions options;
    options.note_unknown_ops = true;
    const Diagnostics main_findings = ValidateProgram(main.Build(), options);
    EXPECT_TRUE(main_findings.empty()) << main_findings.Render();
    const Diagnostics startup_findings = ValidateProgram(startup.Build(), options);
    EXPECT_TRUE(startup_findings.empty()) << startup_findings.Render();
  }
};

constexpr const char* kW = "linear_0.w_0";
constexpr const char* kWGrad = "linear_0.w_0@GRAD";
const std::vector<ParamGrad> kOneParam = {{kW, kWGrad}};

// A startup fill_constant as Paddle's ConstantInitializer writes it (op_role 0, namescope "/"),
// with the attribute values spelled out by the caller.
std::string StartupFill(const std::string& out, const std::string& device, const std::string& shape,
                        const std::string& str_value, const std::string& value) {
  return "fill_constant() -> (Out=[" + out + "])\n" +
         "  dtype: INT 5\n"
         "  force_cpu: BOOLEAN false\n"
         "  op_callstack: STRINGS []\n"
         "  op_device: STRING '" +
         device + "'\n" +
         "  op_namescope: STRING '/'\n"
         "  op_role: INT 0\n"
         "  op_role_var: STRINGS []\n"
         "  place_type: INT -1\n"
         "  shape: LONGS " +
         shape + "\n" + "  str_value: STRING '" + str_value + "'\n" + "  value: FLOAT " + value +
         "\n" + "  with_quant_attr: BOOLEAN false\n";
}

const std::string kLrInit0p01 = StartupFill("learning_rate_0", "", "[1]", "0.01", "0.01");

// ---- names ----------------------------------------------------------------------------------

TEST(OptimizerKindTest, NamesRoundTrip) {
  EXPECT_STREQ(OptimizerKindName(OptimizerKind::kSgd), "sgd");
  EXPECT_STREQ(OptimizerKindName(OptimizerKind::kMomentum), "momentum");
  EXPECT_STREQ(OptimizerKindName(OptimizerKind::kAdam), "adam");
  EXPECT_STREQ(OptimizerKindName(OptimizerKind::kAdamW), "adamw");
  EXPECT_EQ(OptimizerKindFromName("sgd"), OptimizerKind::kSgd);
  EXPECT_EQ(OptimizerKindFromName("momentum"), OptimizerKind::kMomentum);
  EXPECT_EQ(OptimizerKindFromName("adam"), OptimizerKind::kAdam);
  EXPECT_EQ(OptimizerKindFromName("adamw"), OptimizerKind::kAdamW);
  EXPECT_EQ(OptimizerKindFromName("Adam"), std::nullopt);
  EXPECT_EQ(OptimizerKindFromName("adagrad"), std::nullopt);
  EXPECT_EQ(OptimizerKindFromName(""), std::nullopt);
}

// ---- one parameter per optimizer ------------------------------------------------------------

TEST(AppendOptimizerTest, Sgd) {
  Programs p;
  p.AddParam(kW, {4, 3});
  ASSERT_TRUE(AppendOptimizer(p.main, p.startup, kOneParam, {.kind = OptimizerKind::kSgd}).ok());

  const proto::BlockDesc& main = p.main.desc().blocks(0);
  EXPECT_EQ(DescribeOps(main),
            "sgd(Grad=[linear_0.w_0@GRAD], LearningRate=[learning_rate_0], Param=[linear_0.w_0]) "
            "-> (ParamOut=[linear_0.w_0])\n"
            "  multi_precision: BOOLEAN false\n"
            "  op_callstack: STRINGS []\n"
            "  op_device: STRING ''\n"
            "  op_namescope: STRING '/optimizer/'\n"
            "  op_role: INT 2\n"
            "  op_role_var: STRINGS ['linear_0.w_0', 'linear_0.w_0@GRAD']\n"
            "  with_quant_attr: BOOLEAN false\n");
  EXPECT_EQ(VarLines(main, 2),
            (std::vector<std::string>{"persist var learning_rate_0 : DENSE_TENSOR.shape(1,)"
                                      ".dtype(float32).stop_gradient(True)"}));

  const proto::BlockDesc& startup = p.startup.desc().blocks(0);
  EXPECT_EQ(DescribeOps(startup), kLrInit0p01);
  EXPECT_EQ(VarLines(startup),
            (std::vector<std::string>{"persist var learning_rate_0 : DENSE_TENSOR.shape(1,)"
                                      ".dtype(float32).stop_gradient(False)"}));
  p.ExpectValid();
}

TEST(AppendOptimizerTest, Momentum) {
  Programs p;
  p.AddParam(kW, {4, 3});
  ASSERT_TRUE(AppendOptimizer(p.main, p.startup, kOneParam,
                              {.kind = OptimizerKind::kMomentum,
                               .learning_rate = 0.1f,
                               .momentum = 0.8f,
                               .use_nesterov = true})
                  .ok());

  const proto::BlockDesc& main = p.main.desc().blocks(0);
  EXPECT_EQ(DescribeOps(main),
            "momentum(Grad=[linear_0.w_0@GRAD], LearningRate=[learning_rate_0], "
            "Param=[linear_0.w_0], Velocity=[linear_0.w_0_velocity_0]) "
            "-> (ParamOut=[linear_0.w_0], VelocityOut=[linear_0.w_0_velocity_0])\n"
            "  mu: FLOAT 0.8\n"
            "  multi_precision: BOOLEAN false\n"
            "  op_callstack: STRINGS []\n"
            "  op_device: STRING ''\n"
            "  op_namescope: STRING '/optimizer/'\n"
            "  op_role: INT 2\n"
            "  op_role_var: STRINGS ['linear_0.w_0', 'linear_0.w_0@GRAD']\n"
            "  regularization_coeff: FLOAT 0\n"
            "  regularization_method: STRING ''\n"
            "  rescale_grad: FLOAT 1\n"
            "  use_nesterov: BOOLEAN true\n"
            "  with_quant_attr: BOOLEAN false\n");
  EXPECT_EQ(VarLines(main, 2),
            (std::vector<std::string>{
                "persist var learning_rate_0 : DENSE_TENSOR.shape(1,).dtype(float32)"
                ".stop_gradient(True)",
                "persist var linear_0.w_0_velocity_0 : DENSE_TENSOR.shape(4, 3).dtype(float32)"
                ".stop_gradient(False)"}));

  const proto::BlockDesc& startup = p.startup.desc().blocks(0);
  EXPECT_EQ(DescribeOps(startup),
            StartupFill("learning_rate_0", "", "[1]", "0.1", "0.1") +
                StartupFill("linear_0.w_0_velocity_0", "", "[4, 3]", "0.0", "0"));
  EXPECT_EQ(VarLines(startup),
            (std::vector<std::string>{
                "persist var learning_rate_0 : DENSE_TENSOR.shape(1,).dtype(float32)"
                ".stop_gradient(False)",
                "persist var linear_0.w_0_velocity_0 : DENSE_TENSOR.shape(4, 3).dtype(float32)"
                ".stop_gradient(False)"}));
  p.ExpectValid();
}

// The four adam accumulators' startup initialisers for linear_0.w_0 [4, 3] (beta pows on "cpu").
std::string AdamAccumulatorInits(const std::string& beta1, const std::string& beta2) {
  return StartupFill("linear_0.w_0_moment1_0", "", "[4, 3]", "0.0", "0") +
         StartupFill("linear_0.w_0_moment2_0", "", "[4, 3]", "0.0", "0") +
         StartupFill("linear_0.w_0_beta1_pow_acc_0", "cpu", "[1]", beta1, beta1) +
         StartupFill("linear_0.w_0_beta2_pow_acc_0", "cpu", "[1]", beta2, beta2);
}

const std::vector<std::string> kAdamMainVars = {
    "persist var learning_rate_0 : DENSE_TENSOR.shape(1,).dtype(float32).stop_gradient(True)",
    "persist var linear_0.w_0_moment1_0 : DENSE_TENSOR.shape(4, 3).dtype(float32)"
    ".stop_gradient(False)",
    "persist var linear_0.w_0_moment2_0 : DENSE_TENSOR.shape(4, 3).dtype(float32)"
    ".stop_gradient(False)",
    "persist var linear_0.w_0_beta1_pow_acc_0 : DENSE_TENSOR.shape(1,).dtype(float32)"
    ".stop_gradient(False)",
    "persist var linear_0.w_0_beta2_pow_acc_0 : DENSE_TENSOR.shape(1,).dtype(float32)"
    ".stop_gradient(False)"};

TEST(AppendOptimizerTest, Adam) {
  Programs p;
  p.AddParam(kW, {4, 3});
  ASSERT_TRUE(AppendOptimizer(p.main, p.startup, kOneParam,
                              {.kind = OptimizerKind::kAdam, .epsilon = 1e-6f})
                  .ok());

  const proto::BlockDesc& main = p.main.desc().blocks(0);
  EXPECT_EQ(
      DescribeOps(main),
      "adam(Beta1Pow=[linear_0.w_0_beta1_pow_acc_0], Beta2Pow=[linear_0.w_0_beta2_pow_acc_0], "
      "Grad=[linear_0.w_0@GRAD], LearningRate=[learning_rate_0], "
      "Moment1=[linear_0.w_0_moment1_0], Moment2=[linear_0.w_0_moment2_0], "
      "Param=[linear_0.w_0]) -> (Beta1PowOut=[linear_0.w_0_beta1_pow_acc_0], "
      "Beta2PowOut=[linear_0.w_0_beta2_pow_acc_0], Moment1Out=[linear_0.w_0_moment1_0], "
      "Moment2Out=[linear_0.w_0_moment2_0], ParamOut=[linear_0.w_0])\n"
      "  beta1: FLOAT 0.9\n"
      "  beta2: FLOAT 0.999\n"
      "  epsilon: FLOAT 1e-06\n"
      "  lazy_mode: BOOLEAN false\n"
      "  min_row_size_to_use_multithread: LONG 1000\n"
      "  multi_precision: BOOLEAN false\n"
      "  op_callstack: STRINGS []\n"
      "  op_device: STRING ''\n"
      "  op_namescope: STRING '/optimizer/'\n"
      "  op_role: INT 2\n"
      "  op_role_var: STRINGS ['linear_0.w_0', 'linear_0.w_0@GRAD']\n"
      "  use_global_beta_pow: BOOLEAN false\n"
      "  with_quant_attr: BOOLEAN false\n");
  EXPECT_EQ(VarLines(main, 2), kAdamMainVars);

  const proto::BlockDesc& startup = p.startup.desc().blocks(0);
  EXPECT_EQ(DescribeOps(startup), kLrInit0p01 + AdamAccumulatorInits("0.9", "0.999"));
  EXPECT_EQ(VarLines(startup).size(), 5u);
  p.ExpectValid();
}

TEST(AppendOptimizerTest, AdamW) {
  Programs p;
  p.AddParam(kW, {4, 3});
  ASSERT_TRUE(AppendOptimizer(p.main, p.startup, kOneParam,
                              {.kind = OptimizerKind::kAdamW,
                               .beta1 = 0.8f,
                               .beta2 = 0.95f,
                               .weight_decay = 0.05f,
                               .lr_ratio = 0.5f})
                  .ok());

  const proto::BlockDesc& main = p.main.desc().blocks(0);
  EXPECT_EQ(DescribeOps(main),
            "adamw(Beta1Pow=[linear_0.w_0_beta1_pow_acc_0], "
            "Beta2Pow=[linear_0.w_0_beta2_pow_acc_0], "
            "Grad=[linear_0.w_0@GRAD], LearningRate=[learning_rate_0], "
            "Moment1=[linear_0.w_0_moment1_0], Moment2=[linear_0.w_0_moment2_0], "
            "Param=[linear_0.w_0]) -> (Beta1PowOut=[linear_0.w_0_beta1_pow_acc_0], "
            "Beta2PowOut=[linear_0.w_0_beta2_pow_acc_0], Moment1Out=[linear_0.w_0_moment1_0], "
            "Moment2Out=[linear_0.w_0_moment2_0], ParamOut=[linear_0.w_0])\n"
            "  beta1: FLOAT 0.8\n"
            "  beta2: FLOAT 0.95\n"
            "  coeff: FLOAT 0.05\n"
            "  epsilon: FLOAT 1e-08\n"
            "  lazy_mode: BOOLEAN false\n"
            "  lr_ratio: FLOAT 0.5\n"
            "  min_row_size_to_use_multithread: LONG 1000\n"
            "  multi_precision: BOOLEAN false\n"
            "  op_callstack: STRINGS []\n"
            "  op_device: STRING ''\n"
            "  op_namescope: STRING '/optimizer/'\n"
            "  op_role: INT 2\n"
            "  op_role_var: STRINGS ['linear_0.w_0', 'linear_0.w_0@GRAD']\n"
            "  use_global_beta_pow: BOOLEAN false\n"
            "  with_decay: BOOLEAN true\n"
            "  with_quant_attr: BOOLEAN false\n");
  EXPECT_EQ(VarLines(main, 2), kAdamMainVars);

  const proto::BlockDesc& startup = p.startup.desc().blocks(0);
  EXPECT_EQ(DescribeOps(startup), kLrInit0p01 + AdamAccumulatorInits("0.8", "0.95"));
  p.ExpectValid();
}

// ---- global-norm clipping -------------------------------------------------------------------

TEST(AppendOptimizerTest, GlobalNormClipOnTwoParams) {
  Programs p;
  p.AddParam("linear_0.w_0", {4, 3});
  p.AddParam("linear_0.b_0", {3});
  // In AppendBackward's order (w before b); Paddle sorts by name, so b's ops come first.
  const std::vector<ParamGrad> pairs = {{"linear_0.w_0", "linear_0.w_0@GRAD"},
                                        {"linear_0.b_0", "linear_0.b_0@GRAD"}};
  ASSERT_TRUE(AppendOptimizer(p.main, p.startup, pairs,
                              {.kind = OptimizerKind::kSgd, .clip_global_norm = 1.0f})
                  .ok());

  const std::string b_var = "  op_role_var: STRINGS ['linear_0.b_0', 'linear_0.b_0@GRAD']\n";
  const std::string w_var = "  op_role_var: STRINGS ['linear_0.w_0', 'linear_0.w_0@GRAD']\n";
  const std::string clip_common_head =
      "  op_callstack: STRINGS []\n"
      "  op_device: STRING ''\n"
      "  op_namescope: STRING '/gradient_clip/'\n"
      "  op_role: INT 2\n";
  const std::string tail = "  with_quant_attr: BOOLEAN false\n";
  const std::string expected =
      // squared_l2_norm per grad, each with its own pair.
      "squared_l2_norm(X=[linear_0.b_0@GRAD]) -> (Out=[squared_l2_norm_0.tmp_0])\n" +
      clip_common_head + b_var + tail +
      "squared_l2_norm(X=[linear_0.w_0@GRAD]) -> (Out=[squared_l2_norm_1.tmp_0])\n" +
      clip_common_head + w_var + tail +
      // The global norm, under the last pair's op_role_var.
      "sum(X=[squared_l2_norm_0.tmp_0, squared_l2_norm_1.tmp_0]) -> (Out=[add_n_0.tmp_0])\n" +
      clip_common_head + w_var + tail +  //
      "sqrt(X=[add_n_0.tmp_0]) -> (Out=[sqrt_0.tmp_0])\n" + clip_common_head + w_var + tail +
      "fill_constant() -> (Out=[fill_constant_0.tmp_0])\n"
      "  dtype: INT 5\n"
      "  force_cpu: BOOLEAN false\n" +
      clip_common_head + w_var +
      "  place_type: INT -1\n"
      "  shape: LONGS [1]\n"
      "  str_value: STRING '1.0'\n"
      "  value: FLOAT 1\n" +
      tail +
      "elementwise_max(X=[fill_constant_0.tmp_0], Y=[sqrt_0.tmp_0]) -> (Out=[elementwise_max_0])\n"
      "  axis: INT -1\n" +
      clip_common_head + w_var + tail +
      "elementwise_div(X=[fill_constant_0.tmp_0], Y=[elementwise_max_0]) -> "
      "(Out=[elementwise_div_0])\n"
      "  axis: INT -1\n" +
      clip_common_head + w_var + tail +
      // In place: the clipped gradient keeps its name.
      "elementwise_mul(X=[linear_0.b_0@GRAD], Y=[elementwise_div_0]) -> "
      "(Out=[linear_0.b_0@GRAD])\n"
      "  axis: INT -1\n" +
      clip_common_head + b_var + tail +
      "elementwise_mul(X=[linear_0.w_0@GRAD], Y=[elementwise_div_0]) -> "
      "(Out=[linear_0.w_0@GRAD])\n"
      "  axis: INT -1\n" +
      clip_common_head + w_var + tail +
      // The updates read the clipped grads.
      "sgd(Grad=[linear_0.b_0@GRAD], LearningRate=[learning_rate_0], Param=[linear_0.b_0]) "
      "-> (ParamOut=[linear_0.b_0])\n"
      "  multi_precision: BOOLEAN false\n"
      "  op_callstack: STRINGS []\n"
      "  op_device: STRING ''\n"
      "  op_namescope: STRING '/optimizer/'\n"
      "  op_role: INT 2\n" +
      b_var + tail +
      "sgd(Grad=[linear_0.w_0@GRAD], LearningRate=[learning_rate_0], Param=[linear_0.w_0]) "
      "-> (ParamOut=[linear_0.w_0])\n"
      "  multi_precision: BOOLEAN false\n"
      "  op_callstack: STRINGS []\n"
      "  op_device: STRING ''\n"
      "  op_namescope: STRING '/optimizer_1/'\n"
      "  op_role: INT 2\n" +
      w_var + tail;
  const proto::BlockDesc& main = p.main.desc().blocks(0);
  EXPECT_EQ(DescribeOps(main), expected);
  EXPECT_EQ(VarLines(main, 4),
            (std::vector<std::string>{
                "var squared_l2_norm_0.tmp_0 : DENSE_TENSOR.shape(1,).dtype(float32)"
                ".stop_gradient(False)",
                "var squared_l2_norm_1.tmp_0 : DENSE_TENSOR.shape(1,).dtype(float32)"
                ".stop_gradient(False)",
                "var add_n_0.tmp_0 : DENSE_TENSOR.shape(1,).dtype(float32).stop_gradient(False)",
                "var sqrt_0.tmp_0 : DENSE_TENSOR.shape(1,).dtype(float32).stop_gradient(False)",
                "var fill_constant_0.tmp_0 : DENSE_TENSOR.shape(1,).dtype(float32)"
                ".stop_gradient(True)",
                "var elementwise_max_0 : DENSE_TENSOR.shape(1,).dtype(float32)"
                ".stop_gradient(False)",
                "var elementwise_div_0 : DENSE_TENSOR.shape(1,).dtype(float32)"
                ".stop_gradient(False)",
                "persist var learning_rate_0 : DENSE_TENSOR.shape(1,).dtype(float32)"
                ".stop_gradient(True)"}));
  EXPECT_EQ(DescribeOps(p.startup.desc().blocks(0)), kLrInit0p01);
  p.ExpectValid();
}

TEST(AppendOptimizerTest, ClipWithAdamUsesFp64WhenTheGradsAre) {
  Programs p;
  p.AddParam("w", {2}, proto::VarType::FP64);
  ASSERT_TRUE(AppendOptimizer(p.main, p.startup, {{"w", "w@GRAD"}},
                              {.kind = OptimizerKind::kAdam, .clip_global_norm = 0.5f})
                  .ok());
  const proto::BlockDesc& main = p.main.desc().blocks(0);
  std::vector<std::string> types;
  for (const proto::OpDesc& op : main.ops()) types.push_back(op.type());
  EXPECT_EQ(types, (std::vector<std::string>{"squared_l2_norm", "sum", "sqrt", "fill_constant",
                                             "elementwise_max", "elementwise_div",
                                             "elementwise_mul", "adam"}));
  Program program = p.main.Build();
  const Block root = program.root();
  EXPECT_EQ(root.op(3).AttrOr<int32_t>("dtype", 0), proto::VarType::FP64);
  EXPECT_EQ(root.op(3).AttrOr<std::string>("str_value", ""), "0.5");
  EXPECT_EQ(root.FindVar("sqrt_0.tmp_0")->dtype(), proto::VarType::FP64);
  EXPECT_EQ(root.FindVar("w_moment1_0")->dtype(), proto::VarType::FP64);
  p.ExpectValid();
}

// ---- Paddle's ordering, namescopes, devices ------------------------------------------------

TEST(AppendOptimizerTest, ParamsAreUpdatedInNameOrderEachUnderItsOwnNamescope) {
  Programs p;
  p.AddParam("b", {2});
  p.AddParam("a", {3});
  ASSERT_TRUE(AppendOptimizer(p.main, p.startup, {{"b", "b@GRAD"}, {"a", "a@GRAD"}},
                              {.kind = OptimizerKind::kMomentum})
                  .ok());
  Program main = p.main.Build();
  ASSERT_EQ(main.root().num_ops(), 2);
  EXPECT_EQ(main.root().op(0).SingleInput("Param"), "a");
  EXPECT_EQ(main.root().op(0).AttrOr<std::string>(kOpNamescopeAttr, ""), "/optimizer/");
  EXPECT_EQ(main.root().op(1).SingleInput("Param"), "b");
  EXPECT_EQ(main.root().op(1).AttrOr<std::string>(kOpNamescopeAttr, ""), "/optimizer_1/");
  Program startup = p.startup.Build();
  ASSERT_EQ(startup.root().num_ops(), 3);
  EXPECT_EQ(startup.root().op(0).SingleOutput("Out"), "learning_rate_0");
  EXPECT_EQ(startup.root().op(1).SingleOutput("Out"), "a_velocity_0");
  EXPECT_EQ(startup.root().op(2).SingleOutput("Out"), "b_velocity_0");
  p.ExpectValid();
}

TEST(AppendOptimizerTest, NamescopesNestUnderTheCurrentOne) {
  Programs p;
  p.AddParam("a", {3});
  ScopedNamescope scope(p.main, "train");
  ASSERT_TRUE(
      AppendOptimizer(p.main, p.startup, {{"a", "a@GRAD"}}, {.clip_global_norm = 2.0f}).ok());
  Program main = p.main.Build();
  EXPECT_EQ(main.root().op(0).AttrOr<std::string>(kOpNamescopeAttr, ""), "/train/gradient_clip/");
  EXPECT_EQ(main.root().op(main.root().num_ops() - 1).AttrOr<std::string>(kOpNamescopeAttr, ""),
            "/train/optimizer/");
  EXPECT_EQ(p.main.namescope(), "/train/");
  // Paddle's name scope is process-wide: the startup initialisers are in it too. The startup
  // builder's own settings come back afterwards, and its ops are Forward whatever it was set to.
  EXPECT_EQ(p.startup.Build().root().op(0).AttrOr<std::string>(kOpNamescopeAttr, ""), "/train/");
  EXPECT_EQ(p.startup.namescope(), "/");
}

TEST(AppendOptimizerTest, StartupOpsAreForwardAndTheStartupRoleIsRestored) {
  Programs p;
  p.AddParam("a", {3});
  p.startup.set_role(kBackward);
  ASSERT_TRUE(
      AppendOptimizer(p.main, p.startup, {{"a", "a@GRAD"}}, {.kind = OptimizerKind::kMomentum})
          .ok());
  Program startup = p.startup.Build();
  ASSERT_EQ(startup.root().num_ops(), 2);
  EXPECT_EQ(startup.root().op(0).role(), kForward);
  EXPECT_EQ(startup.root().op(1).role(), kForward);
  EXPECT_EQ(p.startup.role(), kBackward);
  EXPECT_EQ(p.main.role(), kForward);
}

TEST(AppendOptimizerTest, StopGradientParamsAreClippedButNotUpdated) {
  // _static_clip looks only at the grads; _create_optimization_pass skips stop_gradient params.
  Programs p;
  p.AddParam("a", {3});
  p.main.root().CreateVar("f", proto::VarType::FP32, {3},
                          {.persistable = true, .stop_gradient = true, .is_parameter = true});
  p.main.root().CreateVar("f@GRAD", proto::VarType::FP32, {3}, {.persistable = true});
  ASSERT_TRUE(AppendOptimizer(p.main, p.startup, {{"f", "f@GRAD"}, {"a", "a@GRAD"}},
                              {.kind = OptimizerKind::kMomentum, .clip_global_norm = 1.0f})
                  .ok());
  Program main = p.main.Build();
  std::vector<std::string> ops;
  for (int i = 0; i < main.root().num_ops(); ++i) {
    const Op op = main.root().op(i);
    ops.push_back(op.type() + ":" + op.AttrOr<std::vector<std::string>>(kOpRoleVarAttr, {})[0]);
  }
  EXPECT_EQ(ops,
            (std::vector<std::string>{"squared_l2_norm:a", "squared_l2_norm:f", "sum:f", "sqrt:f",
                                      "fill_constant:f", "elementwise_max:f", "elementwise_div:f",
                                      "elementwise_mul:a", "elementwise_mul:f", "momentum:a"}));
  EXPECT_EQ(main.root().FindVar("f_velocity_0"), std::nullopt);
  EXPECT_EQ(p.startup.root().num_ops(), 2);  // learning rate, a's velocity
  p.ExpectValid();
}

TEST(AppendOptimizerTest, DeviceOfTheFirstReaderGoesToTheUpdateAndAccumulators) {
  Programs p;
  p.AddParam("w", {2, 2});
  p.main.root().CreateVar("x", proto::VarType::FP32, {-1, 2}, {.need_check_feed = true});
  p.main.root().CreateVar("y", proto::VarType::FP32, {-1, 2});
  p.main.set_device("gpu:1");
  p.main.root().AppendOp("matmul_v2", {{"X", {"x"}}, {"Y", {"w"}}}, {{"Out", {"y"}}});
  p.main.set_device("");
  ASSERT_TRUE(
      AppendOptimizer(p.main, p.startup, {{"w", "w@GRAD"}}, {.kind = OptimizerKind::kAdam}).ok());
  Program main = p.main.Build();
  EXPECT_EQ(main.root().op(1).type(), "adam");
  EXPECT_EQ(main.root().op(1).AttrOr<std::string>(kOpDeviceAttr, "?"), "gpu:1");
  EXPECT_EQ(p.main.device(), "");
  Program startup = p.startup.Build();
  std::vector<std::string> devices;
  for (int i = 0; i < startup.root().num_ops(); ++i) {
    devices.push_back(startup.root().op(i).AttrOr<std::string>(kOpDeviceAttr, "?"));
  }
  // learning rate, moment1, moment2, beta1 pow, beta2 pow.
  EXPECT_EQ(devices, (std::vector<std::string>{"", "gpu:1", "gpu:1", "cpu", "cpu"}));
  EXPECT_EQ(p.startup.device(), "");
  p.ExpectValid();
}

TEST(AppendOptimizerTest, EachCallIsANewOptimizerWithItsOwnLearningRate) {
  Programs p;
  p.AddParam("w", {2});
  ASSERT_TRUE(
      AppendOptimizer(p.main, p.startup, {{"w", "w@GRAD"}}, {.kind = OptimizerKind::kAdam}).ok());
  ASSERT_TRUE(AppendOptimizer(p.main, p.startup, {{"w", "w@GRAD"}},
                              {.kind = OptimizerKind::kAdam, .learning_rate = 0.5f})
                  .ok());
  Program main = p.main.Build();
  ASSERT_EQ(main.root().num_ops(), 2);
  const Op second = main.root().op(1);
  EXPECT_EQ(second.SingleInput("LearningRate"), "learning_rate_1");
  EXPECT_EQ(second.SingleInput("Moment1"), "w_moment1_1");
  EXPECT_EQ(second.SingleInput("Beta2Pow"), "w_beta2_pow_acc_1");
  EXPECT_EQ(second.AttrOr<std::string>(kOpNamescopeAttr, ""), "/optimizer_1/");
  p.ExpectValid();
}

// Momentum(weight_decay=L2Decay(c)) (python/paddle/optimizer/momentum.py): the decay is fused into
// the momentum op as regularization_method "l2_decay" and its coeff, no ops of its own.
TEST(AppendOptimizerTest, MomentumFusesAnL2Decay) {
  Programs p;
  p.AddParam(kW, {4, 3});
  ASSERT_TRUE(AppendOptimizer(p.main, p.startup, kOneParam,
                              {.kind = OptimizerKind::kMomentum, .l2_decay = 0.25f})
                  .ok());
  Program main = p.main.Build();
  ASSERT_EQ(main.root().num_ops(), 1);
  const Op update = main.root().op(0);
  EXPECT_EQ(update.AttrOr<std::string>("regularization_method", "?"), "l2_decay");
  EXPECT_EQ(update.AttrOr<float>("regularization_coeff", -1.0f), 0.25f);
  p.ExpectValid();
}

// A decayed rate an LR schedule writes is read as it is
// (Optimizer._create_global_learning_rate keeps a Variable): no learning_rate_N, no initialiser.
TEST(AppendOptimizerTest, AGivenLearningRateVarIsReadAndNoneIsCreated) {
  Programs p;
  p.AddParam(kW, {4, 3});
  p.main.root().CreateVar("learning_rate", proto::VarType::FP32, {1}, {.persistable = true});
  ASSERT_TRUE(AppendOptimizer(p.main, p.startup, kOneParam,
                              {.kind = OptimizerKind::kSgd, .learning_rate_var = "learning_rate"})
                  .ok());
  Program main = p.main.Build();
  ASSERT_EQ(main.root().num_ops(), 1);
  EXPECT_EQ(main.root().op(0).SingleInput("LearningRate"), "learning_rate");
  EXPECT_EQ(p.main.root().FindVar("learning_rate_0"), nullptr);
  EXPECT_EQ(p.startup.desc().blocks(0).ops_size(), 0);
}

TEST(AppendOptimizerTest, NoPairsStillCreatesTheLearningRate) {
  Programs p;
  ASSERT_TRUE(AppendOptimizer(p.main, p.startup, {},
                              {.kind = OptimizerKind::kAdam, .clip_global_norm = 1.0f})
                  .ok());
  EXPECT_EQ(p.main.root().num_ops(), 0);
  EXPECT_NE(p.main.root().FindVar("learning_rate_0"), nullptr);
  EXPECT_EQ(DescribeOps(p.startup.desc().blocks(0)), kLrInit0p01);
}

// ---- low precision ----------------------------------------------------------------------------

TEST(AppendOptimizerTest, MultiPrecisionAdamUpdatesAnFp32MasterWeight) {
  Programs p;
  p.AddParam(kW, {4, 3}, proto::VarType::FP16);
  AppendInitializer(p.startup, kW, proto::VarType::FP16, {4, 3}, Initializer::Constant(0.5f));
  ASSERT_TRUE(AppendOptimizer(p.main, p.startup, kOneParam,
                              {.kind = OptimizerKind::kAdam, .multi_precision = true})
                  .ok());

  const proto::BlockDesc& main = p.main.desc().blocks(0);
  const std::string m = "linear_0.w_0_fp32_master_0";
  EXPECT_EQ(DescribeOps(main), "adam(Beta1Pow=[" + m + "_beta1_pow_acc_0], Beta2Pow=[" + m +
                                   "_beta2_pow_acc_0], "
                                   "Grad=[linear_0.w_0@GRAD], LearningRate=[learning_rate_0], "
                                   "MasterParam=[" +
                                   m + "], Moment1=[" + m + "_moment1_0], Moment2=[" + m +
                                   "_moment2_0], Param=[linear_0.w_0]) -> (Beta1PowOut=[" + m +
                                   "_beta1_pow_acc_0], Beta2PowOut=[" + m +
                                   "_beta2_pow_acc_0], MasterParamOut=[" + m + "], Moment1Out=[" +
                                   m + "_moment1_0], Moment2Out=[" + m +
                                   "_moment2_0], ParamOut=[linear_0.w_0])\n"
                                   "  beta1: FLOAT 0.9\n"
                                   "  beta2: FLOAT 0.999\n"
                                   "  epsilon: FLOAT 1e-08\n"
                                   "  lazy_mode: BOOLEAN false\n"
                                   "  min_row_size_to_use_multithread: LONG 1000\n"
                                   "  multi_precision: BOOLEAN true\n"
                                   "  op_callstack: STRINGS []\n"
                                   "  op_device: STRING ''\n"
                                   "  op_namescope: STRING '/optimizer/'\n"
                                   "  op_role: INT 2\n"
                                   "  op_role_var: STRINGS ['linear_0.w_0', 'linear_0.w_0@GRAD']\n"
                                   "  use_global_beta_pow: BOOLEAN false\n"
                                   "  with_quant_attr: BOOLEAN false\n");
  EXPECT_EQ(VarLines(main, 3),
            (std::vector<std::string>{
                "persist var " + m + " : DENSE_TENSOR.shape(4, 3).dtype(float32)" +
                    ".stop_gradient(True)",
                "persist var " + m + "_moment1_0 : DENSE_TENSOR.shape(4, 3).dtype(float32)" +
                    ".stop_gradient(False)",
                "persist var " + m + "_moment2_0 : DENSE_TENSOR.shape(4, 3).dtype(float32)" +
                    ".stop_gradient(False)",
                "persist var " + m + "_beta1_pow_acc_0 : DENSE_TENSOR.shape(1,).dtype(float32)" +
                    ".stop_gradient(False)",
                "persist var " + m + "_beta2_pow_acc_0 : DENSE_TENSOR.shape(1,).dtype(float32)" +
                    ".stop_gradient(False)"}));

  // Startup: the parameter's own initialiser, the learning rate, the master weight (zero-filled,
  // then cast from the parameter), then its accumulators.
  Program startup = p.startup.Build();
  ASSERT_EQ(startup.root().num_ops(), 8);
  EXPECT_EQ(startup.root().op(1).SingleOutput("Out"), "learning_rate_0");
  EXPECT_EQ(startup.root().op(2).type(), "fill_constant");
  EXPECT_EQ(startup.root().op(2).SingleOutput("Out"), m);
  EXPECT_EQ(startup.root().op(2).AttrOr<int32_t>("dtype", 0), proto::VarType::FP32);
  EXPECT_EQ(Describe(p.startup.desc().blocks(0).ops(3)), "cast(X=[linear_0.w_0]) -> (Out=[" + m +
                                                             "])\n"
                                                             "  in_dtype: INT 4\n"
                                                             "  op_callstack: STRINGS []\n"
                                                             "  op_device: STRING ''\n"
                                                             "  op_namescope: STRING '/'\n"
                                                             "  op_role: INT 0\n"
                                                             "  op_role_var: STRINGS []\n"
                                                             "  out_dtype: INT 5\n"
                                                             "  with_quant_attr: BOOLEAN false\n");
  EXPECT_EQ(startup.root().op(4).SingleOutput("Out"), m + "_moment1_0");
  EXPECT_EQ(startup.root().op(7).SingleOutput("Out"), m + "_beta2_pow_acc_0");
  EXPECT_EQ(startup.root().op(7).AttrOr<std::string>(kOpDeviceAttr, ""), "cpu");
  p.ExpectValid();
}

TEST(AppendOptimizerTest, MultiPrecisionSgdAndMomentumOnFp16) {
  for (OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kMomentum}) {
    SCOPED_TRACE(OptimizerKindName(kind));
    Programs p;
    p.AddParam("w", {2}, proto::VarType::BF16);
    AppendInitializer(p.startup, "w", proto::VarType::BF16, {2}, Initializer::Constant(0.0f));
    ASSERT_TRUE(AppendOptimizer(p.main, p.startup, {{"w", "w@GRAD"}},
                                {.kind = kind, .multi_precision = true})
                    .ok());
    Program main = p.main.Build();
    const Op update = main.root().op(0);
    EXPECT_EQ(update.SingleInput("MasterParam"), "w_fp32_master_0");
    EXPECT_EQ(update.SingleOutput("MasterParamOut"), "w_fp32_master_0");
    EXPECT_TRUE(update.AttrOr<bool>("multi_precision", false));
    if (kind == OptimizerKind::kMomentum) {
      EXPECT_EQ(update.SingleInput("Velocity"), "w_fp32_master_0_velocity_0");
      EXPECT_EQ(main.root().FindVar("w_fp32_master_0_velocity_0")->dtype(), proto::VarType::FP32);
    }
    p.ExpectValid();
  }
}

TEST(AppendOptimizerTest, MultiPrecisionLeavesFp32ParamsAlone) {
  Programs p;
  p.AddParam("w", {2});
  ASSERT_TRUE(AppendOptimizer(p.main, p.startup, {{"w", "w@GRAD"}},
                              {.kind = OptimizerKind::kSgd, .multi_precision = true})
                  .ok());
  Program main = p.main.Build();
  EXPECT_EQ(main.root().op(0).Input("MasterParam"), nullptr);
  EXPECT_EQ(main.root().op(0).Output("MasterParamOut"), nullptr);
  EXPECT_FALSE(main.root().op(0).AttrOr<bool>("multi_precision", true));
  EXPECT_EQ(p.startup.root().num_ops(), 1);
}

TEST(AppendOptimizerTest, Fp16WithoutMultiPrecision) {
  // Adam keeps fp16 moments in fp32 (_add_moments_pows); momentum's velocity has the param dtype.
  Programs p;
  p.AddParam("a", {2}, proto::VarType::FP16);
  ASSERT_TRUE(
      AppendOptimizer(p.main, p.startup, {{"a", "a@GRAD"}}, {.kind = OptimizerKind::kAdam}).ok());
  Program main = p.main.Build();
  EXPECT_EQ(main.root().FindVar("a_moment1_0")->dtype(), proto::VarType::FP32);
  EXPECT_EQ(main.root().FindVar("a_beta1_pow_acc_0")->dtype(), proto::VarType::FP32);
  EXPECT_EQ(main.root().op(0).Input("MasterParam"), nullptr);

  Programs q;
  q.AddParam("a", {2}, proto::VarType::FP16);
  ASSERT_TRUE(
      AppendOptimizer(q.main, q.startup, {{"a", "a@GRAD"}}, {.kind = OptimizerKind::kMomentum})
          .ok());
  EXPECT_EQ(q.main.Build().root().FindVar("a_velocity_0")->dtype(), proto::VarType::FP16);
}

// ---- errors -----------------------------------------------------------------------------------

// Runs AppendOptimizer expecting failure and checks that neither program changed.
Status AppendExpectingFailure(Programs& p, const std::vector<ParamGrad>& pairs,
                              const OptimizerOptions& options) {
  const std::string main_before = p.main.desc().SerializeAsString();
  const std::string startup_before = p.startup.desc().SerializeAsString();
  Status status = AppendOptimizer(p.main, p.startup, pairs, options);
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(p.main.desc().SerializeAsString(), main_before);
  EXPECT_EQ(p.startup.desc().SerializeAsString(), startup_before);
  return status;
}

TEST(AppendOptimizerErrorsTest, UnknownParameter) {
  Programs p;
  p.AddParam("w", {2});
  Status status = AppendExpectingFailure(p, {{"w", "w@GRAD"}, {"v", "v@GRAD"}}, {});
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_EQ(status.ToString(),
            "block 0, var 'v': error: optimizer: parameter 'v' is not declared in the main "
            "program's root block");
}

TEST(AppendOptimizerErrorsTest, UnknownLearningRateVar) {
  Programs p;
  p.AddParam("w", {2});
  Status status = AppendExpectingFailure(p, {{"w", "w@GRAD"}}, {.learning_rate_var = "lr"});
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_EQ(status.ToString(),
            "block 0, var 'lr': error: optimizer: learning rate 'lr' is not declared in the main "
            "program's root block");
}

TEST(AppendOptimizerErrorsTest, L2DecayIsMomentumsOnly) {
  Programs p;
  p.AddParam("w", {2});
  Status status = AppendExpectingFailure(p, {{"w", "w@GRAD"}},
                                         {.kind = OptimizerKind::kAdam, .l2_decay = 0.1f});
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.ToString(),
            "error: adam: l2_decay is fused by momentum only; other optimizers append their own "
            "regularization ops, which are not modelled");
}

TEST(AppendOptimizerErrorsTest, UnknownGradient) {
  Programs p;
  p.main.root().CreateVar("w", proto::VarType::FP32, {2}, {.persistable = true});
  Status status = AppendExpectingFailure(p, {{"w", "w@GRAD"}}, {.kind = OptimizerKind::kAdam});
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_EQ(status.ToString(),
            "block 0, var 'w@GRAD': error: optimizer: gradient 'w@GRAD' of parameter 'w' is not "
            "declared in the main program's root block");
}

TEST(AppendOptimizerErrorsTest, ParameterThatIsNotATensor) {
  Programs p;
  p.main.root().CreateTypedVar("s", proto::VarType::STEP_SCOPES);
  p.main.root().CreateVar("s@GRAD", proto::VarType::FP32, {2}, {.persistable = true});
  Status status = AppendExpectingFailure(p, {{"s", "s@GRAD"}}, {});
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.ToString(),
            "block 0, var 's': error: optimizer: parameter 's' is not a dense tensor");
}

TEST(AppendOptimizerErrorsTest, ParameterListedTwice) {
  Programs p;
  p.AddParam("w", {2});
  Status status = AppendExpectingFailure(p, {{"w", "w@GRAD"}, {"w", "w@GRAD"}}, {});
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.ToString(), "block 0, var 'w': error: optimizer: parameter 'w' is listed twice");
}

TEST(AppendOptimizerErrorsTest, AdamHyperparametersOutOfRange) {
  Programs p;
  p.AddParam("w", {2});
  Status beta1 =
      AppendExpectingFailure(p, {{"w", "w@GRAD"}}, {.kind = OptimizerKind::kAdam, .beta1 = 1.0f});
  EXPECT_EQ(beta1.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(beta1.ToString(), "error: adam: beta1 must be in [0, 1), got 1");
  Status beta2 = AppendExpectingFailure(p, {{"w", "w@GRAD"}},
                                        {.kind = OptimizerKind::kAdamW, .beta2 = std::nanf("")});
  EXPECT_EQ(beta2.ToString(), "error: adamw: beta2 must be in [0, 1), got nan");
  Status epsilon = AppendExpectingFailure(p, {{"w", "w@GRAD"}},
                                          {.kind = OptimizerKind::kAdam, .epsilon = -0.5f});
  EXPECT_EQ(epsilon.ToString(), "error: adam: epsilon must be >= 0, got -0.5");
  // Momentum and SGD do not read them.
  EXPECT_TRUE(AppendOptimizer(p.main, p.startup, {{"w", "w@GRAD"}},
                              {.kind = OptimizerKind::kMomentum, .beta1 = 1.0f})
                  .ok());
}

TEST(AppendOptimizerErrorsTest, UnknownKind) {
  Programs p;
  p.AddParam("w", {2});
  Status status =
      AppendExpectingFailure(p, {{"w", "w@GRAD"}}, {.kind = static_cast<OptimizerKind>(7)});
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.ToString(), "error: unknown optimizer kind 7");
}

TEST(AppendOptimizerErrorsTest, ClipOfUnsupportedGradients) {
  Programs p;
  p.AddParam("h", {2}, proto::VarType::FP16);
  Status fp16 = AppendExpectingFailure(p, {{"h", "h@GRAD"}}, {.clip_global_norm = 1.0f});
  EXPECT_EQ(fp16.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(fp16.ToString(),
            "block 0, var 'h@GRAD': error: optimizer: global-norm clipping of gradient 'h@GRAD' "
            "(FP16) is not supported: only dense FP32 or FP64 gradients");

  p.AddParam("s", {2});
  p.AddParam("d", {2}, proto::VarType::FP64);
  Status mixed =
      AppendExpectingFailure(p, {{"s", "s@GRAD"}, {"d", "d@GRAD"}}, {.clip_global_norm = 1.0f});
  EXPECT_EQ(mixed.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(mixed.ToString(),
            "block 0, var 'd@GRAD': error: optimizer: global-norm clipping of gradients of "
            "different dtypes (FP32 and FP64) is not supported");

  p.main.root().CreateVar("e", proto::VarType::FP32, {10, 2}, {.persistable = true});
  p.main.root().CreateTypedVar("e@GRAD", proto::VarType::SELECTED_ROWS, true);
  Status sparse = AppendExpectingFailure(p, {{"e", "e@GRAD"}}, {.clip_global_norm = 1.0f});
  EXPECT_EQ(sparse.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(sparse.ToString(),
            "block 0, var 'e@GRAD': error: optimizer: global-norm clipping of gradient 'e@GRAD' "
            "(SELECTED_ROWS) is not supported: only dense FP32 or FP64 gradients");
  // Without clipping a sparse gradient is fine: the update op takes it as it is.
  EXPECT_TRUE(AppendOptimizer(p.main, p.startup, {{"e", "e@GRAD"}}, {}).ok());
}

TEST(AppendOptimizerErrorsTest, MasterWeightNeedsTheParameterInStartup) {
  Programs p;
  p.AddParam("h", {2}, proto::VarType::FP16);
  Status status = AppendExpectingFailure(p, {{"h", "h@GRAD"}},
                                         {.kind = OptimizerKind::kAdam, .multi_precision = true});
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_EQ(status.ToString(),
            "block 0, var 'h': error: optimizer: parameter 'h' is not declared in the startup "
            "program, where its fp32 master weight is cast from it");
}

}  // namespace
}  // namespace irm::oldir
