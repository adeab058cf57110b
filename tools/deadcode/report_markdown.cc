// Rendering the report document as Markdown.
#include "tools/deadcode/report_markdown.h"

#include <fmt/format.h>

#include <map>
#include <vector>

#include "tools/deadcode/report_render.h"

namespace irm::deadcode {

namespace markdown {

std::string CodeCell(std::string_view text) {
  if (text.empty()) return "";
  size_t longest = 0;
  size_t run = 0;
  std::string body;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
    if (c == '|') {
      body += "\\|";
    } else if (c == '\n' || c == '\r') {
      body += ' ';
    } else {
      body += c;
    }
  }
  const std::string fence(longest + 1, '`');
  // A span that starts or ends with a backtick needs a space so its fence reads as one.
  const char* pad = text.front() == '`' || text.back() == '`' ? " " : "";
  return fence + pad + body + pad + fence;
}

std::string TextCell(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '\\':
      case '`':
      case '*':
      case '_':
      case '[':
      case ']':
      case '<':
      case '>':
      case '|':
        out += '\\';
        out += c;
        break;
      case '\n':
      case '\r':
        out += ' ';
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace markdown

namespace {

using markdown::CodeCell;
using markdown::TextCell;

std::string Plural(int n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

// "12-30" linking to file#L12-L30; a single line as "12" and #L12.
std::string LinesLink(const Json& unit) {
  const Json& range = render::Member(unit, "range");
  const int start = render::Int(range, "start_line");
  const int end = render::Int(range, "end_line");
  const std::string file = render::UriPath(render::String(unit, "file"));
  if (end <= start) return fmt::format("[{}]({}#L{})", start, file, start);
  return fmt::format("[{}-{}]({}#L{}-L{})", start, end, file, start, end);
}

// A unit's qualname as code linking to where it is written.
std::string UnitLink(const Json& unit) {
  const Json& range = render::Member(unit, "range");
  const int start = render::Int(range, "start_line");
  const int end = render::Int(range, "end_line");
  const std::string file = render::UriPath(render::String(unit, "file"));
  const std::string anchor =
      end <= start ? fmt::format("L{}", start) : fmt::format("L{}-L{}", start, end);
  return fmt::format("[{}]({}#{})", CodeCell(render::String(unit, "qualname")), file, anchor);
}

std::string KindText(const Json& finding) {
  const std::string legacy_kind = render::String(finding, "legacy_kind");
  const std::string kind = render::String(finding, "kind");
  return legacy_kind.empty() ? kind : kind + ": " + legacy_kind;
}

std::string GuardCell(const Json& guard) {
  if (!guard.is_object()) return "";
  const int line = render::Int(guard, "line");
  const std::string shape = TextCell(render::String(guard, "shape"));
  return fmt::format("{} ({}{})", CodeCell(render::String(guard, "text")),
                     line > 0 ? fmt::format("line {}, ", line) : "", shape);
}

std::string EvidenceCell(const Json& finding) {
  std::string out;
  for (const Json& e : render::Elements(finding, "evidence")) {
    if (!out.empty()) out += "; ";
    out += TextCell(render::String(e, "kind")) + " " + CodeCell(render::String(e, "ref"));
    const std::string detail = render::String(e, "detail");
    if (!detail.empty()) out += " (" + TextCell(detail) + ")";
  }
  return out;
}

void Summary(const Json& report, std::string* out) {
  const Json& summary = render::Member(report, "summary");
  const Json& by_status = render::Member(summary, "by_status");
  const int findings = render::Int(summary, "findings");
  *out += "## Summary\n\n| Status | Findings |\n|---|---:|\n";
  for (const char* status : {"verified", "twin-untested", "blocked", "no-twin"}) {
    *out += fmt::format("| {} | {} |\n", status, render::Int(by_status, status));
  }
  *out += fmt::format("| **all** | **{}** |\n\n", findings);
  *out += fmt::format("**{}** of {} can be deleted. {}.\n\n", render::Int(summary, "deletable"),
                      Plural(findings, "finding", "findings"),
                      Plural(render::Int(summary, "problems"), "problem", "problems"));
}

void Deletable(const Json& findings, std::string* out) {
  *out += "## Deletable\n\n";
  bool any = false;
  for (const Json& f : findings) {
    if (!render::Bool(f, "deletable")) continue;
    any = true;
    *out += fmt::format("- {} ({})", UnitLink(render::Member(f, "unit")), TextCell(KindText(f)));
    const Json& twin = render::Member(f, "twin");
    if (twin.is_object()) *out += ", twin " + UnitLink(twin);
    *out += "\n";
  }
  *out += any ? "\n" : "None.\n\n";
}

void Files(const Json& findings, std::string* out) {
  *out += "## Findings by file\n\n";
  std::map<std::string, std::vector<const Json*>> by_file;
  for (const Json& f : findings) {
    by_file[render::String(render::Member(f, "unit"), "file")].push_back(&f);
  }
  if (by_file.empty()) *out += "None.\n\n";
  for (const auto& [file, list] : by_file) {
    *out += fmt::format("### {}\n\n", CodeCell(file));
    *out +=
        "| Lines | Kind | Unit | Twin | Guard | Status | Deletable | Evidence | Reason |\n"
        "|---|---|---|---|---|---|---|---|---|\n";
    for (const Json* f : list) {
      const Json& unit = render::Member(*f, "unit");
      const Json& twin = render::Member(*f, "twin");
      *out += fmt::format(
          "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", LinesLink(unit),
          TextCell(KindText(*f)), CodeCell(render::String(unit, "qualname")),
          twin.is_object() ? UnitLink(twin) : "", GuardCell(render::Member(*f, "guard")),
          CodeCell(render::String(*f, "status")), render::Bool(*f, "deletable") ? "yes" : "no",
          EvidenceCell(*f), TextCell(render::String(*f, "reason")));
    }
    *out += "\n";
  }
}

void Problems(const Json& problems, std::string* out) {
  *out += "## Problems\n\n";
  if (problems.empty()) {
    *out += "None.\n";
    return;
  }
  *out += "| File | Line | Message |\n|---|---:|---|\n";
  for (const Json& p : problems) {
    const int line = render::Int(p, "line");
    const int column = render::Int(p, "column");
    std::string where;
    if (line > 0) where = column > 0 ? fmt::format("{}:{}", line, column) : std::to_string(line);
    *out += fmt::format("| {} | {} | {} |\n", CodeCell(render::String(p, "file")), where,
                        TextCell(render::String(p, "message")));
  }
}

}  // namespace

std::string RenderMarkdown(const Json& report) {
  std::string out = "# ir-deadcode report\n\n";
  const std::string version = render::String(report, "tool_version");
  const std::string root = render::String(report, "root");
  out += fmt::format("ir-deadcode{}{}: {}, {}.\n\n", version.empty() ? "" : " " + TextCell(version),
                     root.empty() ? "" : " over " + CodeCell(root),
                     Plural(render::Int(report, "python_files"), "Python file", "Python files"),
                     Plural(render::Int(report, "cpp_translation_units"), "C++ translation unit",
                            "C++ translation units"));
  Summary(report, &out);
  const Json& findings = render::Elements(report, "findings");
  Deletable(findings, &out);
  Files(findings, &out);
  Problems(render::Elements(report, "problems"), &out);
  return out;
}

}  // namespace irm::deadcode
