// PyTorch's pipeline schedules as action lists: each generator computes the `pipeline_order` of
// the PyTorch schedule class of the same name (torch/distributed/pipelining/schedules.py, read at
// pytorch/pytorch 00722e648b740f91d0e71494baa17891749fd291) — the compute-only order, with idle
// steps where PyTorch puts None, before any communication is lowered into it (action_lower.h).
#pragma once

#include <string_view>
#include <vector>

#include "common/status.h"
#include "schedules/action.h"

namespace irm::schedules {

enum class PyTorchSchedule {
  kGPipe,                  // ScheduleGPipe (one stage per rank)
  k1F1B,                   // Schedule1F1B (one stage per rank)
  kInterleaved1F1B,        // ScheduleInterleaved1F1B
  kLoopedBFS,              // ScheduleLoopedBFS
  kInterleavedZeroBubble,  // ScheduleInterleavedZeroBubble (ZB1P)
  kZBVZeroBubble,          // ScheduleZBVZeroBubble (two stages per rank, V placement)
  kDualPipeV,              // ScheduleDualPipeV (two stages per rank, V placement)
};

// Every schedule, in the order above.
const std::vector<PyTorchSchedule>& AllPyTorchSchedules();
// PyTorch's names as `get_schedule_class` spells them: "GPipe", "1F1B", "Interleaved1F1B",
// "LoopedBFS", "InterleavedZeroBubble", "ZBVZeroBubble", "DualPipeV".
const char* PyTorchScheduleName(PyTorchSchedule schedule);
// Case-insensitive, as `get_schedule_class`; kInvalidArgument listing the names otherwise.
StatusOr<PyTorchSchedule> ParsePyTorchSchedule(std::string_view name);
// How the schedule places stages on ranks: kV for ZBVZeroBubble and DualPipeV, else kLoop.
StageStyle PyTorchScheduleStageStyle(PyTorchSchedule schedule);
// 1 for GPipe and 1F1B (single-stage schedules), 2 for the others.
int DefaultStagesPerRank(PyTorchSchedule schedule);

struct GenerateOptions {
  // Schedule1F1B's `_get_pipeline_order` gives the last rank forwards 1..m instead of 0..m-1 (its
  // forward counter starts at 0 and is bumped before the first steady-state forward when that rank
  // has no warm-up forward), so its order fails `_validate_schedule` (a B0 without F0) although
  // PyTorch's 1F1B runtime, which does not read that order, runs forward 0 first. By default the
  // generator gives the last rank forward 0..m-1, as the runtime runs it; true reproduces
  // `_get_pipeline_order` as it is.
  bool upstream_1f1b_last_rank = false;
};

struct GeneratedSchedule {
  ActionSchedule order;  // PyTorch's pipeline_order, rank by rank
  int num_stages = 0;    // pp * stages per rank
  StageStyle style = StageStyle::kLoop;
  std::vector<int> stage_to_rank;  // StageToRankMapping(pp, num_stages, style)
};

// The pipeline_order of `schedule` for `pp` ranks, `micro_batches` micro-batches and
// `stages_per_rank` local stages. kInvalidArgument for what PyTorch rejects (1F1B with fewer
// micro-batches than stages; Interleaved1F1B / InterleavedZeroBubble when the micro-batches are
// not a multiple of max(1, m / pp) rounds; ZBV and DualPipeV without exactly two stages per rank;
// DualPipeV with fewer micro-batches than stages) and for pp, m or stages per rank below 1 or a
// single-stage schedule asked for more than one stage per rank.
// Like PyTorch, GPipe's and 1F1B's orders go through `_add_reduce_grad`: their idle steps are
// dropped and each rank ends with "<stage>REDUCE_GRAD" after its last backward (AddReduceGrad in
// action_lower.h).
StatusOr<GeneratedSchedule> GeneratePyTorchSchedule(PyTorchSchedule schedule, int pp,
                                                    int micro_batches, int stages_per_rank,
                                                    const GenerateOptions& options = {});

}  // namespace irm::schedules
