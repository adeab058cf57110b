// Tests of the structural comparison: equal programs built twice, and one test per kind of
// difference with the exact message.
#include "newir/structural_equal.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "newir/builder.h"

namespace irm::newir {
namespace {

Type T(std::vector<int64_t> dims, Type dtype = Type::F32()) {
  return Type::DenseTensor(std::move(dtype), std::move(dims));
}

struct Knobs {
  Type x_type = T({4, 8});
  float scale = 2.0f;
  bool swap_operands = false;
  bool empty_bias = false;
  Type arg_type = T({});
  std::string kwarg_name = "k";
  bool extra_op = false;
};

// data x, y -> add -> scale; an if whose then-branch has a block argument and a keyword argument.
void Build(Program& program, const Knobs& k) {
  Builder b(program.block());
  Operation* x = b.Create("pd_op.data", {}, {k.x_type}, {{"name", Attribute::String("x")}});
  Operation* y = b.Create("pd_op.data", {}, {T({4, 8})}, {{"name", Attribute::String("y")}});
  Value* lhs = k.swap_operands ? y->result(0) : x->result(0);
  Value* rhs = k.swap_operands ? x->result(0) : y->result(0);
  Operation* add = b.Create("pd_op.add", {lhs, rhs}, {T({4, 8})});
  Operation* scale =
      b.Create("pd_op.layer_norm", {add->result(0), nullptr, k.empty_bias ? nullptr : y->result(0)},
               {T({4, 8})}, {{"epsilon", Attribute::Float(k.scale)}});
  Operation* cond = b.Create("pd_op.data", {}, {T({}, Type::Bool())});
  Operation* op = b.Create("pd_op.if", {cond->result(0)}, {T({4, 8})}, {}, 2);
  Block& then_block = op->region(0).AddBlock();
  then_block.AddArgument(k.arg_type)->SetAttribute("stop_gradient", Attribute::Bool(true));
  (void)then_block.AddKwarg(k.kwarg_name, T({1}));
  Builder inner(then_block);
  inner.Create("cf.yield", {scale->result(0)}, {});
  Builder other(op->region(1).AddBlock());
  other.Create("cf.yield", {add->result(0)}, {});
  if (k.extra_op) b.Create("pd_op.relu", {op->result(0)}, {T({4, 8})});
}

std::optional<std::string> Compare(const Knobs& a, const Knobs& b) {
  Program pa;
  Program pb;
  Build(pa, a);
  Build(pb, b);
  return FindStructuralDifference(pa, pb);
}

TEST(StructuralEqualTest, SameConstructionIsEqual) {
  EXPECT_EQ(Compare({}, {}), std::nullopt);
  Program empty_a;
  Program empty_b;
  EXPECT_EQ(FindStructuralDifference(empty_a, empty_b), std::nullopt);
}

TEST(StructuralEqualTest, ResultType) {
  Knobs other;
  other.x_type = T({4, 9});
  EXPECT_EQ(Compare({}, other),
            "op 0 (pd_op.data): result 0 has type builtin.tensor<4x8xf32> vs "
            "builtin.tensor<4x9xf32>");
}

TEST(StructuralEqualTest, AttributeValueByBits) {
  Knobs other;
  other.scale = 2.5f;
  EXPECT_EQ(Compare({}, other),
            "op 3 (pd_op.layer_norm): attribute 'epsilon' is (Float)2 vs (Float)2.5");
  Knobs nan_a;
  nan_a.scale = std::nanf("");
  EXPECT_EQ(Compare(nan_a, nan_a), std::nullopt);
  Knobs zero;
  zero.scale = 0.0f;
  Knobs minus_zero;
  minus_zero.scale = -0.0f;
  EXPECT_NE(Compare(zero, minus_zero), std::nullopt);
}

TEST(StructuralEqualTest, Dataflow) {
  Knobs other;
  other.swap_operands = true;
  EXPECT_EQ(Compare({}, other), "op 2 (pd_op.add): operand 0 reads a different value");
  Knobs empty;
  empty.empty_bias = true;
  EXPECT_EQ(Compare({}, empty), "op 3 (pd_op.layer_norm): operand 2 is empty in only one");
}

TEST(StructuralEqualTest, NestedBlockArguments) {
  Knobs other;
  other.arg_type = T({1});
  EXPECT_EQ(Compare({}, other),
            "op 5 (pd_op.if) > region 0 > block 0: argument 0 has type builtin.tensor<f32> vs "
            "builtin.tensor<1xf32>");
  Knobs renamed;
  renamed.kwarg_name = "j";
  EXPECT_EQ(Compare({}, renamed),
            "op 5 (pd_op.if) > region 0 > block 0: keyword argument 0 is named 'k' vs 'j'");
}

TEST(StructuralEqualTest, OpCountAndAttributeNames) {
  Knobs other;
  other.extra_op = true;
  EXPECT_EQ(Compare({}, other), "6 vs 7 ops");

  Program a;
  Program b;
  Builder(a.block()).Create("pd_op.relu", {}, {}, {{"a", Attribute::Bool(true)}});
  Builder(b.block()).Create("pd_op.relu", {}, {}, {{"b", Attribute::Bool(true)}});
  EXPECT_EQ(FindStructuralDifference(a, b), "op 0 (pd_op.relu): attribute 'a' vs 'b'");
  Program c;
  Builder(c.block()).Create("pd_op.relu", {}, {});
  EXPECT_EQ(FindStructuralDifference(a, c), "op 0 (pd_op.relu): attribute 'a' only in the first");
  Program d;
  Builder(d.block()).Create("pd_op.tanh", {}, {});
  EXPECT_EQ(FindStructuralDifference(c, d),
            "op 0 (pd_op.relu): op is 'pd_op.relu' vs 'pd_op.tanh'");
}

TEST(StructuralEqualTest, HiddenAttributesCountUnlessIgnored) {
  Program a;
  Program b;
  Builder(a.block()).Create("pd_op.relu", {}, {}, {{"op_callstack", Attribute::Array({})}});
  Builder(b.block()).Create("pd_op.relu", {}, {});
  EXPECT_EQ(FindStructuralDifference(a, b),
            "op 0 (pd_op.relu): attribute 'op_callstack' only in the first");
  EXPECT_EQ(FindStructuralDifference(a, b, {.ignore_hidden_attributes = true}), std::nullopt);
  Program c;
  Builder(c.block()).Create("pd_op.relu", {}, {}, {{"other", Attribute::Bool(true)}});
  EXPECT_EQ(FindStructuralDifference(a, c, {.ignore_hidden_attributes = true}),
            "op 0 (pd_op.relu): attribute 'other' only in the second");
}

}  // namespace
}  // namespace irm::newir
