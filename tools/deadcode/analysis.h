// The analysis: from the front ends' file models to one finding per legacy unit.
//
// 1. Legacy units with a twin (twin_matching.h) and every guarded legacy branch are the code the
//    migration removes. A legacy function is removed only when no kept code calls it.
// 2. Closure: a function whose every reference comes from removed code is removed too (greatest
//    fixpoint, so cycles of legacy-only helpers go together), provided that removed legacy code
//    reaches it; a function nobody in the tree references is an entry point and stays, and so
//    does a public Python name that a package's __init__.py exports (API callers are outside;
//    python_api.h: a method a registered class adds to its protocol is not API).
// 3. Blocked: a legacy unit or legacy-only helper that removed code calls but kept legacy code
//    (legacy with no twin: a blocked legacy unit, a function taking only the legacy types, a name
//    with a legacy marker) still calls: `blocked-by:<caller>`; that caller is reported `no-twin`.
//    A subclass's override of the legacy half of a base class's pair, in a class that does not
//    override the twin, is the class's only implementation: `blocked-by:<class>`, and it is kept
//    legacy code for the helpers it calls. Code shared with kept non-legacy code is not a finding.
// 4. Evidence: a twin with parity or test evidence is `verified`, else `twin-untested`; a removed
//    unit is deletable when it is verified and everything that calls it is deletable too.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tools/deadcode/code_model.h"
#include "tools/deadcode/config.h"
#include "tools/deadcode/finding.h"

namespace irm::deadcode {

// The evidence that `twin` replaces `legacy` (qualified names as in the report's unit and twin).
using EvidenceLookup =
    std::function<std::vector<Evidence>(const std::string& legacy, const std::string& twin)>;

// Findings sorted by file, line, kind and qualified name, with stable ids; the files' problems are
// carried into the report. References are resolved on `threads` threads; the report is the same
// at any count.
DeadcodeReport Analyze(const std::vector<FileModel>& files, const DeadcodeConfig& config,
                       const EvidenceLookup& evidence, int threads = 1);

}  // namespace irm::deadcode
