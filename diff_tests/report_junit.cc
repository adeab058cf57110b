// The parity report as JUnit XML for CI runners: one test suite, one test case per rank and
// checked group (fetches, parameters, intermediates); a group with a mismatch fails with the
// first differing tensors in its message. A bundle's report adds a "communication" case per rank
// that fails with the first differing call. A distributed-vs-serial report's tensors reassembled
// over the ranks are the "reassembled" class; a replica's own finding stays with its rank.
#include <map>
#include <set>

#include <fmt/format.h>

#include "diff_tests/parity_report.h"

namespace irm::diff {
namespace {

// "rank0"; "reassembled" for what a distributed-vs-serial check assembled over the ranks.
std::string RankClass(int rank) {
  return rank == kAllRanks ? std::string("reassembled") : fmt::format("rank{}", rank);
}

}  // namespace

std::string RenderJunit(const ParityReport& report, const std::string& suite_name) {
  std::set<int> ranks;
  for (const ComparedTensor& t : report.tensors) ranks.insert(t.rank);
  std::map<int, const CommDiff*> comm;
  for (const CommDiff& c : report.communication) {
    ranks.insert(c.rank);
    comm[c.rank] = &c;
  }
  if (ranks.empty()) ranks.insert(report.against_serial ? kAllRanks : 0);
  struct Case {
    int compared = 0;
    std::vector<const ComparedTensor*> failures;
  };
  std::map<std::pair<int, int>, Case> cases;  // (rank, group)
  for (const ComparedTensor& t : report.tensors) {
    Case& c = cases[{t.rank, static_cast<int>(t.group)}];
    if (!t.compared) continue;
    ++c.compared;
    if (!t.comparison.pass) c.failures.push_back(&t);
  }
  std::string body;
  int tests = 0, failures = 0;
  for (int rank : ranks) {
    for (TensorGroup g : kEveryGroup) {
      // Distributed against serial compares no intermediates: the programs differ.
      if (report.against_serial && g == TensorGroup::kIntermediate) continue;
      const Case& c = cases[{rank, static_cast<int>(g)}];
      ++tests;
      body += fmt::format("    <testcase classname=\"{}.{}\" name=\"{}\">\n", XmlEscape(suite_name),
                          RankClass(rank), TensorGroupName(g));
      if (!c.failures.empty()) {
        ++failures;
        std::string details;
        for (size_t i = 0; i < c.failures.size() && i < 20; ++i) {
          const ComparedTensor& t = *c.failures[i];
          details += fmt::format("step {} micro-batch {} {}: {}\n", t.step, t.micro_batch, t.name,
                                 t.comparison.reason);
        }
        body += fmt::format("      <failure message=\"{} of {} {} differ\">{}</failure>\n",
                            c.failures.size(), c.compared, TensorGroupName(g), XmlEscape(details));
      } else {
        body +=
            fmt::format("      <system-out>{} compared, all equal under the {} tier</system-out>\n",
                        c.compared, TierName(report.tier));
      }
      body += "    </testcase>\n";
    }
    if (auto it = comm.find(rank); it != comm.end()) {
      const CommDiff& c = *it->second;
      ++tests;
      body += fmt::format("    <testcase classname=\"{}.rank{}\" name=\"communication\">\n",
                          XmlEscape(suite_name), rank);
      if (!c.equal) {
        ++failures;
        body += fmt::format(
            "      <failure message=\"call {} differs\">legacy: {}\nnew IR: {}\n</failure>\n",
            c.index, XmlEscape(c.old_record), XmlEscape(c.new_record));
      } else {
        body += fmt::format("      <system-out>{} calls, the same on both sides</system-out>\n",
                            c.old_records);
      }
      body += "    </testcase>\n";
    }
  }
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites tests=\"{0}\" failures=\"{1}\">\n"
      "  <testsuite name=\"{2}\" tests=\"{0}\" failures=\"{1}\" errors=\"0\">\n{3}"
      "  </testsuite>\n</testsuites>\n",
      tests, failures, XmlEscape(suite_name), body);
}

std::string XmlEscape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      case '\n':
        out += "&#10;";
        break;
      case '\t':
      case '\r':
        out += c;
        break;
      default:
        out += static_cast<unsigned char>(c) < 0x20 ? '?' : c;
    }
  }
  return out;
}

}  // namespace irm::diff
