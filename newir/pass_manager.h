// The PassManager runs a pipeline of passes over a Program with the debugging affordances of
// mlir-opt: verification of the input and after every pass (naming the pass that broke the IR),
// IR printing before/after chosen passes, after all, after a change or after a failure, numbered
// dumps of every stage into a folder, and per-pass wall-time timing. PassManagerOptions is a
// plain struct the CLI fills from its flags.
//
// Typical use:
//   PassManager pm(options);
//   IRM_RETURN_IF_ERROR(pm.AddPipeline("dce,canonicalize{max-iterations=3}"));
//   IRM_ASSIGN_OR_RETURN(IrChange change, pm.Run(program));
//   if (show_timing) std::cerr << pm.timing().ToString();
#pragma once

#include <chrono>
#include <functional>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "newir/pass.h"
#include "newir/pass_registry.h"
#include "newir/printer.h"
#include "newir/program.h"

namespace irm::newir {

// Checks a program; ok when it is well formed.
using ProgramVerifier = std::function<Status(const Program& program)>;

// VerifyProgram (verifier.h) with its default options.
Status VerifyWithDefaults(const Program& program);

struct PassManagerOptions {
  // Verify the input before the first pass and the IR after every pass; a failure stops the run
  // and names the pass after which the IR is invalid.
  bool verify_each = true;
  // What verify_each calls (e.g. VerifyProgram with allow_unregistered set).
  ProgramVerifier verifier = VerifyWithDefaults;

  // Print the IR before / after each run of the passes named here (every pass of the pipeline by
  // that name). Run fails when a name is not a pass of the pipeline.
  std::set<std::string, std::less<>> print_ir_before = {};
  std::set<std::string, std::less<>> print_ir_after = {};
  bool print_ir_before_all = false;
  bool print_ir_after_all = false;
  // Print the IR after a pass only when that pass reported a change: alone, after every pass that
  // changed it; with print_ir_after or print_ir_after_all, after those of their passes that did.
  bool print_ir_after_change = false;
  // Print the IR after a pass that failed, or after which verification failed.
  bool print_ir_after_failure = false;
  // Where printed IR goes (null: nowhere); each dump is a header line
  // `// -----// IR Dump After dce //----- //` (Before, or `After dce Failed`), the program, then
  // an empty line.
  std::ostream* ir_stream = &std::cerr;
  PrintOptions print_options = {};

  // When not empty, the folder (created if missing) that receives `00_input.pir`, then one
  // `NN_<pass>.pir` per pass run (NN its 1-based position, at least two digits; written also when
  // verification then fails; `NN_<pass>.failed.pir` when the pass itself failed). Each file is
  // written atomically, printed with print_options. Files of earlier runs are not removed.
  std::string dump_dir = {};
};

// Wall time of each pass run, of verification and of the whole Run.
struct PassTimingReport {
  struct Entry {
    std::string pass;
    std::chrono::nanoseconds wall{0};
  };
  std::vector<Entry> passes;  // in run order, one per pass run
  std::chrono::nanoseconds verification{0};
  std::chrono::nanoseconds total{0};

  // The `--pass-timing` table, as mlir-opt's:
  //   ===-------------------------------------------------------------------------===
  //                         ... Pass execution timing report ...
  //   ===-------------------------------------------------------------------------===
  //     Total Execution Time: 0.0123 seconds
  //
  //     ----Wall Time----  ----Name----
  //       0.0100 ( 81.3%)  dce
  //       0.0003 (  2.4%)  (verifier)
  //       0.0123 (100.0%)  Total
  // The verifier line appears when verification ran.
  std::string ToString() const;
};

class PassManager {
 public:
  explicit PassManager(PassManagerOptions options = {}) : options_(std::move(options)) {}

  void AddPass(std::unique_ptr<Pass> pass) { passes_.push_back(std::move(pass)); }
  // Parses `pipeline` (pass_pipeline.h) and appends its passes; on error nothing is added.
  Status AddPipeline(std::string_view pipeline,
                     const PassRegistry& registry = PassRegistry::Global(),
                     const std::string& source = "<pipeline>");
  size_t size() const { return passes_.size(); }
  // The pass names in order, comma-separated ("dce,canonicalize").
  std::string PipelineNames() const;

  // Runs every pass in order over `program`, stopping at the first failure (of a pass, of
  // verification, of writing a dump). Answers kChanged when some pass reported a change.
  StatusOr<IrChange> Run(Program& program);

  // The timing of the last Run (complete up to where it stopped).
  const PassTimingReport& timing() const { return timing_; }

 private:
  Status CheckPrintNames() const;
  Status Verify(const Program& program, std::string_view what);
  void PrintIr(const Program& program, std::string_view when, std::string_view pass);
  Status Dump(const Program& program, size_t index, std::string_view stem);

  PassManagerOptions options_;
  std::vector<std::unique_ptr<Pass>> passes_;
  PassTimingReport timing_;
};

}  // namespace irm::newir
