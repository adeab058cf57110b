// The lowering passes: PyTorch's ZB1P artifact lowered to its communication artifact, PyTorch's
// small pass tests, and a compute schedule that cannot be lowered.
#include "schedules/action_lower.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "common/file_io.h"
#include "schedules/action_csv.h"

namespace irm::schedules {
namespace {

std::string Artifact(const std::string& name) {
  const char* dir = std::getenv("IRM_SOURCE_DIR");
  const std::string root = dir != nullptr && *dir != '\0' ? dir : std::filesystem::current_path();
  StatusOr<std::string> text = ReadFile(root + "/schedules/testdata/pytorch/" + name);
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  return text.ok() ? *text : std::string();
}

ActionSchedule Csv(std::string_view text) {
  StatusOr<ActionSchedule> s = ReadActionCsv(text, "t.csv");
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : ActionSchedule{};
}

// One rank's actions from a comma-separated list.
std::vector<std::optional<Action>> Row(std::string_view text) {
  ActionSchedule s = Csv(text);
  return s.ranks.empty() ? std::vector<std::optional<Action>>{} : s.ranks[0];
}

std::string Print(const std::vector<std::optional<Action>>& row) {
  ActionSchedule s;
  s.ranks.push_back(row);
  std::string text = WriteActionCsv(s);
  text.pop_back();
  return text;
}

// Pins pytorch/pytorch test/distributed/pipelining/test_schedule.py, TestScheduleLowering.test_csv
// ("zb1p_2rank_2stagep"): the compute CSV, each rank through _merge_bw, then _add_send_recv with
// stage s on rank s % 2 and 4 stages, gives artifacts/zb1p_2rank_2stagep_comms.csv.
TEST(ActionLowerTest, Zb1pArtifactLowersToPyTorchComms) {
  const ActionSchedule compute = Csv(Artifact("zb1p_2rank_2stagep_compute.csv"));
  StatusOr<ActionSchedule> comms = AddSendRecv(MergeBw(compute), {0, 1, 0, 1});
  ASSERT_TRUE(comms.ok()) << comms.status().ToString();
  EXPECT_EQ(WriteActionCsv(*comms), Artifact("zb1p_2rank_2stagep_comms.csv"));
}

// A 2-rank, 2-stage, 1-micro-batch schedule lowered by hand with _add_send_recv's rules: rank 1
// cannot run 1F0 until rank 0's F0 has placed 1RECV_F0 on it, and rank 0's B0 waits for the
// RECV_B0 that rank 1's B0 places.
TEST(ActionLowerTest, SenderPlacesTheReceiversRecv) {
  StatusOr<ActionSchedule> comms = AddSendRecv(Csv("0F0,0B0\n1F0,1B0\n"), {0, 1});
  ASSERT_TRUE(comms.ok()) << comms.status().ToString();
  EXPECT_EQ(WriteActionCsv(*comms),
            "0F0,0SEND_F0,0RECV_B0,0B0\n"
            "1RECV_F0,1F0,1B0,1SEND_B0\n");
  // Adjacent stages on one rank (the V's turn) exchange nothing.
  StatusOr<ActionSchedule> local = AddSendRecv(Csv("0F0,1F0,1B0,0B0\n"), {0, 0});
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(WriteActionCsv(*local), "0F0,1F0,1B0,0B0\n");
}

TEST(ActionLowerTest, MalformedComputeSchedule) {
  // Each rank waits for the other: rank 0's B0 needs rank 1's B0, which needs rank 1's F0, which
  // needs rank 0's F0 — placed after 0B0 on rank 0.
  StatusOr<ActionSchedule> comms = AddSendRecv(Csv("0B0,0F0\n1F0,1B0\n"), {0, 1});
  ASSERT_FALSE(comms.ok());
  EXPECT_EQ(comms.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(comms.status().ToString(),
            "error: malformed compute schedule, can't schedule sends/recvs: no rank can make "
            "progress\n"
            "  note: rank 0, step 0: 0B0 waits for an input that no rank sends\n"
            "  note: rank 1, step 0: 1F0 waits for an input that no rank sends");
  StatusOr<ActionSchedule> outside = AddSendRecv(Csv("0F0,5F0\n"), {0, 0});
  ASSERT_FALSE(outside.ok());
  EXPECT_EQ(outside.status().message(),
            "5F0 names stage 5, which maps to no rank of the 1-rank schedule");
}

// Pins test_schedule.py, TestScheduleLowering.test_unshard_reshard (both cases).
TEST(ActionLowerTest, UnshardReshardAsPyTorch) {
  EXPECT_EQ(Print(AddUnshardReshard(Row("0F0,0F1,   ,0B0,0B1"))),
            "0UNSHARD,0F0,0F1,0B0,0B1,0RESHARD");
  EXPECT_EQ(Print(AddUnshardReshard(Row("0F0,0F1,1F0,1F1,1B0,1B1,0B0,0B1"))),
            "0UNSHARD,1UNSHARD,0F0,0F1,1F0,1F1,1B0,1B1,1RESHARD,0B0,0B1,0RESHARD");
}

// Pins test_schedule.py, TestScheduleLowering.test_reduce_grad (both cases, m = 2).
TEST(ActionLowerTest, ReduceGradAsPyTorch) {
  EXPECT_EQ(Print(AddReduceGrad(Row("0F0,0F1,   ,0B0,0B1"), 2)), "0F0,0F1,0B0,0B1,0REDUCE_GRAD");
  EXPECT_EQ(Print(AddReduceGrad(Row("0F0,0F1,1F0,1F1,1B0,1B1,0B0,0B1"), 2)),
            "0F0,0F1,1F0,1F1,1B0,1B1,1REDUCE_GRAD,0B0,0B1,0REDUCE_GRAD");
}

// Pins test_schedule.py, TestScheduleLowering.test_merge_bw.
TEST(ActionLowerTest, MergeBwAsPyTorch) {
  EXPECT_EQ(Print(MergeBw(Row("0F0,0F1,0F2,0I0,0I1,0W0,0I2,0W2,0W1"))),
            "0F0,0F1,0F2,0I0,0I1,0W0,0B2,0W1");
}

TEST(ActionLowerTest, LowerComputeScheduleValidatesFirst) {
  StatusOr<ActionSchedule> bad =
      LowerComputeSchedule(Csv("0F0,0SEND_F0,0B0\n1F0,1B0\n"), 2, 2, 1, {}, "c.csv");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().ToString(),
            "c.csv: rank 0, step 1: error: expected compute-only schedule but found communication "
            "action '0SEND_F0'");
  StatusOr<ActionSchedule> invalid =
      LowerComputeSchedule(Csv("0B0,0F0\n1F0,1B0\n"), 2, 2, 1, {}, "c.csv");
  ASSERT_FALSE(invalid.ok());
  EXPECT_EQ(invalid.status().ToString(),
            "c.csv: rank 0, step 0: error: running full backward for stage 0, microbatch 0 without "
            "first running forward");
  StatusOr<ActionSchedule> full = LowerComputeSchedule(
      Csv("0F0,0B0\n1F0,1B0\n"), 2, 2, 1, {.unshard_reshard = true, .reduce_grad = true});
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  EXPECT_EQ(WriteActionCsv(*full),
            "0UNSHARD,0F0,0SEND_F0,0RECV_B0,0B0,0REDUCE_GRAD,0RESHARD\n"
            "1UNSHARD,1RECV_F0,1F0,1B0,1SEND_B0,1REDUCE_GRAD,1RESHARD\n");
}

}  // namespace
}  // namespace irm::schedules
