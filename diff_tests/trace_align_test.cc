// Trace alignment on hand-made traces: pairs by (step, name, occurrence), reads that are no
// writes, unnamed new-IR values, names one side alone writes, and the latest write before an op.
#include "diff_tests/trace_align.h"

#include <gtest/gtest.h>

#include "diff_tests/trace_test_support.h"

namespace irm::diff {
namespace {

using testing::Rec;

TEST(TraceAlignTest, TheKthWriteOfANamePairsWithTheKthWrite) {
  // x is rewritten in place on both sides; the new side computes the second write in two ops.
  const Trace old_trace = {Rec(1, "feed", {}, {{"x", 1}}), Rec(1, "relu", {"x"}, {{"x", 2}}),
                           Rec(1, "scale", {"x"}, {{"y", 3}})};
  const Trace new_trace = {
      Rec(1, "pd_op.data", {}, {{"x", 1}}), Rec(1, "pd_op.full", {}, {{"%0@1", 7}}),
      Rec(1, "pd_op.relu", {"x"}, {{"x", 2}}), Rec(1, "pd_op.scale", {"x", "%0@1"}, {{"y", 3}})};
  const Alignment a = AlignTraces(old_trace, new_trace);
  ASSERT_EQ(a.pairs.size(), 3u);
  EXPECT_EQ(a.pairs[0].key.name, "x");
  EXPECT_EQ(a.pairs[0].key.occurrence, 0);
  EXPECT_EQ(a.pairs[0].new_ref, (TensorRef{0, 0}));
  EXPECT_EQ(a.pairs[1].key.occurrence, 1);
  EXPECT_EQ(a.pairs[1].old_ref, (TensorRef{1, 0}));
  EXPECT_EQ(a.pairs[1].new_ref, (TensorRef{2, 0}));
  EXPECT_EQ(a.pairs[2].new_ref, (TensorRef{3, 0}));
  ASSERT_EQ(a.unnamed_new.size(), 1u);
  EXPECT_EQ(a.unnamed_new[0].key.name, "%0@1");
  EXPECT_TRUE(a.old_only.empty());
  EXPECT_TRUE(a.new_only.empty());
}

TEST(TraceAlignTest, ParametersAndFetchesAreReadsAndStepsDoNotMix) {
  const Trace old_trace = {Rec(1, "sgd", {"w", "w@GRAD"}, {{"w", 5}}),
                           Rec(2, "sgd", {"w", "w@GRAD"}, {{"w", 6}}),
                           Rec(2, "mean", {"y"}, {{"only_old", 1}})};
  const Trace new_trace = {Rec(1, "builtin.parameter", {}, {{"w", 4}}),
                           Rec(1, "pd_op.sgd_", {"w", "w@GRAD"}, {{"w", 5}}),
                           Rec(1, "pd_op.fetch", {"w"}, {{"w", 5}}),
                           Rec(2, "pd_op.sgd_", {"w", "w@GRAD"}, {{"w", 6}}),
                           Rec(2, "pd_op.mean", {"y"}, {{"only_new", 1}})};
  const Alignment a = AlignTraces(old_trace, new_trace);
  ASSERT_EQ(a.pairs.size(), 2u);
  EXPECT_EQ(a.pairs[0].key.step, 1);
  EXPECT_EQ(a.pairs[0].new_ref, (TensorRef{1, 0}));
  EXPECT_EQ(a.pairs[1].key.step, 2);
  EXPECT_EQ(a.pairs[1].key.occurrence, 0);  // counted per step
  EXPECT_EQ(a.pairs[1].new_ref, (TensorRef{3, 0}));
  ASSERT_EQ(a.old_only.size(), 1u);
  EXPECT_EQ(a.old_only[0].key.name, "only_old");
  ASSERT_EQ(a.new_only.size(), 1u);
  EXPECT_EQ(a.new_only[0].key.name, "only_new");
  EXPECT_EQ(a.new_only[0].ref, (TensorRef{4, 0}));
}

TEST(TraceAlignTest, AnOutputNotProducedIsNoWrite) {
  Trace old_trace = {Rec(1, "dropout", {"x"}, {{"y", 1}, {"mask", 2}})};
  old_trace[0].outputs[1].produced = false;
  const Trace new_trace = {Rec(1, "pd_op.dropout", {"x"}, {{"y", 1}})};
  const Alignment a = AlignTraces(old_trace, new_trace);
  EXPECT_EQ(a.pairs.size(), 1u);
  EXPECT_TRUE(a.old_only.empty());
}

TEST(TraceAlignTest, LatestWriteBeforeAnOp) {
  const Trace trace = {Rec(1, "feed", {}, {{"x", 1}}), Rec(1, "relu", {"x"}, {{"x", 2}}),
                       Rec(1, "scale", {"x"}, {{"y", 3}}),
                       Rec(1, "builtin.parameter", {}, {{"w", 4}})};
  const WriteIndex index(trace);
  EXPECT_EQ(index.LatestBefore(0, "x", 0), std::nullopt);
  EXPECT_EQ(index.LatestBefore(0, "x", 1), (TensorRef{0, 0}));
  EXPECT_EQ(index.LatestBefore(0, "x", 2), (TensorRef{1, 0}));
  EXPECT_EQ(index.LatestBefore(0, "x", 99), (TensorRef{1, 0}));
  EXPECT_EQ(index.LatestBefore(1, "x", 2), std::nullopt);  // another rank
  EXPECT_EQ(index.LatestBefore(0, "w", 4), std::nullopt);  // a parameter read is no write
  EXPECT_TRUE(IsUnnamed("%1@4"));
  EXPECT_FALSE(IsUnnamed("x"));
}

}  // namespace
}  // namespace irm::diff
