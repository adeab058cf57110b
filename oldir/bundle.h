// The bundle: a distributed program as a directory (docs/bundle.md) — bundle.json with what the
// ranks share (world size, process groups, strategy, feeds, fetches, steps, seed, micro-batches)
// and one folder per rank with its startup program, one program per job type and an optional
// plan.json (the ordered jobs). The model here is IR-agnostic: programs are file names and job
// types, so new-IR bundles reuse it; only WriteLegacyRankPrograms and the program checks of
// ValidateBundle know legacy programs.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/diagnostic.h"
#include "common/status.h"
#include "oldir/program.h"
#include "schedules/p2p_model.h"

namespace irm::oldir {

inline constexpr std::string_view kBundleFormat = "ir-migrate.bundle";
inline constexpr int kBundleVersion = 1;

enum class BundleIr { kLegacy, kPir };
const char* BundleIrName(BundleIr ir);  // "legacy", "pir"
// The extension of the program files of a bundle of this IR: ".pdmodel", ".json".
const char* ProgramExtension(BundleIr ir);

struct ProcessGroup {
  int ring_id = 0;
  std::vector<int> ranks;  // global ranks; a rank's index here is its rank in the group
  bool operator==(const ProcessGroup&) const = default;
};

enum class FeedSplit { kBatch, kReplicate };
const char* FeedSplitName(FeedSplit split);  // "batch", "replicate"

struct FeedSpec {
  std::string name;
  std::vector<int64_t> shape;  // -1: known at run time (the batch)
  std::string dtype;           // a DType name ("float32"); ValidateBundle checks it
  FeedSplit split = FeedSplit::kBatch;
  bool operator==(const FeedSpec&) const = default;
};

struct PlanJob {
  std::string type;  // a job type with a program file in the rank folder
  int micro_batch = 0;
  bool operator==(const PlanJob&) const = default;
};

// Where a sharded tensor of one rank lies in the serial (global) tensor: the local tensor is the
// box [offsets, offsets + local dims) of a tensor of `global_shape`. The random initialisers of a
// sharded parameter draw the serial initialiser's numbers for those elements (random streams keyed
// by the global element index), so a distributed run starts from the serial run's parameters.
struct ShardSlice {
  std::vector<int64_t> global_shape;
  std::vector<int64_t> offsets;  // one per dim, each in [0, global dim)
  bool operator==(const ShardSlice&) const = default;
};

// One rank folder. File names are relative to it (`rank<N>/`).
struct BundleRank {
  int rank = 0;
  std::string startup;                          // "startup.pdmodel"; empty: none
  std::map<std::string, std::string> programs;  // job type -> file name ("forward.pdmodel")
  std::optional<std::vector<PlanJob>> plan;     // nullopt: no plan.json (runs "main" per step)
  // The rank's sharded vars by name (rank<N>/shards.json); empty: none (no file). (`= {}`:
  // initialisers that leave it out need not name it under -Wmissing-field-initializers.)
  std::map<std::string, ShardSlice> shards = {};
  bool operator==(const BundleRank&) const = default;
};

struct Bundle {
  int version = kBundleVersion;
  BundleIr ir = BundleIr::kLegacy;
  int world_size = 1;
  std::vector<ProcessGroup> process_groups;
  nlohmann::json strategy = nlohmann::json::object();  // free form
  std::vector<FeedSpec> feeds;
  std::vector<std::string> fetches;
  int steps = 1;
  int64_t seed = 0;
  int micro_batches = 1;
  // The point-to-point model the ranks' plans need to run without a hang ("buffered=2": a
  // pipeline's 1F1B sends its next activation while its peer sends a gradient back, as NCCL
  // allows while messages fit its buffers); unset: rendezvous. Runs take it unless told otherwise.
  std::optional<schedules::P2pModel> p2p;
  // The rank folders, by rank. ReadBundle lists those it finds, which may not be
  // 0..world_size-1 (ValidateBundle says so).
  std::vector<BundleRank> ranks;

  bool operator==(const Bundle&) const = default;
};

// "DIR/rank<N>" and "DIR/rank<N>/FILE".
std::string RankDir(const std::string& dir, int rank);
std::string RankFile(const std::string& dir, int rank, std::string_view file);

// Whether `name` can be a job type: letters, digits and '_', not "startup", "plan" or "shards"
// (a pir bundle's shards.json must not read as a program).
bool IsValidJobType(std::string_view name);

// Reads bundle.json, the rank folders and their plan.json and shards.json. Fails (kNotFound,
// kIoError, kParseError with file:line:col for JSON syntax and file + JSON pointer for the
// structure, kUnimplemented for an unknown version) only when the files cannot be read as the
// format; every other rule is ValidateBundle's. Program files are listed, not read.
StatusOr<Bundle> ReadBundle(const std::string& dir);

// The parsers of bundle.json and plan.json text, as ReadBundle uses them (exposed for tests and
// fuzzing). `file` names the input in diagnostics.
StatusOr<Bundle> ParseBundleJson(std::string_view text, const std::string& file);
StatusOr<std::vector<PlanJob>> ParsePlanJson(std::string_view text, const std::string& file);
// plan.json as WriteBundle writes it: {"jobs": [...]} with one job per line, so that plans read
// like schedules.
std::string PlanJsonText(const std::vector<PlanJob>& jobs);
// The parser of shards.json text, as ReadBundle uses it: {"shards": {VAR: {"global_shape": [...],
// "offsets": [...]}, ...}}, both fields required. The rules on the values are ValidateBundle's.
StatusOr<std::map<std::string, ShardSlice>> ParseShardsJson(std::string_view text,
                                                            const std::string& file);
// shards.json as WriteBundle writes it: one var per line, sorted by name.
std::string ShardsJsonText(const std::map<std::string, ShardSlice>& shards);

// Creates `dir` and the rank folders of bundle.ranks, writes bundle.json and each rank's plan.json
// and shards.json (removing a stale one from a rank without a plan, or without shards), every file
// atomically. Program files are written separately (WriteLegacyRankPrograms).
Status WriteBundle(const Bundle& bundle, const std::string& dir);

struct RankProgramsOptions {
  // Also write `<name>.prototxt` beside each program, for people (unknown fields, which the text
  // form cannot carry, are dropped from the copies).
  bool text_copies = false;
};

// Writes rank<N>/startup.pdmodel and rank<N>/<job type>.pdmodel (binary, atomically), creating
// the rank folder. Returns the rank's entry for Bundle::ranks (no plan). kInvalidArgument for a
// job type IsValidJobType refuses.
StatusOr<BundleRank> WriteLegacyRankPrograms(const std::string& dir, int rank,
                                             const Program& startup,
                                             const std::map<std::string, Program>& programs,
                                             const RankProgramsOptions& options = {});

struct BundleValidateOptions {
  // Names fed from outside besides the bundle's feeds (for every program).
  std::unordered_set<std::string> extra_feeds;
};

struct BundleCheck {
  Diagnostics findings;  // every finding: bundle.json first, then rank by rank
  // False when an error makes the input unusable (layout, a program that does not load) rather
  // than a program that breaks IR rules: the CLI exits 2 then, not 1.
  bool usable = true;
  int num_programs = 0;  // program files of all ranks, startup included
};

// Every rule of docs/bundle.md, for a bundle read from `dir`.
BundleCheck CheckBundle(const Bundle& bundle, const std::string& dir,
                        const BundleValidateOptions& options = {});
// CheckBundle's findings.
Diagnostics ValidateBundle(const Bundle& bundle, const std::string& dir,
                           const BundleValidateOptions& options = {});

}  // namespace irm::oldir
