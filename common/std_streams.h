// The standard streams of a command-line program, checked: output lost to a full disk or a closed
// stdout is an error the program reports and exits non-zero for, never a silent success.
#pragma once

#include "common/status.h"

namespace irm {

// Call first in main(). A standard descriptor (0, 1, 2) the program was started without is
// occupied by one that refuses writes, so that no file the program opens becomes its stdout (and
// receives its report), and writes to the closed stdout fail and are reported.
void GuardStandardDescriptors();

// Call last in main(): flushes std::cout and C's stdout. kIoError located at "<stdout>" when
// anything written to standard output since the start was lost.
Status FinishStandardOutput();

}  // namespace irm
