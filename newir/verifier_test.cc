// Tests of the verifier's scoping, registration, table, region and terminator checks, the
// locations of its findings (paths into nested regions), the first-error and all-findings entry
// points and its behaviour on large and deeply nested programs. Each rule has a well-formed
// program that passes and a broken one with the exact diagnostic. The op hooks are tested in
// verifier_hooks_test.cc, the dist checks in verify_dist_test.cc; cases that are only text in and a
// finding out are annotated .pir files run by `opt --verify-diagnostics`
// (tools/testdata/opt_verify_*.pir).
#include "newir/verifier.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "newir/builder.h"

namespace irm::newir {
namespace {

Type T(std::vector<int64_t> dims, Type dtype = Type::F32()) {
  return Type::DenseTensor(std::move(dtype), std::move(dims));
}
Type B(std::vector<int64_t> dims) { return T(std::move(dims), Type::Bool()); }

Operation* Param(Builder& b, const std::string& name, Type type) {
  return b.Create("builtin.parameter", {}, {std::move(type)},
                  {{"parameter_name", Attribute::String(name)}});
}

// Every finding, rendered, for a program read from "f.pir".
std::string Check(const Program& program, bool allow_unregistered = false) {
  VerifyOptions options;
  options.file = "f.pir";
  options.allow_unregistered = allow_unregistered;
  return VerifyProgramAll(program, options).Render();
}

// c (bool), x: the operands most tests start from.
class VerifierTest : public ::testing::Test {
 protected:
  VerifierTest() {
    c = Param(b, "c", B({1}))->result(0);
    x = Param(b, "x", T({2}))->result(0);
  }
  // pd_op.if (c) -> T({2}) with two empty blocks, at op index 2.
  Operation* If() {
    Operation* op = b.Create("pd_op.if", {c}, {T({2})}, {}, 2);
    op->region(0).AddBlock();
    op->region(1).AddBlock();
    return op;
  }
  Program p;
  Builder b{p.block()};
  Value* c = nullptr;
  Value* x = nullptr;
};

TEST_F(VerifierTest, WellFormedProgramPasses) {
  Operation* w = Param(b, "w", T({2, 3}));
  Operation* mm = b.Create("pd_op.matmul", {x, w->result(0)}, {T({3})});
  Operation* relu = b.Create("pd_op.relu", {mm->result(0)}, {T({3})},
                             {{"stop_gradient", Attribute::Array({Attribute::Bool(false)})}});
  b.Create("builtin.shadow_output", {relu->result(0)}, {},
           {{"output_name", Attribute::String("y")}});
  EXPECT_EQ(Check(p), "");
  EXPECT_TRUE(VerifyProgram(p).ok());
}

// --- Scoping -------------------------------------------------------------------------------------

TEST_F(VerifierTest, ReadingALaterResultIsUseBeforeDefinition) {
  Operation* w = Param(b, "w", T({2}));
  b.SetInsertionPoint(*w);
  b.Create("pd_op.relu", {w->result(0)}, {T({2})});
  EXPECT_EQ(Check(p),
            "f.pir: op 2 (pd_op.relu): error: operand 0 ('x') reads result 0 of op 3 "
            "(builtin.parameter), which is defined later (use before definition)\n");
}

TEST_F(VerifierTest, ANestedRegionMayNotReadALaterResultOfAnEnclosingBlock) {
  Operation* if_op = If();
  Operation* later = Param(b, "later", T({2}));
  Builder then_b(if_op->region(0).front());
  then_b.Create("cf.yield", {later->result(0)}, {});
  Builder(if_op->region(1).front()).Create("cf.yield", {x}, {});
  EXPECT_EQ(Check(p),
            "f.pir: op 0 (cf.yield), in region 0 of op 2 (pd_op.if): error: operand 0 "
            "('inputs') reads result 0 of op 3 (builtin.parameter), which is defined later (use "
            "before definition)\n");
}

TEST_F(VerifierTest, AnOpMayNotReadItsOwnResult) {
  Operation* relu = b.Create("pd_op.relu", {x}, {T({2})});
  relu->SetOperand(0, relu->result(0));
  EXPECT_EQ(Check(p),
            "f.pir: op 2 (pd_op.relu): error: operand 0 ('x') reads result 0 of its "
            "own op\n");
}

TEST_F(VerifierTest, NestedRegionsSeeEnclosingValuesButNotTheirOpsResults) {
  Operation* if_op = If();
  Builder then_b(if_op->region(0).front());
  Operation* relu = then_b.Create("pd_op.relu", {x}, {T({2})});  // an enclosing value: fine
  then_b.Create("cf.yield", {relu->result(0)}, {});
  Builder else_b(if_op->region(1).front());
  else_b.Create("pd_op.relu", {if_op->result(0)}, {T({2})});
  else_b.Create("cf.yield", {x}, {});
  EXPECT_EQ(Check(p),
            "f.pir: op 0 (pd_op.relu), in region 1 of op 2 (pd_op.if): error: operand 0 ('x') "
            "reads result 0 of op 2 (pd_op.if), which encloses this op: a region cannot read the "
            "results of its own op\n");
}

TEST_F(VerifierTest, SiblingRegionsAndEarlierOpsRegionsAreOutOfScope) {
  Operation* if_op = If();
  Builder then_b(if_op->region(0).front());
  Operation* relu = then_b.Create("pd_op.relu", {x}, {T({2})});
  then_b.Create("cf.yield", {relu->result(0)}, {});
  Builder(if_op->region(1).front()).Create("cf.yield", {relu->result(0)}, {});
  b.Create("builtin.shadow_output", {relu->result(0)}, {},
           {{"output_name", Attribute::String("y")}});
  EXPECT_EQ(Check(p),
            "f.pir: op 0 (cf.yield), in region 1 of op 2 (pd_op.if): error: operand 0 "
            "('inputs') reads result 0 of op 0 (pd_op.relu) in region 0 of op 2 (pd_op.if), which "
            "is out of scope here: a region sees only its own values and those of the blocks "
            "enclosing it\n"
            "f.pir: op 3 (builtin.shadow_output): error: operand 0 ('x') reads result 0 of op 0 "
            "(pd_op.relu) in region 0 of op 2 (pd_op.if), which is out of scope here: a region "
            "sees only its own values and those of the blocks enclosing it\n");
}

TEST_F(VerifierTest, BlockArgumentsAreVisibleInTheirBlockOnly) {
  // while (c, x) { ^arg: yield(c, relu(arg)) }, then a second loop whose body reads the first
  // loop's argument.
  Operation* loop = b.Create("pd_op.while", {c, x}, {T({2})}, {}, 1);
  Block& body = loop->region(0).AddBlock();
  Value* arg = body.AddArgument(T({2}));
  Builder in(body);
  Operation* relu = in.Create("pd_op.relu", {arg}, {T({2})});
  in.Create("cf.yield", {c, relu->result(0)}, {});
  EXPECT_EQ(Check(p), "");

  Operation* loop2 = b.Create("pd_op.while", {c, x}, {T({2})}, {}, 1);
  Block& body2 = loop2->region(0).AddBlock();
  body2.AddArgument(T({2}));
  Builder(body2).Create("cf.yield", {c, arg}, {});
  EXPECT_EQ(Check(p),
            "f.pir: op 0 (cf.yield), in region 0 of op 3 (pd_op.while): error: operand 1 "
            "('inputs') reads argument 0 of region 0 of op 2 (pd_op.while), which is out of scope "
            "here: a region sees only its own values and those of the blocks enclosing it\n");
}

TEST_F(VerifierTest, EachBlockOfARegionIsItsOwnScope) {
  Operation* scope = b.Create("test.scope", {}, {}, {}, 1);
  Block& first = scope->region(0).AddBlock();
  Block& second = scope->region(0).AddBlock();
  Operation* relu = Builder(first).Create("pd_op.relu", {x}, {T({2})});
  Builder(second).Create("pd_op.relu", {relu->result(0)}, {T({2})});
  EXPECT_EQ(Check(p, /*allow_unregistered=*/true),
            "f.pir: op 0 (pd_op.relu), in block 1 of region 0 of op 2 (test.scope): error: "
            "operand 0 ('x') reads result 0 of op 0 (pd_op.relu) in block 0 of region 0 of op 2 "
            "(test.scope), which is out of scope here: a region sees only its own values and those "
            "of the blocks enclosing it\n");
}

TEST_F(VerifierTest, ValuesOfAnotherProgramAreNotInScope) {
  Program other;
  Builder ob(other.block());
  Operation* foreign = Param(ob, "w", T({2}));
  Operation* holder = ob.Create("test.scope", {}, {}, {}, 1);
  Value* foreign_arg = holder->region(0).AddBlock().AddArgument(T({2}));
  b.Create("pd_op.relu", {foreign->result(0)}, {T({2})});
  b.Create("pd_op.relu", {foreign_arg}, {T({2})});
  EXPECT_EQ(Check(p),
            "f.pir: op 2 (pd_op.relu): error: operand 0 ('x') reads result 0 of "
            "builtin.parameter, which is not in this program (it belongs to another program or to "
            "a detached op)\n"
            "f.pir: op 3 (pd_op.relu): error: operand 0 ('x') reads an argument of a block, which "
            "is not in this program (it belongs to another program or to a detached op)\n");
}

TEST_F(VerifierTest, ResultsOfADetachedOpAreNotInScope) {
  std::unique_ptr<Operation> detached = Operation::Create(
      "builtin.parameter", {}, {T({2})}, {{"parameter_name", Attribute::String("d")}}, 0,
      OpRegistry::Global().Lookup("builtin.parameter"));
  b.Create("pd_op.relu", {detached->result(0)}, {T({2})});
  EXPECT_EQ(Check(p),
            "f.pir: op 2 (pd_op.relu): error: operand 0 ('x') reads result 0 of "
            "builtin.parameter, which is not in this program (it belongs to another program or to "
            "a detached op)\n");
}

// --- Registration --------------------------------------------------------------------------------

TEST_F(VerifierTest, UnregisteredOpsAreErrorsUnlessAllowed) {
  b.Create("pd_op.nonexistent", {x}, {T({2})});
  EXPECT_EQ(Check(p),
            "f.pir: op 2 (pd_op.nonexistent): error: op 'pd_op.nonexistent' is not registered "
            "(--allow-unregistered keeps unknown ops opaquely)\n");
  EXPECT_EQ(Check(p, /*allow_unregistered=*/true), "");
}

TEST_F(VerifierTest, AllowedUnregisteredOpsAreStillScopeChecked) {
  Operation* w = Param(b, "w", T({2}));
  b.SetInsertionPoint(*w);
  // Anything goes for the op itself: no table to hold it to.
  b.Create("test.opaque", {w->result(0), nullptr}, {Type()}, {{"k", Attribute()}}, 1);
  EXPECT_EQ(Check(p, /*allow_unregistered=*/true),
            "f.pir: op 2 (test.opaque): error: operand 0 reads result 0 of op 3 "
            "(builtin.parameter), which is defined later (use before definition)\n");
}

TEST_F(VerifierTest, ARegisteredOpBuiltWithoutItsEntryIsAnError) {
  p.block().PushBack(Operation::Create("pd_op.relu", {x}, {T({2})}));
  const std::string expected =
      "f.pir: op 2 (pd_op.relu): error: op 'pd_op.relu' carries no table entry though the "
      "registry has one (build ops with Builder, or set their info)\n";
  EXPECT_EQ(Check(p), expected);
  EXPECT_EQ(Check(p, /*allow_unregistered=*/true), expected);
}

TEST_F(VerifierTest, AnOpWithAnotherOpsEntryIsAnError) {
  p.block().PushBack(Operation::Create("pd_op.relu", {x}, {T({2})}, {}, 0,
                                       OpRegistry::Global().Lookup("pd_op.tanh")));
  EXPECT_EQ(Check(p),
            "f.pir: op 2 (pd_op.relu): error: the op's table entry is for 'pd_op.tanh' "
            "but the op is named 'pd_op.relu'\n");
}

// --- Operand and result counts, empty slots, null types ------------------------------------------

TEST_F(VerifierTest, OperandAndResultCountsFollowTheTable) {
  b.Create("pd_op.matmul", {x}, {T({2})});
  b.Create("builtin.parameter", {x}, {T({2})}, {{"parameter_name", Attribute::String("p")}});
  b.Create("pd_op.relu", {x}, {T({2}), T({2})});
  b.Create("pd_op.p_send", {x}, {T({2})});
  Operation* loop = b.Create("pd_op.while", {}, {}, {}, 1);
  Builder(loop->region(0).AddBlock()).Create("cf.yield", {}, {});
  EXPECT_EQ(Check(p),
            "f.pir: op 2 (pd_op.matmul): error: has 1 operand but pd_op.matmul expects 2 (x, y)\n"
            "f.pir: op 3 (builtin.parameter): error: has 1 operand but builtin.parameter expects "
            "none\n"
            "f.pir: op 4 (pd_op.relu): error: has 2 results but pd_op.relu expects 1 (out)\n"
            "f.pir: op 5 (pd_op.p_send): error: has 1 result but pd_op.p_send expects none\n"
            "f.pir: op 6 (pd_op.while): error: has 0 operands but pd_op.while expects at least 1 "
            "(cond, inputs...)\n");
}

TEST_F(VerifierTest, AnyCountSlotsTakeAnyNumberOfValues) {
  Operation* combine =
      b.Create("builtin.combine", {x, x, x}, {Type::Vector({T({2}), T({2}), T({2})})});
  b.Create("builtin.split", {combine->result(0)}, {T({2}), T({2}), T({2})});
  b.Create("builtin.combine", {}, {Type::Vector({})});
  EXPECT_EQ(Check(p), "");
}

TEST_F(VerifierTest, OnlyOptionalOperandSlotsMayBeEmpty) {
  b.Create("pd_op.layer_norm", {x, nullptr, nullptr}, {T({2}), T({1}), T({1})});
  EXPECT_EQ(Check(p), "");
  b.Create("pd_op.matmul", {x, nullptr}, {T({2})});
  EXPECT_EQ(Check(p),
            "f.pir: op 3 (pd_op.matmul): error: operand 1 ('y') is empty but the slot is "
            "not optional\n");
}

TEST_F(VerifierTest, OnlyOptionalResultsMayHaveANullType) {
  Operation* shape = Param(b, "shape", T({1}, Type::I64()));
  b.Create("pd_op.reshape", {x, shape->result(0)}, {T({2}), Type()});
  EXPECT_EQ(Check(p), "");
  b.Create("pd_op.relu", {x}, {Type()});
  EXPECT_EQ(Check(p), "f.pir: op 4 (pd_op.relu): error: result 0 ('out') has a null type\n");
}

TEST_F(VerifierTest, BlockArgumentsNeedATypeToo) {
  Operation* loop = b.Create("pd_op.while", {c, x}, {T({2})}, {}, 1);
  Block& body = loop->region(0).AddBlock();
  Value* arg = body.AddArgument(Type());
  ASSERT_TRUE(body.AddKwarg("lr", Type()).ok());
  Builder(body).Create("cf.yield", {c, arg}, {});
  p.block().AddArgument(Type());
  EXPECT_EQ(Check(p),
            "f.pir: op 0 (builtin.module): error: argument 0 of the top block has a null type\n"
            "f.pir: op 2 (pd_op.while): error: argument 0 of region 0 has a null type\n"
            "f.pir: op 2 (pd_op.while): error: keyword argument 'lr' of region 0 has a null "
            "type\n");
}

// --- Vector and single-value slots ---------------------------------------------------------------

TEST_F(VerifierTest, VectorSlotsTakeVectorsAndOthersSingleValues) {
  Operation* pair = b.Create("builtin.combine", {x, x}, {Type::Vector({T({2}), T({2})})});
  b.Create("pd_op.add_n", {pair->result(0)}, {T({2})});
  Operation* axis = Param(b, "axis", T({}, Type::I32()));
  Operation* parts = b.Create("pd_op.split_with_num", {x, axis->result(0)},
                              {Type::Vector({T({1}), T({1})})}, {{"num", Attribute::Int32(2)}});
  b.Create("builtin.split", {parts->result(0)}, {T({1}), T({1})});
  b.Create("builtin.slice", {parts->result(0)}, {T({1})}, {{"index", Attribute::Int32(1)}});
  // A mutable IntArray operand takes a tensor or a vector of scalar tensors.
  Operation* d0 = Param(b, "d0", T({}, Type::I64()));
  Operation* dims = b.Create("builtin.combine", {d0->result(0), d0->result(0)},
                             {Type::Vector({T({}, Type::I64()), T({}, Type::I64())})});
  b.Create("pd_op.reshape", {x, dims->result(0)}, {T({1, 2}), Type()});
  EXPECT_EQ(Check(p), "");
}

TEST_F(VerifierTest, AVectorInASingleSlotOrATensorInAVectorSlotIsAnError) {
  Operation* pair = b.Create("builtin.combine", {x}, {Type::Vector({T({2})})});
  b.Create("pd_op.add_n", {x}, {T({2})});
  b.Create("pd_op.relu", {pair->result(0)}, {Type::Vector({T({2})})});
  Operation* axis = Param(b, "axis", T({}, Type::I32()));
  b.Create("pd_op.split_with_num", {x, axis->result(0)}, {T({2})}, {{"num", Attribute::Int32(1)}});
  EXPECT_EQ(Check(p),
            "f.pir: op 3 (pd_op.add_n): error: operand 0 ('inputs') must be a vector (built by "
            "builtin.combine), found builtin.tensor<2xf32>\n"
            "f.pir: op 4 (pd_op.relu): error: operand 0 ('x') must be a single value, found the "
            "vector vec[builtin.tensor<2xf32>] (take an element with builtin.slice or "
            "builtin.split)\n"
            "f.pir: op 4 (pd_op.relu): error: result 0 ('out') must be a single value, found the "
            "vector vec[builtin.tensor<2xf32>]\n"
            "f.pir: op 6 (pd_op.split_with_num): error: result 0 ('out') must be a vector, found "
            "builtin.tensor<2xf32>\n");
}

// --- Attributes ----------------------------------------------------------------------------------

TEST_F(VerifierTest, OptionalAttributesMayBeAbsentAndUnknownOnesPresent) {
  b.Create("pd_op.matmul", {x, x}, {T({})},
           {{"transpose_y", Attribute::Bool(true)},
            {"op_role", Attribute::Int32(0)},
            {"stop_gradient", Attribute::Array({Attribute::Bool(true)})}});
  b.Create("pd_op.cast", {x}, {T({2}, Type::F16())},
           {{"dtype", Attribute::DataTypeAttr(DataType::kFloat16)}});
  b.Create("builtin.constant", {}, {T({1})}, {{"value", Attribute::Double(0.5)}});
  EXPECT_EQ(Check(p), "");
}

TEST_F(VerifierTest, RequiredAttributesAndDeclaredKinds) {
  b.Create("pd_op.cast", {x}, {T({2})});
  b.Create("pd_op.matmul", {x, x}, {T({})}, {{"transpose_x", Attribute::Int32(1)}});
  b.Create("builtin.parameter", {}, {T({2})}, {{"parameter_name", Attribute()}});
  b.Create("builtin.constant", {}, {T({1})});
  b.Create("pd_op.matmul", {x, x}, {T({})},
           {{"transpose_y", Attribute::String(std::string(100, 'a'))}});
  EXPECT_EQ(Check(p),
            "f.pir: op 2 (pd_op.cast): error: missing required attribute 'dtype' (data_type)\n"
            "f.pir: op 3 (pd_op.matmul): error: attribute 'transpose_x' must be bool, found int32 "
            "value (Int32)1\n"
            "f.pir: op 4 (builtin.parameter): error: required attribute 'parameter_name' is "
            "null\n"
            "f.pir: op 5 (builtin.constant): error: missing required attribute 'value'\n"
            "f.pir: op 6 (pd_op.matmul): error: attribute 'transpose_y' must be bool, found "
            "string value \"" +
                std::string(76, 'a') + "...\n");
}

// --- Regions and terminators ---------------------------------------------------------------------

TEST_F(VerifierTest, RegionCountsFollowTheTable) {
  Operation* if_op = b.Create("pd_op.if", {c}, {}, {}, 1);
  Builder(if_op->region(0).AddBlock()).Create("cf.yield", {}, {});
  b.Create("pd_op.relu", {x}, {T({2})}, {}, 1);
  EXPECT_EQ(Check(p),
            "f.pir: op 2 (pd_op.if): error: has 1 region but pd_op.if expects 2\n"
            "f.pir: op 3 (pd_op.relu): error: has 1 region but pd_op.relu expects 0\n"
            "f.pir: op 3 (pd_op.relu): error: region 0 has no block\n");
}

TEST_F(VerifierTest, ControlFlowBlocksEndWithYield) {
  Operation* if_op = If();  // region 0 stays empty
  Builder(if_op->region(1).front()).Create("pd_op.relu", {x}, {T({2})});
  EXPECT_EQ(Check(p),
            "f.pir: op 2 (pd_op.if): error: region 0 is empty; it must end with cf.yield\n"
            "f.pir: op 2 (pd_op.if): error: region 1 ends with pd_op.relu; it must end with "
            "cf.yield\n");
}

TEST_F(VerifierTest, YieldIsTheLastOpOfANestedBlock) {
  Operation* if_op = If();
  Builder then_b(if_op->region(0).front());
  then_b.Create("cf.yield", {x}, {});
  then_b.Create("pd_op.relu", {x}, {T({2})});
  Builder(if_op->region(1).front()).Create("cf.yield", {x}, {});
  b.Create("cf.yield", {}, {});
  EXPECT_EQ(Check(p),
            "f.pir: op 2 (pd_op.if): error: region 0 ends with pd_op.relu; it must end with "
            "cf.yield\n"
            "f.pir: op 0 (cf.yield), in region 0 of op 2 (pd_op.if): error: cf.yield must be the "
            "last op of its block, but op 1 (pd_op.relu) follows it\n"
            "f.pir: op 3 (cf.yield): error: cf.yield ends a nested region; it cannot be in the top "
            "block\n");
}

TEST_F(VerifierTest, RegionsOfUnregisteredOpsNeedNoTerminator) {
  Operation* scope = b.Create("test.scope", {}, {}, {}, 2);
  Builder(scope->region(0).AddBlock()).Create("pd_op.relu", {x}, {T({2})});
  scope->region(1).AddBlock();
  EXPECT_EQ(Check(p, /*allow_unregistered=*/true), "");
}

// --- Hooks through the verifier ------------------------------------------------------------------

TEST_F(VerifierTest, HookFindingsAreLocatedLikeTheOthers) {
  Operation* if_op = If();
  Builder then_b(if_op->region(0).front());
  Operation* bad = then_b.Create("builtin.combine", {x}, {Type::Vector({T({3})})});
  then_b.Create("builtin.slice", {bad->result(0)}, {T({3})}, {{"index", Attribute::Int32(2)}});
  then_b.Create("cf.yield", {x}, {});
  Builder(if_op->region(1).front()).Create("cf.yield", {x}, {});
  EXPECT_EQ(Check(p),
            "f.pir: op 0 (builtin.combine), in region 0 of op 2 (pd_op.if): error: "
            "builtin.combine result type is vec[builtin.tensor<3xf32>] but its operands make "
            "vec[builtin.tensor<2xf32>]\n"
            "f.pir: op 1 (builtin.slice), in region 0 of op 2 (pd_op.if): error: builtin.slice "
            "index 2 is out of range for 1 elements\n");
}

TEST_F(VerifierTest, HooksDoNotRunOnOpsTheTableChecksAlreadyFailed) {
  b.Create("builtin.combine", {x, nullptr}, {Type::Vector({T({2})})});
  EXPECT_EQ(Check(p),
            "f.pir: op 2 (builtin.combine): error: operand 1 ('inputs') is empty but the "
            "slot is not optional\n");
}

// --- Locations and entry points ------------------------------------------------------------------

TEST_F(VerifierTest, NestedFindingsCarryTheirPathInnermostFirst) {
  Operation* loop = b.Create("pd_op.while", {c, x}, {T({2})}, {}, 1);
  Block& body = loop->region(0).AddBlock();
  Value* arg = body.AddArgument(T({2}));
  Builder in(body);
  Operation* inner_if = in.Create("pd_op.if", {c}, {T({2})}, {}, 2);
  Builder(inner_if->region(0).AddBlock()).Create("cf.yield", {arg}, {});
  Builder else_b(inner_if->region(1).AddBlock());
  else_b.Create("pd_op.relu", {arg}, {T({2}), T({2})});
  else_b.Create("cf.yield", {arg}, {});
  in.Create("cf.yield", {c, inner_if->result(0)}, {});
  EXPECT_EQ(Check(p),
            "f.pir: op 0 (pd_op.relu), in region 1 of op 0 (pd_op.if) in region 0 of op 2 "
            "(pd_op.while): error: has 2 results but pd_op.relu expects 1 (out)\n");
}

// Builds `depth` nested test.scope ops, each the only op of its parent's block, and returns the
// innermost block.
Block& Nest(Program& p, int depth) {
  Block* block = &p.block();
  for (int i = 0; i < depth; ++i) {
    Operation* scope = Builder(*block).Create("test.scope", {}, {}, {}, 1);
    block = &scope->region(0).AddBlock();
  }
  return *block;
}

TEST(VerifierPathTest, DeepPathsKeepTheirEnds) {
  Program p;
  Block& inner = Nest(p, 20);
  Builder(inner).Create("pd_op.relu", {}, {T({2})});
  const std::string level = "in region 0 of op 0 (test.scope)";
  std::string path;
  for (int i = 0; i < 8; ++i) path += level + " ";
  path += "... (4 more levels) ...";
  for (int i = 0; i < 8; ++i) path += " " + level;
  EXPECT_EQ(Check(p, /*allow_unregistered=*/true),
            "f.pir: op 0 (pd_op.relu), " + path +
                ": error: has 0 operands but pd_op.relu expects 1 (x)\n");
}

TEST_F(VerifierTest, VerifyProgramReturnsTheFirstErrorInProgramOrder) {
  b.Create("pd_op.relu", {x}, {T({2}), T({2})});
  b.Create("pd_op.nonexistent", {}, {});
  Diagnostics all = VerifyProgramAll(p, {.file = "f.pir"});
  ASSERT_EQ(all.size(), 2u);
  Status first = VerifyProgram(p, {.file = "f.pir"});
  EXPECT_EQ(first.code(), StatusCode::kInvalid);
  EXPECT_EQ(first.ToString(),
            "f.pir: op 2 (pd_op.relu): error: has 2 results but pd_op.relu expects 1 (out)");
  EXPECT_EQ(first.location().op, 2);
  EXPECT_EQ(first.location().op_type, "pd_op.relu");
  EXPECT_EQ(all.items()[1].location.op, 3);
}

TEST_F(VerifierTest, VerifyOpChecksOneOpButNotItsScoping) {
  Program other;
  Builder other_b(other.block());
  Value* foreign = Param(other_b, "f", T({2}))->result(0);
  // Reads another program's value and has one result too many: VerifyOp reports the count only,
  // located at the op's index; the whole-program check finds both.
  Operation* relu = b.Create("pd_op.relu", {foreign}, {T({2}), T({2})});
  EXPECT_EQ(VerifyOp(p, *relu, {.file = "f.pir"}).Render(),
            "f.pir: op 2 (pd_op.relu): error: has 2 results but pd_op.relu expects 1 (out)\n");
  EXPECT_EQ(VerifyProgramAll(p).size(), 2u);
  Operation* add = b.Create("pd_op.add", {x, foreign}, {T({2})});
  EXPECT_TRUE(VerifyOp(p, *add).empty());
  Operation* bad_add = b.Create("pd_op.add", {x, Param(b, "y", T({3}))->result(0)}, {T({2})});
  EXPECT_EQ(VerifyOp(p, *bad_add).Render(),
            "op 5 (pd_op.add): error: x builtin.tensor<2xf32> and y builtin.tensor<3xf32> do not "
            "broadcast: dim 0 of x is 2 but dim 0 of y is 3\n");
}

TEST_F(VerifierTest, ACustomRegistryDecidesWhatIsKnown) {
  OpRegistry empty;
  VerifyOptions options;
  options.registry = &empty;
  options.allow_unregistered = true;
  p.block().PushBack(Operation::Create("pd_op.relu", {x}, {T({2})}));
  EXPECT_TRUE(VerifyProgram(p, options).ok());
  options.registry = &OpRegistry::Global();
  EXPECT_FALSE(VerifyProgram(p, options).ok());
}

// --- Scale ---------------------------------------------------------------------------------------

TEST(VerifierScaleTest, ALongChainAndADeepNestVerify) {
  Program chain;
  Builder b(chain.block());
  Value* v = Param(b, "x", T({2}))->result(0);
  for (int i = 0; i < 100000; ++i) v = b.Create("pd_op.relu", {v}, {T({2})})->result(0);
  EXPECT_EQ(Check(chain), "");

  Program deep;
  Block& inner = Nest(deep, 2000);
  Builder top(deep.block());
  Value* outer = Param(top, "x", T({2}))->result(0);
  Builder(inner).Create("pd_op.relu", {outer}, {T({2})});
  Diagnostics found = VerifyProgramAll(deep, {.allow_unregistered = true, .file = "f.pir"});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found.items()[0].message,
            "operand 0 ('x') reads result 0 of op 1 (builtin.parameter), which is defined later "
            "(use before definition)");
  EXPECT_NE(found.items()[0].location.detail.find("... (1984 more levels) ..."), std::string::npos);
}

}  // namespace
}  // namespace irm::newir
