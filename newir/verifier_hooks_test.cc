// Tests of the pd_op verifier hooks (pd_op_verify.h) run through the verifier: pd_op.if and
// pd_op.while against what their regions yield, matmul inner dims and elementwise broadcasting.
// Each rule has programs that pass (dynamic dims included) and a broken one with the exact text.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "newir/builder.h"
#include "newir/pd_op_verify.h"
#include "newir/verifier.h"

namespace irm::newir {
namespace {

Type T(std::vector<int64_t> dims, Type dtype = Type::F32()) {
  return Type::DenseTensor(std::move(dtype), std::move(dims));
}
Type B(std::vector<int64_t> dims) { return T(std::move(dims), Type::Bool()); }

class HookTest : public ::testing::Test {
 protected:
  Value* Param(const std::string& name, Type type) {
    return b
        .Create("builtin.parameter", {}, {std::move(type)},
                {{"parameter_name", Attribute::String(name)}})
        ->result(0);
  }
  std::string Check() const { return VerifyProgramAll(p, {.file = "f.pir"}).Render(); }

  // pd_op.if (cond) -> result_types whose region r yields yields[r].
  Operation* If(Value* cond, std::vector<Type> result_types,
                std::vector<std::vector<Value*>> yields) {
    Operation* op = b.Create("pd_op.if", {cond}, result_types, {}, 2);
    for (size_t r = 0; r < 2; ++r) {
      Builder(op->region(r).AddBlock()).Create("cf.yield", yields[r], {});
    }
    return op;
  }

  // pd_op.while (cond, inputs) -> result_types; the body has one argument per arg_types entry
  // and yields `next` (block arguments given as nullptr are replaced by argument i in order).
  Operation* While(Value* cond, std::vector<Value*> inputs, std::vector<Type> result_types,
                   std::vector<Type> arg_types, std::vector<Value*> next) {
    std::vector<Value*> operands = {cond};
    operands.insert(operands.end(), inputs.begin(), inputs.end());
    Operation* op = b.Create("pd_op.while", operands, result_types, {}, 1);
    Block& body = op->region(0).AddBlock();
    size_t a = 0;
    for (Type& t : arg_types) body.AddArgument(std::move(t));
    for (Value*& v : next) {
      if (v == nullptr) v = body.argument(a++);
    }
    Builder(body).Create("cf.yield", next, {});
    return op;
  }

  Program p;
  Builder b{p.block()};
};

TEST(TypesCompatibleTest, DynamicDimsMatchAnyStaticDim) {
  EXPECT_TRUE(TypesCompatible(T({2, 3}), T({2, 3})));
  EXPECT_TRUE(TypesCompatible(T({2, 3}), T({-1, 3})));
  EXPECT_TRUE(TypesCompatible(T({-1, 3}), T({2, -1})));
  EXPECT_FALSE(TypesCompatible(T({2, 3}), T({2, 4})));
  EXPECT_FALSE(TypesCompatible(T({2, 3}), T({2, 3, 1})));
  EXPECT_FALSE(TypesCompatible(T({2}), T({2}, Type::F16())));
  EXPECT_FALSE(TypesCompatible(T({2}), Type::DenseTensorArray(Type::F32(), {2})));
  EXPECT_TRUE(TypesCompatible(Type::Vector({T({2}), T({-1})}), Type::Vector({T({-1}), T({3})})));
  EXPECT_FALSE(TypesCompatible(Type::Vector({T({2})}), Type::Vector({T({2}), T({2})})));
  EXPECT_FALSE(TypesCompatible(Type::F32(), Type::I32()));
}

// --- pd_op.if ------------------------------------------------------------------------------------

TEST_F(HookTest, IfYieldsMatchItsResults) {
  Value* c = Param("c", B({}));
  Value* two = Param("two", T({2}));
  Value* three = Param("three", T({3}));
  If(c, {T({-1})}, {{two}, {three}});  // branch shapes merged into a dynamic dim
  If(c, {}, {{}, {}});
  EXPECT_EQ(Check(), "");
}

TEST_F(HookTest, IfCondMustBeABoolTensor) {
  Value* c = Param("c", T({1}));
  Value* x = Param("x", T({2}));
  If(c, {T({2})}, {{x}, {x}});
  EXPECT_EQ(Check(),
            "f.pir: op 2 (pd_op.if): error: cond (operand 0) must be a bool tensor, found "
            "builtin.tensor<1xf32>\n");
}

TEST_F(HookTest, IfYieldCountAndTypesMustMatchItsResults) {
  Value* c = Param("c", B({1}));
  Value* x = Param("x", T({2}));
  Value* y = Param("y", T({3}));
  If(c, {T({2})}, {{x, x}, {x}});
  If(c, {T({2})}, {{x}, {y}});
  EXPECT_EQ(Check(),
            "f.pir: op 3 (pd_op.if): error: region 0 yields 2 values but pd_op.if has 1 result\n"
            "f.pir: op 4 (pd_op.if): error: region 1 yields builtin.tensor<3xf32> as value 0 but "
            "result 0 is builtin.tensor<2xf32>\n");
}

// --- pd_op.while ---------------------------------------------------------------------------------

TEST_F(HookTest, WellFormedWhilePasses) {
  Value* c = Param("c", B({1}));
  Value* x = Param("x", T({2}));
  Value* n = Param("n", T({}, Type::I64()));
  While(c, {x, n}, {T({2}), T({}, Type::I64())}, {T({2}), T({}, Type::I64())},
        {c, nullptr, nullptr});
  While(c, {}, {}, {}, {c});
  EXPECT_EQ(Check(), "");
}

TEST_F(HookTest, WhileCondAndResultsFollowItsLoopValues) {
  Value* c = Param("c", B({1}));
  Value* i = Param("i", T({1}, Type::I32()));
  Value* x = Param("x", T({2}));
  While(i, {x}, {T({2})}, {T({2})}, {c, nullptr});
  While(c, {x}, {}, {T({2})}, {c, nullptr});
  While(c, {x}, {T({3})}, {T({2})}, {c, nullptr});
  EXPECT_EQ(Check(),
            "f.pir: op 3 (pd_op.while): error: cond (operand 0) must be a bool tensor, found "
            "builtin.tensor<1xi32>\n"
            "f.pir: op 4 (pd_op.while): error: has 0 results but 1 loop value (the operands after "
            "cond)\n"
            "f.pir: op 5 (pd_op.while): error: result 0 is builtin.tensor<3xf32> but loop value 0 "
            "(operand 1) is builtin.tensor<2xf32>\n");
}

TEST_F(HookTest, WhileBodyArgumentsFollowItsLoopValues) {
  Value* c = Param("c", B({1}));
  Value* x = Param("x", T({2}));
  While(c, {x}, {T({2})}, {}, {c, x});
  While(c, {x}, {T({2})}, {T({2}, Type::I64())}, {c, x});
  EXPECT_EQ(Check(),
            "f.pir: op 2 (pd_op.while): error: the body block has 0 arguments but there is 1 loop "
            "value\n"
            "f.pir: op 3 (pd_op.while): error: body argument 0 is builtin.tensor<2xi64> but loop "
            "value 0 (operand 1) is builtin.tensor<2xf32>\n");
}

TEST_F(HookTest, WhileBodyYieldsTheNextCondAndLoopValues) {
  Value* c = Param("c", B({1}));
  Value* x = Param("x", T({2}));
  Value* y = Param("y", T({3}));
  While(c, {x}, {T({2})}, {T({2})}, {nullptr});
  While(c, {x}, {T({2})}, {T({2})}, {x, nullptr});
  While(c, {x}, {T({2})}, {T({2})}, {c, y});
  EXPECT_EQ(Check(),
            "f.pir: op 3 (pd_op.while): error: the body's cf.yield passes 1 value but needs 2 (the "
            "next cond and 1 loop value)\n"
            "f.pir: op 4 (pd_op.while): error: the body's cf.yield passes builtin.tensor<2xf32> as "
            "the next cond; it must be a bool tensor\n"
            "f.pir: op 5 (pd_op.while): error: the body's cf.yield passes builtin.tensor<3xf32> as "
            "loop value 0 (its operand 1) but the loop value is builtin.tensor<2xf32>\n");
}

// --- pd_op.matmul --------------------------------------------------------------------------------

TEST_F(HookTest, MatmulInnerDimsAgree) {
  auto mm = [this](Type x, Type y, bool tx, bool ty) {
    b.Create("pd_op.matmul", {Param("x", std::move(x)), Param("y", std::move(y))}, {T({-1})},
             {{"transpose_x", Attribute::Bool(tx)}, {"transpose_y", Attribute::Bool(ty)}});
  };
  mm(T({4, 8}), T({8, 2}), false, false);
  mm(T({8, 4}), T({8, 2}), true, false);
  mm(T({4, 8}), T({2, 8}), false, true);
  mm(T({3, 4, 8}), T({8, 2}), false, false);
  mm(T({8}), T({8, 2}), false, false);
  mm(T({4, 8}), T({8}), false, false);
  mm(T({4, -1}), T({8, 2}), false, false);
  mm(T({8}), T({3, 2}), true, false);  // transposed 1-D: left to the kernel
  EXPECT_EQ(Check(), "");
}

TEST_F(HookTest, MatmulInnerDimsMismatch) {
  auto mm = [this](Type x, Type y, bool ty) {
    b.Create("pd_op.matmul", {Param("x", std::move(x)), Param("y", std::move(y))}, {T({-1})},
             {{"transpose_y", Attribute::Bool(ty)}});
  };
  mm(T({4, 8}), T({4, 2}), false);
  mm(T({4, 8}), T({8, 2}), true);
  mm(T({8}), T({3, 2}), false);
  EXPECT_EQ(Check(),
            "f.pir: op 2 (pd_op.matmul): error: inner dims differ: x is builtin.tensor<4x8xf32> (8 "
            "columns) but y is builtin.tensor<4x2xf32> (4 rows)\n"
            "f.pir: op 5 (pd_op.matmul): error: inner dims differ: x is builtin.tensor<4x8xf32> (8 "
            "columns) but y is builtin.tensor<8x2xf32> (2 columns, transposed)\n"
            "f.pir: op 8 (pd_op.matmul): error: inner dims differ: x is builtin.tensor<8xf32> "
            "(length 8) but y is builtin.tensor<3x2xf32> (3 rows)\n");
}

TEST_F(HookTest, MatmulTransposedXMismatch) {
  b.Create("pd_op.matmul", {Param("x", T({8, 4})), Param("y", T({4, 2}))}, {T({-1})},
           {{"transpose_x", Attribute::Bool(true)}});
  EXPECT_EQ(Check(),
            "f.pir: op 2 (pd_op.matmul): error: inner dims differ: x is "
            "builtin.tensor<8x4xf32> (8 rows, transposed) but y is "
            "builtin.tensor<4x2xf32> (4 rows)\n");
}

// --- Elementwise binary ops ----------------------------------------------------------------------

TEST_F(HookTest, ElementwiseOperandsBroadcast) {
  auto binary = [this](const char* name, Type x, Type y) {
    b.Create(name, {Param("x", std::move(x)), Param("y", std::move(y))}, {T({-1})});
  };
  binary("pd_op.add", T({2, 3}), T({3}));
  binary("pd_op.subtract", T({2, 1}), T({1, 3}));
  binary("pd_op.multiply", T({-1, 3}), T({5, 3}));
  binary("pd_op.divide", T({}), T({2, 3}));
  binary("pd_op.add_", T({4, 2, 3}), T({2, 3}));
  EXPECT_EQ(Check(), "");
}

TEST_F(HookTest, ElementwiseOperandsThatDoNotBroadcast) {
  b.Create("pd_op.multiply_", {Param("x", T({2, 3})), Param("y", T({4}))}, {T({2, 3})});
  EXPECT_EQ(Check(),
            "f.pir: op 2 (pd_op.multiply_): error: x builtin.tensor<2x3xf32> and y "
            "builtin.tensor<4xf32> do not broadcast: dim 1 of x is 3 but dim 0 of y is "
            "4\n");
}

}  // namespace
}  // namespace irm::newir
