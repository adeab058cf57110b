// Rendering the report document as SARIF 2.1.0.
#include "tools/deadcode/report_sarif.h"

#include <fmt/format.h>

#include <array>
#include <string>

#include "tools/deadcode/report_json.h"
#include "tools/deadcode/report_render.h"

namespace irm::deadcode {
namespace {

struct Rule {
  const char* id;
  const char* name;
  const char* level;
  const char* short_description;
  const char* full_description;
  const char* help;
};

constexpr std::array<Rule, 5> kRules = {{
    {"IRMDC001", "DeletableLegacyCode", "warning", "Legacy-IR code that can be deleted",
     "A legacy-IR function, method, branch, registration or overload whose new-IR twin is "
     "verified by parity or test evidence, and that no kept code calls.",
     "Delete the legacy code; for a guarded branch, drop the guard and keep the new-IR part. The "
     "evidence is in the result's properties."},
    {"IRMDC002", "LegacyCodeTwinUntested", "note",
     "Legacy-IR code whose new-IR twin has no evidence",
     "Legacy-IR code with a new-IR twin, but no parity, test or coverage evidence says that the "
     "twin computes the same.",
     "Add evidence for the twin to the evidence manifest (a report of `ir-migrate parity "
     "--report`, a test, coverage); the legacy code can then be deleted."},
    {"IRMDC003", "LegacyCodeBlocked", "note", "Legacy-IR code that kept code still calls",
     "Legacy-IR code that would be dead once the legacy paths go, but a caller that stays still "
     "calls it.",
     "Migrate the caller named in the status to the new IR first."},
    {"IRMDC004", "LegacyCodeWithoutTwin", "note", "Legacy-IR code with no new-IR twin",
     "Legacy-IR code that nothing on the new-IR side replaces; it is kept.",
     "Write its new-IR twin, or establish that its feature is no longer needed."},
    {"IRMDC005", "LegacyCodeVerifiedKept", "note", "Legacy-IR code with a verified twin, kept",
     "Legacy-IR code whose new-IR twin is verified, kept for the reason the result gives.",
     "See the reason in the result's message."},
}};

size_t RuleIndex(const Json& finding) {
  if (render::Bool(finding, "deletable")) return 0;
  const std::string status_text = render::String(finding, "status");  // the view below needs it
  const std::string_view status = StatusClass(status_text);
  if (status == "blocked") return 2;
  if (status == "no-twin") return 3;
  if (status == "verified") return 4;
  return 1;  // twin-untested, and a status this renderer does not know: nothing is claimed
}

Json RulesJson() {
  Json rules = Json::array();
  for (const Rule& rule : kRules) {
    rules.push_back(Json{{"id", rule.id},
                         {"name", rule.name},
                         {"shortDescription", {{"text", rule.short_description}}},
                         {"fullDescription", {{"text", rule.full_description}}},
                         {"help", {{"text", rule.help}}},
                         {"defaultConfiguration", {{"level", rule.level}}}});
  }
  return rules;
}

// A relative path against SRCROOT; an absolute one as a file URI of its own.
Json ArtifactLocation(const std::string& file) {
  if (!file.empty() && file.front() == '/') return Json{{"uri", "file://" + render::UriPath(file)}};
  return Json{{"uri", render::UriPath(file)}, {"uriBaseId", "SRCROOT"}};
}

Json Region(int start_line, int start_column, int end_line, int end_column) {
  Json region = Json{{"startLine", start_line}};
  if (start_column > 0) region["startColumn"] = start_column;
  if (end_line >= start_line) region["endLine"] = end_line;
  if (start_column > 0 && end_column > 0) region["endColumn"] = end_column;
  return region;
}

// A physical location for a unit; its region only when it has a line.
Json PhysicalLocation(const std::string& file, const Json& range) {
  Json location = Json{{"artifactLocation", ArtifactLocation(file)}};
  const int start_line = render::Int(range, "start_line");
  if (start_line > 0) {
    location["region"] = Region(start_line, render::Int(range, "start_column"),
                                render::Int(range, "end_line"), render::Int(range, "end_column"));
  }
  return location;
}

std::string MessageText(const Json& finding) {
  const std::string kind = render::String(finding, "kind");
  const std::string legacy_kind = render::String(finding, "legacy_kind");
  std::string what;
  if (kind == "branch") {
    what = fmt::format("Legacy {} in", legacy_kind.empty() ? "branch" : legacy_kind);
  } else {
    what = "Legacy " + (kind.empty() ? std::string("code") : kind);
  }
  const std::string qualname = render::String(render::Member(finding, "unit"), "qualname");
  const Json& twin = render::Member(finding, "twin");
  std::string twin_text;
  if (twin.is_object() && kind == "branch") {
    // A branch's twin is the new-IR part of the same statement: where it is says more than its
    // function's name.
    const Json& range = render::Member(twin, "range");
    twin_text = fmt::format(" (new-IR part at lines {}-{})", render::Int(range, "start_line"),
                            render::Int(range, "end_line"));
  } else if (twin.is_object()) {
    twin_text = fmt::format(" (new-IR twin {})", render::String(twin, "qualname"));
  }
  const std::string status = render::String(finding, "status");
  std::string state;
  switch (RuleIndex(finding)) {
    case 0:
      state = "deletable";
      break;
    case 2:
      state = "blocked by " + status.substr(status.find(':') + 1);
      break;
    case 3:
      state = "no new-IR twin, kept";
      break;
    case 4:
      state = "verified, kept";
      break;
    default:
      state = "the twin has no evidence";
  }
  const std::string reason = render::String(finding, "reason");
  return fmt::format("{} {}{}: {}.{}", what, qualname, twin_text, state,
                     reason.empty() ? "" : " " + reason);
}

Json ResultJson(const Json& finding) {
  const size_t rule = RuleIndex(finding);
  const Json& unit = render::Member(finding, "unit");
  const std::string file = render::String(unit, "file");
  const std::string qualname = render::String(unit, "qualname");

  Json location = Json{{"physicalLocation", PhysicalLocation(file, render::Member(unit, "range"))}};
  if (!qualname.empty())
    location["logicalLocations"] = Json::array({{{"fullyQualifiedName", qualname}}});

  Json related = Json::array();
  const Json& twin = render::Member(finding, "twin");
  if (twin.is_object()) {
    related.push_back(
        Json{{"id", 1},
             {"physicalLocation",
              PhysicalLocation(render::String(twin, "file"), render::Member(twin, "range"))},
             {"message", {{"text", "New-IR twin " + render::String(twin, "qualname")}}}});
  }
  const Json& guard = render::Member(finding, "guard");
  if (guard.is_object() && render::Int(guard, "line") > 0) {
    related.push_back(Json{{"id", 2},
                           {"physicalLocation",
                            {{"artifactLocation", ArtifactLocation(file)},
                             {"region", {{"startLine", render::Int(guard, "line")}}}}},
                           {"message", {{"text", "Guard " + render::String(guard, "text")}}}});
  }

  Json evidence = Json::array();
  for (const Json& e : render::Elements(finding, "evidence")) {
    evidence.push_back(
        Json{{"kind", render::String(e, "kind")}, {"ref", render::String(e, "ref")}});
  }
  Json properties =
      Json{{"status", render::String(finding, "status")},
           {"deletable", render::Bool(finding, "deletable")},
           {"kind", render::String(finding, "kind")},
           {"legacyKind", render::String(finding, "legacy_kind")},
           {"language", render::String(finding, "language")},
           {"twin", twin.is_object() ? Json(render::String(twin, "qualname")) : Json(nullptr)},
           {"twinRule", render::String(finding, "twin_rule")},
           {"guard", guard.is_object() ? Json(render::String(guard, "text")) : Json(nullptr)},
           {"evidence", evidence}};

  Json result = Json{{"ruleId", kRules[rule].id},
                     {"ruleIndex", rule},
                     {"level", kRules[rule].level},
                     {"message", {{"text", MessageText(finding)}}},
                     {"locations", Json::array({location})}};
  if (!related.empty()) result["relatedLocations"] = related;
  const std::string id = render::String(finding, "id");
  if (!id.empty()) result["partialFingerprints"] = {{"irmDeadcodeId/v1", id}};
  result["properties"] = properties;
  return result;
}

Json NotificationJson(const Json& problem) {
  Json notification =
      Json{{"level", "error"}, {"message", {{"text", render::String(problem, "message")}}}};
  const std::string file = render::String(problem, "file");
  if (!file.empty()) {
    Json location = Json{{"artifactLocation", ArtifactLocation(file)}};
    const int line = render::Int(problem, "line");
    if (line > 0) {
      location["region"] = Region(line, render::Int(problem, "column"), 0, 0);
    }
    notification["locations"] = Json::array({{{"physicalLocation", location}}});
  }
  return notification;
}

// SRCROOT: a file URI for an absolute root; a relative root (as the reports for the self-test
// corpus use) is only described, since SARIF wants an absolute URI there.
Json SourceRoot(const std::string& root) {
  if (!root.empty() && root.front() == '/') {
    std::string uri = "file://" + render::UriPath(root);
    if (uri.back() != '/') uri += '/';
    return Json{{"uri", uri}};
  }
  return Json{{"description",
               {{"text", root.empty() ? "The directory ir-deadcode analysed."
                                      : "The directory ir-deadcode analysed: " + root}}}};
}

}  // namespace

Json RenderSarif(const Json& report) {
  Json driver = Json{{"name", "ir-deadcode"}};
  const std::string version = render::String(report, "tool_version");
  if (!version.empty()) driver["version"] = version;
  driver["informationUri"] = kDeadcodeInformationUri;
  driver["rules"] = RulesJson();

  Json notifications = Json::array();
  for (const Json& problem : render::Elements(report, "problems")) {
    notifications.push_back(NotificationJson(problem));
  }
  Json results = Json::array();
  for (const Json& finding : render::Elements(report, "findings")) {
    results.push_back(ResultJson(finding));
  }
  Json run = Json{{"tool", {{"driver", driver}}},
                  {"originalUriBaseIds", {{"SRCROOT", SourceRoot(render::String(report, "root"))}}},
                  {"invocations", Json::array({{{"executionSuccessful", true},
                                                {"toolExecutionNotifications", notifications}}})},
                  {"results", results},
                  {"properties",
                   {{"pythonFiles", render::Int(report, "python_files")},
                    {"cppTranslationUnits", render::Int(report, "cpp_translation_units")}}}};
  return Json{{"$schema", kSarifSchemaUri}, {"version", "2.1.0"}, {"runs", Json::array({run})}};
}

}  // namespace irm::deadcode
