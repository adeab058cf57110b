// Interned names: op names and attribute keys, stored once per process. A translated program of
// 50k legacy ops holds ~140k ops and ~800k attributes whose names come from a vocabulary of a few
// hundred; keeping each name once makes an op's name and its attribute keys a pointer (no heap
// string per op, no string copies while building or freeing a program), as MLIR's context interns
// identifiers. Like MLIR's, the table only grows: by the number of distinct names ever seen.
#pragma once

#include <string>
#include <string_view>

namespace irm::newir {

// The process-wide copy of `name`: equal names give the same object, which lives until the
// process ends. Thread-safe; a per-thread cache answers repeated names without locking.
const std::string& InternName(std::string_view name);

// How many distinct names the table holds (for tests of its bound).
size_t InternedNameCount();

}  // namespace irm::newir
