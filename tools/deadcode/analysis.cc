// The analysis (see analysis.h for the rules).
#include "tools/deadcode/analysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "tools/deadcode/code_index.h"
#include "tools/deadcode/python_api.h"
#include "tools/deadcode/twin_matching.h"

namespace irm::deadcode {
namespace {

std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// Whether `text` contains `lower_needle` (lower case), ignoring case; without copying `text`.
bool ContainsIgnoringCase(std::string_view text, std::string_view lower_needle) {
  if (lower_needle.size() > text.size()) return false;
  for (size_t at = 0; at + lower_needle.size() <= text.size(); ++at) {
    size_t i = 0;
    while (i < lower_needle.size() &&
           std::tolower(static_cast<unsigned char>(text[at + i])) == lower_needle[i]) {
      ++i;
    }
    if (i == lower_needle.size()) return true;
  }
  return false;
}

// FNV-1a, 64 bits: a finding id that stays the same from run to run and machine to machine.
std::string StableId(const std::string& text) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return fmt::format("{:016x}", hash);
}

// A node of the removal graph: a function, a guarded branch or a registration (by its index in its
// file's model). `key` views a string that outlives every node made from it: a key or file name of
// the file models, or a key of the analysis's maps once they are final.
struct RemovalNode {
  enum class Kind { kFunction, kBranch, kRegistration };
  Kind kind = Kind::kFunction;
  std::string_view key;  // kFunction: the function's key; otherwise the file
  size_t index = 0;      // kBranch, kRegistration: the index in FileModel::branches / registrations

  static RemovalNode Function(std::string_view key) { return {Kind::kFunction, key, 0}; }
  static RemovalNode Branch(std::string_view file, size_t index) {
    return {Kind::kBranch, file, index};
  }
  static RemovalNode Registration(std::string_view file, size_t index) {
    return {Kind::kRegistration, file, index};
  }
  friend bool operator<(const RemovalNode& a, const RemovalNode& b) {
    return std::tie(a.kind, a.key, a.index) < std::tie(b.kind, b.key, b.index);
  }
};

class Analysis {
 public:
  Analysis(const std::vector<FileModel>& files, const DeadcodeConfig& config,
           const EvidenceLookup& evidence, int threads)
      : files_(files), config_(config), evidence_(evidence), index_(files, threads) {
    for (const FileModel& file : files_) language_of_.emplace(file.file, file.language);
    for (const std::string& marker : config_.legacy_markers) {
      if (!marker.empty()) legacy_markers_.push_back(Lower(marker));
    }
  }

  DeadcodeReport Run();

 private:
  void CollectCandidates();
  void CollectOrphanOverrides();
  const std::string* OrphanTwinName(const FunctionUnit& function);
  bool ExcludedFromClosure(const FunctionUnit& function) const;
  std::optional<RemovalNode> RemovalSource(const ResolvedReference& reference) const;
  void ComputeRemoved();
  std::set<std::string> ReachedFromLegacy() const;
  bool LegacyFlavoured(const FunctionUnit& function) const;
  bool ComputeLegacyFlavoured(const FunctionUnit& function) const;
  std::string CallerKey(const ResolvedReference& reference) const;
  void ComputeBlocked();
  void ComputeDeletable();

  std::string DisplayName(const FunctionUnit& function) const;
  std::string ScopeDisplay(const FileModel& file, const std::string& function_key) const;
  UnitRef RefOf(const FunctionUnit& function) const {
    return {DisplayName(function), function.file, function.range};
  }
  std::vector<Caller> CallersOf(const std::string& key) const;
  Language LanguageOf(const std::string& file) const;
  void AddFunctionFindings(DeadcodeReport* report);
  void AddBranchFindings(DeadcodeReport* report);
  void AddRegistrationFindings(DeadcodeReport* report);
  std::string StatusOf(bool removed, bool verified, const std::string& key) const;

  const std::vector<FileModel>& files_;
  const DeadcodeConfig& config_;
  const EvidenceLookup& evidence_;
  CodeIndex index_;

  std::map<std::string, FunctionTwin> function_twins_;  // legacy key → its twin
  std::set<std::string> twin_keys_;                     // functions that are some unit's twin
  // Legacy-only overrides: a subclass's method that overrides the legacy half of a base class's
  // twin pair but not the twin (Paddle's PipelineEager1F1BPass._partial_programs). Key → the
  // twin's name the class leaves to the base; "" once looked at and found not to be one.
  std::map<std::string, std::string> orphan_twin_name_;
  std::set<std::string> orphans_;
  std::map<RemovalNode, RegistrationTwin> registration_twins_;
  // Per file, the legacy registrations with a twin: their range and node (top-level references
  // inside one go with it).
  std::map<std::string, std::vector<std::pair<SourceRange, RemovalNode>>> removed_registrations_;
  std::set<std::string> overload_keys_;      // both sides of overload twins
  std::vector<std::string> legacy_markers_;  // the configuration's, lower case
  // LegacyFlavoured's answers (asked only once the candidates are known).
  mutable std::unordered_map<const FunctionUnit*, bool> legacy_flavoured_;
  std::map<std::string, Language> language_of_;  // by file
  // Python functions that are API (python_api.h).
  std::set<std::string> python_api_;
  std::unordered_map<std::string, std::vector<const ResolvedReference*>> incoming_;
  std::map<std::string, std::vector<const ResolvedReference*>> outgoing_;
  std::set<std::string, std::less<>> removed_;  // function keys
  std::set<std::string> pinned_kept_;           // functions removed code does not reach
  // Blocked function key → the caller named in its status: (key, "" at top level; display name).
  std::map<std::string, std::pair<std::string, std::string>> blocked_by_;
  std::set<std::string> blocking_;  // kept legacy callers named by blocked_by_
  std::set<RemovalNode> deletable_;
  std::map<RemovalNode, std::vector<Evidence>> evidence_of_;
};

void Analysis::CollectCandidates() {
  for (const auto& pairs :
       {MatchNamedTwins(index_, config_), MatchOverloadTwins(index_, config_)}) {
    for (const FunctionTwin& pair : pairs) {
      if (!function_twins_.emplace(pair.legacy->key, pair).second) continue;
      twin_keys_.insert(pair.twin->key);
      if (pair.rule == "overload") overload_keys_.insert({pair.legacy->key, pair.twin->key});
    }
  }
  std::map<const Registration*, RemovalNode> node_of;
  for (const FileModel& file : files_) {
    for (size_t i = 0; i < file.registrations.size(); ++i) {
      node_of[&file.registrations[i]] = RemovalNode::Registration(file.file, i);
    }
  }
  for (const RegistrationTwin& pair : MatchRegistrationTwins(files_)) {
    const RemovalNode node = node_of.at(pair.legacy);
    registration_twins_.emplace(node, pair);
    removed_registrations_[pair.legacy->file].emplace_back(pair.legacy->range, node);
  }
  auto outgoing = outgoing_.end();  // the last caller's: references come grouped by caller
  for (const ResolvedReference& reference : index_.references()) {
    const std::string& from = reference.reference->from;
    for (const std::string& target : reference.targets) {
      // A function calling itself (or from a function nested in it) does not keep it alive.
      bool self = false;
      for (std::string_view key = from; !key.empty(); key = OuterFunctionKeyView(key)) {
        self |= key == target;
      }
      if (!self) incoming_[target].push_back(&reference);
    }
    if (outgoing == outgoing_.end() || outgoing->first != from) {
      outgoing = outgoing_.try_emplace(from).first;
    }
    outgoing->second.push_back(&reference);
  }
}

// The twin's name that `function` leaves to a base class when it overrides the legacy half of a
// base's pair (or of another such override) without overriding the twin below that base; nullptr
// when it does not.
const std::string* Analysis::OrphanTwinName(const FunctionUnit& function) {
  auto known = orphan_twin_name_.find(function.key);
  if (known != orphan_twin_name_.end()) return known->second.empty() ? nullptr : &known->second;
  std::string twin_name;
  const std::vector<std::string> ancestors = index_.Ancestors(function.class_name);
  for (size_t i = 0; i < ancestors.size() && twin_name.empty(); ++i) {
    const FunctionUnit* overridden = index_.Function(ancestors[i] + "." + function.name);
    if (overridden == nullptr) continue;
    auto pair = function_twins_.find(overridden->key);
    if (pair != function_twins_.end()) {
      twin_name = pair->second.twin->name;
    } else if (const std::string* inherited = OrphanTwinName(*overridden)) {
      twin_name = *inherited;
    } else {
      break;  // the nearest method it overrides is no legacy unit
    }
    // The class gets the twin from `ancestors[i]` or above only when nothing nearer defines it.
    if (index_.Function(function.class_name + "." + twin_name) != nullptr) twin_name.clear();
    for (size_t k = 0; k < i && !twin_name.empty(); ++k) {
      if (index_.Function(ancestors[k] + "." + twin_name) != nullptr) twin_name.clear();
    }
    break;
  }
  const std::string& stored = orphan_twin_name_[function.key] = twin_name;
  return stored.empty() ? nullptr : &stored;
}

void Analysis::CollectOrphanOverrides() {
  for (const auto& [key, function] : index_.functions()) {
    if (function->class_name.empty() || LanguageOf(function->file) != Language::kPython) continue;
    if (function_twins_.contains(key) || twin_keys_.contains(key)) continue;
    if (OrphanTwinName(*function) != nullptr) orphans_.insert(key);
  }
}

bool Analysis::ExcludedFromClosure(const FunctionUnit& function) const {
  // Reached in ways references do not show: entry points, virtual dispatch, code written by
  // macros, Python's special methods and decorators that may register the function by name.
  if (function.is_main || function.overrides || function.from_macro) return true;
  // Python API: code outside the analysed tree may call it (Paddle's DistModel.predict is called
  // only from a legacy branch in the tree, and by every user). Only a legacy unit of its own
  // makes it go.
  if (python_api_.contains(function.key)) return true;
  if (function.name.size() > 4 && function.name.starts_with("__") &&
      function.name.ends_with("__")) {
    return true;
  }
  for (const std::string& decorator : function.decorators) {
    if (decorator != "staticmethod" && decorator != "classmethod" && decorator != "property") {
      return true;
    }
  }
  return false;
}

std::optional<RemovalNode> Analysis::RemovalSource(const ResolvedReference& resolved) const {
  const Reference& reference = *resolved.reference;
  std::string_view outermost;  // the outermost removed function
  for (std::string_view key = reference.from; !key.empty(); key = OuterFunctionKeyView(key)) {
    if (removed_.contains(key)) outermost = key;
  }
  if (!outermost.empty()) return RemovalNode::Function(outermost);
  if (!reference.legacy_branches.empty()) {
    return RemovalNode::Branch(resolved.file->file,
                               static_cast<size_t>(reference.legacy_branches.front()));
  }
  if (reference.from.empty()) {
    auto registrations = removed_registrations_.find(resolved.file->file);
    if (registrations != removed_registrations_.end()) {
      for (const auto& [range, node] : registrations->second) {
        if (range.Contains(reference.line, reference.column)) return node;
      }
    }
  }
  return std::nullopt;
}

// Greatest fixpoint: assume every candidate and every referenced function removed, then keep
// each one that a surviving reference reaches until nothing changes.
void Analysis::ComputeRemoved() {
  // Deleting a legacy-only override leaves its class without an implementation: it stays.
  pinned_kept_.insert(orphans_.begin(), orphans_.end());
  while (true) {
    removed_.clear();
    for (const auto& [key, pair] : function_twins_) removed_.insert(key);
    for (const auto& [key, function] : index_.functions()) {
      if (incoming_.contains(key) && !ExcludedFromClosure(*function) &&
          !pinned_kept_.contains(key)) {
        removed_.insert(key);
      }
    }
    for (bool changed = true; changed;) {
      changed = false;
      for (auto it = removed_.begin(); it != removed_.end();) {
        bool survives = false;
        auto refs = incoming_.find(*it);
        if (refs != incoming_.end()) {
          for (const ResolvedReference* reference : refs->second) {
            if (!RemovalSource(*reference)) {
              survives = true;
              break;
            }
          }
        }
        if (survives) {
          it = removed_.erase(it);
          changed = true;
        } else {
          ++it;
        }
      }
    }
    // A removed non-candidate that no removed legacy code reaches was only in a cycle of its own:
    // pin it as kept and solve again.
    const std::set<std::string> reached = ReachedFromLegacy();
    bool pinned = false;
    for (const std::string& key : removed_) {
      if (!function_twins_.contains(key) && !reached.contains(key)) {
        pinned_kept_.insert(key);
        pinned = true;
      }
    }
    if (!pinned) return;
  }
}

std::set<std::string> Analysis::ReachedFromLegacy() const {
  std::set<std::string> reached;
  std::vector<std::string> work;
  auto visit = [&](const ResolvedReference& reference) {
    for (const std::string& target : reference.targets) {
      if (removed_.contains(target) && reached.insert(target).second) work.push_back(target);
    }
  };
  for (const auto& [key, pair] : function_twins_) {
    if (removed_.contains(key) && reached.insert(key).second) work.push_back(key);
  }
  for (const ResolvedReference& reference : index_.references()) {
    const std::optional<RemovalNode> source = RemovalSource(reference);
    if (source && source->kind != RemovalNode::Kind::kFunction) visit(reference);
  }
  while (!work.empty()) {
    const std::string key = work.back();
    work.pop_back();
    // References made by the function and by the functions nested in it (keys sort together).
    for (auto it = outgoing_.lower_bound(key); it != outgoing_.end() && it->first.starts_with(key);
         ++it) {
      if (it->first != key && !it->first.starts_with(key + std::string(kLocals))) continue;
      for (const ResolvedReference* reference : it->second) visit(*reference);
    }
  }
  return reached;
}

bool Analysis::LegacyFlavoured(const FunctionUnit& function) const {
  // Asked for every kept caller on every round of ComputeBlocked; the answer never changes.
  auto known = legacy_flavoured_.find(&function);
  if (known != legacy_flavoured_.end()) return known->second;
  const bool legacy = ComputeLegacyFlavoured(function);
  legacy_flavoured_.emplace(&function, legacy);
  return legacy;
}

bool Analysis::ComputeLegacyFlavoured(const FunctionUnit& function) const {
  if (twin_keys_.contains(function.key)) return false;
  if (function_twins_.contains(function.key)) return true;
  for (const std::string& type : function.parameter_types) {
    if (TypeMatches(type, config_.legacy_types)) {
      bool takes_new = false;
      for (const std::string& other : function.parameter_types) {
        takes_new |= TypeMatches(other, config_.new_types);
      }
      if (!takes_new) return true;
    }
  }
  for (const std::string& marker : legacy_markers_) {
    if (ContainsIgnoringCase(function.name, marker)) return true;
  }
  return false;
}

// The function a reference is made from (the outermost that is a known function), "" at top level.
std::string Analysis::CallerKey(const ResolvedReference& reference) const {
  return index_.Function(reference.reference->from) != nullptr ? reference.reference->from : "";
}

void Analysis::ComputeBlocked() {
  // A legacy-only override is blocked by its class, which has no other implementation of it.
  for (const std::string& key : orphans_) {
    const FunctionUnit* function = index_.Function(key);
    blocked_by_[key] = {"", function->class_name};
  }
  // Least fixpoint: a helper blocked by kept legacy code is kept legacy code itself.
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& [key, function] : index_.functions()) {
      if (removed_.contains(key) || blocked_by_.contains(key)) continue;
      const bool candidate = function_twins_.contains(key);
      if (!candidate && ExcludedFromClosure(*function)) continue;
      auto refs = incoming_.find(key);
      if (refs == incoming_.end()) continue;
      bool from_removed = false;
      std::vector<std::string> kept_callers;
      bool kept_by_other_code = false;
      for (const ResolvedReference* reference : refs->second) {
        if (RemovalSource(*reference)) {
          from_removed = true;
          continue;
        }
        const std::string caller = CallerKey(*reference);
        const FunctionUnit* caller_unit = index_.Function(caller);
        const bool legacy = caller_unit != nullptr &&
                            (LegacyFlavoured(*caller_unit) || blocked_by_.contains(caller));
        if (legacy) {
          kept_callers.push_back(caller);
        } else {
          kept_by_other_code = true;
          if (!candidate) break;  // shared with kept code: never blocked, whatever else calls it
        }
      }
      // A legacy unit with a twin that kept code calls is blocked whoever the caller is; a helper
      // only when removed code calls it and nothing but kept legacy code keeps it.
      if (candidate || (from_removed && !kept_by_other_code && !kept_callers.empty())) {
        // Named after the first kept legacy caller, else (a blocked candidate called by ordinary
        // code) the first surviving caller, in display order.
        std::string first_key;
        std::string first_name;
        for (const ResolvedReference* reference : refs->second) {
          if (RemovalSource(*reference)) continue;
          const std::string caller = CallerKey(*reference);
          const bool legacy =
              std::find(kept_callers.begin(), kept_callers.end(), caller) != kept_callers.end();
          if (!kept_callers.empty() && !legacy) continue;
          const std::string name = ScopeDisplay(*reference->file, reference->reference->from);
          if (first_name.empty() || name < first_name) {
            first_name = name;
            first_key = caller;
          }
        }
        blocked_by_[key] = {first_key, first_name};
        changed = true;
      }
    }
  }
  for (const auto& [key, caller] : blocked_by_) {
    const FunctionUnit* unit = index_.Function(caller.first);
    if (unit != nullptr && !function_twins_.contains(caller.first) &&
        !blocked_by_.contains(caller.first) && LegacyFlavoured(*unit)) {
      blocking_.insert(caller.first);
    }
  }
}

// Greatest fixpoint again: verified removed units are deletable unless something that calls them
// is not.
void Analysis::ComputeDeletable() {
  for (const auto& [key, pair] : function_twins_) {
    evidence_of_[RemovalNode::Function(key)] =
        evidence_(DisplayName(*pair.legacy), DisplayName(*pair.twin));
  }
  for (const FileModel& file : files_) {
    for (size_t i = 0; i < file.branches.size(); ++i) {
      const std::string scope = ScopeDisplay(file, file.branches[i].enclosing);
      const RemovalNode node = RemovalNode::Branch(file.file, i);
      evidence_of_[node] = evidence_(scope, scope);
      if (!evidence_of_[node].empty()) deletable_.insert(node);
    }
  }
  for (const auto& [node, pair] : registration_twins_) {
    evidence_of_[node] = evidence_(pair.legacy->macro + "(" + pair.legacy->key + ")",
                                   pair.twin->macro + "(" + pair.twin->key + ")");
    if (!evidence_of_[node].empty()) deletable_.insert(node);
  }
  for (const std::string& key : removed_) {
    const bool verified =
        !function_twins_.contains(key) || !evidence_of_[RemovalNode::Function(key)].empty();
    if (verified) deletable_.insert(RemovalNode::Function(key));
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (const std::string& key : removed_) {
      if (!deletable_.contains(RemovalNode::Function(key))) continue;
      for (const ResolvedReference* reference : incoming_[key]) {
        const std::optional<RemovalNode> source = RemovalSource(*reference);
        if (source && !deletable_.contains(*source)) {
          deletable_.erase(RemovalNode::Function(key));
          changed = true;
          break;
        }
      }
    }
  }
  // A deletable helper with no twin of its own is verified by the evidence of the removed code
  // that calls it (a fixpoint: helpers call helpers).
  for (bool changed = true; changed;) {
    changed = false;
    for (const std::string& key : removed_) {
      if (function_twins_.contains(key) || !deletable_.contains(RemovalNode::Function(key)))
        continue;
      std::vector<Evidence>& evidence = evidence_of_[RemovalNode::Function(key)];
      for (const ResolvedReference* reference : incoming_[key]) {
        const std::optional<RemovalNode> source = RemovalSource(*reference);
        if (!source) continue;
        for (const Evidence& item : evidence_of_[*source]) {
          const bool known = std::any_of(evidence.begin(), evidence.end(), [&](const Evidence& e) {
            return e.kind == item.kind && e.ref == item.ref && e.detail == item.detail;
          });
          if (!known) {
            evidence.push_back(item);
            changed = true;
          }
        }
      }
    }
  }
}

std::string Analysis::DisplayName(const FunctionUnit& function) const {
  if (!overload_keys_.contains(function.key)) return function.qualname;
  return fmt::format("{}({})", function.qualname, fmt::join(function.parameter_types, ", "));
}

std::string Analysis::ScopeDisplay(const FileModel& file, const std::string& function_key) const {
  if (const FunctionUnit* function = index_.Function(function_key)) return function->qualname;
  return file.language == Language::kPython ? "<module " + file.module + ">"
                                            : "<file " + file.file + ">";
}

std::vector<Caller> Analysis::CallersOf(const std::string& key) const {
  std::vector<Caller> callers;
  auto refs = incoming_.find(key);
  if (refs == incoming_.end()) return callers;
  for (const ResolvedReference* reference : refs->second) {
    callers.push_back({ScopeDisplay(*reference->file, reference->reference->from),
                       reference->file->file, reference->reference->line,
                       !RemovalSource(*reference)});
  }
  std::sort(callers.begin(), callers.end(), [](const Caller& a, const Caller& b) {
    return std::tie(a.file, a.line, a.qualname) < std::tie(b.file, b.line, b.qualname);
  });
  callers.erase(std::unique(callers.begin(), callers.end(),
                            [](const Caller& a, const Caller& b) {
                              return a.file == b.file && a.line == b.line &&
                                     a.qualname == b.qualname;
                            }),
                callers.end());
  return callers;
}

Language Analysis::LanguageOf(const std::string& file) const {
  auto it = language_of_.find(file);
  // A header known only through the units a TU reported in it is C++.
  return it == language_of_.end() ? Language::kCpp : it->second;
}

std::string Analysis::StatusOf(bool removed, bool verified, const std::string& key) const {
  if (!removed) return "blocked-by:" + blocked_by_.at(key).second;
  return verified ? "verified" : "twin-untested";
}

void Analysis::AddFunctionFindings(DeadcodeReport* report) {
  for (const auto& [key, function] : index_.functions()) {
    const bool candidate = function_twins_.contains(key);
    const bool removed = removed_.contains(key);
    const bool blocked = blocked_by_.contains(key);
    const bool keeps_legacy_alive = blocking_.contains(key);
    if (!candidate && !removed && !blocked && !keeps_legacy_alive) continue;
    Finding finding;
    finding.language = LanguageOf(function->file);
    finding.kind = candidate && function_twins_.at(key).rule == "overload"
                       ? "overload"
                       : (function->class_name.empty() ? "function" : "method");
    finding.unit = RefOf(*function);
    finding.callers = CallersOf(key);
    const bool deletable = removed && deletable_.contains(RemovalNode::Function(key));
    finding.deletable = deletable;
    if (candidate) {
      const FunctionTwin& pair = function_twins_.at(key);
      finding.twin = RefOf(*pair.twin);
      finding.twin_rule = pair.rule;
      finding.evidence = evidence_of_.at(RemovalNode::Function(key));
      const bool verified = !finding.evidence.empty();
      finding.status = StatusOf(removed, verified, key);
      if (!removed) {
        finding.reason = "kept code still calls it";
      } else if (!verified) {
        finding.reason =
            fmt::format("its twin {} has no parity or test evidence", finding.twin->qualname);
      } else if (!deletable) {
        finding.reason = "its twin is verified, but legacy code that calls it is not deletable yet";
      } else {
        finding.reason = fmt::format("its twin {} is verified and no kept code calls it",
                                     finding.twin->qualname);
      }
    } else if (removed) {
      if (deletable) finding.evidence = evidence_of_.at(RemovalNode::Function(key));
      finding.status = deletable ? "verified" : "twin-untested";
      finding.reason = deletable ? "only removed legacy code calls it, and all of that is deletable"
                                 : "only removed legacy code calls it, but some of that code's "
                                   "twins have no evidence yet";
    } else if (orphans_.contains(key)) {
      finding.status = StatusOf(false, false, key);
      finding.reason = fmt::format(
          "{} overrides the legacy {} but not its twin {}: deleting it leaves the class with no "
          "implementation of its own",
          function->class_name, function->name, orphan_twin_name_.at(key));
    } else if (blocked) {
      finding.status = StatusOf(false, false, key);
      finding.reason = "removed legacy code calls it, and so does kept legacy code";
    } else {
      finding.status = "no-twin";
      std::vector<std::string> kept_alive;
      for (const auto& [helper, caller] : blocked_by_) {
        if (caller.first == key) kept_alive.push_back(index_.Function(helper)->qualname);
      }
      finding.reason = fmt::format("legacy code with no new-IR twin; it keeps {} alive",
                                   fmt::join(kept_alive, ", "));
    }
    report->findings.push_back(std::move(finding));
  }
}

void Analysis::AddBranchFindings(DeadcodeReport* report) {
  for (const FileModel& file : files_) {
    for (size_t i = 0; i < file.branches.size(); ++i) {
      const GuardedBranch& branch = file.branches[i];
      if (branch.legacy_only_raises) continue;  // nothing runs there but the refusal
      const RemovalNode node = RemovalNode::Branch(file.file, i);
      Finding finding;
      finding.language = file.language;
      finding.kind = "branch";
      const std::string scope = ScopeDisplay(file, branch.enclosing);
      finding.unit = {scope, branch.file.empty() ? file.file : branch.file, branch.legacy};
      finding.legacy_kind = branch.legacy_kind;
      const FunctionUnit* enclosing = index_.Function(branch.enclosing);
      if (branch.twin) {
        finding.twin = UnitRef{scope, finding.unit.file, *branch.twin};
      } else if (enclosing != nullptr) {
        finding.twin = RefOf(*enclosing);  // the new-IR path is the rest of the function
      }
      finding.twin_rule = "guard";
      finding.guard = GuardInfo{branch.guard_text, branch.guard_name, branch.guard_line,
                                branch.negated, branch.shape};
      finding.evidence = evidence_of_.at(node);
      finding.deletable = deletable_.contains(node);
      finding.status = finding.evidence.empty() ? "twin-untested" : "verified";
      finding.reason = finding.deletable ? "the guarded new-IR path is verified"
                                         : "the guarded new-IR path has no parity or test evidence";
      report->findings.push_back(std::move(finding));
    }
  }
}

void Analysis::AddRegistrationFindings(DeadcodeReport* report) {
  for (const auto& [node, pair] : registration_twins_) {
    Finding finding;
    finding.language = LanguageOf(pair.legacy->file);
    finding.kind = "registration";
    finding.unit = {pair.legacy->macro + "(" + pair.legacy->key + ")", pair.legacy->file,
                    pair.legacy->range};
    finding.twin =
        UnitRef{pair.twin->macro + "(" + pair.twin->key + ")", pair.twin->file, pair.twin->range};
    finding.twin_rule = "registration:" + pair.legacy->registry;
    finding.evidence = evidence_of_.at(node);
    finding.deletable = deletable_.contains(node);
    finding.status = finding.evidence.empty() ? "twin-untested" : "verified";
    finding.reason = finding.deletable
                         ? "the name is registered by the new-IR macro too, which is verified"
                         : "the new-IR registration has no parity or test evidence";
    report->findings.push_back(std::move(finding));
  }
}

DeadcodeReport Analysis::Run() {
  CollectCandidates();
  python_api_ = CollectPythonApi(files_, index_, config_);
  CollectOrphanOverrides();
  ComputeRemoved();
  ComputeBlocked();
  ComputeDeletable();
  DeadcodeReport report;
  for (const FileModel& file : files_) {
    report.problems.insert(report.problems.end(), file.problems.begin(), file.problems.end());
  }
  AddFunctionFindings(&report);
  AddBranchFindings(&report);
  AddRegistrationFindings(&report);
  std::sort(report.findings.begin(), report.findings.end(), [](const Finding& a, const Finding& b) {
    return std::tie(a.unit.file, a.unit.range.start_line, a.kind, a.unit.qualname) <
           std::tie(b.unit.file, b.unit.range.start_line, b.kind, b.unit.qualname);
  });
  std::map<std::string, int> ordinals;
  for (Finding& finding : report.findings) {
    const std::string identity =
        fmt::format("{}|{}|{}|{}", finding.language == Language::kPython ? "python" : "cpp",
                    finding.unit.file, finding.unit.qualname, finding.kind);
    finding.id = StableId(fmt::format("{}|{}", identity, ordinals[identity]++));
  }
  std::sort(report.problems.begin(), report.problems.end(),
            [](const FileProblem& a, const FileProblem& b) {
              return std::tie(a.file, a.line, a.column, a.message) <
                     std::tie(b.file, b.line, b.column, b.message);
            });
  return report;
}

}  // namespace

DeadcodeReport Analyze(const std::vector<FileModel>& files, const DeadcodeConfig& config,
                       const EvidenceLookup& evidence, int threads) {
  return Analysis(files, config, evidence, threads).Run();
}

}  // namespace irm::deadcode
