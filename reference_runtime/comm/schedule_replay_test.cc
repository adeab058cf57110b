// Every schedule of the matrix (each Paddle mode × IR × p ∈ {2,4} × m ∈ {p,2p} × v = 2 where it
// applies, each PyTorch schedule × p × m) against two independent implementations of the
// point-to-point model: the simulator (schedules/simulator.h) says the smallest buffer depth K it
// needs, and replaying its communication on the thread world — real threads, real sends and
// receives, the watchdog — must agree: under buffered(K) (rendezvous for K = 0) every rank
// finishes, under the depth one below it the world reports a hang. The depths are also pinned:
// FThenB needs 0, the legacy 1F1B order 1 (forward m+1's send meets backward m's send), the PIR
// 1F1B order of PR #70360 0 (pipelines.md §4.3); the rest are listed in docs/schedules.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "reference_runtime/comm/thread_world.h"
#include "schedules/action_comm.h"
#include "schedules/action_generate.h"
#include "schedules/action_lower.h"
#include "schedules/paddle_comm.h"
#include "schedules/paddle_schedule.h"
#include "schedules/simulator.h"

namespace irm::rt {
namespace {

namespace sched = irm::schedules;

// Runs `program`'s sends and receives on a thread world under `model`: each message a one-element
// tensor holding its index on its channel, checked by the receiver (the n-th receive takes the
// n-th send). OK when every rank finishes; the world's hang report otherwise.
Status Replay(const sched::CommProgram& program, const sched::P2pModel& model) {
  const int world = static_cast<int>(program.ranks.size());
  std::vector<CommGroup> groups;
  std::vector<int> all;
  for (int r = 0; r < world; ++r) all.push_back(r);
  std::vector<int> rings;
  for (const auto& steps : program.ranks) {
    for (const sched::Step& step : steps) {
      if (step.kind == sched::StepKind::kCompute) continue;
      if (std::find(rings.begin(), rings.end(), step.channel.group) == rings.end()) {
        rings.push_back(step.channel.group);
      }
    }
  }
  for (int ring : rings) groups.push_back({ring, all});
  ThreadWorldOptions options;
  options.p2p = model;
  options.timeout = std::chrono::milliseconds(5000);
  IRM_ASSIGN_OR_RETURN(std::unique_ptr<ThreadWorld> threads,
                       ThreadWorld::Create(world, groups, options));
  return threads->RunRanks([&](int rank) -> Status {
    std::map<sched::Channel, float> sent, received;
    for (const sched::Step& step : program.ranks[static_cast<size_t>(rank)]) {
      if (step.kind == sched::StepKind::kCompute) continue;
      IRM_ASSIGN_OR_RETURN(Communicator * comm, threads->For(rank, step.channel.group));
      const CallSite site{.op_type = step.label, .job = step.job, .micro_batch = step.micro_batch};
      if (step.kind == sched::StepKind::kSend) {
        Tensor message = Tensor::ZerosUnchecked(DType::kFloat32, {1});
        message.data<float>()[0] = sent[step.channel]++;
        IRM_RETURN_IF_ERROR(comm->Send(message, step.channel.receiver, site));
      } else {
        Tensor message;
        IRM_RETURN_IF_ERROR(comm->Recv(&message, step.channel.sender, site));
        const float want = received[step.channel]++;
        if (message.data<float>()[0] != want) {
          return Status(StatusCode::kInvalid, Location{},
                        fmt::format("rank {} took message {} where it meant {}", rank,
                                    message.data<float>()[0], want));
        }
      }
    }
    return Status::Ok();
  });
}

struct Case {
  std::string name;
  sched::CommProgram program;
};

// The depth the simulator finds is the one pinned, and the thread world agrees with it.
void ExpectDepthAgreesWithTheRuntime(const Case& c, int pinned) {
  SCOPED_TRACE(c.name);
  StatusOr<std::optional<int>> depth = sched::MinBufferDepth(c.program);
  ASSERT_TRUE(depth.ok()) << depth.status().ToString();
  ASSERT_TRUE(depth->has_value()) << "never completes";
  const int k = **depth;
  EXPECT_EQ(k, pinned);
  const auto model = [](int d) {
    return d == 0 ? sched::P2pModel::Rendezvous() : sched::P2pModel::Buffered(d);
  };
  const Status completes = Replay(c.program, model(k));
  EXPECT_TRUE(completes.ok()) << completes.ToString();
  if (k > 0) {
    const Status hangs = Replay(c.program, model(k - 1));
    ASSERT_FALSE(hangs.ok());
    EXPECT_NE(hangs.message().find("hang"), std::string::npos) << hangs.ToString();
  }
}

std::vector<std::pair<int, int>> Sizes() { return {{2, 2}, {2, 4}, {4, 4}, {4, 8}}; }

TEST(ScheduleMatrixTest, PaddleDepthsAgreeWithTheThreadWorld) {
  using M = sched::PaddleMode;
  using Ir = sched::JobListIr;
  int checked = 0;
  for (M mode : {M::kFThenB, M::k1F1B, M::kEager1F1B, M::kVpp, M::kZbh1, M::kZbvpp}) {
    for (Ir ir : {Ir::kLegacy, Ir::kPir}) {
      for (auto [p, m] : Sizes()) {
        sched::PaddleScheduleSpec spec{.mode = mode, .pp = p, .micro_batches = m, .ir = ir};
        if (mode == M::kVpp || mode == M::kZbvpp) spec.vpp = 2;
        if (!sched::ValidatePaddleScheduleSpec(spec).ok()) continue;  // Paddle refuses the size
        StatusOr<sched::CommProgram> program = sched::PaddleCommProgram(spec);
        ASSERT_TRUE(program.ok()) << program.status().ToString();
        // Only FThenB and PIR 1F1B need no buffer; every other order sends before it receives
        // somewhere (docs/schedules.md names each cycle).
        const int pinned = mode == M::kFThenB || (mode == M::k1F1B && ir == Ir::kPir) ? 0 : 1;
        ExpectDepthAgreesWithTheRuntime({fmt::format("{} {} p={} m={}", sched::PaddleModeName(mode),
                                                     ir == Ir::kPir ? "pir" : "legacy", p, m),
                                         std::move(program).value()},
                                        pinned);
        ++checked;
      }
    }
  }
  // FThenB, 1F1B and VPP in both forms (24), Eager1F1B at m = 2p (2), ZBH1 (4), ZBVPP at m = p (2).
  EXPECT_EQ(checked, 32);
}

TEST(ScheduleMatrixTest, PyTorchDepthsAgreeWithTheThreadWorld) {
  int checked = 0;
  for (sched::PyTorchSchedule schedule : sched::AllPyTorchSchedules()) {
    for (auto [p, m] : Sizes()) {
      StatusOr<sched::GeneratedSchedule> generated =
          sched::GeneratePyTorchSchedule(schedule, p, m, sched::DefaultStagesPerRank(schedule));
      if (!generated.ok()) continue;  // PyTorch refuses the size (DualPipeV with m < 2p)
      StatusOr<sched::ActionSchedule> lowered =
          sched::AddSendRecv(generated->order, generated->stage_to_rank);
      ASSERT_TRUE(lowered.ok()) << lowered.status().ToString();
      StatusOr<sched::CommProgram> program =
          sched::ActionScheduleToCommProgram(*lowered, generated->stage_to_rank);
      ASSERT_TRUE(program.ok()) << program.status().ToString();
      // PyTorch's lowering places each receive where its sender runs: no schedule needs a buffer.
      ExpectDepthAgreesWithTheRuntime(
          {fmt::format("{} p={} m={}", sched::PyTorchScheduleName(schedule), p, m),
           std::move(program).value()},
          0);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 26);  // 7 schedules × 4 sizes, less DualPipeV's two with m < 2p
}

}  // namespace
}  // namespace irm::rt
