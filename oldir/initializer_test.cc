// Tests of the startup initialisers: op types, attributes, seeds, and the Xavier limits computed
// by hand.
#include "oldir/initializer.h"

#include <gtest/gtest.h>

#include "oldir/dump.h"
#include "oldir/validator.h"

namespace irm::oldir {
namespace {

std::string Line(const proto::OpDesc* op) { return DumpOp(Op(op)); }

TEST(InitializerTest, EachKindWritesPaddlesOp) {
  ProgramBuilder startup;
  EXPECT_EQ(
      Line(AppendInitializer(startup, "b", proto::VarType::FP32, {4}, Initializer::Constant(0.5f))),
      "{Out=['b']} = fill_constant(inputs={}, dtype=5, force_cpu=False, place_type=-1, "
      "shape=[4], str_value='0.5', value=0.5, op_device='', op_namescope='/', op_role=0, "
      "op_role_var=[], with_quant_attr=False)");
  // The initializer's own seed wins over the program's.
  EXPECT_EQ(Line(AppendInitializer(startup, "w", proto::VarType::FP32, {2, 3},
                                   Initializer::Uniform(-0.25f, 0.25f, 11), /*program_seed=*/5)),
            "{Out=['w']} = uniform_random(inputs={}, diag_num=0, diag_step=0, diag_val=1.0, "
            "dtype=5, max=0.25, min=-0.25, seed=11, shape=[2, 3], op_device='', op_namescope='/', "
            "op_role=0, op_role_var=[], with_quant_attr=False)");
  // A zero seed takes the program's.
  EXPECT_EQ(Line(AppendInitializer(startup, "e", proto::VarType::FP64, {8},
                                   Initializer::Normal(0.0f, 0.02f), /*program_seed=*/5)),
            "{Out=['e']} = gaussian_random(inputs={}, dtype=6, mean=0.0, seed=5, shape=[8], "
            "std=0.02, op_device='', op_namescope='/', op_role=0, op_role_var=[], "
            "with_quant_attr=False)");
  const Program program = startup.Build();
  EXPECT_TRUE(ValidateProgram(program).empty()) << ValidateProgram(program).Render();
  // Initialised vars are declared persistable in the startup program.
  for (const char* name : {"b", "w", "e"}) {
    ASSERT_TRUE(program.root().FindVar(name)) << name;
    EXPECT_TRUE(program.root().FindVar(name)->persistable()) << name;
  }
}

TEST(InitializerTest, XavierLimits) {
  // sqrt(6 / (3 + 5)) = 0.8660254; sqrt(2 / (3 + 5)) = 0.5.
  const Initializer uniform = Initializer::XavierUniform(3, 5);
  EXPECT_EQ(uniform.kind, Initializer::Kind::kUniform);
  EXPECT_FLOAT_EQ(uniform.high, 0.8660254f);
  EXPECT_FLOAT_EQ(uniform.low, -0.8660254f);
  const Initializer normal = Initializer::XavierNormal(3, 5, 9);
  EXPECT_EQ(normal.kind, Initializer::Kind::kNormal);
  EXPECT_FLOAT_EQ(normal.mean, 0.0f);
  EXPECT_FLOAT_EQ(normal.stddev, 0.5f);
  EXPECT_EQ(normal.seed, 9);
}

TEST(InitializerTest, StrValueReadsLikePython) {
  ProgramBuilder b;
  b.root().CreateVar("lr", proto::VarType::FP32, {1}, {.persistable = true});
  const proto::OpDesc* op = AppendFillConstant(b.root(), "lr", proto::VarType::FP32, {1}, 2.0f);
  EXPECT_EQ(Op(op).AttrOr<std::string>("str_value", ""), "2.0");
  op = AppendFillConstant(b.root(), "lr", proto::VarType::FP32, {1}, 0.001f);
  EXPECT_EQ(Op(op).AttrOr<std::string>("str_value", ""), "0.001");
}

}  // namespace
}  // namespace irm::oldir
