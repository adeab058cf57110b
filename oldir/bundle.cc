// The bundle as folders and files (docs/bundle.md): its names and paths, reading a bundle
// directory (bundle.json, then the rank folders with their plan.json and shards.json) and writing
// one. The JSON forms are bundle_json.cc's, the checks bundle_check.cc's.
#include "oldir/bundle.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <system_error>

#include "common/file_io.h"
#include "oldir/bundle_json.h"
#include "oldir/bundle_layout.h"
#include "oldir/program_io.h"

namespace irm::oldir {
namespace fs = std::filesystem;

using bundle_layout::JoinPath;
using bundle_layout::kBundleJson;
using bundle_layout::kPlanJson;
using bundle_layout::kShardsJson;
using bundle_layout::kStartup;

// --- listing folders ----------------------------------------------------------------------------

namespace {

Status FolderError(const std::string& path, const std::error_code& ec) {
  return Status(StatusCode::kIoError, Location::File(path),
                fmt::format("cannot list the folder: {}", ec.message()));
}

// The rank number of a folder name "rank<N>" (no leading zeros), else nullopt.
std::optional<int> RankOfFolderName(const std::string& name) {
  static const std::regex kRank(R"(rank(0|[1-9][0-9]{0,8}))");
  std::smatch m;
  if (!std::regex_match(name, m, kRank)) return std::nullopt;
  return std::stoi(m[1].str());
}

StatusOr<BundleRank> ReadRankFolder(const std::string& dir, int rank, BundleIr ir) {
  BundleRank out;
  out.rank = rank;
  const std::string folder = RankDir(dir, rank);
  const std::string extension = ProgramExtension(ir);
  std::error_code ec;
  fs::directory_iterator it(folder, ec);
  if (ec) return FolderError(folder, ec);
  bool has_plan = false;
  bool has_shards = false;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) return FolderError(folder, ec);
    std::error_code type_ec;
    if (!it->is_regular_file(type_ec)) continue;
    const fs::path& path = it->path();
    const std::string name = path.filename().string();
    if (name == kPlanJson) {
      has_plan = true;
      continue;
    }
    if (name == kShardsJson) {
      has_shards = true;
      continue;
    }
    if (path.extension().string() != extension) continue;
    const std::string stem = path.stem().string();
    if (stem == kStartup) {
      out.startup = name;
    } else if (IsValidJobType(stem)) {
      out.programs[stem] = name;
    }
  }
  if (ec) return FolderError(folder, ec);
  if (has_plan) {
    const std::string plan_path = JoinPath(folder, kPlanJson);
    IRM_ASSIGN_OR_RETURN(std::string text, ReadFile(plan_path));
    IRM_ASSIGN_OR_RETURN(out.plan, ParsePlanJson(text, plan_path));
  }
  if (has_shards) {
    const std::string shards_path = JoinPath(folder, kShardsJson);
    IRM_ASSIGN_OR_RETURN(std::string text, ReadFile(shards_path));
    IRM_ASSIGN_OR_RETURN(out.shards, ParseShardsJson(text, shards_path));
  }
  return out;
}

// --- writing ------------------------------------------------------------------------------------

Status CreateFolder(const std::string& path) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) {
    return Status(StatusCode::kIoError, Location::File(path),
                  fmt::format("cannot create the folder: {}", ec.message()));
  }
  return Status::Ok();
}

// Removes a file the bundle no longer has (`what`: "plan"), if there.
Status RemoveStale(const std::string& path, const char* what) {
  std::error_code ec;
  fs::remove(path, ec);
  if (ec) {
    return Status(StatusCode::kIoError, Location::File(path),
                  fmt::format("cannot remove the stale {}: {}", what, ec.message()));
  }
  return Status::Ok();
}

}  // namespace

const char* BundleIrName(BundleIr ir) { return ir == BundleIr::kPir ? "pir" : "legacy"; }
const char* ProgramExtension(BundleIr ir) { return ir == BundleIr::kPir ? ".json" : ".pdmodel"; }
const char* FeedSplitName(FeedSplit split) {
  return split == FeedSplit::kReplicate ? "replicate" : "batch";
}

std::string RankDir(const std::string& dir, int rank) {
  return JoinPath(dir, fmt::format("rank{}", rank));
}
std::string RankFile(const std::string& dir, int rank, std::string_view file) {
  return JoinPath(RankDir(dir, rank), file);
}

bool IsValidJobType(std::string_view name) {
  if (name.empty() || name == kStartup || name == "plan" || name == "shards") return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

StatusOr<Bundle> ReadBundle(const std::string& dir) {
  std::error_code ec;
  const fs::file_status dir_status = fs::status(dir, ec);
  if (!fs::exists(dir_status)) {
    return Status(StatusCode::kNotFound, Location::File(dir), "no such bundle directory");
  }
  if (!fs::is_directory(dir_status)) {
    return Status(StatusCode::kInvalidArgument, Location::File(dir),
                  "a bundle is a directory, this is not one");
  }
  const std::string json_file = JoinPath(dir, kBundleJson);
  StatusOr<std::string> text = ReadFile(json_file);
  if (!text.ok()) {
    Status status = text.status();
    if (status.code() == StatusCode::kNotFound) {
      status.AddNote(
          "a bundle is a directory holding bundle.json and rank<N>/ folders "
          "(docs/bundle.md)");
    }
    return status;
  }
  IRM_ASSIGN_OR_RETURN(Bundle bundle, ParseBundleJson(*text, json_file));

  std::vector<int> ranks;
  fs::directory_iterator it(dir, ec);
  if (ec) return FolderError(dir, ec);
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) return FolderError(dir, ec);
    std::error_code type_ec;
    if (!it->is_directory(type_ec)) continue;
    if (std::optional<int> rank = RankOfFolderName(it->path().filename().string())) {
      ranks.push_back(*rank);
    }
  }
  if (ec) return FolderError(dir, ec);
  std::sort(ranks.begin(), ranks.end());
  for (int rank : ranks) {
    IRM_ASSIGN_OR_RETURN(BundleRank folder, ReadRankFolder(dir, rank, bundle.ir));
    bundle.ranks.push_back(std::move(folder));
  }
  return bundle;
}

Status WriteBundle(const Bundle& bundle, const std::string& dir) {
  if (!bundle.strategy.is_object()) {
    return Status(StatusCode::kInvalidArgument, Location::File(JoinPath(dir, kBundleJson)),
                  "the strategy must be a JSON object");
  }
  IRM_RETURN_IF_ERROR(CreateFolder(dir));
  IRM_RETURN_IF_ERROR(WriteFileAtomically(JoinPath(dir, kBundleJson), BundleJsonText(bundle)));
  for (const BundleRank& rank : bundle.ranks) {
    const std::string folder = RankDir(dir, rank.rank);
    IRM_RETURN_IF_ERROR(CreateFolder(folder));
    const std::string plan_file = JoinPath(folder, kPlanJson);
    if (rank.plan) {
      IRM_RETURN_IF_ERROR(WriteFileAtomically(plan_file, PlanJsonText(*rank.plan)));
    } else {
      IRM_RETURN_IF_ERROR(RemoveStale(plan_file, "plan"));
    }
    const std::string shards_file = JoinPath(folder, kShardsJson);
    if (!rank.shards.empty()) {
      IRM_RETURN_IF_ERROR(WriteFileAtomically(shards_file, ShardsJsonText(rank.shards)));
    } else {
      IRM_RETURN_IF_ERROR(RemoveStale(shards_file, "shards"));
    }
  }
  return Status::Ok();
}

StatusOr<BundleRank> WriteLegacyRankPrograms(const std::string& dir, int rank,
                                             const Program& startup,
                                             const std::map<std::string, Program>& programs,
                                             const RankProgramsOptions& options) {
  const std::string folder = RankDir(dir, rank);
  for (const auto& [type, program] : programs) {
    if (!IsValidJobType(type)) {
      return Status(StatusCode::kInvalidArgument, Location::File(folder),
                    fmt::format("'{}' cannot be a job type: use letters, digits and '_', not "
                                "'startup', 'plan' or 'shards'",
                                type));
    }
  }
  IRM_RETURN_IF_ERROR(CreateFolder(folder));
  BundleRank out;
  out.rank = rank;
  auto write = [&](const Program& program, const std::string& stem) -> StatusOr<std::string> {
    const std::string file = stem + ProgramExtension(BundleIr::kLegacy);
    IRM_RETURN_IF_ERROR(SaveProgram(program, JoinPath(folder, file), ProgramFormat::kBinary));
    if (options.text_copies) {
      SerializeOptions text;
      text.drop_unknown_fields_in_text = true;
      IRM_RETURN_IF_ERROR(
          SaveProgram(program, JoinPath(folder, stem + ".prototxt"), ProgramFormat::kText, text));
    }
    return file;
  };
  IRM_ASSIGN_OR_RETURN(out.startup, write(startup, kStartup));
  for (const auto& [type, program] : programs) {
    IRM_ASSIGN_OR_RETURN(out.programs[type], write(program, type));
  }
  return out;
}

}  // namespace irm::oldir
