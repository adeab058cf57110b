// Reading, writing and checking bundles (docs/bundle.md). The JSON files are parsed with nlohmann,
// whose exceptions stop here and become diagnostics: syntax errors with file:line:col, structure
// errors with the file and a JSON pointer to the offending value.
#include "oldir/bundle.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <set>
#include <system_error>

#include "common/file_io.h"
#include "common/host_tensor.h"
#include "common/json_depth.h"
#include "common/json_kind.h"
#include "common/json_pointer.h"
#include "oldir/params_io.h"
#include "oldir/program_io.h"
#include "oldir/validator.h"

namespace irm::oldir {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kBundleJson = "bundle.json";
constexpr const char* kPlanJson = "plan.json";
constexpr const char* kShardsJson = "shards.json";
constexpr const char* kStartup = "startup";
constexpr const char* kMain = "main";

std::string JoinPath(const std::string& dir, std::string_view name) {
  return (fs::path(dir) / fs::path(name)).string();
}

// A place inside a JSON file: the file and a JSON pointer (none for the whole document).
Location JsonLocation(const std::string& file, const std::string& pointer) {
  Location loc = Location::File(file);
  if (!pointer.empty()) loc.detail = pointer;
  return loc;
}

std::string Child(const std::string& pointer, std::string_view key) {
  return JsonPointerChild(pointer, key);
}
std::string Child(const std::string& pointer, size_t index) {
  return fmt::format("{}/{}", pointer, index);
}

// --- reading JSON -------------------------------------------------------------------------------

// nlohmann keeps the last of two equal keys silently; a hand-edited file that says "shape" twice
// must not lose one. This SAX handler builds the document as nlohmann's own parser does and stops
// at the second occurrence of a key in one object. (nlohmann's parse callback could check keys
// too, but after each object it ends it searches the enclosing array for discarded values:
// quadratic in the length of an array of objects, such as a plan of 100,000 jobs.) Time
// O(text + keys × log(keys per object)); memory the document plus one frame per open level.
class StrictDomBuilder final : public nlohmann::json_sax<json> {
 public:
  struct Failure {
    std::string pointer;  // a duplicate key: the JSON pointer of its second occurrence
    std::string key;      // a duplicate key: the key; empty for a syntax error
    std::string what;     // a syntax error: nlohmann's message
    size_t byte = 0;      // a syntax error: the characters read
  };

  explicit StrictDomBuilder(json* root) : root_(root) {}
  const Failure& failure() const { return failure_; }

  bool null() override { return Add(nullptr) != nullptr; }
  bool boolean(bool value) override { return Add(value) != nullptr; }
  bool number_integer(number_integer_t value) override { return Add(value) != nullptr; }
  bool number_unsigned(number_unsigned_t value) override { return Add(value) != nullptr; }
  bool number_float(number_float_t value, const string_t& /*text*/) override {
    return Add(value) != nullptr;
  }
  bool string(string_t& value) override { return Add(std::move(value)) != nullptr; }
  bool binary(binary_t& value) override { return Add(json::binary(std::move(value))) != nullptr; }
  bool start_object(std::size_t /*elements*/) override { return Open(json::object()); }
  bool start_array(std::size_t /*elements*/) override { return Open(json::array()); }
  bool end_object() override { return Close(); }
  bool end_array() override { return Close(); }
  bool key(string_t& key) override {
    Frame& top = frames_.back();
    top.key = key;
    if (top.value->contains(key)) {
      failure_.key = key;
      failure_.pointer = Pointer();
      return false;
    }
    return true;
  }
  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& e) override {
    failure_.what = e.what();
    failure_.byte = position;
    return false;
  }

 private:
  struct Frame {
    json* value;      // an object or an array being read
    std::string key;  // objects: the member being read
  };

  // Stores `value` where the parser is (the root, the next element, the member of the last key)
  // and returns where it now lives. An array's elements move when it grows, but an element is
  // only referred to while it is the innermost open value, before its array grows again.
  json* Add(json value) {
    if (frames_.empty()) {
      *root_ = std::move(value);
      return root_;
    }
    Frame& top = frames_.back();
    if (top.value->is_array()) {
      top.value->push_back(std::move(value));
      return &top.value->back();
    }
    json& member = (*top.value)[top.key];
    member = std::move(value);
    return &member;
  }
  bool Open(json value) {
    frames_.push_back({Add(std::move(value)), {}});
    return true;
  }
  bool Close() {
    frames_.pop_back();
    return true;
  }
  // The pointer of the member being read: in every array the element last added, in every object
  // the member of its last key.
  std::string Pointer() const {
    std::string out;
    for (const Frame& frame : frames_) {
      out = frame.value->is_array() ? Child(out, frame.value->size() - 1) : Child(out, frame.key);
    }
    return out;
  }

  json* root_;
  std::vector<Frame> frames_;
  Failure failure_;
};

// A syntax error: nlohmann's what() is "[json.exception.parse_error.101] parse error at line 3,
// column 7: <message>"; the position becomes the location, the rest the message. Read by hand:
// std::regex recurses once per character and a message can quote megabytes of the input.
Status SyntaxError(const std::string& file, const std::string& what, size_t byte) {
  constexpr size_t kMaxMessage = 400;
  auto shorten = [&](std::string message) {
    if (message.size() > kMaxMessage) message = message.substr(0, kMaxMessage) + "...";
    return message;
  };
  int line = 0;
  int column = 0;
  int consumed = 0;
  const size_t at = what.find(" at line ");
  if (at != std::string::npos &&
      std::sscanf(what.c_str() + at, " at line %d, column %d: %n", &line, &column, &consumed) ==
          2 &&
      consumed > 0) {
    return Status(StatusCode::kParseError, Location::Text(file, line, column),
                  shorten(what.substr(at + static_cast<size_t>(consumed))));
  }
  const size_t bracket = what.find("] ");
  return Status(StatusCode::kParseError, Location::File(file).With(fmt::format("byte {}", byte)),
                shorten(bracket == std::string::npos ? what : what.substr(bracket + 2)));
}

// bundle.json and plan.json nest four levels; a free-form strategy a few more. The bound is checked
// before nlohmann parses, so that no copy, dump or comparison of the document recurses deeply —
// and, as bundles are written with indentation, no bundle written from a small one is huge.
StatusOr<json> ParseJson(std::string_view text, const std::string& file) {
  IRM_RETURN_IF_ERROR(CheckJsonDepth(text, file, kMaxSmallJsonDepth));
  json doc;
  StrictDomBuilder builder(&doc);
  try {
    if (json::sax_parse(text.begin(), text.end(), &builder)) return doc;
  } catch (const json::exception& e) {
    return Status(StatusCode::kParseError, Location::File(file), e.what());
  }
  const StrictDomBuilder::Failure& failure = builder.failure();
  if (!failure.key.empty() || failure.what.empty()) {
    return Status(StatusCode::kParseError, JsonLocation(file, failure.pointer),
                  fmt::format("field '{}' appears twice", failure.key));
  }
  return SyntaxError(file, failure.what, failure.byte);
}

// Structure errors of one JSON file, all kParseError at file + pointer.
class JsonReader {
 public:
  explicit JsonReader(std::string file) : file_(std::move(file)) {}

  Status Error(const std::string& pointer, std::string message) const {
    return Status(StatusCode::kParseError, JsonLocation(file_, pointer), std::move(message));
  }
  Status WrongType(const std::string& pointer, const char* expected, const json& v) const {
    return Error(pointer, fmt::format("expected {}, found {}", expected, JsonKindName(v)));
  }

  // `v` must be an object whose keys are all in `known`.
  Status Object(const std::string& pointer, const json& v,
                const std::vector<std::string_view>& known) const {
    if (!v.is_object()) return WrongType(pointer, "an object", v);
    for (const auto& [key, value] : v.items()) {
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      Status status = Error(Child(pointer, key), fmt::format("unknown field '{}'", key));
      status.AddNote(fmt::format("the fields here are: {}", fmt::join(known, ", ")));
      return status;
    }
    return Status::Ok();
  }

  // The member `key` of object `v` at `pointer`; an error when absent.
  StatusOr<const json*> Required(const std::string& pointer, const json& v,
                                 std::string_view key) const {
    auto it = v.find(key);
    if (it == v.end()) return Error(pointer, fmt::format("missing required field '{}'", key));
    return &*it;
  }
  static const json* Optional(const json& v, std::string_view key) {
    auto it = v.find(key);
    return it == v.end() ? nullptr : &*it;
  }

  StatusOr<int64_t> Int64(const std::string& pointer, const json& v) const {
    if (!v.is_number_integer()) return WrongType(pointer, "an integer", v);
    if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t{INT64_MAX}) {
      return Error(pointer, fmt::format("integer {} is out of range", v.get<uint64_t>()));
    }
    return v.get<int64_t>();
  }
  StatusOr<int> Int(const std::string& pointer, const json& v) const {
    IRM_ASSIGN_OR_RETURN(int64_t value, Int64(pointer, v));
    if (value < INT32_MIN || value > INT32_MAX) {
      return Error(pointer, fmt::format("integer {} is out of range", value));
    }
    return static_cast<int>(value);
  }
  StatusOr<std::string> String(const std::string& pointer, const json& v) const {
    if (!v.is_string()) return WrongType(pointer, "a string", v);
    return v.get<std::string>();
  }
  template <typename T, typename F>
  StatusOr<std::vector<T>> Array(const std::string& pointer, const json& v, F element) const {
    if (!v.is_array()) return WrongType(pointer, "an array", v);
    std::vector<T> out;
    out.reserve(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      IRM_ASSIGN_OR_RETURN(T item, element(Child(pointer, i), v[i]));
      out.push_back(std::move(item));
    }
    return out;
  }

 private:
  std::string file_;
};

StatusOr<ProcessGroup> ReadProcessGroup(const JsonReader& r, const std::string& p, const json& v) {
  IRM_RETURN_IF_ERROR(r.Object(p, v, {"ring_id", "ranks"}));
  ProcessGroup group;
  IRM_ASSIGN_OR_RETURN(const json* ring_id, r.Required(p, v, "ring_id"));
  IRM_ASSIGN_OR_RETURN(group.ring_id, r.Int(Child(p, "ring_id"), *ring_id));
  IRM_ASSIGN_OR_RETURN(const json* ranks, r.Required(p, v, "ranks"));
  IRM_ASSIGN_OR_RETURN(
      group.ranks, r.Array<int>(Child(p, "ranks"), *ranks,
                                [&](const std::string& q, const json& e) { return r.Int(q, e); }));
  return group;
}

StatusOr<FeedSpec> ReadFeed(const JsonReader& r, const std::string& p, const json& v) {
  IRM_RETURN_IF_ERROR(r.Object(p, v, {"name", "shape", "dtype", "split"}));
  FeedSpec feed;
  IRM_ASSIGN_OR_RETURN(const json* name, r.Required(p, v, "name"));
  IRM_ASSIGN_OR_RETURN(feed.name, r.String(Child(p, "name"), *name));
  IRM_ASSIGN_OR_RETURN(const json* shape, r.Required(p, v, "shape"));
  IRM_ASSIGN_OR_RETURN(feed.shape, r.Array<int64_t>(Child(p, "shape"), *shape,
                                                    [&](const std::string& q, const json& e) {
                                                      return r.Int64(q, e);
                                                    }));
  IRM_ASSIGN_OR_RETURN(const json* dtype, r.Required(p, v, "dtype"));
  IRM_ASSIGN_OR_RETURN(feed.dtype, r.String(Child(p, "dtype"), *dtype));
  if (const json* split = JsonReader::Optional(v, "split")) {
    IRM_ASSIGN_OR_RETURN(std::string name, r.String(Child(p, "split"), *split));
    if (name == "batch") {
      feed.split = FeedSplit::kBatch;
    } else if (name == "replicate") {
      feed.split = FeedSplit::kReplicate;
    } else {
      return r.Error(Child(p, "split"),
                     fmt::format("expected \"batch\" or \"replicate\", found \"{}\"", name));
    }
  }
  return feed;
}

const std::vector<std::string_view> kBundleFields = {
    "format", "version", "ir",    "world_size", "process_groups", "strategy",
    "feeds",  "fetches", "steps", "seed",       "micro_batches",  "p2p"};

// bundle.json, without the ranks.
}  // namespace

StatusOr<Bundle> ParseBundleJson(std::string_view text, const std::string& file) {
  IRM_ASSIGN_OR_RETURN(json doc, ParseJson(text, file));
  const JsonReader r(file);
  const std::string root;
  IRM_RETURN_IF_ERROR(r.Object(root, doc, kBundleFields));
  Bundle bundle;

  IRM_ASSIGN_OR_RETURN(const json* format, r.Required(root, doc, "format"));
  IRM_ASSIGN_OR_RETURN(std::string format_name, r.String("/format", *format));
  if (format_name != kBundleFormat) {
    return r.Error("/format",
                   fmt::format("expected \"{}\", found \"{}\"", kBundleFormat, format_name));
  }
  IRM_ASSIGN_OR_RETURN(const json* version, r.Required(root, doc, "version"));
  IRM_ASSIGN_OR_RETURN(bundle.version, r.Int("/version", *version));
  if (bundle.version != kBundleVersion) {
    return Status(StatusCode::kUnimplemented, JsonLocation(file, "/version"),
                  fmt::format("bundle format version {} is not supported (this reader knows "
                              "version {})",
                              bundle.version, kBundleVersion));
  }
  IRM_ASSIGN_OR_RETURN(const json* ir, r.Required(root, doc, "ir"));
  IRM_ASSIGN_OR_RETURN(std::string ir_name, r.String("/ir", *ir));
  if (ir_name == "legacy") {
    bundle.ir = BundleIr::kLegacy;
  } else if (ir_name == "pir") {
    bundle.ir = BundleIr::kPir;
  } else {
    return r.Error("/ir", fmt::format("expected \"legacy\" or \"pir\", found \"{}\"", ir_name));
  }
  IRM_ASSIGN_OR_RETURN(const json* world_size, r.Required(root, doc, "world_size"));
  IRM_ASSIGN_OR_RETURN(bundle.world_size, r.Int("/world_size", *world_size));

  if (const json* groups = JsonReader::Optional(doc, "process_groups")) {
    IRM_ASSIGN_OR_RETURN(
        bundle.process_groups,
        r.Array<ProcessGroup>("/process_groups", *groups, [&](const std::string& p, const json& v) {
          return ReadProcessGroup(r, p, v);
        }));
  }
  if (const json* strategy = JsonReader::Optional(doc, "strategy")) {
    if (!strategy->is_object()) return r.WrongType("/strategy", "an object", *strategy);
    bundle.strategy = *strategy;
  }
  if (const json* feeds = JsonReader::Optional(doc, "feeds")) {
    IRM_ASSIGN_OR_RETURN(
        bundle.feeds, r.Array<FeedSpec>("/feeds", *feeds, [&](const std::string& p, const json& v) {
          return ReadFeed(r, p, v);
        }));
  }
  if (const json* fetches = JsonReader::Optional(doc, "fetches")) {
    IRM_ASSIGN_OR_RETURN(
        bundle.fetches,
        r.Array<std::string>("/fetches", *fetches,
                             [&](const std::string& p, const json& v) { return r.String(p, v); }));
  }
  if (const json* steps = JsonReader::Optional(doc, "steps")) {
    IRM_ASSIGN_OR_RETURN(bundle.steps, r.Int("/steps", *steps));
  }
  if (const json* seed = JsonReader::Optional(doc, "seed")) {
    IRM_ASSIGN_OR_RETURN(bundle.seed, r.Int64("/seed", *seed));
  }
  if (const json* micro_batches = JsonReader::Optional(doc, "micro_batches")) {
    IRM_ASSIGN_OR_RETURN(bundle.micro_batches, r.Int("/micro_batches", *micro_batches));
  }
  if (const json* p2p = JsonReader::Optional(doc, "p2p")) {
    IRM_ASSIGN_OR_RETURN(std::string name, r.String("/p2p", *p2p));
    StatusOr<schedules::P2pModel> model = schedules::ParseP2pModel(name);
    if (!model.ok()) return r.Error("/p2p", model.status().message());
    bundle.p2p = *model;
  }
  return bundle;
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
  IRM_ASSIGN_OR_RETURN(json doc, ParseJson(text, file));
  const JsonReader r(file);
  IRM_RETURN_IF_ERROR(r.Object("", doc, {"jobs"}));
  IRM_ASSIGN_OR_RETURN(const json* jobs, r.Required("", doc, "jobs"));
  return r.Array<PlanJob>(
      "/jobs", *jobs, [&](const std::string& p, const json& v) -> StatusOr<PlanJob> {
        IRM_RETURN_IF_ERROR(r.Object(p, v, {"type", "micro_batch"}));
        PlanJob job;
        IRM_ASSIGN_OR_RETURN(const json* type, r.Required(p, v, "type"));
        IRM_ASSIGN_OR_RETURN(job.type, r.String(Child(p, "type"), *type));
        if (const json* micro_batch = JsonReader::Optional(v, "micro_batch")) {
          IRM_ASSIGN_OR_RETURN(job.micro_batch, r.Int(Child(p, "micro_batch"), *micro_batch));
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
  IRM_ASSIGN_OR_RETURN(json doc, ParseJson(text, file));
  const JsonReader r(file);
  IRM_RETURN_IF_ERROR(r.Object("", doc, {"shards"}));
  IRM_ASSIGN_OR_RETURN(const json* shards, r.Required("", doc, "shards"));
  if (!shards->is_object()) return r.WrongType("/shards", "an object", *shards);
  auto dims = [&](const std::string& pointer, const json& v) {
    return r.Array<int64_t>(pointer, v,
                            [&](const std::string& q, const json& e) { return r.Int64(q, e); });
  };
  std::map<std::string, ShardSlice> out;
  for (auto it = shards->begin(); it != shards->end(); ++it) {
    const std::string p = Child("/shards", it.key());
    const json& v = it.value();
    IRM_RETURN_IF_ERROR(r.Object(p, v, {"global_shape", "offsets"}));
    ShardSlice slice;
    IRM_ASSIGN_OR_RETURN(const json* global_shape, r.Required(p, v, "global_shape"));
    IRM_ASSIGN_OR_RETURN(slice.global_shape, dims(Child(p, "global_shape"), *global_shape));
    IRM_ASSIGN_OR_RETURN(const json* offsets, r.Required(p, v, "offsets"));
    IRM_ASSIGN_OR_RETURN(slice.offsets, dims(Child(p, "offsets"), *offsets));
    out.emplace(it.key(), std::move(slice));
  }
  return out;
}

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

// --- checking -----------------------------------------------------------------------------------

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
      const std::string p = Child("/process_groups", g);
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
          Unusable(At(Child(p + "/ranks", i)),
                   fmt::format("rank {} is out of range [0, {})", rank, bundle_.world_size));
        } else if (!seen.insert(rank).second) {
          Unusable(At(Child(p + "/ranks", i)),
                   fmt::format("rank {} appears twice in the group", rank));
        }
      }
    }

    std::map<std::string, size_t> feed_names;
    for (size_t f = 0; f < bundle_.feeds.size(); ++f) {
      const FeedSpec& feed = bundle_.feeds[f];
      const std::string p = Child("/feeds", f);
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
          Unusable(At(Child(p + "/shape", d)),
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
        Unusable(At(Child("/fetches", f)), "a fetch needs a name");
      } else if (auto [it, fresh] = fetch_names.emplace(name, f); !fresh) {
        Unusable(At(Child("/fetches", f)),
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
        const std::string p = Child("/jobs", j);
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
      const std::string p = Child("/shards", name);
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
          Unusable(JsonLocation(file, Child(p + "/global_shape", d)),
                   fmt::format("var '{}': global dim {} is {}, not positive", name, d, global));
        } else if (offset < 0 || offset >= global) {
          Unusable(JsonLocation(file, Child(p + "/offsets", d)),
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
      const std::string p = Child("/shards", name);
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
          Mismatch(JsonLocation(file, Child(p + "/offsets", d)),
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
      const std::string p = Child("/feeds", f);
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
        Warn(At(Child("/feeds", f) + "/name"),
             fmt::format("feed '{}' is not declared by any program", bundle_.feeds[f].name));
      }
    }
    for (size_t f = 0; f < bundle_.fetches.size(); ++f) {
      if (!bundle_.fetches[f].empty() && !declared_.count(bundle_.fetches[f])) {
        Warn(At(Child("/fetches", f)),
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

BundleCheck CheckBundle(const Bundle& bundle, const std::string& dir,
                        const BundleValidateOptions& options) {
  return BundleChecker(bundle, dir, options).Run();
}

Diagnostics ValidateBundle(const Bundle& bundle, const std::string& dir,
                           const BundleValidateOptions& options) {
  return CheckBundle(bundle, dir, options).findings;
}

}  // namespace irm::oldir
