// Translating a bundle (bundle_translate.h): check, choose each program's outputs, translate and
// verify everything in memory, then write the pir bundle into a temporary sibling folder renamed
// into place once complete (common/staged_folder.h): an interrupted write leaves no partial
// bundle, and none is ever mistaken for a finished one.
#include "translator/bundle_translate.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <unordered_set>
#include <utility>

#include "common/staged_folder.h"
#include "newir/program_io.h"
#include "newir/verifier.h"
#include "oldir/program_io.h"
#include "translator/op_compat.h"

namespace irm::translator {
namespace {

namespace fs = std::filesystem;

constexpr const char* kStartup = "startup";
constexpr const char* kMain = "main";

bool IsVarName(const std::string& name) { return !name.empty() && name != oldir::kEmptyVarName; }

// Whether the translation of `op` writes nothing for output `slot` (XShape: the new IR has no
// twin, and the grad op that reads it in the legacy program is rebuilt without it).
bool DroppedOutput(const oldir::proto::OpDesc& op, const std::string& slot) {
  const OpCompat* row = FindOpCompat(op.type());
  return row != nullptr &&
         std::find(row->dropped.begin(), row->dropped.end(), slot) != row->dropped.end();
}

// The vars the root block's ops write, in order of first write; not those only a slot the
// translation drops writes, which no later program can be handed.
std::vector<std::string> RootWrites(const oldir::Program& program) {
  std::vector<std::string> names;
  std::unordered_set<std::string> seen;
  if (program.num_blocks() == 0) return names;
  for (const oldir::proto::OpDesc& op : program.root().desc().ops()) {
    for (const oldir::proto::OpDesc::Var& slot : op.outputs()) {
      if (DroppedOutput(op, slot.parameter())) continue;
      for (const std::string& name : slot.arguments()) {
        if (IsVarName(name) && seen.insert(name).second) names.push_back(name);
      }
    }
  }
  return names;
}

// Adds to `reads` the vars `block` reads before it (or the block it is nested in, through
// `written`) writes them. An op's sub-blocks run while the op runs: after its inputs are read and
// before its outputs are written.
void ReadsBeforeWrite(const oldir::Program& program, int position,
                      std::unordered_set<std::string> written,
                      std::unordered_set<std::string>* reads, int depth = 0) {
  // A block nested in itself is the validator's finding (CheckBundle ran it); stop, not loop.
  if (position < 0 || position >= program.num_blocks() || depth > program.num_blocks()) return;
  const oldir::Block block = program.block(position);
  for (int i = 0; i < block.num_ops(); ++i) {
    const oldir::Op op = block.op(i);
    for (const oldir::proto::OpDesc::Var& slot : op.desc().inputs()) {
      for (const std::string& name : slot.arguments()) {
        if (IsVarName(name) && !written.count(name)) reads->insert(name);
      }
    }
    for (int32_t sub : op.SubBlocks()) ReadsBeforeWrite(program, sub, written, reads, depth + 1);
    for (const oldir::proto::OpDesc::Var& slot : op.desc().outputs()) {
      for (const std::string& name : slot.arguments()) {
        if (IsVarName(name)) written.insert(name);
      }
    }
  }
}

bool Persistable(const oldir::Program& program, const std::string& name) {
  std::optional<oldir::Var> var = program.root().FindVar(name);
  return var && var->persistable();
}

// The jobs a rank runs per step: its plan, or main once.
std::vector<oldir::PlanJob> JobsOf(const oldir::BundleRank& rank) {
  if (rank.plan) return *rank.plan;
  return {{kMain, 0}};
}

// Whether a job of type `later` follows a job of type `earlier` in the same micro-batch.
bool RunsAfter(const std::vector<oldir::PlanJob>& jobs, const std::string& later,
               const std::string& earlier) {
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (jobs[i].type != earlier) continue;
    for (size_t j = i + 1; j < jobs.size(); ++j) {
      if (jobs[j].type == later && jobs[j].micro_batch == jobs[i].micro_batch) return true;
    }
  }
  return false;
}

// Job types in the order the plan first runs them, then those no job runs (by name).
std::vector<std::string> JobTypesInRunOrder(const oldir::BundleRank& rank) {
  std::vector<std::string> order;
  for (const oldir::PlanJob& job : JobsOf(rank)) {
    if (rank.programs.count(job.type) &&
        std::find(order.begin(), order.end(), job.type) == order.end()) {
      order.push_back(job.type);
    }
  }
  for (const auto& [type, file] : rank.programs) {
    if (std::find(order.begin(), order.end(), type) == order.end()) order.push_back(type);
  }
  return order;
}

std::string Plural(int64_t n, const char* word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

// A finding as one line, for the notes of a status.
std::string OneLine(const Diagnostic& d) {
  std::string line = d.location.empty() ? "" : d.location.Render() + ": ";
  line += fmt::format("{}: {}", SeverityName(d.severity), d.message);
  if (!d.notes.empty()) line += fmt::format(" ({})", fmt::join(d.notes, "; "));
  return line;
}

Status CheckLegacyBundle(const oldir::Bundle& bundle, const std::string& dir,
                         Diagnostics* warnings) {
  if (bundle.ir != oldir::BundleIr::kLegacy) {
    Status status(StatusCode::kInvalidArgument, Location::File(dir),
                  "the bundle already holds new-IR programs (ir is pir)");
    status.AddNote("translate reads legacy bundles; `ir-migrate validate` checks this one");
    return status;
  }
  const oldir::BundleCheck check = oldir::CheckBundle(bundle, dir);
  const int errors = check.findings.CountOf(Severity::kError);
  for (const Diagnostic& d : check.findings.items()) {
    if (d.severity != Severity::kError) warnings->Add(d);
  }
  if (errors == 0) return Status::Ok();
  Status status(
      check.usable ? StatusCode::kInvalid : StatusCode::kInvalidArgument, Location::File(dir),
      fmt::format("the bundle {} ({}); nothing was translated",
                  check.usable ? "is invalid" : "cannot be used", Plural(errors, "error")));
  for (const Diagnostic& d : check.findings.items()) {
    if (d.severity == Severity::kError) status.AddNote(OneLine(d));
  }
  return status;
}

Status CheckOutputDir(const std::string& dir) {
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  if (!fs::exists(st)) return Status::Ok();
  if (!fs::is_directory(st)) {
    return Status(StatusCode::kInvalidArgument, Location::File(dir),
                  "the output bundle must be a directory, this is a file");
  }
  if (!fs::is_empty(dir, ec) || ec) {
    Status status(StatusCode::kInvalidArgument, Location::File(dir),
                  "the output directory is not empty");
    status.AddNote("translate writes a fresh bundle: remove the directory or name another");
    return status;
  }
  return Status::Ok();
}

struct TranslatedProgram {
  std::string file;  // in the rank folder: "forward.json"
  newir::Program program;
};

struct TranslatedRank {
  oldir::BundleRank entry;  // of the pir bundle
  std::vector<TranslatedProgram> programs;
};

class BundleTranslator {
 public:
  BundleTranslator(const oldir::Bundle& bundle, const std::string& in_dir,
                   const BundleTranslateOptions& options, const ProgressFn& progress,
                   BundleTranslation* result)
      : bundle_(bundle),
        in_dir_(in_dir),
        options_(options),
        progress_(progress),
        result_(*result) {}

  StatusOr<TranslatedRank> Rank(const oldir::BundleRank& rank) {
    const int r = rank.rank;
    RankPrograms legacy;
    IRM_ASSIGN_OR_RETURN(legacy.startup, oldir::LoadProgram(RankFile(r, rank.startup)));
    for (const auto& [type, file] : rank.programs) {
      IRM_ASSIGN_OR_RETURN(legacy.jobs[type], oldir::LoadProgram(RankFile(r, file)));
    }
    const std::map<std::string, std::vector<std::string>> outputs =
        OutputsOfRank(bundle_, rank, legacy);

    TranslatedRank out;
    out.entry.rank = r;
    out.entry.plan = rank.plan;
    // Sharded vars keep their legacy names in the translation (legacy_var_names), so the same
    // shards.json describes the pir rank.
    out.entry.shards = rank.shards;
    IRM_ASSIGN_OR_RETURN(out.entry.startup, TranslateOne(r, kStartup, rank.startup, legacy.startup,
                                                         outputs.at(kStartup), &out));
    for (const std::string& type : JobTypesInRunOrder(rank)) {
      IRM_ASSIGN_OR_RETURN(out.entry.programs[type],
                           TranslateOne(r, type, rank.programs.at(type), legacy.jobs.at(type),
                                        outputs.at(type), &out));
    }
    ++result_.ranks;
    return out;
  }

 private:
  std::string RankFile(int rank, const std::string& file) const {
    return oldir::RankFile(in_dir_, rank, file);
  }

  // Translates and verifies one program; returns its file name in the pir bundle.
  StatusOr<std::string> TranslateOne(int rank, const std::string& job_type,
                                     const std::string& legacy_file, const oldir::Program& legacy,
                                     const std::vector<std::string>& outputs, TranslatedRank* out) {
    const std::string path = RankFile(rank, legacy_file);
    TranslateOptions options;
    options.file = path;
    options.comm_ops = options_.comm_ops;
    options.allow_unregistered = options_.allow_unregistered;
    options.process_groups = &bundle_.process_groups;
    options.rank = rank;
    options.outputs = outputs;
    IRM_ASSIGN_OR_RETURN(Translation t, TranslateProgram(legacy, options));

    const Diagnostics findings = newir::VerifyProgramAll(
        t.program, {.allow_unregistered = options_.allow_unregistered, .file = path});
    if (findings.HasErrors()) {
      Status status(StatusCode::kInternal, Location::File(path),
                    "the translation does not verify (a translator bug)");
      for (const Diagnostic& d : findings.items()) status.AddNote(OneLine(d));
      return status;
    }
    result_.coverage.Merge(t.coverage, path);
    result_.notes.Append(t.notes);
    ++result_.programs;
    result_.legacy_ops += legacy.num_ops();
    const int64_t ops = static_cast<int64_t>(t.program.CountOps());
    result_.ops += ops;

    const std::string file = job_type + oldir::ProgramExtension(oldir::BundleIr::kPir);
    if (progress_) {
      progress_({.rank = rank,
                 .world_size = bundle_.world_size,
                 .job_type = job_type,
                 .legacy_file = legacy_file,
                 .output_file = file,
                 .ops = ops});
    }
    out->programs.push_back({file, std::move(t.program)});
    return file;
  }

  const oldir::Bundle& bundle_;
  const std::string& in_dir_;
  const BundleTranslateOptions& options_;
  const ProgressFn& progress_;
  BundleTranslation& result_;
};

Status WriteRank(const TranslatedRank& rank, const std::string& out_dir) {
  const std::string folder = oldir::RankDir(out_dir, rank.entry.rank);
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec) {
    return Status(StatusCode::kIoError, Location::File(folder),
                  fmt::format("cannot create the folder: {}", ec.message()));
  }
  for (const TranslatedProgram& p : rank.programs) {
    IRM_RETURN_IF_ERROR(newir::SaveProgramFile(
        p.program, oldir::RankFile(out_dir, rank.entry.rank, p.file), newir::FileFormat::kJson));
  }
  return Status::Ok();
}

}  // namespace

std::map<std::string, std::vector<std::string>> OutputsOfRank(const oldir::Bundle& bundle,
                                                              const oldir::BundleRank& rank,
                                                              const RankPrograms& programs) {
  const std::vector<oldir::PlanJob> jobs = JobsOf(rank);
  auto runs = [&](const std::string& type) {
    return std::any_of(jobs.begin(), jobs.end(),
                       [&](const oldir::PlanJob& job) { return job.type == type; });
  };
  std::map<std::string, std::unordered_set<std::string>> reads;
  for (const auto& [type, program] : programs.jobs) {
    ReadsBeforeWrite(program, 0, {}, &reads[type]);
  }
  const std::unordered_set<std::string> fetches(bundle.fetches.begin(), bundle.fetches.end());

  // Startup is keyed "startup"; it runs before every job and hands on no fetch.
  auto choose = [&](const std::string& producer, const oldir::Program& program) {
    std::vector<std::string> chosen;
    if (program.num_blocks() == 0) return chosen;
    const bool startup = producer == kStartup;
    for (const std::string& name : RootWrites(program)) {
      bool out = !startup && fetches.count(name);
      if (!out && !Persistable(program, name)) {
        for (const auto& [consumer, names] : reads) {
          if (consumer == producer || !names.count(name)) continue;
          if (startup ? runs(consumer) : RunsAfter(jobs, consumer, producer)) {
            out = true;
            break;
          }
        }
      }
      if (out) chosen.push_back(name);
    }
    return chosen;
  };

  std::map<std::string, std::vector<std::string>> outputs;
  outputs[kStartup] = choose(kStartup, programs.startup);
  for (const auto& [type, program] : programs.jobs) outputs[type] = choose(type, program);
  return outputs;
}

StatusOr<BundleTranslation> TranslateBundle(const std::string& in_dir, const std::string& out_dir,
                                            const BundleTranslateOptions& options,
                                            const ProgressFn& progress) {
  IRM_ASSIGN_OR_RETURN(oldir::Bundle legacy, oldir::ReadBundle(in_dir));
  BundleTranslation result;
  IRM_RETURN_IF_ERROR(CheckLegacyBundle(legacy, in_dir, &result.notes));
  IRM_RETURN_IF_ERROR(CheckOutputDir(out_dir));

  BundleTranslator translator(legacy, in_dir, options, progress, &result);
  std::vector<TranslatedRank> ranks;
  for (const oldir::BundleRank& rank : legacy.ranks) {
    IRM_ASSIGN_OR_RETURN(TranslatedRank translated, translator.Rank(rank));
    ranks.push_back(std::move(translated));
  }

  result.bundle = legacy;
  result.bundle.ir = oldir::BundleIr::kPir;
  result.bundle.ranks.clear();
  // Written into a temporary sibling folder renamed into place at the end, so that a failure or
  // a signal mid-write leaves no partial bundle for the retry to refuse.
  IRM_ASSIGN_OR_RETURN(StagedFolder staged, StagedFolder::Begin(out_dir));
  for (const TranslatedRank& rank : ranks) {
    IRM_RETURN_IF_ERROR(staged.Relocate(WriteRank(rank, staged.path())));
    result.bundle.ranks.push_back(rank.entry);
  }
  IRM_RETURN_IF_ERROR(staged.Relocate(oldir::WriteBundle(result.bundle, staged.path())));
  IRM_RETURN_IF_ERROR(staged.Commit());
  return result;
}

}  // namespace irm::translator
