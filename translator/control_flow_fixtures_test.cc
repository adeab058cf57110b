// The hand-written control-flow fixtures (translator/testdata/legacy: a gradient-merge main and
// startup program, a while loop, a conditional block without else) translate, verify, and have
// the structure the legacy programs imply.
#include <string>

#include <gtest/gtest.h>

#include "newir/printer.h"
#include "newir/verifier.h"
#include "oldir/program_io.h"
#include "translator/translate.h"

namespace irm::translator {
namespace {

Translation TranslateFixture(const std::string& name) {
  const std::string path = std::string(IRM_TRANSLATOR_TESTDATA) + "/legacy/" + name;
  StatusOr<oldir::Program> legacy = oldir::LoadProgram(path);
  EXPECT_TRUE(legacy.ok()) << legacy.status().ToString();
  if (!legacy.ok()) return {};
  StatusOr<Translation> t = TranslateProgram(*legacy, {.file = name});
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (!t.ok()) return {};
  const Diagnostics findings = newir::VerifyProgramAll(t->program, {.file = name});
  EXPECT_TRUE(findings.empty()) << findings.Render() << newir::PrintProgram(t->program);
  EXPECT_EQ(t->coverage.total(), legacy->num_ops());
  return std::move(t).value();
}

int Count(const newir::Program& program, const std::string& name) {
  int n = 0;
  program.module().Walk([&](newir::Operation* op) { n += op->name() == name; });
  return n;
}

TEST(ControlFlowFixturesTest, GradientMerge) {
  const Translation main = TranslateFixture("gradient_merge.prototxt");
  EXPECT_EQ(Count(main.program, "pd_op.if"), 1);
  EXPECT_EQ(Count(main.program, "pd_op.remainder_"), 1);
  EXPECT_EQ(Count(main.program, "pd_op.equal"), 1);
  EXPECT_EQ(Count(main.program, "pd_op.increment_"), 1);
  EXPECT_EQ(Count(main.program, "pd_op.sgd_"), 2);
  // The accumulators and the parameters the if writes are stored back after it.
  EXPECT_EQ(Count(main.program, "builtin.set_parameter"), 4);
  const Translation startup = TranslateFixture("gradient_merge_startup.prototxt");
  EXPECT_EQ(Count(startup.program, "builtin.set_parameter"), 8);
}

TEST(ControlFlowFixturesTest, WhileLoop) {
  const Translation t = TranslateFixture("while_loop.prototxt");
  EXPECT_EQ(Count(t.program, "pd_op.while"), 1);
  EXPECT_EQ(Count(t.program, "cf.yield"), 1);
}

TEST(ControlFlowFixturesTest, ConditionalBlockWithoutElse) {
  const Translation t = TranslateFixture("cond_no_else.prototxt");
  EXPECT_EQ(Count(t.program, "pd_op.if"), 1);
  EXPECT_EQ(Count(t.program, "cf.yield"), 2);
}

}  // namespace
}  // namespace irm::translator
