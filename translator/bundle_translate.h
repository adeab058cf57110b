// Translation of a whole bundle (docs/bundle.md, "Translating a bundle"): a legacy bundle is read
// and checked, every program of every rank is translated and verified in memory, and only then is
// the new-IR (pir) bundle written — the same bundle.json with `ir: pir`, each rank's startup.json,
// <job type>.json, plan.json and shards.json (sharded vars keep their legacy names) — so a failure
// leaves no half-translated bundle behind. What a
// program hands on to the programs that run after it (and the bundle's fetches) is exposed with
// builtin.shadow_output, so new-IR passes such as dce keep it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/diagnostic.h"
#include "common/status.h"
#include "oldir/bundle.h"
#include "oldir/program.h"
#include "translator/coverage.h"
#include "translator/translate.h"

namespace irm::translator {

struct BundleTranslateOptions {
  CommOpStyle comm_ops = CommOpStyle::kDist;
  bool allow_unregistered = false;  // unknown op types become opaque pd_op.legacy.<type> ops
};

// One translated program, reported as soon as it is translated (before anything is written).
struct ProgramProgress {
  int rank = 0;
  int world_size = 1;
  std::string job_type;     // "startup" for the startup program
  std::string legacy_file;  // in the rank folder: "forward.pdmodel"
  std::string output_file;  // in the rank folder: "forward.json"
  int64_t ops = 0;          // ops of the translation, nested ones included
};
using ProgressFn = std::function<void(const ProgramProgress&)>;

struct BundleTranslation {
  oldir::Bundle bundle;  // the bundle written: ir = pir, program files *.json
  Coverage coverage;     // every program merged; first locations name the legacy file
  // The bundle check's warnings, then the notes of every translation, rank by rank.
  Diagnostics notes;
  int ranks = 0;
  int programs = 0;  // startup programs included
  int64_t legacy_ops = 0;
  int64_t ops = 0;  // of the translations
};

// Reads and checks the legacy bundle in `in_dir` (oldir::CheckBundle), translates every program of
// every rank with the bundle's process groups, the rank and the outputs OutputsOfRank chooses,
// verifies every translation, then writes the pir bundle to `out_dir`, which must not exist or be
// empty. `progress` (may be empty) is called once per program, rank by rank, startup first.
//
// Fails with: ReadBundle's errors; kInvalidArgument when `in_dir` is not a legacy bundle (a pir
// bundle, or one the check finds unusable) or `out_dir` is not empty; kInvalid when the bundle's
// programs break IR rules (a ring_id naming no process group of the rank, ...) — every finding of
// the check is a note of the status; the error of the first program TranslateProgram fails on,
// located in its file; kInternal when a translation does not verify (a translator bug; the
// verifier's findings are notes); and kIoError when writing fails.
StatusOr<BundleTranslation> TranslateBundle(const std::string& in_dir, const std::string& out_dir,
                                            const BundleTranslateOptions& options = {},
                                            const ProgressFn& progress = {});

// The programs of one rank, as read from its folder.
struct RankPrograms {
  oldir::Program startup;
  std::map<std::string, oldir::Program> jobs;  // by job type
};

// TranslateOptions::outputs of every program of `rank` ("startup" and each job type), in the
// order the program first writes them: the non-persistable vars a program writes in its root
// block that another program of the rank reads before writing it and runs after it — the startup
// program runs before every job; a job type runs after another when a job of it follows a job of
// the other in the plan with the same micro-batch (values flow between jobs by name only within a
// micro-batch; a program no job runs is never after another) — plus, for job programs, the
// bundle's fetches the program writes in its root block.
std::map<std::string, std::vector<std::string>> OutputsOfRank(const oldir::Bundle& bundle,
                                                              const oldir::BundleRank& rank,
                                                              const RankPrograms& programs);

}  // namespace irm::translator
