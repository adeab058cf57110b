// Splitting test files into pieces and matching expected diagnostics (verify_diagnostics.h).
#include "tools/verify_diagnostics.h"

#include <fmt/format.h>

#include <regex>

namespace irm::tools {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// The lines of `text`, without their newlines.
std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    lines.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

// One step of a verifier location's path ("in block B of region R of op I (name)").
struct PathStep {
  size_t op = 0;
  size_t region = 0;
  size_t block = 0;
};

// The steps of `detail` from the top block down; false when it is not such a path (or elided).
bool ParsePath(const std::string& detail, std::vector<PathStep>* steps) {
  static const std::regex kStep(R"(in (?:block (\d+) of )?region (\d+) of op (\d+) \([^)]*\)\s*)");
  std::smatch m;
  std::string rest = detail;
  while (!rest.empty()) {
    if (!std::regex_search(rest, m, kStep, std::regex_constants::match_continuous)) return false;
    PathStep step;
    step.block = m[1].matched ? std::stoul(m[1].str()) : 0;
    step.region = std::stoul(m[2].str());
    step.op = std::stoul(m[3].str());
    steps->insert(steps->begin(), step);  // innermost first in the text
    rest = m.suffix().str();
  }
  return true;
}

const newir::Operation* NthOp(const newir::Block& block, size_t n) {
  const newir::Operation* op = block.front();
  for (size_t i = 0; op != nullptr && i < n; ++i) op = op->next();
  return op;
}

}  // namespace

std::vector<InputPiece> SplitInputFile(std::string_view text) {
  std::vector<InputPiece> pieces;
  InputPiece current;
  int line = 1;
  for (std::string_view l : Lines(text)) {
    if (Trim(l) == "// -----") {
      pieces.push_back(std::move(current));
      current = InputPiece{std::string(static_cast<size_t>(line), '\n'), line + 1};
    } else {
      current.text += l;
      current.text += '\n';
    }
    ++line;
  }
  pieces.push_back(std::move(current));
  return pieces;
}

StatusOr<std::vector<ExpectedDiagnostic>> ParseExpectedDiagnostics(std::string_view text,
                                                                   const std::string& file) {
  static const std::regex kAnnotation(
      R"(//\s*expected-(error|warning)\s*(?:@([+-]\d+))?\s*(?:\{\{(.*?)\}\})?)");
  std::vector<ExpectedDiagnostic> expected;
  int line = 0;
  for (std::string_view l : Lines(text)) {
    ++line;
    const std::string s(l);
    for (auto it = std::sregex_iterator(s.begin(), s.end(), kAnnotation);
         it != std::sregex_iterator(); ++it) {
      const std::smatch& m = *it;
      const int column = static_cast<int>(m.position(0)) + 1;
      if (!m[3].matched) {
        return Status(StatusCode::kParseError, Location::Text(file, line, column),
                      "expected '{{message}}' after expected-" + m[1].str());
      }
      ExpectedDiagnostic e;
      e.severity = m[1].str() == "error" ? Severity::kError : Severity::kWarning;
      e.annotation_line = line;
      e.line = line + (m[2].matched ? std::stoi(m[2].str()) : 0);
      e.message = m[3].str();
      if (e.line < 1) {
        return Status(
            StatusCode::kParseError, Location::Text(file, line, column),
            fmt::format("expected-{} points at line {}, before the file", m[1].str(), e.line));
      }
      expected.push_back(std::move(e));
    }
  }
  return expected;
}

int LineOfDiagnostic(const Diagnostic& d, const newir::Program* program,
                     const newir::OpLines& op_lines) {
  const Location& loc = d.location;
  if (loc.line > 0) return loc.line;
  if (program == nullptr || loc.op < 0) return 0;
  const newir::Operation* op = nullptr;
  if (loc.op_type == "builtin.module" && loc.detail.empty()) {
    op = &program->module();
  } else {
    std::vector<PathStep> steps;
    if (!ParsePath(loc.detail, &steps)) return 0;
    const newir::Block* block = &program->block();
    for (const PathStep& step : steps) {
      const newir::Operation* owner = NthOp(*block, step.op);
      if (owner == nullptr || step.region >= owner->num_regions() ||
          step.block >= owner->region(step.region).num_blocks()) {
        return 0;
      }
      block = &owner->region(step.region).block(step.block);
    }
    op = NthOp(*block, static_cast<size_t>(loc.op));
  }
  const auto it = op != nullptr ? op_lines.find(op) : op_lines.end();
  return it != op_lines.end() ? it->second : 0;
}

bool MatchDiagnostics(const std::vector<ExpectedDiagnostic>& expected,
                      const std::vector<ProducedDiagnostic>& produced, const std::string& file,
                      std::ostream& err) {
  std::vector<bool> used(expected.size(), false);
  bool ok = true;
  for (const ProducedDiagnostic& p : produced) {
    const Diagnostic& d = p.diagnostic;
    bool matched = false;
    for (size_t i = 0; i < expected.size() && !matched; ++i) {
      const ExpectedDiagnostic& e = expected[i];
      if (used[i] || e.line != p.line || e.severity != d.severity) continue;
      if (d.message.find(e.message) == std::string::npos) continue;
      used[i] = matched = true;
    }
    if (matched) continue;
    ok = false;
    const std::string where = p.line > 0 ? fmt::format("{}:{}", file, p.line) : d.location.Render();
    err << fmt::format("{}: error: unexpected {}: {}\n", where, SeverityName(d.severity),
                       d.message);
    if (p.line == 0) err << "  note: its op's line is unknown: " << d.Render();
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    if (used[i]) continue;
    ok = false;
    const ExpectedDiagnostic& e = expected[i];
    err << fmt::format("{}:{}: error: expected {} \"{}\" at line {} was not produced\n", file,
                       e.annotation_line, SeverityName(e.severity), e.message, e.line);
  }
  return ok;
}

}  // namespace irm::tools
