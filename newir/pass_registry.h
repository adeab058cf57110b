// The pass registry: every pass a pipeline can name, by its kebab-case name, with a one-line
// summary, its typed options and a factory that builds it from option values. The global
// registry holds the built-in passes (transforms/passes.h), is filled once on first use
// (thread-safe) and never changes afterwards; tests build registries of their own. It also writes
// the `--list-passes` text.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "newir/pass.h"

namespace irm::newir {

// Builds a pass from its option values (every declared option is set; see PassOptions).
using PassFactory = std::function<std::unique_ptr<Pass>(const PassOptions& options)>;

struct PassInfo {
  std::string name = {};     // kebab-case: "dce", "canonicalize"
  std::string summary = {};  // one line, no trailing period
  std::vector<PassOptionSpec> options = {};
  PassFactory factory = {};

  // Null when the pass declares no option of that name.
  const PassOptionSpec* FindOption(std::string_view option_name) const;
  // Every declared option set to its default.
  PassOptions DefaultOptions() const;
  // Builds the pass with every option at its default.
  std::unique_ptr<Pass> Create() const { return factory(DefaultOptions()); }
};

class PassRegistry {
 public:
  // The built-in passes, registered once (thread-safe on first use).
  static const PassRegistry& Global();

  // Fails, registering nothing, when the name is taken or not kebab-case, the summary is empty or
  // spans lines, the factory is empty, or an option is named twice, is not kebab-case, or has an
  // int default outside its range (or a range whose min exceeds its max).
  Status Register(PassInfo info);
  // Null for an unregistered name.
  const PassInfo* Lookup(std::string_view name) const;
  // Every pass, by name.
  std::vector<const PassInfo*> passes() const;
  size_t size() const { return passes_.size(); }

  // The `--list-passes` text: per pass, by name, a line `name: summary`, then per option a line
  // `  name=<kind> (default: value): help` (the range follows the default when it is bounded).
  std::string ListPasses() const;

 private:
  // unique_ptr: pipelines point at entries, which must not move.
  std::map<std::string, std::unique_ptr<PassInfo>, std::less<>> passes_;
};

// Whether `name` is kebab-case: lower-case letters and digits in words joined by single '-'.
bool IsKebabCase(std::string_view name);

}  // namespace irm::newir
