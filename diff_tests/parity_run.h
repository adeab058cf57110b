// The parity driver for one program on one rank: a legacy program (and its startup program) run
// on the LegacyExecutor, and its new-IR twin — a given new-IR program, or the legacy one
// translated on the fly — run on the PirExecutor, for N steps with the same feeds (given, or drawn
// from the seed). Both runs are traced op by op; the report compares every step's fetches, every
// persistable var (parameters, optimizer state) after the startup and after each step, and every
// aligned intermediate, then localises the first divergence and re-executes the suspect op in
// isolation.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "diff_tests/parity_report.h"
#include "diff_tests/trace_align.h"
#include "newir/program.h"
#include "oldir/program.h"
#include "reference_runtime/executor.h"

namespace irm::diff {

struct ParityPrograms {
  const oldir::Program* legacy_main = nullptr;
  const oldir::Program* legacy_startup = nullptr;  // optional
  // Optional: null translates legacy_main (and, for the startup, legacy_startup) on the fly.
  const newir::Program* new_main = nullptr;
  const newir::Program* new_startup = nullptr;
  std::string legacy_file;
  std::string new_file;  // empty: "(translated)"
};

// Called after each step of each side: "legacy" or "new IR", the step (0: startup), the steps.
using ParityProgress = std::function<void(const std::string& side, int step, int steps)>;

struct ParityOptions {
  int steps = 1;
  rt::FeedMap feeds;  // used at every step; the other feeds are drawn from the seed
  uint64_t seed = 0;
  int64_t batch_size = 4;
  Tier tier = Tier::kExact;
  rt::GemmMode gemm = rt::GemmMode::kBlas;
  // The kernels both sides run on (`--device gpu`: reference_runtime/cuda/gpu_kernel_registry.h),
  // the isolated re-execution too; null: the CPU's (KernelRegistry::Global()).
  const rt::KernelRegistry* kernels = nullptr;
  // Outputs kept in full on both sides (glob patterns), besides what the tier needs.
  std::vector<std::string> keep;
  bool isolate = true;
  // Draw both runs into a Chrome trace (ParityResult::chrome_trace): a process per side, job and
  // op spans.
  bool chrome_trace = false;
  ParityProgress progress;
};

struct ParityResult {
  ParityReport report;
  // The traces (of the re-runs when the first divergence needed its tensors re-created).
  Trace old_trace;
  Trace new_trace;
  // The Chrome trace of the first runs of both sides, when asked for; else empty.
  std::string chrome_trace;
};

// Errors: kUnimplemented for the noise-floor tier (it arbitrates a distributed run against its
// serial program: serial_parity.h); those of translation (kUnimplemented, kInvalid at the legacy
// op), of the new-IR verifier (kInvalid), and of either run (the executor's codes, with a note
// naming the side).
StatusOr<ParityResult> RunParity(const ParityPrograms& programs, const ParityOptions& options);

}  // namespace irm::diff
