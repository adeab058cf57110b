// Fixture: a translation unit that does not compile.
#include "ir.h"

int Broken() { return undefined_function(); }
