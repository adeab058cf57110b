// tree-sitter's allocation hooks for the Python front end: freed small blocks kept per thread for
// the next parse instead of going back through malloc's slow paths after every tree.
#pragma once

namespace irm::deadcode::python {

// Installs the hooks in tree-sitter (process-wide; tree-sitter serves only this front end here).
// Safe to call more than once and from any thread before parsing starts.
void InstallCachedAllocator();

}  // namespace irm::deadcode::python
