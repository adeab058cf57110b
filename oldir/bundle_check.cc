// The checks of a bundle (docs/bundle.md): bundle.json's rules on its own, the rank folders
// against world_size, each rank's plan and shards, and for legacy bundles the programs themselves
// (the validator, feeds against their declarations, ring ids against the process groups). Every
// finding is located by the file and, inside JSON, the pointer of the value at fault.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "common/host_tensor.h"
#include "common/json_access.h"
#include "oldir/bundle.h"
#include "oldir/bundle_layout.h"
#include "oldir/params_io.h"
#include "oldir/program_io.h"
#include "oldir/validator.h"

namespace irm::oldir {
namespace {

using bundle_layout::JoinPath;
using bundle_layout::kBundleJson;
using bundle_layout::kMain;
using bundle_layout::kPlanJson;
using bundle_layout::kShardsJson;
using bundle_layout::kStartup;

std::string KnownDTypeNames() {
  std::vector<std::string> names;
  for (int i = 0; i <= static_cast<int>(DType::kComplex128); ++i) {
    names.push_back(DTypeName(static_cast<DType>(i)));
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

// Names written by any op of any block of `program`.
void CollectOutputs(const Program& program, std::unordered_set<std::string>* out) {
  for (const proto::BlockDesc& block : program.desc().blocks()) {
    for (const proto::OpDesc& op : block.ops()) {
      for (const proto::OpDesc::Var& slot : op.outputs()) {
        out->insert(slot.arguments().begin(), slot.arguments().end());
      }
    }
  }
}

class BundleChecker {
 public:
  BundleChecker(const Bundle& bundle, const std::string& dir, const BundleValidateOptions& options)
      : bundle_(bundle),
        dir_(dir),
        options_(options),
        json_file_(JoinPath(dir, kBundleJson)),
        extension_(ProgramExtension(bundle.ir)) {}

  BundleCheck Run() {
    CheckBundleJson();
    CheckRankFolders();
    // With a program unread, "no program declares it" could be wrong.
    if (bundle_.ir == BundleIr::kLegacy && !program_unreadable_) CheckFeedsAndFetchesDeclared();
    return std::move(result_);
  }

 private:
  void Unusable(Location loc, std::string message, std::vector<std::string> notes = {}) {
    Diagnostic d = Error(std::move(loc), std::move(message));
    d.notes = std::move(notes);
    result_.findings.Add(std::move(d));
    result_.usable = false;
  }
  void Warn(Location loc, std::string message) {
    result_.findings.Add(Warning(std::move(loc), std::move(message)));
  }
  Location At(const std::string& pointer) const { return JsonLocation(json_file_, pointer); }

  void AtLeastOne(const std::string& field, int value) {
    if (value < 1)
      Unusable(At("/" + field), fmt::format("{} must be at least 1, got {}", field, value));
  }

  void CheckBundleJson() {
    AtLeastOne("world_size", bundle_.world_size);
    AtLeastOne("steps", bundle_.steps);
    AtLeastOne("micro_batches", bundle_.micro_batches);

    std::map<int, size_t> ring_ids;
    for (size_t g = 0; g < bundle_.process_groups.size(); ++g) {
      const ProcessGroup& group = bundle_.process_groups[g];
      const std::string p = JsonPointerChild("/process_groups", g);
      if (group.ring_id < 0) {
        Unusable(At(p + "/ring_id"), fmt::format("ring_id {} is negative", group.ring_id));
      } else if (auto [it, fresh] = ring_ids.emplace(group.ring_id, g); !fresh) {
        Unusable(At(p + "/ring_id"),
                 fmt::format("ring_id {} is declared twice (also /process_groups/{})",
                             group.ring_id, it->second));
      }
      if (group.ranks.empty())
        Unusable(At(p + "/ranks"), "a process group needs at least one rank");
      std::set<int> seen;
      for (size_t i = 0; i < group.ranks.size(); ++i) {
        const int rank = group.ranks[i];
        if (rank < 0 || rank >= bundle_.world_size) {
          Unusable(At(JsonPointerChild(p + "/ranks", i)),
                   fmt::format("rank {} is out of range [0, {})", rank, bundle_.world_size));
        } else if (!seen.insert(rank).second) {
          Unusable(At(JsonPointerChild(p + "/ranks", i)),
                   fmt::format("rank {} appears twice in the group", rank));
        }
      }
    }

    std::map<std::string, size_t> feed_names;
    for (size_t f = 0; f < bundle_.feeds.size(); ++f) {
      const FeedSpec& feed = bundle_.feeds[f];
      const std::string p = JsonPointerChild("/feeds", f);
      if (feed.name.empty()) {
        Unusable(At(p + "/name"), "a feed needs a name");
      } else if (auto [it, fresh] = feed_names.emplace(feed.name, f); !fresh) {
        Unusable(At(p + "/name"), fmt::format("feed '{}' is declared twice (also /feeds/{})",
                                              feed.name, it->second));
      }
      if (!DTypeFromName(feed.dtype)) {
        Unusable(At(p + "/dtype"), fmt::format("unknown dtype '{}'", feed.dtype),
                 {"known dtypes: " + KnownDTypeNames()});
      }
      for (size_t d = 0; d < feed.shape.size(); ++d) {
        if (feed.shape[d] < -1) {
          Unusable(At(JsonPointerChild(p + "/shape", d)),
                   fmt::format("dim {} is invalid (a dim is -1 or at least 0)", feed.shape[d]));
        }
      }
      if (feed.split == FeedSplit::kBatch) {
        if (feed.shape.empty()) {
          Unusable(At(p + "/shape"), "a feed split by batch needs at least one dim");
        } else if (bundle_.micro_batches >= 1 && feed.shape[0] >= 0 &&
                   feed.shape[0] % bundle_.micro_batches != 0) {
          Unusable(At(p + "/shape/0"),
                   fmt::format("batch dim {} cannot be split into {} micro-batches", feed.shape[0],
                               bundle_.micro_batches));
        }
      }
    }

    std::map<std::string, size_t> fetch_names;
    for (size_t f = 0; f < bundle_.fetches.size(); ++f) {
      const std::string& name = bundle_.fetches[f];
      if (name.empty()) {
        Unusable(At(JsonPointerChild("/fetches", f)), "a fetch needs a name");
      } else if (auto [it, fresh] = fetch_names.emplace(name, f); !fresh) {
        Unusable(At(JsonPointerChild("/fetches", f)),
                 fmt::format("fetch '{}' is listed twice (also /fetches/{})", name, it->second));
      }
    }
  }

  void CheckRankFolders() {
    std::map<int, const BundleRank*> present;
    for (const BundleRank& rank : bundle_.ranks) present.emplace(rank.rank, &rank);
    int last = bundle_.world_size - 1;
    if (!present.empty()) last = std::max(last, present.rbegin()->first);
    for (int r = 0; r <= last; ++r) {
      auto it = present.find(r);
      const bool in_range = r < bundle_.world_size;
      if (it == present.end()) {
        if (in_range) {
          Unusable(Location::File(RankDir(dir_, r)),
                   fmt::format("missing rank folder for rank {} (world_size is {})", r,
                               bundle_.world_size));
        }
        continue;
      }
      if (!in_range) {
        Unusable(
            Location::File(RankDir(dir_, r)),
            fmt::format("rank folder for rank {}, but world_size is {}", r, bundle_.world_size));
        continue;
      }
      CheckRank(*it->second);
    }
  }

  std::string File(int rank, std::string_view job_type) const {
    return RankFile(dir_, rank, std::string(job_type) + extension_);
  }

  void CheckRank(const BundleRank& rank) {
    const int r = rank.rank;
    result_.num_programs += static_cast<int>(rank.programs.size()) + !rank.startup.empty();
    if (rank.startup.empty())
      Unusable(Location::File(File(r, kStartup)), "missing startup program");

    // Job type -> position of its first job; what a program may read depends on it.
    std::map<std::string, size_t> first_job;
    if (!rank.plan) {
      if (!rank.programs.count(kMain)) {
        Unusable(Location::File(File(r, kMain)),
                 "missing main program (the rank has no plan.json)");
      }
      if (bundle_.micro_batches > 1) {
        Unusable(Location::File(RankDir(dir_, r)),
                 fmt::format("the rank has no plan.json, but micro_batches is {}: a rank without "
                             "a plan runs main once per step, on the whole batch",
                             bundle_.micro_batches));
      }
      first_job[kMain] = 0;
      for (const auto& [type, file] : rank.programs) {
        if (type != kMain) {
          Warn(Location::File(RankFile(dir_, r, file)),
               fmt::format("program '{}' is never run: the rank has no plan.json, so it runs {} "
                           "only",
                           type, kMain));
        }
      }
    } else {
      const std::string plan_file = RankFile(dir_, r, kPlanJson);
      if (rank.plan->empty()) Unusable(JsonLocation(plan_file, "/jobs"), "the plan has no jobs");
      for (size_t j = 0; j < rank.plan->size(); ++j) {
        const PlanJob& job = (*rank.plan)[j];
        const std::string p = JsonPointerChild("/jobs", j);
        if (job.type == kStartup || job.type == "plan" || job.type == "shards") {
          Unusable(JsonLocation(plan_file, p + "/type"),
                   fmt::format("job type '{}' is reserved", job.type));
        } else if (!rank.programs.count(job.type)) {
          Unusable(JsonLocation(plan_file, p + "/type"),
                   fmt::format("job type '{}' has no program file '{}{}' in rank{}", job.type,
                               job.type, extension_, r));
        } else {
          first_job.emplace(job.type, j);
        }
        if (job.micro_batch < 0 || job.micro_batch >= bundle_.micro_batches) {
          Unusable(JsonLocation(plan_file, p + "/micro_batch"),
                   fmt::format("micro_batch {} is out of range [0, {})", job.micro_batch,
                               bundle_.micro_batches));
        }
      }
      for (const auto& [type, file] : rank.programs) {
        if (!first_job.count(type)) {
          Warn(Location::File(RankFile(dir_, r, file)),
               fmt::format("program '{}' is never run: no job of plan.json has type '{}'", type,
                           type));
        }
      }
    }
    CheckShards(rank);
    if (bundle_.ir == BundleIr::kLegacy) CheckLegacyPrograms(rank, first_job);
  }

  // shards.json on its own: as many offsets as global dims, every global dim positive, every
  // offset inside its dim.
  void CheckShards(const BundleRank& rank) {
    const std::string file = RankFile(dir_, rank.rank, kShardsJson);
    for (const auto& [name, slice] : rank.shards) {
      const std::string p = JsonPointerChild("/shards", name);
      if (name.empty()) Unusable(JsonLocation(file, p), "a shard needs a var name");
      if (slice.offsets.size() != slice.global_shape.size()) {
        Unusable(JsonLocation(file, p + "/offsets"),
                 fmt::format("var '{}' has {} offsets for a global_shape of {} dims", name,
                             slice.offsets.size(), slice.global_shape.size()));
        continue;
      }
      for (size_t d = 0; d < slice.global_shape.size(); ++d) {
        const int64_t global = slice.global_shape[d];
        const int64_t offset = slice.offsets[d];
        if (global < 1) {
          Unusable(JsonLocation(file, JsonPointerChild(p + "/global_shape", d)),
                   fmt::format("var '{}': global dim {} is {}, not positive", name, d, global));
        } else if (offset < 0 || offset >= global) {
          Unusable(JsonLocation(file, JsonPointerChild(p + "/offsets", d)),
                   fmt::format("var '{}': offset {} of dim {} is outside [0, {})", name, offset, d,
                               global));
        }
      }
    }
  }

  // Legacy bundles: each sharded var against the startup program's declaration of it, the local
  // tensor its initialiser writes: as many dims as global_shape, and the box [offsets, offsets +
  // local dims) inside the global shape (a dim declared -1 is not checked). A shard that breaks
  // CheckShards' rules is not looked at again.
  void CheckShardDeclarations(const BundleRank& rank, const Program& startup) {
    if (rank.shards.empty() || startup.num_blocks() == 0) return;
    const std::string file = RankFile(dir_, rank.rank, kShardsJson);
    const std::string startup_file = RankFile(dir_, rank.rank, rank.startup);
    const Block root = startup.root();
    for (const auto& [name, slice] : rank.shards) {
      if (name.empty() || slice.offsets.size() != slice.global_shape.size()) continue;
      const std::string p = JsonPointerChild("/shards", name);
      const std::optional<Var> var = root.FindVar(name);
      if (!var || var->tensor_desc() == nullptr) {
        Mismatch(JsonLocation(file, p),
                 fmt::format("var '{}' is sharded, but the startup program {} does not declare it "
                             "as a dense tensor in block 0",
                             name, startup_file));
        continue;
      }
      const std::vector<int64_t> local = var->dims();
      if (local.size() != slice.global_shape.size()) {
        Mismatch(JsonLocation(file, p + "/global_shape"),
                 fmt::format("var '{}' has {} global dims, but {}", name, slice.global_shape.size(),
                             DeclaredAs(*var, startup_file)));
        continue;
      }
      for (size_t d = 0; d < local.size(); ++d) {
        const int64_t global = slice.global_shape[d];
        const int64_t offset = slice.offsets[d];
        if (global < 1 || offset < 0 || offset >= global || local[d] < 0) continue;
        if (local[d] > global - offset) {
          Mismatch(JsonLocation(file, JsonPointerChild(p + "/offsets", d)),
                   fmt::format("var '{}': dim {} reaches {} + {} = {}, past the global dim {}; {}",
                               name, d, offset, local[d], offset + local[d], global,
                               DeclaredAs(*var, startup_file)));
        }
      }
    }
  }

  void CheckLegacyPrograms(const BundleRank& rank, const std::map<std::string, size_t>& first_job) {
    const int r = rank.rank;
    std::optional<Program> startup;
    if (!rank.startup.empty()) startup = Load(RankFile(dir_, r, rank.startup));
    std::map<std::string, Program> programs;
    for (const auto& [type, file] : rank.programs) {
      std::optional<Program> program = Load(RankFile(dir_, r, file));
      if (program) programs.emplace(type, std::move(*program));
    }

    std::unordered_set<std::string> base = options_.extra_feeds;
    for (const FeedSpec& feed : bundle_.feeds) base.insert(feed.name);
    if (startup) {
      Validate(*startup, RankFile(dir_, r, rank.startup), base, r);
      CollectOutputs(*startup, &base);
      CheckShardDeclarations(rank, *startup);
    }
    std::map<std::string, std::unordered_set<std::string>> outputs;
    for (const auto& [type, program] : programs) CollectOutputs(program, &outputs[type]);

    for (const auto& [type, program] : programs) {
      std::unordered_set<std::string> feeds = base;
      auto mine = first_job.find(type);
      for (const auto& [other, names] : outputs) {
        if (other == type) continue;
        auto theirs = first_job.find(other);
        // A program no job runs may read anything the rank writes; otherwise only what the job
        // types that start earlier in the plan wrote.
        const bool earlier =
            mine == first_job.end() || (theirs != first_job.end() && theirs->second < mine->second);
        if (earlier) feeds.insert(names.begin(), names.end());
      }
      Validate(program, RankFile(dir_, r, rank.programs.at(type)), feeds, r);
    }
  }

  std::optional<Program> Load(const std::string& path) {
    StatusOr<Program> program = LoadProgram(path);
    if (!program.ok()) {
      result_.findings.Add(program.status().diagnostic());
      result_.usable = false;
      program_unreadable_ = true;
      return std::nullopt;
    }
    CollectDeclared(*program);
    CheckFeedDeclarations(*program, path);
    return std::move(program).value();
  }

  // Each feed of bundle.json against the root-block declaration of its name in `program` (the
  // scope feeds are bound in): the dtype must be the same and the shapes compatible — as many
  // dims, each equal or -1 on either side. Dim 0 of a feed split by batch holds the whole batch,
  // which is cut into micro-batches (and data-parallel shards): a program may declare any size
  // that divides it. One finding per feed and field, at the first program that disagrees, so that
  // many ranks do not repeat it. O(feeds) lookups per program.
  void CheckFeedDeclarations(const Program& program, const std::string& path) {
    if (program.num_blocks() == 0) return;
    const Block root = program.root();
    for (size_t f = 0; f < bundle_.feeds.size(); ++f) {
      const FeedSpec& feed = bundle_.feeds[f];
      const std::optional<Var> var = root.FindVar(feed.name);
      if (!var || var->tensor_desc() == nullptr) continue;
      const std::string p = JsonPointerChild("/feeds", f);
      const std::string declared = DeclaredAs(*var, path);
      const std::optional<DType> feed_dtype = DTypeFromName(feed.dtype);
      const std::optional<proto::VarType::Type> var_type = var->dtype();
      const std::optional<DType> var_dtype = var_type ? DTypeFromVarType(*var_type) : std::nullopt;
      if (feed_dtype && var_dtype != feed_dtype && reported_feed_dtype_.insert(f).second) {
        Mismatch(At(p + "/dtype"),
                 fmt::format("feed '{}' has dtype {}, but {}", feed.name, feed.dtype, declared));
      }
      // A dim below -1 is CheckBundleJson's finding already.
      const bool valid_shape =
          std::all_of(feed.shape.begin(), feed.shape.end(), [](int64_t dim) { return dim >= -1; });
      if (valid_shape && !ShapesAgree(feed, var->dims()) && reported_feed_shape_.insert(f).second) {
        Mismatch(At(p + "/shape"), fmt::format("feed '{}' has shape [{}], but {}", feed.name,
                                               fmt::join(feed.shape, ", "), declared));
      }
    }
  }

  static bool ShapesAgree(const FeedSpec& feed, const std::vector<int64_t>& dims) {
    if (feed.shape.size() != dims.size()) return false;
    for (size_t d = 0; d < dims.size(); ++d) {
      const int64_t want = feed.shape[d];
      const int64_t have = dims[d];
      if (want == -1 || have == -1 || want == have) continue;
      if (d == 0 && feed.split == FeedSplit::kBatch && have > 0 && want % have == 0) continue;
      return false;
    }
    return true;
  }

  static std::string DeclaredAs(const Var& var, const std::string& path) {
    const std::optional<proto::VarType::Type> type = var.dtype();
    const std::optional<DType> dtype = type ? DTypeFromVarType(*type) : std::nullopt;
    return fmt::format("{} declares it as {} [{}] (block 0, var '{}')", path,
                       dtype  ? DTypeName(*dtype)
                       : type ? proto::VarType::Type_Name(*type)
                              : std::string("no dtype"),
                       fmt::join(var.dims(), ", "), var.name());
  }

  // A feed that disagrees with a program: the run would feed a tensor the program cannot take,
  // so the bundle is invalid (exit 1), though readable.
  void Mismatch(Location loc, std::string message) {
    result_.findings.Add(Error(std::move(loc), std::move(message)));
  }

  void Validate(const Program& program, const std::string& file,
                const std::unordered_set<std::string>& feeds, int rank) {
    ValidateOptions options;
    options.file = file;
    options.extra_feeds = feeds;
    result_.findings.Append(ValidateProgram(program, options));
    CheckRingIds(program, file, rank);
  }

  void CheckRingIds(const Program& program, const std::string& file, int rank) {
    for (int b = 0; b < program.num_blocks(); ++b) {
      const Block block = program.block(b);
      for (int j = 0; j < block.num_ops(); ++j) {
        const proto::OpDesc& op = block.op(j).desc();
        for (const proto::OpDesc::Attr& attr : op.attrs()) {
          if (attr.name() != "ring_id" || attr.type() != proto::INT || !attr.has_i()) continue;
          const int ring_id = attr.i();
          auto group = std::find_if(bundle_.process_groups.begin(), bundle_.process_groups.end(),
                                    [&](const ProcessGroup& g) { return g.ring_id == ring_id; });
          Location loc = OpLocation(file, block, j).AtAttr("ring_id");
          if (group == bundle_.process_groups.end()) {
            result_.findings.Add(Error(
                loc, fmt::format("ring_id {} names no process group of bundle.json", ring_id)));
          } else if (std::find(group->ranks.begin(), group->ranks.end(), rank) ==
                     group->ranks.end()) {
            result_.findings.Add(
                Error(loc, fmt::format("rank {} is not in process group {} (ranks [{}])", rank,
                                       ring_id, fmt::join(group->ranks, ", "))));
          }
        }
      }
    }
  }

  void CollectDeclared(const Program& program) {
    for (const proto::BlockDesc& block : program.desc().blocks()) {
      for (const proto::VarDesc& var : block.vars()) declared_.insert(var.name());
    }
  }

  void CheckFeedsAndFetchesDeclared() {
    for (size_t f = 0; f < bundle_.feeds.size(); ++f) {
      if (!bundle_.feeds[f].name.empty() && !declared_.count(bundle_.feeds[f].name)) {
        Warn(At(JsonPointerChild("/feeds", f) + "/name"),
             fmt::format("feed '{}' is not declared by any program", bundle_.feeds[f].name));
      }
    }
    for (size_t f = 0; f < bundle_.fetches.size(); ++f) {
      if (!bundle_.fetches[f].empty() && !declared_.count(bundle_.fetches[f])) {
        Warn(At(JsonPointerChild("/fetches", f)),
             fmt::format("fetch '{}' is not declared by any program", bundle_.fetches[f]));
      }
    }
  }

  const Bundle& bundle_;
  const std::string dir_;
  const BundleValidateOptions& options_;
  const std::string json_file_;
  const std::string extension_;
  std::unordered_set<std::string> declared_;  // var names of every loaded program
  std::set<size_t> reported_feed_dtype_;      // feeds whose dtype disagreement is reported
  std::set<size_t> reported_feed_shape_;      // feeds whose shape disagreement is reported
  bool program_unreadable_ = false;
  BundleCheck result_;
};

}  // namespace

BundleCheck CheckBundle(const Bundle& bundle, const std::string& dir,
                        const BundleValidateOptions& options) {
  return BundleChecker(bundle, dir, options).Run();
}

Diagnostics ValidateBundle(const Bundle& bundle, const std::string& dir,
                           const BundleValidateOptions& options) {
  return CheckBundle(bundle, dir, options).findings;
}

}  // namespace irm::oldir
