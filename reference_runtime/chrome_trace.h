// A Chrome trace (the Trace Event Format that Perfetto and chrome://tracing open) of a multi-rank
// run: one track per rank, with a span per job (step, job type, micro-batch) and, nested below it,
// a span per op; point-to-point messages drawn as flow arrows from the sending op to the
// receiving op, and collectives as flows from each rank's call to the next rank's in the group.
// The recorder hears the jobs through MultiRankConfig::on_job and the ops through an observer per
// rank (each called only on its rank's thread), and draws the arrows afterwards from the ranks'
// communication traces, matching calls to op spans by their call sites. A parity run draws both
// sides into one trace: a recorder per side, each with its label and its own process ids, merged.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "reference_runtime/comm/comm_trace.h"
#include "reference_runtime/executor.h"
#include "reference_runtime/plan_executor.h"

namespace irm::rt {

class ChromeTraceRecorder {
 public:
  // Ranks are drawn as processes `pid_base + rank` named "rank r", or "<label> rank r".
  explicit ChromeTraceRecorder(int world_size, std::string label = "", int pid_base = 0);

  // Before each job of `rank` (closes the rank's previous job span).
  void OnJob(int rank, const JobContext& job);
  // The observer of `rank`'s ops: a span from the end of the rank's previous op (or the start of
  // its job) to now.
  const OpObserver* observer(int rank) const;

  // The trace as JSON: the spans, and flows from the communication traces (one per rank; null
  // entries are skipped); `ranks_of_ring` maps a ring id to its global ranks.
  std::string Render(const std::vector<const CommTrace*>& comm,
                     const std::vector<std::pair<int, std::vector<int>>>& ranks_of_ring) const;

 private:
  struct Span {
    std::string name;
    double begin_us = 0;
    double end_us = -1;  // -1: still open
    // Ops: the call site their communication records carry.
    int step = 0;
    std::string job;
    int micro_batch = 0;
    int op_index = -1;
  };
  struct RankState {
    std::vector<Span> jobs;
    std::vector<Span> ops;
    JobContext current;
    std::string current_job;
    double last_end_us = 0;
  };
  double Now() const;  // microseconds since the recorder was made
  void Record(int rank, const OpEvent& event);

  std::chrono::steady_clock::time_point start_;
  std::string label_;
  int pid_base_ = 0;
  std::vector<std::unique_ptr<RankState>> ranks_;
  std::vector<std::unique_ptr<OpObserver>> observers_;
};

// One trace holding the events of several rendered ones (each from Render): the sides of a parity
// run, with their distinct process ids. kParseError when one is not a rendered trace.
StatusOr<std::string> MergeChromeTraces(const std::vector<std::string>& traces);

}  // namespace irm::rt
