// The coverage report (coverage.h).
#include "translator/coverage.h"

#include <algorithm>

#include <fmt/format.h>

namespace irm::translator {

OpTypeCoverage& Coverage::Count(const std::string& type, int block, int op) {
  auto it = types_.find(type);
  if (it == types_.end()) {
    it = types_.emplace(type, OpTypeCoverage{}).first;
    it->second.first_location = fmt::format("block {}, op {}", block, op);
  }
  ++it->second.count;
  return it->second;
}

void Coverage::Merge(const Coverage& other, const std::string& file) {
  for (const auto& [type, theirs] : other.types_) {
    auto [it, inserted] = types_.try_emplace(type, theirs);
    if (inserted) {
      if (!file.empty())
        it->second.first_location = fmt::format("{}: {}", file, theirs.first_location);
      continue;
    }
    OpTypeCoverage& ours = it->second;
    ours.count += theirs.count;
    ours.translated += theirs.translated;
    ours.dropped += theirs.dropped;
    ours.opaque += theirs.opaque;
    ours.unsupported += theirs.unsupported;
    if (ours.note.empty()) ours.note = theirs.note;
  }
}

int Coverage::total() const {
  int n = 0;
  for (const auto& [type, entry] : types_) n += entry.count;
  return n;
}

int Coverage::unsupported_total() const {
  int n = 0;
  for (const auto& [type, entry] : types_) n += entry.unsupported;
  return n;
}

std::string Coverage::ToText() const {
  size_t width = 7;  // "op type"
  for (const auto& [type, entry] : types_) width = std::max(width, type.size());
  std::string out =
      fmt::format("{:<{}}  {:>6}  {:>10}  {:>7}  {:>6}  {:>11}  {}\n", "op type", width, "count",
                  "translated", "dropped", "opaque", "unsupported", "note");
  int translated = 0, dropped = 0, opaque = 0;
  for (const auto& [type, e] : types_) {
    out += fmt::format("{:<{}}  {:>6}  {:>10}  {:>7}  {:>6}  {:>11}  {}\n", type, width, e.count,
                       e.translated, e.dropped, e.opaque, e.unsupported, e.note);
    translated += e.translated;
    dropped += e.dropped;
    opaque += e.opaque;
  }
  out += fmt::format("{:<{}}  {:>6}  {:>10}  {:>7}  {:>6}  {:>11}\n", "total", width, total(),
                     translated, dropped, opaque, unsupported_total());
  return out;
}

nlohmann::json Coverage::ToJson() const {
  nlohmann::json types = nlohmann::json::array();
  for (const auto& [type, e] : types_) {
    types.push_back({{"type", type},
                     {"count", e.count},
                     {"translated", e.translated},
                     {"dropped", e.dropped},
                     {"opaque", e.opaque},
                     {"unsupported", e.unsupported},
                     {"first_location", e.first_location},
                     {"note", e.note}});
  }
  return {{"types", std::move(types)}, {"total", total()}, {"unsupported", unsupported_total()}};
}

}  // namespace irm::translator
