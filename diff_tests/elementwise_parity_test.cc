// The legacy elementwise family, op by op from its list (oldir/elementwise_ops.h): a tiny program
// per op — x [2, 3, 4] and a lower-rank y aligned by `axis` (the legacy broadcast the translator
// turns into a reshape), the forward op and, for an op with a grad, mean + append_backward — run
// as legacy and as translated on the fly, bit for bit. A new op of the family is covered by its
// rows in the lists; an op the translator has no row for, or a binding that runs another kernel
// on one side, fails here.
#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "diff_tests/parity_run.h"
#include "oldir/backward.h"
#include "oldir/builder.h"
#include "oldir/elementwise_ops.h"
#include "oldir/initializer.h"

namespace irm::oldir {
// gtest names a failing case by its op type.
void PrintTo(const LegacyElementwiseOp& op, std::ostream* os) { *os << op.type; }
}  // namespace irm::oldir

namespace irm::diff {
namespace {

namespace pf = oldir::proto;

struct Programs {
  oldir::Program main;
  oldir::Program startup;
};

// y's shape and the axis that aligns it with x [2, 3, 4]: y [3] at axis 1 is Paddle's legacy
// alignment (elementwise_op.h), y [4] at -1 numpy's trailing one.
struct Alignment {
  std::vector<int64_t> y_shape;
  int32_t axis;
};

// A parameter of main, initialised in startup; x in [0.5, 2] and y in [0.5, 1.5] keep every op
// of the family finite (no zero divisor, a positive base for pow's log).
void Param(oldir::ProgramBuilder& main, oldir::ProgramBuilder& startup, const std::string& name,
           const std::vector<int64_t>& dims, float low, float high, bool trainable) {
  main.root().CreateVar(name, pf::VarType::FP32, dims,
                        {.persistable = true,
                         .stop_gradient = !trainable,
                         .is_parameter = trainable,
                         .need_check_feed = false,
                         .lod_level = 0});
  oldir::AppendInitializer(startup, name, pf::VarType::FP32, dims,
                           oldir::Initializer::Uniform(low, high), /*program_seed=*/3);
}

// The fetched names: out, and for an op with a grad the loss and both gradients.
StatusOr<Programs> Build(const oldir::LegacyElementwiseOp& op, const Alignment& align,
                         std::vector<std::string>* fetched) {
  oldir::ProgramBuilder main, startup;
  oldir::BlockBuilder& b = main.root();
  Param(main, startup, "x", {2, 3, 4}, 0.5f, 2.0f, op.has_grad());
  Param(main, startup, "y", align.y_shape, 0.5f, 1.5f, op.has_grad());
  b.CreateVar("out", pf::VarType::FP32, {2, 3, 4});
  b.AppendOp(std::string(op.type), {{"X", {"x"}}, {"Y", {"y"}}}, {{"Out", {"out"}}},
             {{"axis", align.axis}});
  *fetched = {"out"};
  if (op.has_grad()) {
    b.CreateVar("loss", pf::VarType::FP32, {});
    b.AppendOp("mean", {{"X", {"out"}}}, {{"Out", {"loss"}}});
    IRM_ASSIGN_OR_RETURN(std::vector<oldir::ParamGrad> grads, oldir::AppendBackward(main, "loss"));
    fetched->push_back("loss");
    for (const oldir::ParamGrad& grad : grads) fetched->push_back(grad.grad);
  }
  b.CreateTypedVar("fetch", pf::VarType::FETCH_LIST, true);
  int32_t col = 0;
  for (const std::string& name : *fetched) {
    b.AppendOp("fetch", {{"X", {name}}}, {{"Out", {"fetch"}}}, {{"col", col++}});
  }
  return Programs{main.Build(), startup.Build()};
}

// How many compared intermediates an op of `type` wrote.
int ComparedFrom(const ParityReport& report, std::string_view type) {
  int n = 0;
  for (const ComparedTensor& t : report.tensors) {
    if (t.group == TensorGroup::kIntermediate && t.compared &&
        t.old_op.starts_with(std::string(type) + " ")) {
      ++n;
    }
  }
  return n;
}

class ElementwiseParityTest : public ::testing::TestWithParam<oldir::LegacyElementwiseOp> {};

TEST_P(ElementwiseParityTest, ForwardAndBackwardAreBitIdenticalToTheTranslation) {
  const oldir::LegacyElementwiseOp& op = GetParam();
  for (const Alignment& align : {Alignment{{3}, 1}, Alignment{{4}, -1}}) {
    SCOPED_TRACE("axis " + std::to_string(align.axis));
    std::vector<std::string> fetched;
    StatusOr<Programs> programs = Build(op, align, &fetched);
    ASSERT_TRUE(programs.ok()) << programs.status().ToString();
    ParityPrograms parity_programs{.legacy_main = &programs->main,
                                   .legacy_startup = &programs->startup,
                                   .new_main = nullptr,
                                   .new_startup = nullptr,
                                   .legacy_file = std::string(op.type),
                                   .new_file = ""};
    ParityOptions options;
    options.steps = 2;
    options.seed = 11;
    StatusOr<ParityResult> result = RunParity(parity_programs, options);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    const ParityReport& report = result->report;
    EXPECT_TRUE(report.parity()) << RenderMarkdown(report);
    EXPECT_FALSE(report.first_divergence.has_value());
    EXPECT_EQ(report.NotCompared(), 0);
    EXPECT_EQ(report.Compared(TensorGroup::kFetch), static_cast<int>(fetched.size()) * 2);
    // The op ran on both sides at every step, and its grad op, which writes x@GRAD and y@GRAD.
    EXPECT_EQ(ComparedFrom(report, op.type), 2);
    if (op.has_grad()) {
      EXPECT_EQ(ComparedFrom(report, op.grad_type), 2 * 2);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(LegacyElementwiseOps, ElementwiseParityTest,
                         ::testing::ValuesIn(oldir::LegacyElementwiseOps()),
                         [](const ::testing::TestParamInfo<oldir::LegacyElementwiseOp>& info) {
                           return std::string(info.param.type);
                         });

}  // namespace
}  // namespace irm::diff
