// A helper in its own translation unit: only legacy branches elsewhere call it.
#include "util.h"

namespace ir {

int LegacyStep(int ops) { return ops * 2; }

}  // namespace ir
