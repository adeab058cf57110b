// The CSV form: PyTorch's artifacts read and written back byte for byte, Python csv.reader's
// quirks, and located diagnostics for malformed cells.
#include "schedules/action_csv.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "common/file_io.h"

namespace irm::schedules {
namespace {

using T = ActionType;

std::string Artifact(const std::string& name) {
  const char* dir = std::getenv("IRM_SOURCE_DIR");
  const std::string root = dir != nullptr && *dir != '\0' ? dir : std::filesystem::current_path();
  StatusOr<std::string> text = ReadFile(root + "/schedules/testdata/pytorch/" + name);
  EXPECT_TRUE(text.ok()) << text.status().ToString()
                         << " (run from the repository root or set IRM_SOURCE_DIR)";
  return text.ok() ? *text : std::string();
}

ActionSchedule MustRead(std::string_view text) {
  StatusOr<ActionSchedule> s = ReadActionCsv(text, "t.csv");
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : ActionSchedule{};
}

// The artifacts of pytorch/pytorch test/distributed/pipelining/artifacts/ (README.md beside
// them) read, and write back to the same bytes.
TEST(ActionCsvTest, ArtifactsRoundTripByteForByte) {
  for (const char* name : {"dualpipev_4rank_10mb.csv", "zb1p_2rank_2stagep_compute.csv",
                           "zb1p_2rank_2stagep_comms.csv"}) {
    const std::string bytes = Artifact(name);
    ASSERT_FALSE(bytes.empty()) << name;
    StatusOr<ActionSchedule> s = ReadActionCsv(bytes, name);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_EQ(WriteActionCsv(*s), bytes) << name;
  }
}

TEST(ActionCsvTest, ReadsArtifactCells) {
  const ActionSchedule dual = MustRead(Artifact("dualpipev_4rank_10mb.csv"));
  ASSERT_EQ(dual.ranks.size(), 4u);
  ASSERT_EQ(dual.ranks[0].size(), 38u);
  EXPECT_EQ(dual.ranks[0][7], Action::Make(7, T::kForward, 0));
  EXPECT_EQ(dual.ranks[0][17], Action::Overlap({Action::Make(0, T::kForward, 7),
                                                Action::Make(7, T::kFullBackward, 3)}));
  const ActionSchedule compute = MustRead(Artifact("zb1p_2rank_2stagep_compute.csv"));
  ASSERT_EQ(compute.ranks.size(), 2u);
  EXPECT_EQ(compute.ranks[0][3], std::nullopt);  // "2F0,,2F1": an idle step
  EXPECT_EQ(compute.ranks[1][0], std::nullopt);  // a row starting with ','
  EXPECT_EQ(compute.ranks[1][1], Action::Make(1, T::kForward, 0));
  const ActionSchedule comms = MustRead(Artifact("zb1p_2rank_2stagep_comms.csv"));
  EXPECT_EQ(comms.ranks[0][2], Action::Make(2, T::kRecvF, 0));
}

TEST(ActionCsvTest, WritesCsvWriterLineEndsOnRequest) {
  const ActionSchedule s = MustRead("0F0,,0B0\n1F0\n");
  EXPECT_EQ(WriteActionCsv(s, {.line_end = "\r\n"}), "0F0,,0B0\r\n1F0\r\n");
  EXPECT_EQ(MustRead("0F0,,0B0\r\n1F0\r\n"), s);
  EXPECT_EQ(MustRead("0F0,,0B0\r1F0"), s);
}

// Python's csv.reader: an empty line is an empty row, a lone "" is one empty cell, quoted cells
// keep commas and line breaks, and a blank cell is idle (`_Action.from_str` strips it).
TEST(ActionCsvTest, FollowsPythonCsvReader) {
  const ActionSchedule s = MustRead("0F0\n\n\"\"\n\"0F1\", 1B0 ,\"(0F2;\n3B1)OVERLAP_F_B\"\n");
  ASSERT_EQ(s.ranks.size(), 4u);
  EXPECT_EQ(s.ranks[0].size(), 1u);
  EXPECT_TRUE(s.ranks[1].empty());
  ASSERT_EQ(s.ranks[2].size(), 1u);
  EXPECT_EQ(s.ranks[2][0], std::nullopt);
  ASSERT_EQ(s.ranks[3].size(), 3u);
  EXPECT_EQ(s.ranks[3][1], Action::Make(1, T::kFullBackward, 0));
  EXPECT_EQ(s.ranks[3][2]->ToString(), "(0F2;3B1)OVERLAP_F_B");
  // Written back, the lone idle step is `""` again and the empty rank an empty line.
  EXPECT_EQ(WriteActionCsv(s), "0F0\n\n\"\"\n0F1,1B0,(0F2;3B1)OVERLAP_F_B\n");
  EXPECT_EQ(MustRead(WriteActionCsv(s)), s);
  // An unterminated quote takes the rest of the input as its cell.
  EXPECT_EQ(MustRead("\"0F0").ranks[0][0], Action::Make(0, T::kForward, 0));
  EXPECT_TRUE(MustRead("").ranks.empty());
}

TEST(ActionCsvTest, RoundTripsEveryActionKind) {
  ActionSchedule s;
  s.ranks = {
      {Action::Make(0, T::kUnshard), Action::Make(0, T::kForward, 0), std::nullopt,
       Action::Make(0, T::kSendF, 0), Action::Make(0, T::kRecvB, 0),
       Action::Make(0, T::kBackwardInput, 0), Action::Make(0, T::kBackwardWeight, 0),
       Action::Make(0, T::kReduceGrad), Action::Make(0, T::kReshard)},
      {std::nullopt, Action::Make(1, T::kRecvF, 0),
       Action::Overlap({Action::Make(1, T::kForward, 0), Action::Make(2, T::kFullBackward, 11)}),
       Action::Make(1, T::kSendB, 0), std::nullopt},
      {},
      {std::nullopt}};
  const std::string text = WriteActionCsv(s);
  EXPECT_EQ(text,
            "0UNSHARD,0F0,,0SEND_F0,0RECV_B0,0I0,0W0,0REDUCE_GRAD,0RESHARD\n"
            ",1RECV_F0,(1F0;2B11)OVERLAP_F_B,1SEND_B0,\n\n\"\"\n");
  EXPECT_EQ(MustRead(text), s);
}

TEST(ActionCsvTest, MalformedCellIsLocated) {
  StatusOr<ActionSchedule> s = ReadActionCsv("0F0,0F1\n1F0,  1Q0,1B0\n", "sched.csv");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kParseError);
  EXPECT_EQ(s.status().ToString(),
            "sched.csv:2:5: error: rank 1, step 1: invalid action '  1Q0': unknown action type "
            "'Q0' after stage 1 (expected F, I, B, W, UNSHARD, RESHARD, REDUCE_GRAD, SEND_F, "
            "RECV_F, SEND_B or RECV_B)");
  // A quoted cell spanning lines is located where it starts.
  StatusOr<ActionSchedule> q = ReadActionCsv("0F0\n1F0,\"1\nF0\"\n", "q.csv");
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.status().location().line, 2);
  EXPECT_EQ(q.status().location().column, 5);
  EXPECT_EQ(q.status().message(),
            "rank 1, step 1: invalid action '1\\x0aF0': unknown action type '\\x0aF0' after stage "
            "1 (expected F, I, B, W, UNSHARD, RESHARD, REDUCE_GRAD, SEND_F, RECV_F, SEND_B or "
            "RECV_B)");
}

}  // namespace
}  // namespace irm::schedules
