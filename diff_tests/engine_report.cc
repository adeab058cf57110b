// The Engine flow's reports: Markdown, JSON and JUnit of a flow's pairs (engine_flow.h).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <string>

#include "diff_tests/engine_flow.h"
#include "diff_tests/parity_report.h"

namespace irm::diff {
namespace {

// Markdown headings of a pair's report one level down, under the pair's section.
std::string Demoted(const std::string& markdown) {
  std::string out;
  size_t start = 0;
  while (start < markdown.size()) {
    size_t end = markdown.find('\n', start);
    if (end == std::string::npos) end = markdown.size() - 1;
    if (markdown[start] == '#') out += "#";
    out.append(markdown, start, end - start + 1);
    start = end + 1;
  }
  return out;
}

}  // namespace

std::string RenderEngineMarkdown(const EngineResult& result) {
  std::string out = fmt::format(
      "# Engine flow: {}\n\n--ir {}, strategy dp {} x mp {} x pp {}{}, {} steps, seed {}, "
      "device {}, backend {}\n\n",
      result.stem, EngineIrName(result.ir), result.strategy.dp_degree, result.strategy.mp_degree,
      result.strategy.pp_degree,
      result.strategy.gradient_merge.enable
          ? fmt::format(", gradient merge k={}", result.strategy.gradient_merge.k_steps)
          : "",
      result.steps, result.seed, result.device, result.backend);
  out += "| pair | verdict | tier | compared | mismatched | first failure |\n";
  out += "|---|---|---|---|---|---|\n";
  for (const EnginePair& pair : result.pairs) {
    if (pair.verdict == EnginePair::Verdict::kSkipped) {
      out += fmt::format("| {} | skipped | | | | {} |\n", pair.name, pair.skipped_reason);
      continue;
    }
    out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", pair.name,
                       EngineVerdictName(pair.verdict), TierName(pair.report.tier),
                       pair.report.Compared(), pair.report.Mismatched(), pair.first_failure);
  }
  for (const EnginePair& pair : result.pairs) {
    out += fmt::format("\n## {}: {}\n\n", pair.name, EngineVerdictName(pair.verdict));
    if (pair.verdict == EnginePair::Verdict::kSkipped) {
      out += pair.skipped_reason + "\n";
      continue;
    }
    if (pair.name == "legacy-pir") {
      out += pair.same_op_order
                 ? "Every rank's programs have the same ops in the same order: exact tier.\n\n"
                 : fmt::format(
                       "The op orders differ (first: {}): reordered tier. A is the legacy "
                       "passes' bundle translated, B the new IR's.\n\n```\n{}```\n\n",
                       pair.first_op_difference, pair.op_differences);
    }
    out += Demoted(RenderMarkdown(pair.report));
  }
  return out;
}

std::string RenderEngineJson(const EngineResult& result) {
  nlohmann::json pairs = nlohmann::json::array();
  for (const EnginePair& pair : result.pairs) {
    nlohmann::json entry = {{"name", pair.name}, {"verdict", EngineVerdictName(pair.verdict)}};
    if (pair.verdict == EnginePair::Verdict::kSkipped) {
      entry["skipped_reason"] = pair.skipped_reason;
    } else {
      entry["report"] = nlohmann::json::parse(RenderJson(pair.report));
      entry["first_failure"] = pair.first_failure;
    }
    if (pair.name == "legacy-pir") {
      entry["same_op_order"] = pair.same_op_order;
      entry["first_op_difference"] = pair.first_op_difference;
    }
    pairs.push_back(std::move(entry));
  }
  const nlohmann::json out = {
      {"stem", result.stem},
      {"ir", EngineIrName(result.ir)},
      {"strategy", oldir::passes::StrategyToJson(result.strategy)},
      {"steps", result.steps},
      {"seed", result.seed},
      {"device", result.device},
      {"backend", result.backend},
      {"parity", result.parity()},
      {"pairs", std::move(pairs)},
  };
  return out.dump(2) + "\n";
}

std::string RenderEngineJunit(const EngineResult& result) {
  std::string suites;
  int tests = 0, failures = 0, skipped = 0;
  for (const EnginePair& pair : result.pairs) {
    const std::string suite = fmt::format("engine.{}.{}", result.stem, pair.name);
    if (pair.verdict == EnginePair::Verdict::kSkipped) {
      ++tests;
      ++skipped;
      suites += fmt::format(
          "  <testsuite name=\"{0}\" tests=\"1\" failures=\"0\" errors=\"0\" skipped=\"1\">\n"
          "    <testcase classname=\"{0}\" name=\"{1}\">\n"
          "      <skipped message=\"{2}\"/>\n    </testcase>\n  </testsuite>\n",
          XmlEscape(suite), XmlEscape(pair.name), XmlEscape(pair.skipped_reason));
      continue;
    }
    // The pair's own document, unwrapped: its one testsuite joins the others.
    const std::string document = RenderJunit(pair.report, suite);
    const size_t begin = document.find("  <testsuite ");
    const size_t end = document.rfind("</testsuites>");
    if (begin == std::string::npos || end == std::string::npos) continue;
    const std::string body = document.substr(begin, end - begin);
    for (size_t at = body.find("<testcase "); at != std::string::npos;
         at = body.find("<testcase ", at + 1)) {
      ++tests;
    }
    for (size_t at = body.find("<failure "); at != std::string::npos;
         at = body.find("<failure ", at + 1)) {
      ++failures;
    }
    suites += body;
  }
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<testsuites name=\"engine.{}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\">\n{}"
      "</testsuites>\n",
      XmlEscape(result.stem), tests, failures, skipped, suites);
}

}  // namespace irm::diff
