// The JSON forms of a bundle (docs/bundle.md): bundle.json, plan.json and shards.json parsed
// strictly (nlohmann's exceptions stop here and become diagnostics: syntax errors with
// file:line:col, structure errors through common/json_access.h with the file and the JSON pointer
// of the offending value) and written as text people read.
#include "oldir/bundle_json.h"

#include <fmt/format.h>

#include "common/json_access.h"
#include "common/json_depth.h"
#include "common/json_parse.h"

namespace irm::oldir {
using nlohmann::json;

// bundle.json and plan.json nest four levels; a free-form strategy a few more. The bound is checked
// before nlohmann parses, so that no copy, dump or comparison of the document recurses deeply —
// and, as bundles are written with indentation, no bundle written from a small one is huge.
StatusOr<json> ParseBundleFileJson(std::string_view text, const std::string& file) {
  return ParseStrictJson(text, file, kMaxSmallJsonDepth);
}

namespace {

StatusOr<ProcessGroup> ReadProcessGroup(const JsonAccess& r, const JsonPath& p, const json& v) {
  IRM_RETURN_IF_ERROR(r.Object(v, p, {"ring_id", "ranks"}));
  ProcessGroup group;
  IRM_ASSIGN_OR_RETURN(const json* ring_id, r.Required(v, p, "ring_id"));
  IRM_ASSIGN_OR_RETURN(group.ring_id, r.Int32(*ring_id, p / "ring_id"));
  IRM_ASSIGN_OR_RETURN(const json* ranks, r.Required(v, p, "ranks"));
  IRM_ASSIGN_OR_RETURN(
      group.ranks, r.Array<int>(*ranks, p / "ranks",
                                [&](const JsonPath& q, const json& e) { return r.Int32(e, q); }));
  return group;
}

StatusOr<FeedSpec> ReadFeed(const JsonAccess& r, const JsonPath& p, const json& v) {
  IRM_RETURN_IF_ERROR(r.Object(v, p, {"name", "shape", "dtype", "split"}));
  FeedSpec feed;
  IRM_ASSIGN_OR_RETURN(const json* name, r.Required(v, p, "name"));
  IRM_ASSIGN_OR_RETURN(feed.name, r.String(*name, p / "name"));
  IRM_ASSIGN_OR_RETURN(const json* shape, r.Required(v, p, "shape"));
  IRM_ASSIGN_OR_RETURN(feed.shape, r.Ints(*shape, p / "shape"));
  IRM_ASSIGN_OR_RETURN(const json* dtype, r.Required(v, p, "dtype"));
  IRM_ASSIGN_OR_RETURN(feed.dtype, r.String(*dtype, p / "dtype"));
  if (const json* split = JsonAccess::Find(v, "split")) {
    const JsonPath at = p / "split";
    IRM_ASSIGN_OR_RETURN(std::string name, r.String(*split, at));
    if (name == "batch") {
      feed.split = FeedSplit::kBatch;
    } else if (name == "replicate") {
      feed.split = FeedSplit::kReplicate;
    } else {
      return r.Err(at, fmt::format("expected \"batch\" or \"replicate\", found \"{}\"", name));
    }
  }
  return feed;
}

const std::vector<std::string_view> kBundleFields = {
    "format", "version", "ir",    "world_size", "process_groups", "strategy",
    "feeds",  "fetches", "steps", "seed",       "micro_batches",  "p2p"};

}  // namespace

// bundle.json, without the ranks.
StatusOr<Bundle> ParseBundleJson(std::string_view text, const std::string& file) {
  IRM_ASSIGN_OR_RETURN(json doc, ParseBundleFileJson(text, file));
  const JsonAccess r(file);
  const JsonPath root;
  IRM_RETURN_IF_ERROR(r.Object(doc, root, kBundleFields));
  Bundle bundle;

  IRM_ASSIGN_OR_RETURN(const json* format, r.Required(doc, root, "format"));
  IRM_ASSIGN_OR_RETURN(std::string format_name, r.String(*format, root / "format"));
  if (format_name != kBundleFormat) {
    return r.Err(root / "format",
                 fmt::format("expected \"{}\", found \"{}\"", kBundleFormat, format_name));
  }
  IRM_ASSIGN_OR_RETURN(const json* version, r.Required(doc, root, "version"));
  IRM_ASSIGN_OR_RETURN(bundle.version, r.Int32(*version, root / "version"));
  if (bundle.version != kBundleVersion) {
    return Status(StatusCode::kUnimplemented, r.At(root / "version"),
                  fmt::format("bundle format version {} is not supported (this reader knows "
                              "version {})",
                              bundle.version, kBundleVersion));
  }
  IRM_ASSIGN_OR_RETURN(const json* ir, r.Required(doc, root, "ir"));
  IRM_ASSIGN_OR_RETURN(std::string ir_name, r.String(*ir, root / "ir"));
  if (ir_name == "legacy") {
    bundle.ir = BundleIr::kLegacy;
  } else if (ir_name == "pir") {
    bundle.ir = BundleIr::kPir;
  } else {
    return r.Err(root / "ir", fmt::format("expected \"legacy\" or \"pir\", found \"{}\"", ir_name));
  }
  IRM_ASSIGN_OR_RETURN(const json* world_size, r.Required(doc, root, "world_size"));
  IRM_ASSIGN_OR_RETURN(bundle.world_size, r.Int32(*world_size, root / "world_size"));

  if (const json* groups = JsonAccess::Find(doc, "process_groups")) {
    IRM_ASSIGN_OR_RETURN(bundle.process_groups,
                         r.Array<ProcessGroup>(*groups, root / "process_groups",
                                               [&](const JsonPath& p, const json& v) {
                                                 return ReadProcessGroup(r, p, v);
                                               }));
  }
  if (const json* strategy = JsonAccess::Find(doc, "strategy")) {
    IRM_RETURN_IF_ERROR(r.Expect(*strategy, root / "strategy", json::value_t::object));
    bundle.strategy = *strategy;
  }
  if (const json* feeds = JsonAccess::Find(doc, "feeds")) {
    IRM_ASSIGN_OR_RETURN(bundle.feeds, r.Array<FeedSpec>(*feeds, root / "feeds",
                                                         [&](const JsonPath& p, const json& v) {
                                                           return ReadFeed(r, p, v);
                                                         }));
  }
  if (const json* fetches = JsonAccess::Find(doc, "fetches")) {
    IRM_ASSIGN_OR_RETURN(
        bundle.fetches,
        r.Array<std::string>(*fetches, root / "fetches",
                             [&](const JsonPath& p, const json& v) { return r.String(v, p); }));
  }
  if (const json* steps = JsonAccess::Find(doc, "steps")) {
    IRM_ASSIGN_OR_RETURN(bundle.steps, r.Int32(*steps, root / "steps"));
  }
  if (const json* seed = JsonAccess::Find(doc, "seed")) {
    IRM_ASSIGN_OR_RETURN(bundle.seed, r.Int(*seed, root / "seed"));
  }
  if (const json* micro_batches = JsonAccess::Find(doc, "micro_batches")) {
    IRM_ASSIGN_OR_RETURN(bundle.micro_batches, r.Int32(*micro_batches, root / "micro_batches"));
  }
  if (const json* p2p = JsonAccess::Find(doc, "p2p")) {
    IRM_ASSIGN_OR_RETURN(std::string name, r.String(*p2p, root / "p2p"));
    StatusOr<schedules::P2pModel> model = schedules::ParseP2pModel(name);
    if (!model.ok()) return r.Err(root / "p2p", model.status().message());
    bundle.p2p = *model;
  }
  return bundle;
}

std::string BundleJsonText(const Bundle& bundle) {
  nlohmann::ordered_json doc;
  doc["format"] = kBundleFormat;
  doc["version"] = bundle.version;
  doc["ir"] = BundleIrName(bundle.ir);
  doc["world_size"] = bundle.world_size;
  doc["process_groups"] = nlohmann::ordered_json::array();
  for (const ProcessGroup& group : bundle.process_groups) {
    doc["process_groups"].push_back({{"ring_id", group.ring_id}, {"ranks", group.ranks}});
  }
  // nlohmann has no conversion between its object layouts; a round trip through text is exact.
  doc["strategy"] = nlohmann::ordered_json::parse(bundle.strategy.dump());
  doc["feeds"] = nlohmann::ordered_json::array();
  for (const FeedSpec& feed : bundle.feeds) {
    doc["feeds"].push_back({{"name", feed.name},
                            {"shape", feed.shape},
                            {"dtype", feed.dtype},
                            {"split", FeedSplitName(feed.split)}});
  }
  doc["fetches"] = bundle.fetches;
  doc["steps"] = bundle.steps;
  doc["seed"] = bundle.seed;
  doc["micro_batches"] = bundle.micro_batches;
  if (bundle.p2p) doc["p2p"] = schedules::P2pModelName(*bundle.p2p);
  return doc.dump(2) + "\n";
}

std::string PlanJsonText(const std::vector<PlanJob>& jobs) {
  std::string out = "{\"jobs\": [";
  for (size_t i = 0; i < jobs.size(); ++i) {
    out += fmt::format("{}\n  {{\"type\": {}, \"micro_batch\": {}}}", i == 0 ? "" : ",",
                       json(jobs[i].type).dump(), jobs[i].micro_batch);
  }
  out += jobs.empty() ? "]}\n" : "\n]}\n";
  return out;
}

StatusOr<std::vector<PlanJob>> ParsePlanJson(std::string_view text, const std::string& file) {
  IRM_ASSIGN_OR_RETURN(json doc, ParseBundleFileJson(text, file));
  const JsonAccess r(file);
  const JsonPath root;
  IRM_RETURN_IF_ERROR(r.Object(doc, root, {"jobs"}));
  IRM_ASSIGN_OR_RETURN(const json* jobs, r.Required(doc, root, "jobs"));
  return r.Array<PlanJob>(
      *jobs, root / "jobs", [&](const JsonPath& p, const json& v) -> StatusOr<PlanJob> {
        IRM_RETURN_IF_ERROR(r.Object(v, p, {"type", "micro_batch"}));
        PlanJob job;
        IRM_ASSIGN_OR_RETURN(const json* type, r.Required(v, p, "type"));
        IRM_ASSIGN_OR_RETURN(job.type, r.String(*type, p / "type"));
        if (const json* micro_batch = JsonAccess::Find(v, "micro_batch")) {
          IRM_ASSIGN_OR_RETURN(job.micro_batch, r.Int32(*micro_batch, p / "micro_batch"));
        }
        return job;
      });
}

std::string ShardsJsonText(const std::map<std::string, ShardSlice>& shards) {
  std::string out = "{\"shards\": {";
  bool first = true;
  for (const auto& [name, slice] : shards) {
    out += fmt::format("{}\n  {}: {{\"global_shape\": [{}], \"offsets\": [{}]}}", first ? "" : ",",
                       json(name).dump(), fmt::join(slice.global_shape, ", "),
                       fmt::join(slice.offsets, ", "));
    first = false;
  }
  out += shards.empty() ? "}}\n" : "\n}}\n";
  return out;
}

StatusOr<std::map<std::string, ShardSlice>> ParseShardsJson(std::string_view text,
                                                            const std::string& file) {
  IRM_ASSIGN_OR_RETURN(json doc, ParseBundleFileJson(text, file));
  const JsonAccess r(file);
  const JsonPath root;
  IRM_RETURN_IF_ERROR(r.Object(doc, root, {"shards"}));
  const JsonPath shards_path = root / "shards";
  IRM_ASSIGN_OR_RETURN(const json* shards, r.Member(doc, root, "shards", json::value_t::object));
  std::map<std::string, ShardSlice> out;
  for (auto it = shards->begin(); it != shards->end(); ++it) {
    const JsonPath p = shards_path / it.key();
    const json& v = it.value();
    IRM_RETURN_IF_ERROR(r.Object(v, p, {"global_shape", "offsets"}));
    ShardSlice slice;
    IRM_ASSIGN_OR_RETURN(const json* global_shape, r.Required(v, p, "global_shape"));
    IRM_ASSIGN_OR_RETURN(slice.global_shape, r.Ints(*global_shape, p / "global_shape"));
    IRM_ASSIGN_OR_RETURN(const json* offsets, r.Required(v, p, "offsets"));
    IRM_ASSIGN_OR_RETURN(slice.offsets, r.Ints(*offsets, p / "offsets"));
    out.emplace(it.key(), std::move(slice));
  }
  return out;
}

}  // namespace irm::oldir
