// Helpers shared by the executor's translation units.
#pragma once

namespace ir {

int LegacyStep(int ops);

template <typename T>
T LegacyCopy(T value) {
  return value;
}

inline int CountOps(int ops) { return ops; }

}  // namespace ir
