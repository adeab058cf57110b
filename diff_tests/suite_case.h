// A case of the parity suite (docs/suite.md), read from one JSON file of diff_tests/cases/: the
// model and its size, the optimizer, the legacy passes' strategy (Paddle's field names), the
// pipeline's job-list form, which comparisons to run (the distributed bundle against its serial
// program, and against its own translation), the backend and device, steps, rows per replica, the
// tier expected of the serial comparison, the point-to-point model the ranks' sends follow, tags,
// and `covers` — the qualified names of the Paddle
// legacy functions and new-IR twins the case exercises, for which a passing case is evidence.
// An engine case (`"compare": ["engine"]`) runs the Engine flow on both IRs instead
// (engine_flow.h): serial vs legacy passes, serial vs new-IR passes, legacy vs new IR; its
// `covers` says which road each name belongs to, since a pair that is skipped proves nothing for
// the names of its road.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "diff_tests/corpus/model_bundle.h"
#include "diff_tests/engine_flow.h"
#include "diff_tests/tensor_compare.h"
#include "schedules/p2p_model.h"

namespace irm::diff {

// What a case compares: the distributed legacy bundle against the serial one-rank bundle
// (serial_parity.h), or against its translation to the new IR (bundle_parity.h, exact tier); or
// the Engine flow's pairs (engine_flow.h), which build their own bundles and so compare alone.
enum class SuiteComparison { kSerial, kTranslated, kEngine };
// "serial", "translated", "engine".
const char* SuiteComparisonName(SuiteComparison comparison);

// The two roads of an engine case, and the pairs that check a name of each: a legacy function is
// checked by serial-legacy and legacy-pir, a new-IR twin by serial-pir and legacy-pir (legacy-pir
// alone never suffices: two roads agreeing on the same mistake must still fail).
enum class EngineRoad { kLegacy, kPir };
// "legacy", "pir".
const char* EngineRoadName(EngineRoad road);
// The pairs RunEngineFlow reports for `ir`, in its order: "serial-legacy", "serial-pir",
// "legacy-pir" for both; one serial pair for legacy or pir.
std::vector<std::string> EnginePairNames(EngineIr ir);
// Whether `pair` checks the names of `road`.
bool EnginePairChecks(std::string_view pair, EngineRoad road);

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
  std::vector<std::string> covers;  // sorted, unique; an engine case's: both roads' names

  // An engine case: the roads RunEngineFlow takes (the case's `ir`), a test-only fault in a new-IR
  // pass (`test_fault`, its spelling kept for the reports), and the case's names by road
  // (`covers: {"legacy": [...], "pir": [...]}`, each sorted; a name may be on both roads).
  EngineIr engine_ir = EngineIr::kBoth;
  std::string test_fault;
  EngineTestFault engine_fault;
  std::vector<std::string> covers_legacy;
  std::vector<std::string> covers_pir;

  bool HasTag(std::string_view tag) const;
  bool IsEngine() const;
  // The tests the case reports, in order: "serial", "translated" as `compare` asks, or an engine
  // case's pairs.
  std::vector<std::string> ComparisonNames() const;
};

// Parses one case. `file` names it in diagnostics and gives the case its name. Errors
// (kParseError, located by the file and the JSON pointer of the field): malformed JSON, an unknown
// field, a wrong type, a value out of range, a strategy the legacy passes refuse to read, and a
// serial comparison for gradient merge over steps that are not whole updates (k_steps executor
// steps make one); for an engine case also `engine` next to another comparison, `ir` or
// `test_fault` on another case or misspelt, a fault on a road the case does not take, `tier` or
// `p2p` (the flow decides both), and `covers` that is not {"legacy": [...], "pir": [...]} or names
// a road the case does not take.
StatusOr<SuiteCase> ParseSuiteCase(std::string_view text, const std::string& file);

// Reads every `*.json` of `dir` (not recursively), in file-name order. Errors: an unreadable
// folder or file, and the first malformed case.
StatusOr<std::vector<SuiteCase>> ReadSuiteCases(const std::string& dir);

}  // namespace irm::diff
