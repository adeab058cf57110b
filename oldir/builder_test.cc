// Tests of the program builder: names, vars, op layout (sorted slots and attributes, common
// attributes), roles and namescopes, sub-blocks.
#include "oldir/builder.h"

#include <gtest/gtest.h>

#include "oldir/dump.h"
#include "oldir/validator.h"

namespace irm::oldir {
namespace {

TEST(UniqueNameGeneratorTest, CountsPerKey) {
  UniqueNameGenerator names;
  EXPECT_EQ(names.Generate("linear"), "linear_0");
  EXPECT_EQ(names.Generate("linear"), "linear_1");
  EXPECT_EQ(names.Generate("fc"), "fc_0");
  EXPECT_EQ(names.Temp(), "tmp_0");
  EXPECT_EQ(names.Temp(), "tmp_1");
  EXPECT_EQ(names.Generate("linear_0.tmp"), "linear_0.tmp_0");
}

TEST(ProgramBuilderTest, OpsAreStoredAsPaddleFlushesThem) {
  ProgramBuilder b;
  BlockBuilder& root = b.root();
  root.CreateVar("x", proto::VarType::FP32, {-1, 2},
                 {.stop_gradient = true, .need_check_feed = true});
  root.CreateVar("w", proto::VarType::FP32, {2, 2}, {.persistable = true, .is_parameter = true});
  root.CreateVar("y", proto::VarType::FP32, {-1, 2});
  proto::OpDesc* op = root.AppendOp("matmul_v2", {{"Y", {"w"}}, {"X", {"x"}}}, {{"Out", {"y"}}},
                                    {{"trans_y", false}, {"trans_x", false}});
  Program program = b.Build();
  // Slots and attributes sorted by name; the six common attributes present.
  EXPECT_EQ(DumpOp(Op(op), {.show_callstack = true}),
            "{Out=['y']} = matmul_v2(inputs={X=['x'], Y=['w']}, trans_x=False, trans_y=False, "
            "op_callstack=[], op_device='', op_namescope='/', op_role=0, op_role_var=[], "
            "with_quant_attr=False)");
  std::vector<std::string> attr_names;
  for (const auto& attr : op->attrs()) attr_names.push_back(attr.name());
  EXPECT_EQ(attr_names,
            (std::vector<std::string>{"op_callstack", "op_device", "op_namescope", "op_role",
                                      "op_role_var", "trans_x", "trans_y", "with_quant_attr"}));
  EXPECT_TRUE(ValidateProgram(program).empty()) << ValidateProgram(program).Render();
}

TEST(ProgramBuilderTest, RoleAndNamescopeGuardsNestAndRestore) {
  ProgramBuilder b;
  b.root().CreateVar("x", proto::VarType::FP32, {2}, {.persistable = true});
  b.root().CreateVar("y", proto::VarType::FP32, {2});
  {
    ScopedOpRole backward(b, kBackward);
    ScopedNamescope scope(b, "block_0");
    b.root().AppendOp("relu", {{"X", {"x"}}}, {{"Out", {"y"}}});
    {
      ScopedOpRole optimize(b, kOptimize | kLRSched);
      b.root().AppendOp("relu", {{"X", {"x"}}}, {{"Out", {"y"}}},
                        {{kOpRoleVarAttr, std::vector<std::string>{"x", "x@GRAD"}}});
    }
    b.root().AppendOp("relu", {{"X", {"x"}}}, {{"Out", {"y"}}});
  }
  b.root().AppendOp("relu", {{"X", {"x"}}}, {{"Out", {"y"}}});
  Program p = b.Build();
  auto role = [&](int i) { return p.root().op(i).role(); };
  EXPECT_EQ(role(0), kBackward);
  EXPECT_EQ(role(1), kOptimize | kLRSched);
  EXPECT_EQ(role(2), kBackward);
  EXPECT_EQ(role(3), kForward);
  EXPECT_EQ(p.root().op(0).AttrOr<std::string>(kOpNamescopeAttr, ""), "/block_0/");
  EXPECT_EQ(p.root().op(3).AttrOr<std::string>(kOpNamescopeAttr, ""), "/");
  EXPECT_EQ(p.root().op(1).AttrOr<std::vector<std::string>>(kOpRoleVarAttr, {}),
            (std::vector<std::string>{"x", "x@GRAD"}));
}

TEST(ProgramBuilderTest, SubBlocksSeeTheirAncestorsVars) {
  ProgramBuilder b;
  b.root().CreateVar("x", proto::VarType::FP32, {2}, {.persistable = true});
  BlockBuilder& sub = b.CreateBlock(0);
  sub.CreateVar("y", proto::VarType::FP32, {2});
  EXPECT_EQ(sub.index(), 1);
  EXPECT_EQ(sub.parent_index(), 0);
  EXPECT_NE(sub.FindVar("x"), nullptr);
  EXPECT_EQ(sub.FindLocalVar("x"), nullptr);
  EXPECT_EQ(b.root().FindVar("y"), nullptr);
  // Redeclaring returns the first declaration.
  EXPECT_EQ(b.root().CreateVar("x", proto::VarType::FP64, {3}), b.root().FindVar("x"));
  EXPECT_EQ(b.desc().blocks(0).vars_size(), 1);
}

}  // namespace
}  // namespace irm::oldir
