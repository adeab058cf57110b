// The noise-floor arbitration of a tensor against the serial run (serial_arbitration.h).
#include "diff_tests/serial_arbitration.h"

#include <cmath>

#include "diff_tests/tensor_compare.h"
#include "reference_runtime/dtype_visit.h"

namespace irm::diff {
namespace {

// ||a - b|| over the elements in double; b null: ||a||.
double Distance(const rt::Tensor& a, const rt::Tensor* b) {
  double sum = 0.0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double d = rt::ElementAsDouble(a, i) - (b != nullptr ? rt::ElementAsDouble(*b, i) : 0.0);
    sum += d * d;
  }
  return std::sqrt(sum);
}

}  // namespace

const char* AgreementName(Agreement agreement) {
  switch (agreement) {
    case Agreement::kReordered:
      return "reordered";
    case Agreement::kNoiseFloor:
      return "noise floor";
    case Agreement::kNoSignal:
      return "no signal";
    case Agreement::kMismatch:
      return "mismatch";
  }
  return "mismatch";
}

Arbitration AgainstSerial(const rt::Tensor& got, const rt::Tensor& serial,
                          const rt::Tensor* shadow) {
  const Comparison reordered = CompareTensors(got, serial, Tier::kReordered);
  if (reordered.pass) return {Agreement::kReordered, ""};
  if (shadow == nullptr) return {Agreement::kMismatch, reordered.reason};
  const Comparison floor = CompareTensors(got, serial, Tier::kNoiseFloor, shadow);
  if (floor.pass) return {Agreement::kNoiseFloor, reordered.reason};
  const std::string reason = reordered.reason + "; noise floor: " + floor.reason;
  if (got.numel() != serial.numel() || serial.numel() != shadow->numel()) {
    return {Agreement::kMismatch, reason};
  }
  const double serial_error = Distance(serial, shadow);
  const bool all_noise = serial_error > 0 && serial_error >= 0.5 * Distance(serial, nullptr);
  // Two runs of pure rounding noise agree only in order of magnitude: their distances to the
  // shadow are independent noises (squared again in a second moment). A real error — a missed or
  // doubled gradient term — sits orders of magnitude above noise of this size.
  const double factor = NoiseFloorFactor(serial.dtype());
  const double bound = factor * factor * factor * factor;
  if (all_noise && Distance(got, shadow) <= bound * serial_error) {
    return {Agreement::kNoSignal, reason};
  }
  return {Agreement::kMismatch, reason + (all_noise ? " (the serial run is all noise)" : "")};
}

}  // namespace irm::diff
