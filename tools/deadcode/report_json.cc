// Writing and reading the canonical report document.
#include "tools/deadcode/report_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <tuple>

namespace irm::deadcode {
namespace {

constexpr std::array<std::string_view, 5> kKinds = {"function", "method", "branch", "registration",
                                                    "overload"};
constexpr std::array<std::string_view, 4> kLegacyKinds = {"", "else-branch", "if-body",
                                                          "tail-after-early-return"};
constexpr std::array<std::string_view, 6> kShapes = {"if-else",      "elif",           "negated",
                                                     "early-return", "guard-variable", "ternary"};
constexpr std::array<std::string_view, 4> kEvidenceKinds = {"parity", "test", "coverage", "manual"};
constexpr std::array<std::string_view, 4> kStatusClasses = {"verified", "twin-untested", "blocked",
                                                            "no-twin"};

template <size_t N>
bool OneOf(const std::array<std::string_view, N>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

template <size_t N>
std::string ListOf(const std::array<std::string_view, N>& names) {
  std::string out;
  for (std::string_view name : names) {
    if (name.empty()) continue;
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

const char* LanguageName(Language language) {
  return language == Language::kPython ? "python" : "cpp";
}

Json RangeJson(const SourceRange& r) {
  return Json{{"start_line", r.start_line},
              {"start_column", r.start_column},
              {"end_line", r.end_line},
              {"end_column", r.end_column}};
}

Json UnitJson(const UnitRef& unit) {
  return Json{{"qualname", unit.qualname}, {"file", unit.file}, {"range", RangeJson(unit.range)}};
}

Json FindingJson(const Finding& f) {
  Json callers = Json::array();
  for (const Caller& c : f.callers) {
    callers.push_back(
        Json{{"qualname", c.qualname}, {"file", c.file}, {"line", c.line}, {"kept", c.kept}});
  }
  Json evidence = Json::array();
  for (const Evidence& e : f.evidence) {
    evidence.push_back(Json{{"kind", e.kind}, {"ref", e.ref}, {"detail", e.detail}});
  }
  Json guard = nullptr;
  if (f.guard) {
    guard = Json{{"text", f.guard->text},
                 {"name", f.guard->name},
                 {"line", f.guard->line},
                 {"negated", f.guard->negated},
                 {"shape", f.guard->shape}};
  }
  return Json{{"id", f.id},
              {"language", LanguageName(f.language)},
              {"kind", f.kind},
              {"unit", UnitJson(f.unit)},
              {"legacy_kind", f.legacy_kind},
              {"twin", f.twin ? UnitJson(*f.twin) : Json(nullptr)},
              {"twin_rule", f.twin_rule},
              {"guard", guard},
              {"callers", callers},
              {"status", f.status},
              {"deletable", f.deletable},
              {"reason", f.reason},
              {"evidence", evidence}};
}

// Counts with every key present (zeros included), so that the summary has one shape.
Json SummaryJson(const std::vector<Finding>& findings, size_t problems) {
  Json by_status = Json::object();
  for (std::string_view s : kStatusClasses) by_status[std::string(s)] = 0;
  Json by_kind = Json::object();
  for (std::string_view k : kKinds) by_kind[std::string(k)] = 0;
  Json by_language = {{"python", 0}, {"cpp", 0}};
  int deletable = 0;
  for (const Finding& f : findings) {
    const std::string_view status = StatusClass(f.status);
    if (!status.empty())
      by_status[std::string(status)] = by_status[std::string(status)].get<int>() + 1;
    if (OneOf(kKinds, f.kind)) by_kind[f.kind] = by_kind[f.kind].get<int>() + 1;
    const char* language = LanguageName(f.language);
    by_language[language] = by_language[language].get<int>() + 1;
    deletable += f.deletable ? 1 : 0;
  }
  return Json{{"findings", findings.size()}, {"deletable", deletable},
              {"problems", problems},        {"by_status", by_status},
              {"by_kind", by_kind},          {"by_language", by_language}};
}

bool ProblemBefore(const FileProblem& a, const FileProblem& b) {
  return std::tie(a.file, a.line, a.column, a.message) <
         std::tie(b.file, b.line, b.column, b.message);
}

// ----- reading -----

class ReportReader {
 public:
  explicit ReportReader(const std::string& file) : in_(file) {}

  Status Range(const Json& object, const std::string& pointer, int min_line, SourceRange* out) {
    const Json& value = object.at("range");
    const std::string at = JsonReader::Child(pointer, "range");
    IRM_RETURN_IF_ERROR(
        in_.Object(value, at, {"start_line", "start_column", "end_line", "end_column"}));
    IRM_RETURN_IF_ERROR(in_.Int(value, at, "start_line", min_line, &out->start_line));
    IRM_RETURN_IF_ERROR(in_.Int(value, at, "start_column", 0, &out->start_column));
    IRM_RETURN_IF_ERROR(in_.Int(value, at, "end_line", min_line, &out->end_line));
    IRM_RETURN_IF_ERROR(in_.Int(value, at, "end_column", 0, &out->end_column));
    if (out->end_line < out->start_line) {
      return in_.Error(at, fmt::format("ends (line {}) before it starts (line {})", out->end_line,
                                       out->start_line));
    }
    return Status::Ok();
  }

  Status Unit(const Json& value, const std::string& pointer, UnitRef* out) {
    IRM_RETURN_IF_ERROR(in_.Object(value, pointer, {"qualname", "file", "range"}));
    IRM_RETURN_IF_ERROR(in_.Name(value, pointer, "qualname", &out->qualname));
    IRM_RETURN_IF_ERROR(in_.Name(value, pointer, "file", &out->file));
    return Range(value, pointer, 1, &out->range);
  }

  Status Guard(const Json& value, const std::string& pointer, GuardInfo* out) {
    IRM_RETURN_IF_ERROR(in_.Object(value, pointer, {"text", "name", "line", "negated", "shape"}));
    IRM_RETURN_IF_ERROR(in_.Name(value, pointer, "text", &out->text));
    IRM_RETURN_IF_ERROR(in_.Name(value, pointer, "name", &out->name));
    IRM_RETURN_IF_ERROR(in_.Int(value, pointer, "line", 0, &out->line));
    IRM_RETURN_IF_ERROR(in_.Bool(value, pointer, "negated", &out->negated));
    IRM_RETURN_IF_ERROR(in_.String(value, pointer, "shape", &out->shape));
    if (!OneOf(kShapes, out->shape)) {
      return in_.Error(JsonReader::Child(pointer, "shape"),
                       fmt::format("'{}' is not a guard shape ({})", out->shape, ListOf(kShapes)));
    }
    return Status::Ok();
  }

  Status Finding(const Json& value, const std::string& pointer, deadcode::Finding* out) {
    IRM_RETURN_IF_ERROR(
        in_.Object(value, pointer,
                   {"id", "language", "kind", "unit", "legacy_kind", "twin", "twin_rule", "guard",
                    "callers", "status", "deletable", "reason", "evidence"}));
    IRM_RETURN_IF_ERROR(in_.Name(value, pointer, "id", &out->id));
    std::string language;
    IRM_RETURN_IF_ERROR(in_.String(value, pointer, "language", &language));
    if (language == "python") {
      out->language = Language::kPython;
    } else if (language == "cpp") {
      out->language = Language::kCpp;
    } else {
      return in_.Error(JsonReader::Child(pointer, "language"),
                       fmt::format("'{}' is not a language (python, cpp)", language));
    }
    IRM_RETURN_IF_ERROR(in_.String(value, pointer, "kind", &out->kind));
    if (!OneOf(kKinds, out->kind)) {
      return in_.Error(JsonReader::Child(pointer, "kind"),
                       fmt::format("'{}' is not a finding kind ({})", out->kind, ListOf(kKinds)));
    }
    IRM_RETURN_IF_ERROR(Unit(value.at("unit"), JsonReader::Child(pointer, "unit"), &out->unit));
    IRM_RETURN_IF_ERROR(in_.String(value, pointer, "legacy_kind", &out->legacy_kind));
    if (!OneOf(kLegacyKinds, out->legacy_kind)) {
      return in_.Error(JsonReader::Child(pointer, "legacy_kind"),
                       fmt::format("'{}' is not a legacy part ({}, or empty)", out->legacy_kind,
                                   ListOf(kLegacyKinds)));
    }
    if (!value.at("twin").is_null()) {
      UnitRef twin;
      IRM_RETURN_IF_ERROR(Unit(value.at("twin"), JsonReader::Child(pointer, "twin"), &twin));
      out->twin = std::move(twin);
    }
    IRM_RETURN_IF_ERROR(in_.String(value, pointer, "twin_rule", &out->twin_rule));
    if (!value.at("guard").is_null()) {
      GuardInfo guard;
      IRM_RETURN_IF_ERROR(Guard(value.at("guard"), JsonReader::Child(pointer, "guard"), &guard));
      out->guard = std::move(guard);
    }
    const Json* callers = nullptr;
    IRM_RETURN_IF_ERROR(in_.Array(value, pointer, "callers", &callers));
    for (size_t i = 0; i < callers->size(); ++i) {
      const std::string at = JsonReader::Child(JsonReader::Child(pointer, "callers"), i);
      const Json& c = (*callers)[i];
      Caller caller;
      IRM_RETURN_IF_ERROR(in_.Object(c, at, {"qualname", "file", "line", "kept"}));
      IRM_RETURN_IF_ERROR(in_.Name(c, at, "qualname", &caller.qualname));
      IRM_RETURN_IF_ERROR(in_.Name(c, at, "file", &caller.file));
      IRM_RETURN_IF_ERROR(in_.Int(c, at, "line", 0, &caller.line));
      IRM_RETURN_IF_ERROR(in_.Bool(c, at, "kept", &caller.kept));
      out->callers.push_back(std::move(caller));
    }
    IRM_RETURN_IF_ERROR(in_.String(value, pointer, "status", &out->status));
    if (StatusClass(out->status).empty()) {
      return in_.Error(JsonReader::Child(pointer, "status"),
                       fmt::format("'{}' is not a status (verified, twin-untested, no-twin, "
                                   "blocked-by:<qualname>)",
                                   out->status));
    }
    IRM_RETURN_IF_ERROR(in_.Bool(value, pointer, "deletable", &out->deletable));
    IRM_RETURN_IF_ERROR(in_.String(value, pointer, "reason", &out->reason));
    const Json* evidence = nullptr;
    IRM_RETURN_IF_ERROR(in_.Array(value, pointer, "evidence", &evidence));
    for (size_t i = 0; i < evidence->size(); ++i) {
      const std::string at = JsonReader::Child(JsonReader::Child(pointer, "evidence"), i);
      const Json& e = (*evidence)[i];
      Evidence item;
      IRM_RETURN_IF_ERROR(in_.Object(e, at, {"kind", "ref", "detail"}));
      IRM_RETURN_IF_ERROR(in_.String(e, at, "kind", &item.kind));
      if (!OneOf(kEvidenceKinds, item.kind)) {
        return in_.Error(
            JsonReader::Child(at, "kind"),
            fmt::format("'{}' is not an evidence kind ({})", item.kind, ListOf(kEvidenceKinds)));
      }
      IRM_RETURN_IF_ERROR(in_.Name(e, at, "ref", &item.ref));
      IRM_RETURN_IF_ERROR(in_.String(e, at, "detail", &item.detail));
      out->evidence.push_back(std::move(item));
    }
    // What "verified" and "deletable" mean, so that a hand-edited report cannot claim them.
    if (out->status == "verified" && out->evidence.empty()) {
      return in_.Error(JsonReader::Child(pointer, "evidence"),
                       "a verified finding names its evidence");
    }
    if (out->deletable && out->status != "verified") {
      return in_.Error(
          JsonReader::Child(pointer, "deletable"),
          fmt::format("only a verified finding is deletable (status '{}')", out->status));
    }
    return Status::Ok();
  }

  Status Problem(const Json& value, const std::string& pointer, FileProblem* out) {
    IRM_RETURN_IF_ERROR(in_.Object(value, pointer, {"file", "line", "column", "message"}));
    IRM_RETURN_IF_ERROR(in_.String(value, pointer, "file", &out->file));
    IRM_RETURN_IF_ERROR(in_.Int(value, pointer, "line", 0, &out->line));
    IRM_RETURN_IF_ERROR(in_.Int(value, pointer, "column", 0, &out->column));
    return in_.Name(value, pointer, "message", &out->message);
  }

  // The document's summary against the one the findings give: the first member that differs.
  Status SameSummary(const Json& expected, const Json& actual, const std::string& pointer) {
    if (!actual.is_object()) {
      return in_.Error(pointer, fmt::format("expected an object, found {}", JsonKindName(actual)));
    }
    for (const auto& [key, want] : expected.items()) {
      const std::string at = JsonReader::Child(pointer, key);
      if (!actual.contains(key)) return in_.Error(pointer, fmt::format("missing key '{}'", key));
      const Json& got = actual.at(key);
      if (want.is_object()) {
        IRM_RETURN_IF_ERROR(SameSummary(want, got, at));
      } else if (got != want) {
        return in_.Error(at, fmt::format("says {}, the findings give {}", got.dump(), want.dump()));
      }
    }
    for (const auto& [key, got] : actual.items()) {
      if (!expected.contains(key))
        return in_.Error(JsonReader::Child(pointer, key), fmt::format("unknown key '{}'", key));
    }
    return Status::Ok();
  }

  StatusOr<DeadcodeReport> Report(const Json& doc) {
    IRM_RETURN_IF_ERROR(in_.Object(doc, "",
                                   {"schema", "tool_version", "root", "python_files",
                                    "cpp_translation_units", "summary", "problems", "findings"}));
    DeadcodeReport report;
    IRM_RETURN_IF_ERROR(in_.String(doc, "", "schema", &report.schema));
    if (report.schema != kReportSchema) {
      return in_.Error("/schema", fmt::format("'{}' is not \"{}\"", report.schema, kReportSchema));
    }
    IRM_RETURN_IF_ERROR(in_.String(doc, "", "tool_version", &report.tool_version));
    IRM_RETURN_IF_ERROR(in_.String(doc, "", "root", &report.root));
    IRM_RETURN_IF_ERROR(in_.Int(doc, "", "python_files", 0, &report.python_files));
    IRM_RETURN_IF_ERROR(
        in_.Int(doc, "", "cpp_translation_units", 0, &report.cpp_translation_units));
    const Json* problems = nullptr;
    IRM_RETURN_IF_ERROR(in_.Array(doc, "", "problems", &problems));
    for (size_t i = 0; i < problems->size(); ++i) {
      FileProblem problem;
      IRM_RETURN_IF_ERROR(Problem((*problems)[i], JsonReader::Child("/problems", i), &problem));
      report.problems.push_back(std::move(problem));
    }
    const Json* findings = nullptr;
    IRM_RETURN_IF_ERROR(in_.Array(doc, "", "findings", &findings));
    std::map<std::string, size_t> ids;
    for (size_t i = 0; i < findings->size(); ++i) {
      const std::string at = JsonReader::Child("/findings", i);
      deadcode::Finding finding;
      IRM_RETURN_IF_ERROR(Finding((*findings)[i], at, &finding));
      auto [it, fresh] = ids.emplace(finding.id, i);
      if (!fresh) {
        return in_.Error(at + "/id",
                         fmt::format("'{}' is the id of /findings/{} too", finding.id, it->second));
      }
      report.findings.push_back(std::move(finding));
    }
    IRM_RETURN_IF_ERROR(SameSummary(SummaryJson(report.findings, report.problems.size()),
                                    doc.at("summary"), "/summary"));
    return report;
  }

 private:
  JsonReader in_;
};

}  // namespace

std::string_view StatusClass(std::string_view status) {
  if (status == "verified" || status == "twin-untested" || status == "no-twin") return status;
  constexpr std::string_view kBlocked = "blocked-by:";
  if (status.size() > kBlocked.size() && status.substr(0, kBlocked.size()) == kBlocked) {
    return "blocked";
  }
  return "";
}

bool FindingBefore(const Finding& a, const Finding& b) {
  return std::tie(a.unit.file, a.unit.range.start_line, a.kind, a.unit.qualname,
                  a.unit.range.start_column, a.unit.range.end_line, a.unit.range.end_column,
                  a.legacy_kind, a.id) < std::tie(b.unit.file, b.unit.range.start_line, b.kind,
                                                  b.unit.qualname, b.unit.range.start_column,
                                                  b.unit.range.end_line, b.unit.range.end_column,
                                                  b.legacy_kind, b.id);
}

Json ReportToJson(const DeadcodeReport& report) {
  std::vector<Finding> findings = report.findings;
  std::stable_sort(findings.begin(), findings.end(), FindingBefore);
  std::vector<FileProblem> problems = report.problems;
  std::stable_sort(problems.begin(), problems.end(), ProblemBefore);
  Json problem_list = Json::array();
  for (const FileProblem& p : problems) {
    problem_list.push_back(
        Json{{"file", p.file}, {"line", p.line}, {"column", p.column}, {"message", p.message}});
  }
  Json finding_list = Json::array();
  for (const Finding& f : findings) finding_list.push_back(FindingJson(f));
  return Json{{"schema", kReportSchema},
              {"tool_version", report.tool_version},
              {"root", report.root},
              {"python_files", report.python_files},
              {"cpp_translation_units", report.cpp_translation_units},
              {"summary", SummaryJson(findings, problems.size())},
              {"problems", problem_list},
              {"findings", finding_list}};
}

StatusOr<DeadcodeReport> ReportFromJson(const Json& document, const std::string& file_for_errors) {
  return ReportReader(file_for_errors).Report(document);
}

std::string DumpCanonical(const Json& document) {
  return document.dump(2, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace) + "\n";
}

}  // namespace irm::deadcode
