// The noise-floor tier as the distributed-vs-serial checks run it (docs/parity.md): a tensor of a
// distributed (or otherwise transformed) run that misses the reordered tier against the serial
// run is arbitrated by a float64 shadow of the serial program. It passes within the noise-floor
// factor of the serial run's own error against the shadow; or, where the serial run has no
// correct digit at all (a zero gradient's rounding noise, amplified by AdamW's moments), when it
// is rounding noise of the same order. One rule, used by `ir-migrate parity --serial`
// (serial_parity.h) and by the tests of the legacy passes.
#pragma once

#include <string>

#include "reference_runtime/tensor.h"

namespace irm::diff {

enum class Agreement {
  kReordered,   // within the reordered tier
  kNoiseFloor,  // within the noise-floor factor of the serial run's error against the shadow
  kNoSignal,    // the serial run is all rounding noise, and `got` is noise of the same order: no
                // farther from the shadow than the factor to the fourth times the serial run's
                // distance (independent noises, squared again in a second moment)
  kMismatch,
};
// "reordered", "noise floor", "no signal", "mismatch".
const char* AgreementName(Agreement agreement);

struct Arbitration {
  Agreement agreement = Agreement::kMismatch;
  std::string reason;  // why the tiers failed (kMismatch; also kept for the others)
};

// `got` (a transformed run's tensor) against `serial`, with `shadow` the float64 run of the serial
// program (null: no arbitration, the reordered tier alone). "All noise": ||serial - shadow|| >=
// ||serial|| / 2, no correct leading bit.
Arbitration AgainstSerial(const rt::Tensor& got, const rt::Tensor& serial,
                          const rt::Tensor* shadow);

}  // namespace irm::diff
