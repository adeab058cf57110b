// The float64 shadow of a model-zoo training program: every float32 var and dtype attribute is
// promoted, nothing else changes, and the result is still a valid program.
#include "oldir/float64_shadow.h"

#include <gtest/gtest.h>

#include "oldir/models/gpt.h"
#include "oldir/models/training.h"
#include "oldir/program_io.h"
#include "oldir/validator.h"

namespace irm::oldir {
namespace {

int CountVars(const Program& program, proto::VarType::Type dtype) {
  int n = 0;
  for (int b = 0; b < program.num_blocks(); ++b) {
    for (const proto::VarDesc& var : program.block(b).desc().vars()) {
      n += Var(&var).dtype() == dtype;
    }
  }
  return n;
}

TEST(Float64ShadowTest, PromotesFloat32VarsAndDtypeAttributesOnly) {
  models::ModelPrograms gpt;
  ASSERT_TRUE(
      models::BuildGpt({.layers = 1, .hidden = 8, .heads = 2, .vocab = 16, .seq = 4}, &gpt).ok());
  ASSERT_TRUE(models::AddTraining(&gpt, OptimizerOptions{}).ok());
  for (Program program : {gpt.main.Build(), gpt.startup.Build()}) {
    const int fp32 = CountVars(program, proto::VarType::FP32);
    const int int64 = CountVars(program, proto::VarType::INT64);
    ASSERT_GT(fp32, 0);
    EXPECT_GE(PromoteToFloat64(program), fp32);
    EXPECT_EQ(CountVars(program, proto::VarType::FP32), 0);
    EXPECT_EQ(CountVars(program, proto::VarType::FP64), fp32);
    EXPECT_EQ(CountVars(program, proto::VarType::INT64), int64);  // token ids stay int64
    for (const proto::OpDesc& op : program.root().desc().ops()) {
      for (const proto::OpDesc::Attr& attr : op.attrs()) {
        if (attr.name() == "dtype" || attr.name() == "out_dtype") {
          EXPECT_NE(attr.i(), proto::VarType::FP32) << op.type();
        }
      }
    }
    const Diagnostics findings = ValidateProgram(program);
    EXPECT_FALSE(findings.HasErrors()) << findings.Render();
    EXPECT_EQ(PromoteToFloat64(program), 0);  // idempotent
  }
}

TEST(Float64ShadowTest, AssignValueKeepsItsNumbersAsFloat64) {
  StatusOr<Program> program = ParseProgram(R"(blocks { idx: 0 parent_idx: -1
    vars { name: "c" type { type: DENSE_TENSOR dense_tensor { tensor { data_type: FP32 dims: 2 } } } }
    ops { type: "assign_value" outputs { parameter: "Out" arguments: "c" }
          attrs { name: "shape" type: INTS ints: 2 } attrs { name: "dtype" type: INT i: 5 }
          attrs { name: "fp32_values" type: FLOATS floats: 0.1 floats: -2 } } })",
                                           "t.prototxt", ProgramFormat::kText);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  EXPECT_EQ(PromoteToFloat64(*program), 3);  // the var, dtype, the values
  const proto::OpDesc& op = program->root().desc().ops(0);
  EXPECT_EQ(op.attrs(1).i(), proto::VarType::FP64);
  EXPECT_EQ(op.attrs(2).name(), "fp64_values");
  ASSERT_EQ(op.attrs(2).float64s_size(), 2);
  EXPECT_EQ(op.attrs(2).float64s(0), static_cast<double>(0.1f));  // the float32 number, exactly
  EXPECT_EQ(op.attrs(2).float64s(1), -2.0);
}

}  // namespace
}  // namespace irm::oldir
