// `ir-migrate schedule`: pipeline schedules as data (schedules/) from the command line — generate
// Paddle's job lists or PyTorch's action schedules, check a schedule (a PyTorch CSV, a bundle's
// real send/recv order, or a generated one) for deadlocks under a point-to-point model, lower a
// compute-only CSV to one with communication, and draw a simulated run as an ASCII grid or a
// Chrome trace.
#pragma once

#include <optional>
#include <ostream>
#include <string>

namespace irm::tools {

struct ScheduleCommand {
  std::string action;  // "generate", "check", "lower", "draw"

  // A generated schedule (generate; check and draw without `input`).
  std::string mode;  // a Paddle mode (FThenB, 1F1B, ...) or a PyTorch schedule (GPipe, ...)
  int pp = 0;
  int micro_batches = 0;
  std::optional<int> vpp;  // Paddle: vpp_degree; PyTorch: stages per rank
  bool split_backward = false;
  std::string ir = "legacy";          // Paddle job lists: "legacy" or "pir"
  std::optional<int> stage;           // generate: one stage's plan
  std::optional<std::string> format;  // generate: "plan" (Paddle's default) or "csv"

  // check / lower / draw: a PyTorch CSV file or a bundle directory.
  std::string input;
  bool merge_bw = true;  // lowering a compute-only CSV: an I right before its W becomes one B
  std::string p2p = "rendezvous";  // check / draw: the point-to-point model
  bool json = false;               // check: a JSON report
  bool grid = false;               // draw
  bool chrome = false;             // draw
  // "-": standard output. generate of a Paddle mode without --stage: a bundle folder, which gets
  // rank<s>/plan.json for every stage.
  std::string output = "-";
};

// Exit codes: 0 done (check: the schedule completes), 1 check: it deadlocks or a receive takes
// the wrong message, 2 bad usage or input (a malformed CSV, an invalid plan, a schedule whose
// ranks disagree on a send/recv pair).
int RunSchedule(const ScheduleCommand& command, std::ostream& out, std::ostream& err);

}  // namespace irm::tools
