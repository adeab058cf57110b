// ASCII pictures of schedules: ranks across, time down, as PyTorch's `_format_pipeline_order`
// (torch/distributed/pipelining/schedules.py) prints them —
//
//           Rank 0   Rank 1
//   Step 0: 0F0
//   Step 1: 0SEND_F0 1RECV_F0
//   Step 2:          1F0      <-- ERROR HERE
//
// `Step NN` rows (the number zero-padded to the width of the last one), one column per rank, an
// idle step empty, each column left-aligned and padded to its widest cell (trailing spaces kept,
// as PyTorch pads every cell), and `<-- ERROR HERE` after the failing row. One difference: a
// column is also at least as wide as its "Rank i" header (PyTorch sizes it by the step label
// only, which misaligns ranks from 10 on).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "schedules/action.h"
#include "schedules/comm_program.h"
#include "schedules/simulator.h"

namespace irm::schedules {

// The grid of `cells[rank][row]` (rows a rank lacks are empty cells); "" for no ranks; only the
// header for no rows.
std::string FormatGrid(const std::vector<std::vector<std::string>>& cells,
                       std::optional<int> error_row = std::nullopt);

// An action schedule as it is written: one row per slot, cells Action::ToString().
std::string FormatActionGrid(const ActionSchedule& schedule,
                             std::optional<int> error_step = std::nullopt);

// A simulated run of `program` (`result` from Simulate): one row per tick, a cell the label of the
// step that ran then (a step without a label by DescribeStep), idle ticks empty. A failed run
// shows where it failed, marked `<-- ERROR HERE`: after a deadlock or a stuck unmatched pair, one
// more row holding the step each stuck rank waits in; after a wrong match, the receive that would
// take the wrong message, in its rank's cell of the last row.
std::string FormatTimelineGrid(const CommProgram& program, const SimResult& result);

}  // namespace irm::schedules
