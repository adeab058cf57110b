// A case of the parity suite (docs/suite.md), read from one JSON file of diff_tests/cases/: the
// model and its size, the optimizer, the legacy passes' strategy (Paddle's field names), the
// pipeline's job-list form, which comparisons to run (the distributed bundle against its serial
// program, and against its own translation), the backend and device, steps, rows per replica, the
// tier expected of the serial comparison, the point-to-point model the ranks' sends follow, tags,
// and `covers` — the qualified names of the Paddle
// legacy functions and new-IR twins the case exercises, for which a passing case is evidence.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "diff_tests/corpus/model_bundle.h"
#include "diff_tests/tensor_compare.h"
#include "schedules/p2p_model.h"

namespace irm::diff {

// What a case compares: the distributed legacy bundle against the serial one-rank bundle
// (serial_parity.h), or against its translation to the new IR (bundle_parity.h, exact tier).
enum class SuiteComparison { kSerial, kTranslated };
// "serial", "translated".
const char* SuiteComparisonName(SuiteComparison comparison);

struct SuiteCase {
  std::string name;   // the file's stem
  std::string file;   // the path it was read from
  std::string group;  // JUnit test suite; default: the model's name
  std::string description;
  corpus::ModelRecipe recipe;            // model, optimizer, strategy, steps, batch size, job lists
  std::vector<SuiteComparison> compare;  // in this order; default: serial, translated
  std::string backend = "thread";        // thread | gloo
  std::string device = "cpu";            // cpu | gpu
  // The serial comparison's expected tier; the translated comparison is always exact (a
  // translation must not change a bit: docs/parity.md).
  Tier tier = Tier::kNoiseFloor;
  // When a send returns in both runs of both comparisons; unset: what the built bundle states.
  // A 1F1B pipeline under rendezvous sends is the case that hangs (Paddle PR #70360).
  std::optional<schedules::P2pModel> p2p;
  std::vector<std::string> tags;
  std::vector<std::string> covers;  // sorted, unique

  bool HasTag(std::string_view tag) const;
};

// Parses one case. `file` names it in diagnostics and gives the case its name. Errors
// (kParseError, located by the file and the JSON pointer of the field): malformed JSON, an unknown
// field, a wrong type, a value out of range, a strategy the legacy passes refuse to read, and a
// serial comparison for gradient merge (k executor steps per update: the serial check does not
// model it).
StatusOr<SuiteCase> ParseSuiteCase(std::string_view text, const std::string& file);

// Reads every `*.json` of `dir` (not recursively), in file-name order. Errors: an unreadable
// folder or file, and the first malformed case.
StatusOr<std::vector<SuiteCase>> ReadSuiteCases(const std::string& dir);

}  // namespace irm::diff
