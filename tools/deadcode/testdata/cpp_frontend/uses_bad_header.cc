// Fixture: a translation unit whose first error is in a header it includes.
#include "bad_header.h"

int UsesBadHeader() { return BadHeader(); }
