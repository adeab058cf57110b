// First-divergence search on hand-made traces: the earliest differing op whose inputs matched,
// inputs that are feeds, the fallback when no differing op read only matching inputs, the count
// of later differing tensors, and tiers that need kept tensors.
#include "diff_tests/first_divergence.h"

#include <gtest/gtest.h>

#include "diff_tests/trace_test_support.h"

namespace irm::diff {
namespace {

using testing::Rec;

struct Found {
  Alignment alignment;
  std::vector<PairResult> results;
  std::optional<FirstDivergence> divergence;
};

Found Find(const Trace& old_trace, const Trace& new_trace, Tier tier = Tier::kExact) {
  Found f;
  f.alignment = AlignTraces(old_trace, new_trace);
  f.results = CompareAligned(old_trace, new_trace, f.alignment, tier);
  f.divergence = FindFirstDivergence(old_trace, new_trace, f.alignment, f.results, tier);
  return f;
}

// a = relu(x); b = scale(a); c = add(b, a); d = mean(c). x is a feed.
Trace OldChain() {
  return {Rec(1, "relu", {"x"}, {{"a", 1}}), Rec(1, "scale", {"a"}, {{"b", 2}}),
          Rec(1, "elementwise_add", {"b", "a"}, {{"c", 3}}), Rec(1, "mean", {"c"}, {{"d", 4}})};
}

TEST(FirstDivergenceTest, TheFirstOpThatDiffersOnMatchingInputs) {
  // The new scale computes something else; add and mean inherit it.
  const Trace new_trace = {
      Rec(1, "pd_op.relu", {"x"}, {{"a", 1}}, 0), Rec(1, "pd_op.full", {}, {{"%0@1", 9}}, 1),
      Rec(1, "pd_op.scale", {"a", "%0@1"}, {{"b", 20}}, 2),
      Rec(1, "pd_op.add", {"b", "a"}, {{"c", 30}}, 3), Rec(1, "pd_op.mean", {"c"}, {{"d", 40}}, 4)};
  const Found f = Find(OldChain(), new_trace);
  ASSERT_TRUE(f.divergence.has_value());
  EXPECT_EQ(f.divergence->old_record, 1u);
  EXPECT_EQ(f.divergence->new_record, 2u);
  EXPECT_TRUE(f.divergence->inputs_matched);
  ASSERT_EQ(f.divergence->inputs.size(), 1u);
  EXPECT_EQ(f.divergence->inputs[0].name, "a");
  EXPECT_TRUE(f.divergence->inputs[0].matched);
  EXPECT_EQ(f.divergence->later_differing, 2);  // c and d
  ASSERT_EQ(f.divergence->differing_pairs.size(), 1u);
  const PairResult& r = f.results[f.divergence->differing_pairs[0]];
  EXPECT_TRUE(r.by_hash);
  EXPECT_EQ(r.comparison.reason, "hash 0000000000000014 vs 0000000000000002");
}

TEST(FirstDivergenceTest, AFeedReadByTheFirstOpMatches) {
  const Trace new_trace = {
      Rec(1, "pd_op.relu", {"x"}, {{"a", 10}}), Rec(1, "pd_op.scale", {"a"}, {{"b", 20}}),
      Rec(1, "pd_op.add", {"b", "a"}, {{"c", 30}}), Rec(1, "pd_op.mean", {"c"}, {{"d", 4}})};
  const Found f = Find(OldChain(), new_trace);
  ASSERT_TRUE(f.divergence.has_value());
  EXPECT_EQ(f.divergence->old_record, 0u);
  EXPECT_TRUE(f.divergence->inputs_matched);
  EXPECT_FALSE(f.divergence->inputs[0].old_write.has_value());
  EXPECT_EQ(f.divergence->later_differing, 2);  // b and c; d came out equal again
}

TEST(FirstDivergenceTest, WithoutAnOpOnMatchingInputsTheEarliestDifferingOne) {
  // The new side writes `a` under another name, so scale's input has no twin on the new side.
  const Trace new_trace = {Rec(1, "pd_op.relu", {"x"}, {{"a_renamed", 1}}),
                           Rec(1, "pd_op.scale", {"a_renamed"}, {{"b", 20}}),
                           Rec(1, "pd_op.add", {"b", "a_renamed"}, {{"c", 3}}),
                           Rec(1, "pd_op.mean", {"c"}, {{"d", 4}})};
  const Found f = Find(OldChain(), new_trace);
  ASSERT_TRUE(f.divergence.has_value());
  EXPECT_EQ(f.divergence->old_record, 1u);
  EXPECT_FALSE(f.divergence->inputs_matched);
  EXPECT_FALSE(f.divergence->inputs[0].matched);
  EXPECT_EQ(f.divergence->later_differing, 0);
  EXPECT_EQ(f.alignment.old_only.size(), 1u);
}

TEST(FirstDivergenceTest, NoDivergenceWhenEverythingMatches) {
  const Trace same = {
      Rec(1, "pd_op.relu", {"x"}, {{"a", 1}}), Rec(1, "pd_op.scale", {"a"}, {{"b", 2}}),
      Rec(1, "pd_op.add", {"b", "a"}, {{"c", 3}}), Rec(1, "pd_op.mean", {"c"}, {{"d", 4}})};
  EXPECT_FALSE(Find(OldChain(), same).divergence.has_value());
}

TEST(FirstDivergenceTest, ReorderedTierComparesKeptValues) {
  // 1 + 1e-6 is within the float32 bounds: no divergence, though the bits differ.
  const Trace old_trace = {Rec(1, "relu", {"x"}, {{"a", 1, {1.0, 2.0}}}),
                           Rec(1, "scale", {"a"}, {{"b", 2, {4.0, 8.0}}})};
  const Trace close = {Rec(1, "pd_op.relu", {"x"}, {{"a", 5, {1.0 + 1e-6, 2.0}}}),
                       Rec(1, "pd_op.scale", {"a"}, {{"b", 2, {4.0, 8.0}}})};
  const Found ok = Find(old_trace, close, Tier::kReordered);
  EXPECT_FALSE(ok.divergence.has_value());
  EXPECT_TRUE(ok.results[0].compared);
  EXPECT_FALSE(ok.results[0].by_hash);
  EXPECT_TRUE(ok.results[0].comparison.pass);
  // Far off: found, with metrics.
  const Trace far = {Rec(1, "pd_op.relu", {"x"}, {{"a", 1, {1.0, 2.0}}}),
                     Rec(1, "pd_op.scale", {"a"}, {{"b", 6, {4.0, 9.0}}})};
  const Found bad = Find(old_trace, far, Tier::kReordered);
  ASSERT_TRUE(bad.divergence.has_value());
  EXPECT_EQ(bad.divergence->old_record, 1u);
  EXPECT_EQ(bad.results[1].comparison.metrics.max_abs_diff, 1.0);
  // Without kept tensors a hash difference cannot be judged by the reordered tier.
  const Trace unkept = {Rec(1, "pd_op.relu", {"x"}, {{"a", 1}}),
                        Rec(1, "pd_op.scale", {"a"}, {{"b", 6}})};
  const Trace old_unkept = {Rec(1, "relu", {"x"}, {{"a", 1}}), Rec(1, "scale", {"a"}, {{"b", 2}})};
  const Found unknown = Find(old_unkept, unkept, Tier::kReordered);
  EXPECT_FALSE(unknown.divergence.has_value());
  EXPECT_TRUE(unknown.results[0].compared);  // equal hashes pass every tier
  EXPECT_FALSE(unknown.results[1].compared);
}

TEST(FirstDivergenceTest, ShapeDifferencesNeedNoTensors) {
  Trace new_trace = {Rec(1, "pd_op.relu", {"x"}, {{"a", 1}})};
  new_trace[0].outputs[0].shape = {2};
  const Trace old_trace = {Rec(1, "relu", {"x"}, {{"a", 1}})};
  const Found f = Find(old_trace, new_trace);
  ASSERT_TRUE(f.divergence.has_value());
  EXPECT_EQ(f.results[0].comparison.reason, "shape [2] vs [1]");
}

}  // namespace
}  // namespace irm::diff
