// Reading the suite's case files: every field checked for its type and range, every error located
// by the file and the field's JSON pointer, so that a typo in a case is a diagnostic and never a
// case that silently runs something else.
#include "diff_tests/suite_case.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/file_io.h"
#include "common/json_access.h"

namespace irm::diff {
namespace {

using nlohmann::json;

// The checks of one file, each failing with the file and a JSON pointer (common/json_access.h,
// so that a case file's errors read as every other JSON reader's).
class CaseReader {
 public:
  explicit CaseReader(std::string file) : access_(std::move(file)) {}

  Status Error(const std::string& pointer, std::string message) const {
    return access_.Err(JsonPath::Rendered(pointer), std::move(message));
  }
  Status WrongType(const std::string& pointer, const char* expected, const json& v) const {
    return access_.WrongKind(JsonPath::Rendered(pointer), expected, v.type());
  }
  // `v` is an object whose keys are all in `known`.
  Status Object(const std::string& pointer, const json& v,
                std::initializer_list<std::string_view> known) const {
    return access_.Object(v, JsonPath::Rendered(pointer), known);
  }
  Status Int(const std::string& pointer, const json& v, int64_t min, int64_t* out) const {
    if (!v.is_number_integer()) return WrongType(pointer, "an integer", v);
    const int64_t value = v.get<int64_t>();
    if (value < min || value > (int64_t{1} << 31)) {
      return Error(pointer, fmt::format("must be an integer of at least {}, found {}", min, value));
    }
    *out = value;
    return Status::Ok();
  }
  Status Number(const std::string& pointer, const json& v, double min, double max,
                double* out) const {
    if (!v.is_number()) return WrongType(pointer, "a number", v);
    const double value = v.get<double>();
    if (!(value >= min && value <= max)) {
      return Error(pointer, fmt::format("must be in [{}, {}], found {}", min, max, value));
    }
    *out = value;
    return Status::Ok();
  }
  Status String(const std::string& pointer, const json& v, std::string* out) const {
    if (!v.is_string()) return WrongType(pointer, "a string", v);
    *out = v.get<std::string>();
    return Status::Ok();
  }
  // A non-empty string out of `names`.
  Status OneOf(const std::string& pointer, const json& v,
               std::initializer_list<std::string_view> names, std::string* out) const {
    IRM_RETURN_IF_ERROR(String(pointer, v, out));
    if (std::find(names.begin(), names.end(), *out) == names.end()) {
      return Error(pointer, fmt::format("'{}' is not one of {}", *out,
                                        fmt::join(names.begin(), names.end(), ", ")));
    }
    return Status::Ok();
  }
  // An array of non-empty strings, each at most once.
  Status Names(const std::string& pointer, const json& v, std::vector<std::string>* out) const {
    if (!v.is_array()) return WrongType(pointer, "an array of strings", v);
    std::set<std::string> seen;
    for (size_t i = 0; i < v.size(); ++i) {
      const std::string p = JsonPointerChild(pointer, std::to_string(i));
      std::string name;
      IRM_RETURN_IF_ERROR(String(p, v[i], &name));
      if (name.empty()) return Error(p, "must not be empty");
      if (!seen.insert(name).second) return Error(p, fmt::format("'{}' is listed twice", name));
      out->push_back(name);
    }
    return Status::Ok();
  }

  const std::string& file() const { return access_.file(); }

 private:
  JsonAccess access_;
};

Status ReadMlp(const CaseReader& r, const json& m, oldir::models::MlpConfig* c) {
  IRM_RETURN_IF_ERROR(
      r.Object("/model", m,
               {"name", "depth", "in_features", "width", "classes", "activation", "loss", "seed"}));
  int64_t v = 0;
  if (m.contains("depth")) {
    IRM_RETURN_IF_ERROR(r.Int("/model/depth", m["depth"], 1, &v));
    c->depth = static_cast<int>(v);
  }
  if (m.contains("in_features"))
    IRM_RETURN_IF_ERROR(r.Int("/model/in_features", m["in_features"], 1, &c->in_features));
  if (m.contains("width")) IRM_RETURN_IF_ERROR(r.Int("/model/width", m["width"], 1, &c->width));
  if (m.contains("classes"))
    IRM_RETURN_IF_ERROR(r.Int("/model/classes", m["classes"], 1, &c->classes));
  std::string name;
  if (m.contains("activation")) {
    IRM_RETURN_IF_ERROR(
        r.OneOf("/model/activation", m["activation"], {"relu", "gelu", "tanh", "sigmoid"}, &name));
    c->activation = *oldir::models::MlpActivationFromName(name);
  }
  if (m.contains("loss")) {
    IRM_RETURN_IF_ERROR(r.OneOf("/model/loss", m["loss"], {"softmax_cross_entropy", "mse"}, &name));
    c->loss = *oldir::models::MlpLossFromName(name);
  }
  if (m.contains("seed")) {
    IRM_RETURN_IF_ERROR(r.Int("/model/seed", m["seed"], 0, &v));
    c->seed = static_cast<int32_t>(v);
  }
  return Status::Ok();
}

Status ReadGpt(const CaseReader& r, const json& m, oldir::models::GptConfig* c) {
  IRM_RETURN_IF_ERROR(r.Object(
      "/model", m, {"name", "layers", "hidden", "heads", "vocab", "seq", "dropout", "seed"}));
  int64_t v = 0;
  if (m.contains("layers")) {
    IRM_RETURN_IF_ERROR(r.Int("/model/layers", m["layers"], 1, &v));
    c->layers = static_cast<int>(v);
  }
  if (m.contains("hidden")) IRM_RETURN_IF_ERROR(r.Int("/model/hidden", m["hidden"], 1, &c->hidden));
  if (m.contains("heads")) IRM_RETURN_IF_ERROR(r.Int("/model/heads", m["heads"], 1, &c->heads));
  if (m.contains("vocab")) IRM_RETURN_IF_ERROR(r.Int("/model/vocab", m["vocab"], 1, &c->vocab));
  if (m.contains("seq")) IRM_RETURN_IF_ERROR(r.Int("/model/seq", m["seq"], 1, &c->seq));
  if (m.contains("dropout")) {
    double d = 0;
    IRM_RETURN_IF_ERROR(r.Number("/model/dropout", m["dropout"], 0.0, 0.999, &d));
    c->dropout = static_cast<float>(d);
  }
  if (m.contains("seed")) {
    IRM_RETURN_IF_ERROR(r.Int("/model/seed", m["seed"], 0, &v));
    c->seed = static_cast<int32_t>(v);
  }
  return Status::Ok();
}

Status ReadOptimizer(const CaseReader& r, const json& o, oldir::OptimizerOptions* out) {
  IRM_RETURN_IF_ERROR(r.Object("/optimizer", o, {"kind", "learning_rate"}));
  if (!o.contains("kind"))
    return r.Error("/optimizer/kind", "missing: sgd, momentum, adam or adamw");
  std::string kind;
  IRM_RETURN_IF_ERROR(
      r.OneOf("/optimizer/kind", o["kind"], {"sgd", "momentum", "adam", "adamw"}, &kind));
  out->kind = *oldir::OptimizerKindFromName(kind);
  if (o.contains("learning_rate")) {
    double lr = 0;
    IRM_RETURN_IF_ERROR(r.Number("/optimizer/learning_rate", o["learning_rate"], 0.0, 10.0, &lr));
    out->learning_rate = static_cast<float>(lr);
  }
  return Status::Ok();
}

// The strategy's own reader locates its errors by a pointer inside the strategy: put it under
// "/strategy" of this file.
Status ReadStrategy(const CaseReader& r, const json& s,
                    std::optional<oldir::passes::Strategy>* out) {
  if (!s.is_object()) return r.WrongType("/strategy", "an object (Paddle's strategy fields)", s);
  StatusOr<oldir::passes::Strategy> strategy = oldir::passes::ParseStrategyJson(s.dump(), r.file());
  if (!strategy.ok()) {
    const Diagnostic& d = strategy.status().diagnostic();
    std::string inner = d.location.detail;
    if (!inner.empty() && inner[0] != '/') inner = "/" + inner;
    Status located = r.Error("/strategy" + inner, d.message);
    for (const std::string& note : d.notes) located.AddNote(note);
    return located;
  }
  *out = *std::move(strategy);
  return Status::Ok();
}

// An engine case's fields: the roads, the test-only fault, and `covers` by road. The fields the
// flow decides itself (the tiers of its pairs, the point-to-point model its build found) are
// refused rather than silently ignored.
Status ReadEngineFields(const CaseReader& r, const json& doc, SuiteCase* c) {
  if (doc.contains("tier")) {
    return r.Error("/tier",
                   "an engine case's pairs have their own tiers (docs/engine.md): serial pairs "
                   "noise-floor, legacy-pir exact or reordered by op order");
  }
  if (doc.contains("p2p")) {
    return r.Error("/p2p", "an engine case runs the point-to-point model its build found");
  }
  if (doc.contains("ir")) {
    std::string ir;
    IRM_RETURN_IF_ERROR(r.OneOf("/ir", doc["ir"], {"legacy", "pir", "both"}, &ir));
    c->engine_ir = *EngineIrFromName(ir);
  }
  if (doc.contains("test_fault")) {
    IRM_RETURN_IF_ERROR(r.String("/test_fault", doc["test_fault"], &c->test_fault));
    StatusOr<EngineTestFault> fault = ParseEngineTestFault(c->test_fault);
    if (!fault.ok()) {
      Status located = r.Error("/test_fault", fault.status().diagnostic().message);
      for (const std::string& note : fault.status().diagnostic().notes) located.AddNote(note);
      return located;
    }
    if (c->engine_ir == EngineIr::kLegacy) {
      return r.Error("/test_fault",
                     "the test-only faults break a new-IR pass: ir legacy never runs it");
    }
    c->engine_fault = *fault;
  }
  if (!doc.contains("covers")) {
    return r.Error("/covers",
                   "missing: the qualified names the case exercises, by road: {\"legacy\": [...], "
                   "\"pir\": [...]}");
  }
  const json& covers = doc["covers"];
  if (!covers.is_object()) {
    return r.WrongType("/covers",
                       "an object {\"legacy\": [...], \"pir\": [...]} (an engine case says which "
                       "road each name belongs to)",
                       covers);
  }
  IRM_RETURN_IF_ERROR(r.Object("/covers", covers, {"legacy", "pir"}));
  struct Road {
    const char* key;
    EngineRoad road;
    std::vector<std::string>* names;
  };
  for (const Road& road : {Road{"legacy", EngineRoad::kLegacy, &c->covers_legacy},
                           Road{"pir", EngineRoad::kPir, &c->covers_pir}}) {
    if (!covers.contains(road.key)) continue;
    const std::string pointer = JsonPointerChild("/covers", road.key);
    IRM_RETURN_IF_ERROR(r.Names(pointer, covers[road.key], road.names));
    bool checked = false;
    for (const std::string& pair : EnginePairNames(c->engine_ir)) {
      checked = checked || EnginePairChecks(pair, road.road);
    }
    if (!checked && !road.names->empty()) {
      return r.Error(pointer, fmt::format("ir {} runs no pair that checks the {} road's functions",
                                          EngineIrName(c->engine_ir), road.key));
    }
    std::sort(road.names->begin(), road.names->end());
  }
  std::set<std::string> all(c->covers_legacy.begin(), c->covers_legacy.end());
  all.insert(c->covers_pir.begin(), c->covers_pir.end());
  c->covers.assign(all.begin(), all.end());
  return Status::Ok();
}

}  // namespace

const char* SuiteComparisonName(SuiteComparison comparison) {
  switch (comparison) {
    case SuiteComparison::kSerial:
      return "serial";
    case SuiteComparison::kTranslated:
      return "translated";
    case SuiteComparison::kEngine:
      return "engine";
  }
  return "?";
}

const char* EngineRoadName(EngineRoad road) {
  return road == EngineRoad::kLegacy ? "legacy" : "pir";
}

std::vector<std::string> EnginePairNames(EngineIr ir) {
  switch (ir) {
    case EngineIr::kLegacy:
      return {"serial-legacy"};
    case EngineIr::kPir:
      return {"serial-pir"};
    case EngineIr::kBoth:
      return {"serial-legacy", "serial-pir", "legacy-pir"};
  }
  return {};
}

bool EnginePairChecks(std::string_view pair, EngineRoad road) {
  if (pair == "legacy-pir") return true;
  return pair == (road == EngineRoad::kLegacy ? "serial-legacy" : "serial-pir");
}

bool SuiteCase::HasTag(std::string_view tag) const {
  return std::find(tags.begin(), tags.end(), tag) != tags.end();
}

bool SuiteCase::IsEngine() const {
  return std::find(compare.begin(), compare.end(), SuiteComparison::kEngine) != compare.end();
}

std::vector<std::string> SuiteCase::ComparisonNames() const {
  if (IsEngine()) return EnginePairNames(engine_ir);
  std::vector<std::string> names;
  for (SuiteComparison comparison : compare) names.push_back(SuiteComparisonName(comparison));
  return names;
}

StatusOr<SuiteCase> ParseSuiteCase(std::string_view text, const std::string& file) {
  const CaseReader r(file);
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    Location loc = Location::File(file);
    if (const auto* parse = dynamic_cast<const json::parse_error*>(&e)) {
      loc.detail = fmt::format("byte {}", parse->byte);
    }
    return Status(StatusCode::kParseError, std::move(loc), fmt::format("not JSON: {}", e.what()));
  }
  IRM_RETURN_IF_ERROR(r.Object(
      "", doc,
      {"description", "group", "model", "optimizer", "strategy", "job_lists", "compare", "backend",
       "device", "p2p", "steps", "batch_size", "tier", "tags", "covers", "ir", "test_fault"}));
  SuiteCase c;
  c.file = file;
  c.name = std::filesystem::path(file).stem().string();
  if (doc.contains("description")) {
    IRM_RETURN_IF_ERROR(r.String("/description", doc["description"], &c.description));
  }

  if (!doc.contains("model")) return r.Error("/model", "missing: the model and its size");
  const json& model = doc["model"];
  if (!model.is_object()) return r.WrongType("/model", "an object", model);
  if (!model.contains("name")) return r.Error("/model/name", "missing: mlp or gpt");
  std::string model_name;
  IRM_RETURN_IF_ERROR(r.OneOf("/model/name", model["name"], {"mlp", "gpt"}, &model_name));
  if (model_name == "mlp") {
    c.recipe.model = corpus::ZooModel::kMlp;
    IRM_RETURN_IF_ERROR(ReadMlp(r, model, &c.recipe.mlp));
  } else {
    c.recipe.model = corpus::ZooModel::kGpt;
    IRM_RETURN_IF_ERROR(ReadGpt(r, model, &c.recipe.gpt));
  }
  c.group = model_name;
  if (doc.contains("group")) {
    IRM_RETURN_IF_ERROR(r.String("/group", doc["group"], &c.group));
    if (c.group.empty()) return r.Error("/group", "must not be empty");
  }

  if (!doc.contains("optimizer")) return r.Error("/optimizer", "missing: {\"kind\": ...}");
  IRM_RETURN_IF_ERROR(ReadOptimizer(r, doc["optimizer"], &c.recipe.optimizer));
  if (doc.contains("strategy"))
    IRM_RETURN_IF_ERROR(ReadStrategy(r, doc["strategy"], &c.recipe.strategy));
  if (!c.recipe.strategy) {
    return r.Error("/strategy", "missing: a case checks a distributed program (a strategy)");
  }

  if (doc.contains("job_lists")) {
    std::string form;
    IRM_RETURN_IF_ERROR(r.OneOf("/job_lists", doc["job_lists"], {"legacy", "pir"}, &form));
    c.recipe.job_lists = form == "pir" ? schedules::JobListIr::kPir : schedules::JobListIr::kLegacy;
  }
  if (doc.contains("compare")) {
    std::vector<std::string> names;
    IRM_RETURN_IF_ERROR(r.Names("/compare", doc["compare"], &names));
    if (names.empty())
      return r.Error("/compare", "compares nothing: give serial, translated or both");
    for (size_t i = 0; i < names.size(); ++i) {
      const std::string pointer = JsonPointerChild("/compare", std::to_string(i));
      if (names[i] == "serial") {
        c.compare.push_back(SuiteComparison::kSerial);
      } else if (names[i] == "translated") {
        c.compare.push_back(SuiteComparison::kTranslated);
      } else if (names[i] == "engine") {
        c.compare.push_back(SuiteComparison::kEngine);
      } else {
        return r.Error(pointer,
                       fmt::format("'{}' is not one of serial, translated, engine", names[i]));
      }
      if (c.compare.size() > 1 && c.IsEngine()) {
        return r.Error(pointer,
                       "engine compares alone: the Engine flow builds its own bundles (serial, "
                       "legacy, new IR) and compares them three ways");
      }
    }
  } else {
    c.compare = {SuiteComparison::kSerial, SuiteComparison::kTranslated};
  }
  if (doc.contains("backend"))
    IRM_RETURN_IF_ERROR(r.OneOf("/backend", doc["backend"], {"thread", "gloo"}, &c.backend));
  if (doc.contains("device"))
    IRM_RETURN_IF_ERROR(r.OneOf("/device", doc["device"], {"cpu", "gpu"}, &c.device));
  if (doc.contains("p2p")) {
    std::string model;
    IRM_RETURN_IF_ERROR(r.String("/p2p", doc["p2p"], &model));
    StatusOr<schedules::P2pModel> p2p = schedules::ParseP2pModel(model);
    if (!p2p.ok()) return r.Error("/p2p", p2p.status().diagnostic().message);
    c.p2p = *p2p;
  }
  int64_t v = 0;
  if (!doc.contains("steps")) return r.Error("/steps", "missing: the executor steps to run");
  IRM_RETURN_IF_ERROR(r.Int("/steps", doc["steps"], 1, &v));
  c.recipe.steps = static_cast<int>(v);
  if (doc.contains("batch_size"))
    IRM_RETURN_IF_ERROR(r.Int("/batch_size", doc["batch_size"], 1, &c.recipe.batch_size));
  if (doc.contains("tier")) {
    std::string tier;
    IRM_RETURN_IF_ERROR(
        r.OneOf("/tier", doc["tier"], {"exact", "reordered", "noise-floor"}, &tier));
    c.tier = *TierFromName(tier);
  }
  if (doc.contains("tags")) IRM_RETURN_IF_ERROR(r.Names("/tags", doc["tags"], &c.tags));
  if (c.IsEngine()) {
    IRM_RETURN_IF_ERROR(ReadEngineFields(r, doc, &c));
    return c;
  }
  for (const char* engine_only : {"ir", "test_fault"}) {
    if (doc.contains(engine_only)) {
      return r.Error(std::string("/") + engine_only,
                     "only an engine case (\"compare\": [\"engine\"]) takes this field");
    }
  }
  if (!doc.contains("covers")) {
    return r.Error("/covers", "missing: the qualified names the case exercises ([] for none)");
  }
  IRM_RETURN_IF_ERROR(r.Names("/covers", doc["covers"], &c.covers));
  std::sort(c.covers.begin(), c.covers.end());

  // With gradient merge one update takes k_steps executor steps: the serial check stands one
  // serial step for each k of them (serial_parity.h), so the run must end on a whole update.
  const bool serial =
      std::find(c.compare.begin(), c.compare.end(), SuiteComparison::kSerial) != c.compare.end();
  const oldir::passes::GradientMergeStrategy& gm = c.recipe.strategy->gradient_merge;
  if (serial && gm.enable && c.recipe.steps % gm.k_steps != 0) {
    return r.Error("/steps", fmt::format("gradient merge makes one update of k_steps = {} executor "
                                         "steps: compared with the serial program, steps must be a "
                                         "multiple of it, not {}",
                                         gm.k_steps, c.recipe.steps));
  }
  return c;
}

StatusOr<std::vector<SuiteCase>> ReadSuiteCases(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return Status(StatusCode::kNotFound, Location::File(dir), "not a folder of suite cases");
  }
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".json" && entry.is_regular_file(ec)) {
      files.push_back(entry.path().string());
    }
  }
  if (ec) {
    return Status(StatusCode::kIoError, Location::File(dir),
                  fmt::format("cannot list the cases: {}", ec.message()));
  }
  std::sort(files.begin(), files.end());
  std::vector<SuiteCase> cases;
  for (const std::string& file : files) {
    IRM_ASSIGN_OR_RETURN(std::string text, ReadFile(file));
    IRM_ASSIGN_OR_RETURN(SuiteCase c, ParseSuiteCase(text, file));
    cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace irm::diff
