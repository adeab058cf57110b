// The parity engine catches translations broken on purpose: a matmul's transpose_y flipped, a
// scale op's factor changed, a subtract's operands swapped. Each time the first divergence names
// the mutated op in both programs and isolated re-execution blames the op itself; the unmutated
// translation is in parity, and an op that only inherited different inputs is not blamed.
#include <gtest/gtest.h>

#include "diff_tests/isolate.h"
#include "diff_tests/parity_run.h"
#include "diff_tests/parity_test_support.h"
#include "newir/verifier.h"
#include "reference_runtime/kernels/kernel_test_support.h"

namespace irm::diff {
namespace {

class FaultInjectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<oldir::Program> main = testing::LoadTestProgram("fault_main.prototxt");
    StatusOr<oldir::Program> startup = testing::LoadTestProgram("fault_startup.prototxt");
    ASSERT_TRUE(main.ok()) << main.status().ToString();
    ASSERT_TRUE(startup.ok()) << startup.status().ToString();
    main_ = std::move(main).value();
    startup_ = std::move(startup).value();
    StatusOr<translator::Translation> t = translator::TranslateProgram(*main_);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    translated_.emplace(std::move(t).value());
  }

  newir::Operation* FindOp(const std::string& name) {
    for (newir::Operation& op : translated_->program.block()) {
      if (op.name() == name) return &op;
    }
    ADD_FAILURE() << "no " << name;
    return nullptr;
  }

  StatusOr<ParityResult> Run() {
    ParityPrograms programs{.legacy_main = &*main_,
                            .legacy_startup = &*startup_,
                            .new_main = &translated_->program,
                            .new_startup = nullptr,
                            .legacy_file = "fault_main.prototxt",
                            .new_file = "mutated"};
    ParityOptions options;
    options.steps = 3;
    options.seed = 5;
    return RunParity(programs, options);
  }

  // Runs parity and expects the first divergence at `old_type` / `new_type`, blamed in isolation.
  void ExpectCaught(const std::string& old_type, const std::string& new_type) {
    ASSERT_TRUE(newir::VerifyProgram(translated_->program, {.file = "mutated"}).ok());
    StatusOr<ParityResult> result = Run();
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    const ParityReport& report = result->report;
    EXPECT_FALSE(report.parity());
    ASSERT_TRUE(report.first_divergence.has_value()) << RenderMarkdown(report);
    const DivergenceReport& d = *report.first_divergence;
    EXPECT_EQ(d.step, 1);
    EXPECT_EQ(d.old_op.type, old_type);
    EXPECT_EQ(d.new_op.type, new_type);
    EXPECT_TRUE(d.inputs_matched);
    EXPECT_TRUE(d.has_metrics);  // re-created by re-running with the op's tensors kept
    EXPECT_GT(d.comparison.metrics.max_abs_diff, 0.0);
    EXPECT_GT(d.later_differing, 0);
    EXPECT_NE(d.new_op.text.find(new_type), std::string::npos) << d.new_op.text;
    ASSERT_TRUE(report.isolation.has_value());
    EXPECT_EQ(report.isolation->verdict, IsolationReport::Verdict::kOpDiffers)
        << report.isolation->detail;
    const std::string md = RenderMarkdown(report);
    EXPECT_NE(md.find("the op itself computes differently"), std::string::npos) << md;
  }

  std::optional<oldir::Program> main_;
  std::optional<oldir::Program> startup_;
  std::optional<translator::Translation> translated_;
};

TEST_F(FaultInjectionTest, TheUnmutatedTranslationIsInParity) {
  StatusOr<ParityResult> result = Run();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(result->report.parity()) << RenderMarkdown(result->report);
  EXPECT_FALSE(result->report.isolation.has_value());
  // h, s, d and loss in each of 3 steps, and w from the startup program.
  EXPECT_EQ(result->report.Compared(TensorGroup::kIntermediate), 3 * 5 + 1);
}

TEST_F(FaultInjectionTest, AFlippedTransposeIsCaught) {
  newir::Operation* matmul = FindOp("pd_op.matmul");
  ASSERT_NE(matmul, nullptr);
  matmul->SetAttribute("transpose_y", newir::Attribute::Bool(true));
  ExpectCaught("matmul_v2", "pd_op.matmul");
}

TEST_F(FaultInjectionTest, AChangedScaleIsCaught) {
  newir::Operation* scale = FindOp("pd_op.scale");
  ASSERT_NE(scale, nullptr);
  // The factor is an operand made by a pd_op.full (or the scale's attribute).
  newir::Operation* full = scale->num_operands() > 1 && scale->operand(1) != nullptr
                               ? scale->operand(1)->defining_op()
                               : nullptr;
  if (full != nullptr && full->HasAttribute("value")) {
    full->SetAttribute("value", full->attribute("value").AsFloat() != nullptr
                                    ? newir::Attribute::Float(0.25f)
                                    : newir::Attribute::Double(0.25));
  } else {
    ASSERT_TRUE(scale->HasAttribute("scale"));
    scale->SetAttribute("scale", newir::Attribute::Float(0.25f));
  }
  ExpectCaught("scale", "pd_op.scale");
}

TEST_F(FaultInjectionTest, SwappedSubtractOperandsAreCaught) {
  newir::Operation* subtract = FindOp("pd_op.subtract");
  ASSERT_NE(subtract, nullptr);
  newir::Value* x = subtract->operand(0);
  newir::Value* y = subtract->operand(1);
  subtract->op_operand(0).Set(y);
  subtract->op_operand(1).Set(x);
  ExpectCaught("elementwise_sub", "pd_op.subtract");
}

TEST_F(FaultInjectionTest, AnOpOnTheLegacyInputsThatMatchesInheritedItsDrift) {
  // The translated scale on h = [1, 2, 3, 4] gives 0.5 h exactly; with that as the legacy output
  // it is not to blame, and with another it is.
  newir::Operation* scale = FindOp("pd_op.scale");
  ASSERT_NE(scale, nullptr);
  const rt::Tensor h = rt::testing::FromDoubles({1, 2, 3, 4}, {1, 4}, DType::kFloat32);
  const rt::Tensor s = rt::testing::FromDoubles({0.5, 1, 1.5, 2}, {1, 4}, DType::kFloat32);
  const rt::Tensor wrong = rt::testing::FromDoubles({0.5, 1, 1.5, 3}, {1, 4}, DType::kFloat32);
  const LegacyValue inputs = [&](const std::string& name) { return name == "h" ? &h : nullptr; };
  const IsolationReport fine =
      IsolateNewOp(*scale, inputs, [&](const std::string& n) { return n == "s" ? &s : nullptr; },
                   Tier::kExact, {});
  EXPECT_EQ(fine.verdict, IsolationReport::Verdict::kInheritedDrift) << fine.detail;
  const IsolationReport blamed = IsolateNewOp(
      *scale, inputs, [&](const std::string& n) { return n == "s" ? &wrong : nullptr; },
      Tier::kExact, {});
  EXPECT_EQ(blamed.verdict, IsolationReport::Verdict::kOpDiffers);
  EXPECT_EQ(blamed.comparison.metrics.max_abs_index, 3);
  // Without the legacy value of an operand it cannot run, and says so.
  const IsolationReport missing = IsolateNewOp(
      *scale, [](const std::string&) -> const rt::Tensor* { return nullptr; },
      [&](const std::string&) { return &s; }, Tier::kExact, {});
  EXPECT_EQ(missing.verdict, IsolationReport::Verdict::kNotRun);
  EXPECT_EQ(missing.detail, "operand 0: the legacy run kept no value of 'h'");
}

}  // namespace
}  // namespace irm::diff
