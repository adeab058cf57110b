// Fixture: a header with an error, for the problem of a TU that includes it.
#pragma once

inline int BadHeader() { return missing_in_header; }
