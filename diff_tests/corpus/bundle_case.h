// A distributed legacy program held in memory — bundle.json's contents and, per rank, the startup
// program, one program per job type and the plan — as the corpus builders (corpus.h) make it and
// WriteBundleCase writes it out in the bundle layout of docs/bundle.md.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "oldir/bundle.h"
#include "oldir/program.h"

namespace irm::corpus {

struct RankPrograms {
  oldir::Program startup;
  std::map<std::string, oldir::Program> jobs;       // job type -> program
  std::optional<std::vector<oldir::PlanJob>> plan;  // nullopt: "main" once per step
};

struct BundleCase {
  std::string name;         // "dp2_mlp": the case's directory name in a corpus
  std::string description;  // one line, for reports
  oldir::Bundle bundle;     // bundle.json; `ranks` is filled by WriteBundleCase
  std::vector<RankPrograms> ranks;
};

// Writes the bundle into `dir` (created; existing files of the same names replaced): bundle.json,
// and per rank rank<N>/startup.pdmodel, rank<N>/<job type>.pdmodel, rank<N>/plan.json — with
// protobuf text copies of the programs beside them when `text_copies`.
Status WriteBundleCase(const BundleCase& bundle_case, const std::string& dir,
                       bool text_copies = false);

}  // namespace irm::corpus
