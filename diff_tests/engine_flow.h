// The Engine flow on both IRs (docs/engine.md): Paddle's `Engine._prepare_program` stages
// (python/paddle/distributed/auto_parallel/static/engine.py: _build, _plan, _parallel,
// _init_comm, _initialize; then fit's steps) run for one strategy by the legacy passes and by the
// new IR's, each checked against the serial program, and the two against each other:
//   build     the serial training program (a zoo model, or a serial legacy bundle) -> OUT/serial
//   plan      the placements: the legacy passes' (Megatron's, completed by the passes) and the
//             new IR's standard annotations of the translated serial program
//   parallel  legacy: ApplyStrategy -> OUT/legacy; new IR: translate the serial bundle,
//             ParallelizeBundle, then ApplyGradientMerge on every rank when the strategy merges
//             gradients; a pure pipeline's stages as process meshes (ParallelizePipeline), a
//             hybrid's stage programs of the legacy partition translated, either split into
//             jobs by SplitPipelineProgram -> OUT/pir
//   init comm the process groups each bundle records; a new-IR pipeline's send/receive order
//             checked before anything runs
//   initialize, run  every bundle's startup, then its steps, on the thread world (or the
//             kernels and the world EngineOptions names: --device gpu, --backend device|nccl)
// and the pairs compared: serial vs legacy and serial vs new (serial_parity.h, the noise-floor
// tier of the parity matrix cases; with gradient merge one serial step per k executor steps, on
// their rows stacked), legacy vs new (the legacy bundle translated, then pir_bundle_compare.h,
// or plan_bundle_compare.h for pipelines: exact where the op orders agree, else the reordered
// tier, naming the first op that differs).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "diff_tests/corpus/model_bundle.h"
#include "diff_tests/parity_report.h"
#include "newir/auto_parallel/gradient_merge.h"
#include "oldir/passes/strategy.h"
#include "reference_runtime/comm/rank_world.h"
#include "reference_runtime/kernel.h"

namespace irm::diff {

// Which roads the flow takes: the legacy passes, the new IR's, or both (and the three-way report).
enum class EngineIr { kLegacy, kPir, kBoth };
// "legacy", "pir", "both".
const char* EngineIrName(EngineIr ir);
std::optional<EngineIr> EngineIrFromName(std::string_view name);

enum class EngineStage { kBuild, kPlan, kParallel, kInitComm, kInitialize, kRun, kCompare };
// "build", "plan", "parallel", "init comm", "initialize", "run", "compare".
const char* EngineStageName(EngineStage stage);

// A fault switched on in a new-IR pass to show that `--ir both` catches it. Test-only.
struct EngineTestFault {
  newir::GradientMergeFault gradient_merge = newir::GradientMergeFault::kNone;
  // The new IR's pipeline road sends to the wrong peer: stage 0's first forward send (of the
  // first data- and model-parallel rank) names the sending rank itself. The engine's
  // communication check catches it before anything runs, naming the op.
  bool pipeline_wrong_peer = false;
};
// "gm:scale-by-k-plus-1", "gm:drop-if", "pp:wrong-peer". kInvalidArgument for any other
// spelling.
StatusOr<EngineTestFault> ParseEngineTestFault(std::string_view spec);

struct EngineOptions {
  EngineIr ir = EngineIr::kBoth;
  oldir::passes::Strategy strategy;
  std::string strategy_file;  // names the strategy in diagnostics
  // The model when `serial_bundle` is empty (its strategy is ignored: `strategy` is the one).
  corpus::ModelRecipe recipe;
  // A serial legacy bundle (one rank, startup + main, as `ir-migrate build mlp|gpt` writes it)
  // in place of the recipe's model.
  std::string serial_bundle;
  int steps = 0;                 // executor steps; 0: the recipe's or the serial bundle's
  std::optional<uint64_t> seed;  // default: the serial program's
  int64_t batch_size = 4;        // rows per data-parallel replica and step
  std::chrono::milliseconds timeout{60000};
  // Where the runs execute (`--device`, `--backend`; docs/engine.md, "Device"): every rank's
  // kernels (ExecutorOptions::kernels; null: the CPU's, the GPU registry for --device gpu) and the
  // world its ranks communicate in (unset: the thread world, with `timeout`; the device world or
  // NCCL for --backend device|nccl). The passes and the float64 shadow that arbitrates the
  // noise-floor tier stay on the CPU. Both must outlive the call; `device` and `backend` name them
  // in the reports.
  const rt::KernelRegistry* kernels = nullptr;
  rt::RankWorldFactory make_world;
  std::string device = "cpu";
  std::string backend = "thread";
  EngineTestFault test_fault;
  // One line per stage and per rank where a stage loops over ranks ("[engine] parallel (pir):
  // rank 1: 42 ops"), for a terminal.
  std::function<void(const std::string& line)> progress;
};

// One compared pair: "serial-legacy", "serial-pir", "legacy-pir".
struct EnginePair {
  enum class Verdict { kPass, kFail, kSkipped };
  std::string name;
  Verdict verdict = Verdict::kPass;
  std::string skipped_reason;
  ParityReport report;
  // legacy-pir only: whether every rank's programs have the same ops in the same order (the exact
  // tier), the alignment for people (DescribeOpDifferences) and the first op that differs.
  bool same_op_order = true;
  std::string op_differences;
  std::string first_op_difference;
  // A failing pair: its first failing tensor ("parameters linear_0.w_0, rank 1, step 2: max abs
  // diff ...") or communication record.
  std::string first_failure;
};
// "pass", "FAIL", "skipped".
const char* EngineVerdictName(EnginePair::Verdict verdict);

struct EngineResult {
  std::string stem;  // the JUnit suites' prefix: engine.<stem>.<pair>
  EngineIr ir = EngineIr::kBoth;
  oldir::passes::Strategy strategy;
  int steps = 0;
  uint64_t seed = 0;
  std::string device = "cpu";      // EngineOptions::device
  std::string backend = "thread";  // EngineOptions::backend
  std::vector<EnginePair> pairs;
  bool parity() const;  // no pair fails (a skipped pair does not)
};

// Where a flow that returned an error stopped: the build, plan and parallel stages fail on their
// input (a bad strategy, annotations or model options); later stages on a run.
struct EngineFailure {
  EngineStage stage = EngineStage::kBuild;
  bool input_error() const {
    return stage == EngineStage::kBuild || stage == EngineStage::kPlan ||
           stage == EngineStage::kParallel;
  }
};

// Runs the flow, writing the bundles into `out_dir` (a folder that must not exist or be empty;
// staged: it appears only once the flow completed, mismatch or not) with the reports
// (report.md, report.json, report.xml) when anything was compared. `stem` names the run in the
// reports. On error `failure` (may be null) says the stage; errors are located: the passes' and
// runs' own locations (a strategy the passes refuse, a pipeline schedule they do not split); a
// hang is kInternal. A new-IR pipeline bundle whose send/receive order cannot complete is no
// error: its two pairs fail with the communication check's finding (naming the op) and nothing
// of it runs.
StatusOr<EngineResult> RunEngineFlow(const EngineOptions& options, const std::string& out_dir,
                                     const std::string& stem, EngineFailure* failure = nullptr);

// The three-way report: a summary table (pair, verdict, tier, compared, mismatched, first
// failure), then a section per pair.
std::string RenderEngineMarkdown(const EngineResult& result);
// Canonical JSON (keys sorted, two-space indent): the run and per pair its verdict, the op-order
// finding and the pair's parity report (RenderJson's object).
std::string RenderEngineJson(const EngineResult& result);
// One testsuite per pair, named engine.<stem>.<pair>; a skipped pair is one skipped test case.
std::string RenderEngineJunit(const EngineResult& result);

}  // namespace irm::diff
