// Reading the evidence manifest and checking the parity reports it names.
#include "tools/deadcode/evidence.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <string_view>
#include <tuple>

#include "common/file_io.h"
#include "common/json_depth.h"
#include "tools/deadcode/json_read.h"

namespace irm::deadcode {
namespace {

bool IdentifierChar(char c, bool first) {
  const auto u = static_cast<unsigned char>(c);
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || u >= 0x80 ||
         (!first && c >= '0' && c <= '9');
}

bool Identifier(std::string_view s) {
  if (s.empty() || !IdentifierChar(s[0], true)) return false;
  for (char c : s.substr(1)) {
    if (!IdentifierChar(c, false)) return false;
  }
  return true;
}

// pkg.mod.Class.method, outer.<locals>.inner
bool PythonQualname(std::string_view name) {
  size_t start = 0;
  while (true) {
    const size_t dot = name.find('.', start);
    const std::string_view part =
        name.substr(start, dot == std::string_view::npos ? dot : dot - start);
    const bool marker = part.size() > 2 && part.front() == '<' && part.back() == '>' &&
                        Identifier(part.substr(1, part.size() - 2));
    if (!Identifier(part) && !marker) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

// ns::Class::method, ::pir::Foo<T>::Run, Foo::~Foo, Foo::operator()
bool CppQualname(std::string_view name) {
  if (name.substr(0, 2) == "::") name.remove_prefix(2);
  std::vector<std::string_view> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '<') ++depth;
    if (name[i] == '>') --depth;
    if (depth == 0 && name.compare(i, 2, "::") == 0) {
      parts.push_back(name.substr(start, i - start));
      start = i + 2;
      ++i;
    }
  }
  parts.push_back(name.substr(start));
  for (std::string_view part : parts) {
    if (part.substr(0, 8) == "operator" && part.size() > 8) continue;
    if (!part.empty() && part.front() == '~') part.remove_prefix(1);
    const size_t angle = part.find('<');
    if (angle != std::string_view::npos) {
      if (part.back() != '>') return false;
      part = part.substr(0, angle);
    }
    if (!Identifier(part)) return false;
  }
  return true;
}

Status ReadQualname(const JsonReader& in, const Json& object, const std::string& pointer,
                    const char* key, std::string* out) {
  IRM_RETURN_IF_ERROR(in.Name(object, pointer, key, out));
  // The names the report gives units: qualnames, C++ overloads with their parameter types
  // ("ir::Run(const pir::Program &)"), registrations ("REGISTER_IR_PASS(fuse_gemm)").
  std::string_view name = *out;
  std::string_view parameters;
  const size_t open = name.find('(');
  const bool parenthesized = open != std::string_view::npos && name.back() == ')';
  if (parenthesized) {
    parameters = name.substr(open + 1, name.size() - open - 2);
    name = name.substr(0, open);
  }
  const bool registration = !parameters.empty() && Identifier(name) && Identifier(parameters);
  const bool ok = registration || (name.find("::") != std::string_view::npos
                                       ? CppQualname(name)
                                       : !parenthesized && PythonQualname(name));
  if (!ok) {
    return in.Error(
        JsonReader::Child(pointer, key),
        fmt::format("'{}' is neither a Python qualname (pkg.mod.Class.method), a C++ qualified "
                    "name (ns::Class::method, with its parameter types for an overload) nor a "
                    "registration (MACRO(name))",
                    *out));
  }
  return Status::Ok();
}

// What a parity report shows: why it proves nothing (`problem`), else the twins it names in
// `covers` (`covers_problem` when that member is missing or malformed).
struct ParityReading {
  std::string problem;
  std::string covers_problem;
  std::vector<std::string> covers;
};

ParityReading ReadParityReport(const std::string& manifest_dir, const std::string& ref) {
  ParityReading reading;
  const std::filesystem::path path = std::filesystem::path(ref).is_absolute()
                                         ? std::filesystem::path(ref)
                                         : std::filesystem::path(manifest_dir) / ref;
  StatusOr<std::string> text = ReadFile(path.string());
  if (!text.ok()) {
    reading.problem =
        fmt::format("cannot read the parity report '{}' ({})", ref, text.status().message());
    return reading;
  }
  // A parity report nests a few levels; a deeper one is not one (and would recurse deeply).
  if (FindJsonTooDeep(*text, kMaxSmallJsonDepth)) {
    reading.problem =
        fmt::format("the parity report '{}' nests deeper than {} levels", ref, kMaxSmallJsonDepth);
    return reading;
  }
  const nlohmann::json report = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (report.is_discarded()) {
    reading.problem = fmt::format("the parity report '{}' is not JSON", ref);
    return reading;
  }
  if (!report.is_object() ||
      report.value("format", nlohmann::json()) != "ir-migrate-parity-report" ||
      report.value("version", nlohmann::json()) != 1) {
    reading.problem = fmt::format(
        "'{}' is not a parity report (format \"ir-migrate-parity-report\", version 1)", ref);
    return reading;
  }
  const nlohmann::json verdict = report.value("verdict", nlohmann::json());
  if (verdict == "mismatch") {
    reading.problem = fmt::format("the parity report '{}' says mismatch", ref);
    return reading;
  }
  if (verdict != "parity") {
    reading.problem =
        fmt::format("the parity report '{}' has no verdict \"parity\" or \"mismatch\"", ref);
    return reading;
  }
  // A verdict that its own counts contradict (a hand-edited report) proves nothing.
  const nlohmann::json summary = report.value("summary", nlohmann::json::object());
  const auto count = [&](const char* key) -> long long {
    const nlohmann::json value =
        summary.is_object() ? summary.value(key, nlohmann::json()) : nullptr;
    return value.is_number_integer() ? value.get<long long>() : -1;
  };
  const long long compared = count("compared");
  const long long mismatched = count("mismatched");
  const long long communication = count("communication_mismatched");
  if (compared < 0 || mismatched < 0 || communication < 0) {
    reading.problem = fmt::format("the parity report '{}' has no summary of what it compared", ref);
    return reading;
  }
  if (mismatched > 0 || communication > 0) {
    reading.problem = fmt::format(
        "the parity report '{}' says parity but counts {} mismatched tensors and {} ranks whose "
        "communication differs",
        ref, mismatched, communication);
    return reading;
  }
  if (compared == 0) {
    reading.problem = fmt::format("the parity report '{}' compares nothing", ref);
    return reading;
  }
  // What the run exercised: the twins (names as this report gives them) whose code it ran. A
  // report that passes proves nothing about code it did not run, so parity for one schedule
  // never verifies another's twin.
  const auto covers = report.find("covers");
  if (covers == report.end()) {
    reading.covers_problem =
        fmt::format("the parity report '{}' names no twin (it has no \"covers\")", ref);
    return reading;
  }
  bool names = covers->is_array();
  if (names) {
    for (const nlohmann::json& name : *covers) {
      names &= name.is_string() && !name.get<std::string>().empty();
      if (names) reading.covers.push_back(name.get<std::string>());
    }
  }
  if (!names) {
    reading.covers.clear();
    reading.covers_problem = fmt::format(
        "the parity report '{}' has a \"covers\" that is not a list of twin names", ref);
  }
  return reading;
}

}  // namespace

std::vector<Evidence> EvidenceManifest::Lookup(const std::string& legacy,
                                               const std::string& twin) const {
  std::vector<Evidence> found;
  for (const EvidenceEntry& entry : entries) {
    if (entry.twin != twin) continue;
    if (!entry.legacy.empty() && (legacy.empty() || entry.legacy != legacy)) continue;
    for (const Evidence& e : entry.evidence) {
      const bool seen = std::any_of(found.begin(), found.end(), [&](const Evidence& f) {
        return std::tie(f.kind, f.ref, f.detail) == std::tie(e.kind, e.ref, e.detail);
      });
      if (!seen) found.push_back(e);
    }
  }
  return found;
}

StatusOr<EvidenceManifest> LoadEvidence(const std::string& path) {
  IRM_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  IRM_RETURN_IF_ERROR(CheckJsonDepth(text, path, kMaxSmallJsonDepth));
  const Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return Status(StatusCode::kParseError, Location::File(path), "evidence: not valid JSON");
  }
  const JsonReader in(path);
  IRM_RETURN_IF_ERROR(in.Object(doc, "", {"schema", "entries"}));
  std::string schema;
  IRM_RETURN_IF_ERROR(in.String(doc, "", "schema", &schema));
  if (schema != kEvidenceSchema) {
    return in.Error("/schema", fmt::format("'{}' is not \"{}\"", schema, kEvidenceSchema));
  }
  const Json* entries = nullptr;
  IRM_RETURN_IF_ERROR(in.Array(doc, "", "entries", &entries));

  EvidenceManifest manifest;
  manifest.path = path;
  const std::string dir = std::filesystem::path(path).parent_path().string();
  for (size_t i = 0; i < entries->size(); ++i) {
    const std::string at = JsonReader::Child("/entries", i);
    const Json& value = (*entries)[i];
    EvidenceEntry entry;
    entry.pointer = at;
    IRM_RETURN_IF_ERROR(in.Object(value, at, {"twin", "evidence"}, {"legacy"}));
    IRM_RETURN_IF_ERROR(ReadQualname(in, value, at, "twin", &entry.twin));
    if (value.contains("legacy")) {
      IRM_RETURN_IF_ERROR(ReadQualname(in, value, at, "legacy", &entry.legacy));
      if (entry.legacy == entry.twin) {
        return in.Error(at, fmt::format("legacy and twin are the same unit '{}'", entry.twin));
      }
    }
    const Json* evidence = nullptr;
    IRM_RETURN_IF_ERROR(in.Array(value, at, "evidence", &evidence));
    if (evidence->empty())
      return in.Error(at + "/evidence", "an entry names at least one evidence");
    for (size_t k = 0; k < evidence->size(); ++k) {
      const std::string e_at = JsonReader::Child(at + "/evidence", k);
      const Json& e = (*evidence)[k];
      Evidence item;
      IRM_RETURN_IF_ERROR(in.Object(e, e_at, {"kind", "ref"}, {"detail"}));
      IRM_RETURN_IF_ERROR(in.String(e, e_at, "kind", &item.kind));
      if (item.kind != "parity" && item.kind != "test" && item.kind != "coverage" &&
          item.kind != "manual") {
        return in.Error(e_at + "/kind",
                        fmt::format("'{}' is not an evidence kind (parity, test, coverage, manual)",
                                    item.kind));
      }
      IRM_RETURN_IF_ERROR(in.Name(e, e_at, "ref", &item.ref));
      if (e.contains("detail")) IRM_RETURN_IF_ERROR(in.String(e, e_at, "detail", &item.detail));
      if (item.kind == "manual" && item.detail.empty()) {
        return in.Error(e_at, "manual evidence says in its detail who checked what");
      }
      if (item.kind == "parity") {
        const ParityReading reading = ReadParityReport(dir, item.ref);
        if (!reading.problem.empty()) {
          manifest.problems.push_back(
              {path, 0, 0,
               fmt::format("evidence {}/ref: {}; the evidence does not count", e_at,
                           reading.problem)});
          continue;
        }
        // Bound to the twin: a passing report counts only for a twin it says it covers.
        const bool covered = std::find(reading.covers.begin(), reading.covers.end(), entry.twin) !=
                             reading.covers.end();
        if (!covered) {
          const std::string why =
              !reading.covers_problem.empty()
                  ? reading.covers_problem
                  : fmt::format("the parity report '{}' covers {}, not {}", item.ref,
                                fmt::join(reading.covers, ", "), entry.twin);
          manifest.problems.push_back(
              {path, 0, 0,
               fmt::format("evidence {}/ref: {}; unrelated evidence, not used", e_at, why)});
          entry.unrelated.push_back(std::move(item));
          continue;
        }
      }
      entry.evidence.push_back(std::move(item));
    }
    manifest.entries.push_back(std::move(entry));
  }
  return manifest;
}

}  // namespace irm::deadcode
