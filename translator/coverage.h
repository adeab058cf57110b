// The coverage report of a translation: per legacy op type, how many ops the program holds, how
// many were translated, dropped on purpose (c_sync_* ordering ops under the dist style), kept as
// opaque ops (--allow-unregistered) or could not be translated, with the first location of each
// type — the table `ir-migrate translate --coverage` prints.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace irm::translator {

struct OpTypeCoverage {
  int count = 0;
  int translated = 0;
  int dropped = 0;
  int opaque = 0;
  int unsupported = 0;
  std::string first_location;  // "block 0, op 12"
  std::string note;            // why dropped or unsupported
};

class Coverage {
 public:
  // Counts one op of `type` at block `block`, op `op` (the first one seen is first_location).
  OpTypeCoverage& Count(const std::string& type, int block, int op);
  // Adds other's counts; a type new here takes other's first location, prefixed by `file: ` when
  // `file` is given (the program it was found in).
  void Merge(const Coverage& other, const std::string& file = {});

  const std::map<std::string, OpTypeCoverage>& types() const { return types_; }
  int total() const;
  int unsupported_total() const;

  // A fixed-width table: type, count, translated, dropped, opaque, unsupported, note; then totals.
  std::string ToText() const;
  // {"types": [{"type", "count", "translated", "dropped", "opaque", "unsupported",
  //   "first_location", "note"}...], "total": N, "unsupported": N}
  nlohmann::json ToJson() const;

 private:
  std::map<std::string, OpTypeCoverage> types_;  // sorted by type
};

}  // namespace irm::translator
