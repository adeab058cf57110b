// The subcommands of ir-migrate as plain functions over option structs, so they can be called and
// tested without the argument parser (each command's registration, command_registry.h, maps the
// command line onto its struct). Each returns an exit code (tools/exit_code.h), prints results to
// `out` and diagnostics to `err`.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "diff_tests/tensor_compare.h"
#include "newir/pass_manager.h"
#include "oldir/models/gpt.h"
#include "oldir/models/mlp.h"
#include "oldir/optimizer.h"
#include "oldir/program_io.h"
#include "reference_runtime/kernel.h"
#include "schedules/paddle_schedule.h"
#include "tools/ir_format.h"
#include "translator/translate.h"

namespace irm::tools {

struct DumpCommand {
  std::string input;               // "-" = stdin
  std::optional<IrFormat> format;  // nullopt: detect from content
  std::string output = "-";
  NewIrOptions newir;
  bool show_callstack = false;
  bool flat = false;  // blocks one after another instead of nested
  bool hide_vars = false;
  std::string program_for_params;  // names the tensors of a .pdiparams input
};
int RunDump(const DumpCommand& command, std::ostream& out, std::ostream& err);

struct ValidateCommand {
  std::string input;
  std::optional<IrFormat> format;
  bool allow_unregistered = false;  // new IR: unknown ops are not errors
  std::vector<std::string> feeds;   // names fed from outside, besides need_check_feed vars
  bool json = false;                // a JSON report on stdout instead of a summary line
  bool warnings_as_errors = false;
  bool quiet = false;  // no summary line
};
int RunValidate(const ValidateCommand& command, std::ostream& out, std::ostream& err);

// Converts within one IR (binary <-> text for legacy programs, pir <-> json for the new IR);
// crossing from the legacy IR to the new one is translation, not conversion.
struct ConvertCommand {
  std::string input;
  std::optional<IrFormat> from;
  std::string output;
  std::optional<IrFormat> to;  // nullopt: from the output's extension
  bool drop_unknown_fields = false;
  NewIrOptions newir;
};
int RunConvert(const ConvertCommand& command, std::ostream& out, std::ostream& err);

// mlir-opt for the new IR: parse, verify, run a pass pipeline, write.
struct OptCommand {
  std::string input;  // "-" = stdin; empty only with list_passes
  std::optional<IrFormat> from;
  std::string output = "-";
  std::optional<IrFormat> to;  // nullopt: from the output's extension (PIR text on stdout)
  std::string pass_pipeline;   // "dce,canonicalize{max-iterations=3}"; empty runs no pass
  bool list_passes = false;
  bool pass_timing = false;
  // Verification, IR printing and dump folder; ir_stream and verifier are set by RunOpt.
  newir::PassManagerOptions pass_manager;
  NewIrOptions newir;
};
int RunOpt(const OptCommand& command, std::ostream& out, std::ostream& err);

// Translates a legacy program into a new-IR program, or a legacy bundle directory into a pir
// bundle directory (every program of every rank; --from/--to are refused there).
struct TranslateCommand {
  std::string input;             // "-" = stdin; a directory: a bundle
  std::optional<IrFormat> from;  // binary or text; nullopt: detect from content
  std::string output = "-";      // "-": PIR text on stdout; for a bundle, the output directory
  std::optional<IrFormat> to;    // pir or json; nullopt: from the output's extension
  translator::CommOpStyle comm_ops = translator::CommOpStyle::kDist;
  bool coverage = false;  // print the op-type coverage table on stderr
  NewIrOptions newir;     // allow_unregistered: unknown ops become opaque pd_op.legacy.<type> ops
};
int RunTranslate(const TranslateCommand& command, std::ostream& out, std::ostream& err);

// Makes a translated serial pir bundle into a pir bundle of every rank's dense programs, by the
// new IR's annotation, SPMD completion, reshard lowering and dist-to-dense.
struct ParallelizeCommand {
  std::string input;        // the serial pir bundle directory
  std::string strategy;     // strategy JSON (oldir/passes/strategy.h)
  std::string annotations;  // annotation JSON (newir/auto_parallel/shard_annotation.h); empty:
                            // the strategy's standard placements (strategy_placements.h)
  std::string output;       // a new directory
};
int RunParallelize(const ParallelizeCommand& command, std::ostream& out, std::ostream& err);

struct BuildCommand {
  enum class Model { kMlp, kGpt, kCorpus };
  Model model = Model::kMlp;
  oldir::models::MlpConfig mlp;
  oldir::models::GptConfig gpt;
  oldir::OptimizerOptions optimizer;
  std::string output;        // the bundle directory
  bool text_copies = false;  // also write .prototxt beside each program
  int steps = 1;
  // A strategy JSON file (oldir/passes/strategy.h): the serial program becomes its per-rank
  // programs (world size from the strategy). Empty: the single-rank bundle.
  std::string strategy;
  // Rows per data-parallel replica and step. A pipeline's recv_v2 shapes are static: its bundle's
  // feeds take this as dim 0 (other bundles keep -1, the batch chosen at run time).
  int64_t batch_size = 4;
  // A dist sidecar (oldir/dist_sidecar.h) giving every parameter its dims_mapping over the mp
  // mesh, in place of the zoo's Megatron placements. Empty: those.
  std::string annotations;
  // A pipeline's job lists: Paddle's legacy form or its PIR form (recv_forward / send_backward).
  schedules::JobListIr job_lists = schedules::JobListIr::kLegacy;
};
int RunBuild(const BuildCommand& command, std::ostream& out, std::ostream& err);

// Runs a program (legacy or new IR, by content) or one rank of a bundle on the reference runtime:
// startup once, then `steps` steps of main; prints each step's fetches.
struct RunCommand {
  std::string input;               // a program file or a bundle directory
  std::string startup;             // a startup program (a bundle rank's own by default)
  int rank = 0;                    // the bundle rank to run
  int ranks = 0;                   // > 0: every rank of the bundle at once (its world size)
  std::string backend = "thread";  // the communication backend of a --ranks run
  // --device: where the kernels run ("cpu" or "gpu"); --launch processes hands it to each rank.
  std::string device = "cpu";
  std::string trace;               // --ranks: a Chrome trace of the run (Perfetto)
  std::string launch = "threads";  // gloo: the ranks as threads of this process, or processes
  int64_t timeout_ms = 60000;      // gloo: every call's timeout
  // --ranks: the point-to-point model (schedules::ParseP2pModel); empty: the bundle's (bundle.json
  // `p2p`), else rendezvous.
  std::string p2p;
  // A child of a `--launch processes` run: the rank it hosts (-1: not a child) and the directory
  // of the world's file store.
  int rank_process = -1;
  std::string store;
  int steps = 0;                   // 0: the bundle's steps (1 for a program file)
  std::vector<std::string> feeds;  // NAME=FILE.npy, used at every step
  bool random_feeds = false;       // draw the other feeds from the seed, per step
  std::optional<uint64_t> seed;    // default: the bundle's seed (0 for a program file)
  int64_t batch_size = 4;          // the -1 dims of random feeds
  std::vector<std::string> fetch;  // default: the program's fetch list
  std::string save_params;         // a .pdiparams file for every persistable var afterwards
  rt::GemmMode gemm = rt::GemmMode::kBlas;
  bool json = false;  // JSON on stdout instead of one line per fetched tensor
};
int RunRun(const RunCommand& command, std::ostream& out, std::ostream& err);

// Runs a legacy program and its new-IR twin (given, or translated on the fly) side by side on one
// rank and reports parity: Markdown on stdout, optionally JSON, JUnit XML and .npy dumps.
struct ParityCommand {
  std::string legacy;   // a legacy program file, or a legacy bundle directory
  std::string startup;  // its startup program (translated for the new IR); not for a bundle
  std::string against;  // a new-IR program (a pir bundle for a bundle); empty: translate `legacy`
  // A serial one-rank bundle: check the distributed bundle `legacy` against it instead
  // (diff_tests/serial_parity.h).
  std::string serial;
  std::optional<int> steps;             // default: 1, or the bundle's steps
  std::vector<std::string> feeds;       // NAME=FILE.npy, used at every step; others are random
  std::optional<uint64_t> seed;         // default: 0, or the bundle's seed
  int64_t batch_size = 4;               // the -1 dims of random feeds
  std::optional<diff::Tier> tier;       // default: exact; reordered with `serial`
  std::string report;                   // JSON report file
  std::string junit;                    // JUnit XML file
  std::string trace;                    // Chrome trace of both runs (Perfetto)
  std::string dump_dir;                 // .npy of every kept tensor (the first divergence's, ...)
  std::vector<std::string> dump_names;  // glob patterns of further tensors to keep and dump
  rt::GemmMode gemm = rt::GemmMode::kBlas;
  int ranks = 0;                   // a bundle: must be its world size; 0: the world size
  std::string backend = "thread";  // a bundle's communication backend
  // When a send returns in the multi-rank runs (schedules/p2p_model.h); empty: the bundle's
  // (bundle.json `p2p`), else rendezvous.
  std::string p2p;
};
int RunParity(const ParityCommand& command, std::ostream& out, std::ostream& err);

// Runs the parity suite's cases (diff_tests/suite_runner.h, docs/suite.md): a progress line per
// case on `err` (a bar on a terminal), the Markdown table on `out`, and the reports asked for.
// Exit 0 every case passed or was skipped, 1 a mismatch, 2 bad input (a malformed case), 3 a
// runtime failure.
struct SuiteCommand {
  std::string dir;                  // the folder of case files (*.json)
  std::vector<std::string> filter;  // glob patterns of case names; a case matching any runs
  std::vector<std::string> tags;    // a case with any of these tags runs; empty: every case
  int jobs = 1;                     // cases run at once
  std::string junit;                // JUnit XML: a test suite per case group
  std::string json;                 // the JSON summary
  std::string md;                   // the Markdown table, also printed on stdout
  // An ir-deadcode evidence manifest; the parity reports it names go to <stem>.reports/ beside it.
  std::string evidence;
};
int RunSuite(const SuiteCommand& command, std::ostream& out, std::ostream& err);

// Prints a failed status as a diagnostic and returns its exit code.
int Fail(const Status& status, std::ostream& err);

}  // namespace irm::tools
