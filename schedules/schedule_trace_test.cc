// The Chrome trace of a simulated run: valid JSON holding one event per step on its rank's track,
// flows from sends to their receives, and where a failed run stopped.
#include "schedules/schedule_trace.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace irm::schedules {
namespace {

Step Compute(const std::string& job, int micro_batch, int cost) {
  Step step;
  step.label = job + std::to_string(micro_batch);
  step.job = job;
  step.micro_batch = micro_batch;
  step.chunk = 0;
  step.cost = cost;
  return step;
}

Step Comm(StepKind kind, int from, int to, const std::string& label, const std::string& message) {
  Step step;
  step.kind = kind;
  step.channel = {from, to, 0};
  step.label = label;
  step.message = message;
  step.job = kind == StepKind::kSend ? "send_v2" : "recv_v2";
  step.micro_batch = 0;
  step.op = "op 3";
  return step;
}

nlohmann::json Parse(const std::string& text) {
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(json.is_discarded()) << text;
  return json;
}

// The events of phase `ph`.
std::vector<nlohmann::json> Events(const nlohmann::json& trace, const std::string& ph) {
  std::vector<nlohmann::json> out;
  for (const auto& event : trace["traceEvents"]) {
    if (event["ph"] == ph) out.push_back(event);
  }
  return out;
}

TEST(ScheduleTraceTest, OneEventPerStepOnItsRanksTrack) {
  CommProgram p;
  p.ranks = {{Compute("forward", 0, 2), Comm(StepKind::kSend, 0, 1, "send \"a\"", "act 0")},
             {Comm(StepKind::kRecv, 0, 1, "recv", "act 0"), Compute("forward", 0, 1)}};
  StatusOr<SimResult> result = Simulate(p, P2pModel::Rendezvous());
  ASSERT_TRUE(result.ok() && result->completed());
  const nlohmann::json trace = Parse(ScheduleTraceJson(p, *result));
  EXPECT_EQ(trace["displayTimeUnit"], "ms");

  const auto names = Events(trace, "M");
  ASSERT_EQ(names.size(), 4u);
  EXPECT_EQ(names[0]["name"], "process_name");
  EXPECT_EQ(names[0]["args"]["name"], "rank 0");
  EXPECT_EQ(names[2]["pid"], 1);

  const auto spans = Events(trace, "X");
  ASSERT_EQ(spans.size(), 4u);
  EXPECT_EQ(spans[0]["name"], "forward0");
  EXPECT_EQ(spans[0]["cat"], "compute");
  EXPECT_EQ(spans[0]["pid"], 0);
  EXPECT_EQ(spans[0]["ts"], 0);
  EXPECT_EQ(spans[0]["dur"], 2);
  EXPECT_EQ(spans[0]["args"]["job"], "forward");
  EXPECT_EQ(spans[0]["args"]["micro_batch"], 0);
  EXPECT_EQ(spans[0]["args"]["chunk"], 0);
  EXPECT_EQ(spans[1]["name"], "send \"a\"");  // escaped and read back
  EXPECT_EQ(spans[1]["cat"], "send");
  EXPECT_EQ(spans[1]["ts"], 2);
  EXPECT_EQ(spans[1]["dur"], 1);
  EXPECT_EQ(spans[1]["args"]["message"], "act 0");
  EXPECT_EQ(spans[1]["args"]["op"], "op 3");
  EXPECT_EQ(spans[1]["args"]["step"], 1);
  EXPECT_EQ(spans[2]["name"], "recv");
  EXPECT_EQ(spans[2]["pid"], 1);
  EXPECT_EQ(spans[2]["ts"], 2);
  EXPECT_EQ(spans[3]["name"], "forward0");
  EXPECT_EQ(spans[3]["ts"], 3);

  const auto starts = Events(trace, "s");
  const auto ends = Events(trace, "f");
  ASSERT_EQ(starts.size(), 1u);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(starts[0]["pid"], 0);
  EXPECT_EQ(ends[0]["pid"], 1);
  EXPECT_EQ(starts[0]["id"], ends[0]["id"]);
  EXPECT_TRUE(Events(trace, "i").empty());
}

TEST(ScheduleTraceTest, DeadlockShowsWhatEachRankWaitsIn) {
  CommProgram p;
  p.ranks = {{Comm(StepKind::kSend, 0, 1, "s01", "a")}, {Comm(StepKind::kSend, 1, 0, "s10", "b")}};
  p.ranks[0].push_back(Comm(StepKind::kRecv, 1, 0, "r10", "b"));
  p.ranks[1].push_back(Comm(StepKind::kRecv, 0, 1, "r01", "a"));
  StatusOr<SimResult> result = Simulate(p, P2pModel::Rendezvous());
  ASSERT_TRUE(result.ok());
  ASSERT_EQ(result->outcome, SimOutcome::kDeadlock);
  const nlohmann::json trace = Parse(ScheduleTraceJson(p, *result));
  EXPECT_TRUE(Events(trace, "X").empty());
  const auto waits = Events(trace, "i");
  ASSERT_EQ(waits.size(), 2u);
  EXPECT_EQ(waits[0]["name"], "waits in s01");
  EXPECT_EQ(waits[1]["name"], "waits in s10");
  EXPECT_EQ(waits[1]["pid"], 1);
  EXPECT_EQ(waits[1]["ts"], 0);

  // Buffered, the same program runs: two sends, two receives, two flows.
  StatusOr<SimResult> buffered = Simulate(p, P2pModel::Buffered(1));
  ASSERT_TRUE(buffered.ok() && buffered->completed());
  const nlohmann::json ran = Parse(ScheduleTraceJson(p, *buffered));
  EXPECT_EQ(Events(ran, "X").size(), 4u);
  EXPECT_EQ(Events(ran, "s").size(), 2u);
  EXPECT_TRUE(Events(ran, "i").empty());
}

TEST(ScheduleTraceTest, EmptyProgramIsAnEmptyTrace) {
  StatusOr<SimResult> result = Simulate(CommProgram{}, P2pModel::Rendezvous());
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(ScheduleTraceJson(CommProgram{}, *result),
            "{\"traceEvents\":[],\"displayTimeUnit\":\"ms\"}\n");
}

}  // namespace
}  // namespace irm::schedules
