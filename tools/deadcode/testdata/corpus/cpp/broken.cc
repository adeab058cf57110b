// A translation unit that does not compile: reported as a problem, the others still analysed.
#include "framework.h"

int Broken( {
  return 0; }
