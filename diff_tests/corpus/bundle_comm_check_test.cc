// CheckBundleCommunication on the corpus's pipelines: the legacy 1F1B plan (both stages send first
// in the steady phase, docs/reference/pipelines.md §4.3; the cycle the runtime reports in
// reference_runtime/multi_rank_p2p_test.cc) is refused under rendezvous with the cycle and the
// depth named, and passes under the buffered model it needs; FThenB passes under rendezvous. The
// pir bundles are checked in diff_tests/pir_pipeline_hang_test.cc.
#include "diff_tests/corpus/bundle_comm_check.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "common/scratch_dir_test_support.h"
#include "diff_tests/corpus/corpus.h"

namespace irm::corpus {
namespace {

using schedules::P2pModel;

StatusOr<oldir::Bundle> WriteCase(const std::string& name, const std::string& dir) {
  IRM_ASSIGN_OR_RETURN(const BundleCase c, CaseNamed(name));
  IRM_RETURN_IF_ERROR(WriteBundleCase(c, dir));
  return oldir::ReadBundle(dir);
}

TEST(BundleCommCheckTest, RefusesLegacy1F1BUnderRendezvousNamingTheCycleAndTheDepth) {
  ScratchDir dir("comm_check_1f1b");
  StatusOr<oldir::Bundle> bundle = WriteCase("pp2_1f1b_mb2_mlp", dir.path());
  ASSERT_TRUE(bundle.ok()) << bundle.status().ToString();
  const Status checked = CheckBundleCommunication(*bundle, dir.path(), P2pModel::Rendezvous());
  ASSERT_FALSE(checked.ok());
  EXPECT_EQ(checked.code(), StatusCode::kInvalid);
  EXPECT_EQ(checked.location().file, dir.path());
  // Stage 0 sends micro-batch 1's activation (forward) while stage 1 sends micro-batch 0's
  // gradient back (backward): the ops the runtime's hang report names.
  EXPECT_EQ(checked.message(),
            "deadlock under rendezvous at tick 4: rank 0 waits in send (micro-batch 1; forward, "
            "micro-batch 1, send_v2, op 5) for rank 1, which waits in send (micro-batch 0, ring "
            "1; backward, micro-batch 0, send_v2, op 13) for rank 0");
  ASSERT_EQ(checked.diagnostic().notes.size(), 1u);
  EXPECT_EQ(checked.diagnostic().notes[0],
            "the order needs buffer depth 1 (0: safe under rendezvous); run it under buffered=1 "
            "or fix the order");
  EXPECT_TRUE(CheckBundleCommunication(*bundle, dir.path(), P2pModel::Buffered(1)).ok());
}

TEST(BundleCommCheckTest, PassesFThenBUnderRendezvous) {
  ScratchDir dir("comm_check_fthenb");
  StatusOr<oldir::Bundle> bundle = WriteCase("pp2_fthenb_mb2_mlp", dir.path());
  ASSERT_TRUE(bundle.ok()) << bundle.status().ToString();
  const Status checked = CheckBundleCommunication(*bundle, dir.path(), P2pModel::Rendezvous());
  EXPECT_TRUE(checked.ok()) << checked.ToString();
}

TEST(BundleCommCheckTest, PassesABundleWithoutCommunication) {
  ScratchDir dir("comm_check_dp2");
  StatusOr<oldir::Bundle> bundle = WriteCase("dp2_mlp", dir.path());
  ASSERT_TRUE(bundle.ok()) << bundle.status().ToString();
  EXPECT_TRUE(CheckBundleCommunication(*bundle, dir.path(), P2pModel::Rendezvous()).ok());
}

TEST(BundleCommCheckTest, ReportsAProgramThatDoesNotLoad) {
  ScratchDir dir("comm_check_missing");
  StatusOr<oldir::Bundle> bundle = WriteCase("pp2_fthenb_mb2_mlp", dir.path());
  ASSERT_TRUE(bundle.ok()) << bundle.status().ToString();
  std::filesystem::remove(oldir::RankFile(dir.path(), 1, "backward.pdmodel"));
  const Status checked = CheckBundleCommunication(*bundle, dir.path(), P2pModel::Rendezvous());
  ASSERT_FALSE(checked.ok());
  EXPECT_NE(checked.location().file.find("backward.pdmodel"), std::string::npos)
      << checked.ToString();
}

}  // namespace
}  // namespace irm::corpus
