// The parity driver's own checks: fetches and persistable vars that one side lacks or orders
// differently, the reordered tier comparing values, and its errors — no program, a failing run.
// Isolated re-execution's refusals are checked here too.
#include <gtest/gtest.h>

#include "diff_tests/isolate.h"
#include "diff_tests/parity_run.h"
#include "diff_tests/parity_test_support.h"
#include "diff_tests/schema_check_test_support.h"
#include "newir/builder.h"
#include "newir/parser.h"
#include "oldir/models/mlp.h"
#include "oldir/models/training.h"
#include "reference_runtime/kernels/kernel_test_support.h"

namespace irm::diff {
namespace {

class ParityRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<oldir::Program> main = testing::LoadTestProgram("fault_main.prototxt");
    StatusOr<oldir::Program> startup = testing::LoadTestProgram("fault_startup.prototxt");
    ASSERT_TRUE(main.ok() && startup.ok());
    main_ = std::move(main).value();
    startup_ = std::move(startup).value();
    StatusOr<translator::Translation> t = translator::TranslateProgram(*main_);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    translated_.emplace(std::move(t).value());
  }

  std::vector<newir::Operation*> Ops(const std::string& name) {
    std::vector<newir::Operation*> ops;
    for (newir::Operation& op : translated_->program.block()) {
      if (op.name() == name) ops.push_back(&op);
    }
    return ops;
  }

  StatusOr<ParityResult> Run(bool with_startup = true, Tier tier = Tier::kExact) {
    ParityPrograms programs{.legacy_main = &*main_,
                            .legacy_startup = with_startup ? &*startup_ : nullptr,
                            .new_main = &translated_->program,
                            .new_startup = nullptr,
                            .legacy_file = "fault_main.prototxt",
                            .new_file = "edited"};
    ParityOptions options;
    options.steps = 2;
    options.tier = tier;
    return RunParity(programs, options);
  }

  // The reasons of the failing tensors of `group`, in report order.
  static std::vector<std::string> Reasons(const ParityReport& report, TensorGroup group) {
    std::vector<std::string> reasons;
    for (const ComparedTensor& t : report.tensors) {
      if (t.group == group && !t.comparison.pass) {
        reasons.push_back(fmt::format("{}@{}: {}", t.name, t.step, t.comparison.reason));
      }
    }
    return reasons;
  }

  std::optional<oldir::Program> main_;
  std::optional<oldir::Program> startup_;
  std::optional<translator::Translation> translated_;
};

TEST_F(ParityRunTest, AFetchOrAVarOnlyOneSideHasIsAMismatch) {
  // The new program stops fetching d, and stores h into a var the legacy program does not have.
  std::vector<newir::Operation*> fetches = Ops("pd_op.fetch");
  ASSERT_EQ(fetches.size(), 2u);
  newir::Value* h = Ops("pd_op.matmul").front()->result(0);
  translated_->program.block().Remove(fetches[1]);
  newir::Builder builder(translated_->program.block());
  builder.Create("builtin.set_parameter", {h}, {},
                 {{"parameter_name", newir::Attribute::String("extra")}});
  StatusOr<ParityResult> result = Run();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(Reasons(result->report, TensorGroup::kFetch),
            (std::vector<std::string>{"d@1: fetched only by the legacy program",
                                      "d@2: fetched only by the legacy program"}));
  EXPECT_EQ(Reasons(result->report, TensorGroup::kParameter),
            (std::vector<std::string>{"extra@1: only in the new-IR scope",
                                      "extra@2: only in the new-IR scope"}));
  EXPECT_FALSE(result->report.parity());
}

TEST_F(ParityRunTest, AProducedMismatchReportFollowsTheSchema) {
  Ops("pd_op.matmul").front()->SetAttribute("transpose_y", newir::Attribute::Bool(true));
  StatusOr<ParityResult> result = Run();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_TRUE(result->report.first_divergence.has_value());
  ASSERT_TRUE(result->report.isolation.has_value());
  const std::string json = RenderJson(result->report);
  const std::vector<std::string> errors = testing::SchemaErrors(json);
  EXPECT_TRUE(errors.empty()) << ::testing::PrintToString(errors) << json;
}

TEST_F(ParityRunTest, FetchesInAnotherOrderDiffer) {
  std::vector<newir::Operation*> fetches = Ops("pd_op.fetch");
  ASSERT_EQ(fetches.size(), 2u);
  fetches[0]->SetAttribute("col", newir::Attribute::Int32(1));
  fetches[1]->SetAttribute("col", newir::Attribute::Int32(0));
  StatusOr<ParityResult> result = Run();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(Reasons(result->report, TensorGroup::kFetch),
            (std::vector<std::string>{
                "loss@1: fetch 0 is 'd' vs 'loss'", "d@1: fetch 1 is 'loss' vs 'd'",
                "loss@2: fetch 0 is 'd' vs 'loss'", "d@2: fetch 1 is 'loss' vs 'd'"}));
  // The computation itself is the same: no intermediate differs.
  EXPECT_EQ(result->report.Mismatched(TensorGroup::kIntermediate), 0);
  EXPECT_FALSE(result->report.first_divergence.has_value());
}

TEST_F(ParityRunTest, TheReorderedTierComparesValues) {
  StatusOr<ParityResult> result = Run(true, Tier::kReordered);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const ParityReport& report = result->report;
  EXPECT_TRUE(report.parity()) << RenderMarkdown(report);
  EXPECT_EQ(report.NotCompared(), 0);
  for (const ComparedTensor& t : report.tensors) {
    EXPECT_FALSE(t.by_hash) << t.name;  // every output was kept and compared by value
    EXPECT_TRUE(t.comparison.metrics.bits_equal) << t.name;
  }
}

TEST_F(ParityRunTest, AFailingRunSaysWhichSide) {
  // Without the startup program, w is never created.
  StatusOr<ParityResult> result = Run(false);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(result.status().message(), "persistable var 'w' is not in the persistent scope");
  EXPECT_EQ(result.status().diagnostic().notes.back(), "in the legacy run");
}

TEST(ParityRunErrorsTest, NoLegacyProgram) {
  StatusOr<ParityResult> result = RunParity({}, {});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(result.status().message(), "no legacy program to run");
}

// The noise-floor tier judges a distributed run against its serial program (serial_parity.h);
// between a program and its translation it would quietly be the reordered tier.
TEST_F(ParityRunTest, TheNoiseFloorTierIsRefusedRatherThanQuietlyReordered) {
  StatusOr<ParityResult> result = Run(true, Tier::kNoiseFloor);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(result.status().message(),
            "the noise-floor tier arbitrates a distributed run against its serial program (parity "
            "--serial); a translation is checked in the exact or reordered tier");
}

TEST(IsolateTest, RefusalsSayWhy) {
  StatusOr<newir::Program> program = newir::ParseProgram(R"({
    (%0) = "pd_op.data" () {dtype:float32,legacy_var_names:["x"],name:"x",place:Place(cpu),shape:[2]} : () -> tensor<2xf32>
    (%1) = "pd_op.data" () {dtype:bool,name:"c",place:Place(cpu),shape:[1]} : () -> tensor<1xb>
    (%2) = "pd_op.relu" (%0) {} : (tensor<2xf32>) -> tensor<2xf32>
    (%3) = "pd_op.add" (%2, %0) {legacy_var_names:["y"]} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    (%4) = "pd_op.if" (%1) {legacy_var_names:["h"]} -> tensor<2xf32> {
        () = "cf.yield" (%0) {} : (tensor<2xf32>) ->
    } else {
        () = "cf.yield" (%3) {} : (tensor<2xf32>) ->
    }
})",
                                                         "t.pir");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  std::vector<const newir::Operation*> ops;
  for (const newir::Operation& op : program->block()) ops.push_back(&op);
  const rt::Tensor x = rt::testing::FromDoubles({1, 2}, {2}, DType::kFloat32);
  const rt::Tensor ints = rt::testing::FromDoubles({1, 2}, {2}, DType::kInt64);
  const LegacyValue none = [](const std::string&) -> const rt::Tensor* { return nullptr; };
  const LegacyValue some = [&](const std::string&) { return &x; };

  EXPECT_EQ(IsolateNewOp(*ops[4], some, some, Tier::kExact, {}).detail, "'pd_op.if' has regions");
  EXPECT_EQ(IsolateNewOp(*ops[3], some, some, Tier::kExact, {}).detail,
            "operand 0: the value 'pd_op.relu' makes has no legacy name");
  // relu's own operand is named: it runs, but nothing it makes has a legacy value.
  const IsolationReport relu = IsolateNewOp(*ops[2], some, none, Tier::kExact, {});
  EXPECT_EQ(relu.verdict, IsolationReport::Verdict::kNotRun);
  EXPECT_EQ(relu.detail, "no result of the op has a legacy value to compare with");
  // A legacy value of the wrong dtype: the isolated run fails and says so.
  const IsolationReport wrong =
      IsolateNewOp(*ops[2], [&](const std::string&) { return &ints; }, some, Tier::kExact, {});
  EXPECT_EQ(wrong.verdict, IsolationReport::Verdict::kNotRun);
  EXPECT_EQ(wrong.detail.rfind("the isolated op failed: feed 'isolated_0' is int64[2] but the "
                               "program declares",
                               0),
            0u)
      << wrong.detail;
}

}  // namespace
}  // namespace irm::diff
