// Which Python functions are API: code outside the analysed tree may call them, so the tree's own
// callers never decide whether they go (Paddle's DistModel.predict is called in the tree only from
// a legacy branch, and by every user).
//
// A public name (no leading underscore, not nested) is API when a package exports it: it is
// written in a package's __init__.py, or an __init__.py imports it, its class, or its module (by
// name or with `*`). A public name of a module no package exports (Paddle's pass_utils,
// auto_parallel/static/utils) is internal.
//
// Except a method that a registered class adds to its protocol. Users never reach a class
// registered by a registry decorator (Paddle's @register_pass("x")) by its class: they call the
// registry (new_pass("x", attrs)) and the protocol its base class defines (PassBase.apply and the
// hooks apply calls). A public method of such a class that no ancestor defines is not API; its
// callers in the tree decide, as for any helper (Paddle's Pipeline1F1BPass.
// is_comm_op_valid_to_overlap, called only from the legacy _partial_programs' helpers). It stays
// API, on the safe side, when
//   - it overrides an ancestor's method (the protocol: the base's callers reach it),
//   - it is a staticmethod or classmethod (reached through the class, without the registry),
//   - a subclass of the class is not registered itself (an instance of it is made by its class),
//   - an ancestor derives from a class the tree does not define (the protocol is not all known),
//   - the class is not registered, even when all its subclasses are (Paddle's PassBase and
//     PipelinePassBase: PassBase.apply is what users call).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "tools/deadcode/code_index.h"
#include "tools/deadcode/code_model.h"
#include "tools/deadcode/config.h"

namespace irm::deadcode {

// The keys of the Python functions that are API.
std::set<std::string> CollectPythonApi(const std::vector<FileModel>& files, const CodeIndex& index,
                                       const DeadcodeConfig& config);

}  // namespace irm::deadcode
