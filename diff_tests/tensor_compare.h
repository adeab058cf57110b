// Comparing one tensor of a candidate run with the same tensor of a reference run (docs/parity.md):
// the metrics a report shows (max abs diff and where, max rel diff and where, normwise error,
// mismatch count and share, ULP distance median and max, cosine similarity, bitwise equality) and
// the verdict of a tolerance tier — exact (bitwise), reordered (normwise and elementwise bounds per
// dtype), or noise floor (both runs against a float64 shadow). The reference is `b`, as in
// NumPy's allclose: relative measures divide by |b|.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "reference_runtime/tensor.h"

namespace irm::diff {

enum class Tier { kExact, kReordered, kNoiseFloor };
const char* TierName(Tier tier);
std::optional<Tier> TierFromName(std::string_view name);

// The bounds of the reordered tier for a dtype: pass when ||a-b||/||b|| <= normwise and every
// |a-b| <= abs_of_max * max|b| + rel * |b|. Integer and bool dtypes: all zero (exact).
struct ReorderedBounds {
  double normwise = 0.0;    // R
  double abs_of_max = 0.0;  // A
  double rel = 0.0;         // r
};
ReorderedBounds ReorderedBoundsFor(DType dtype);
// How many times the reference's error against a float64 shadow the candidate may have: 2, and 3
// for float16 and bfloat16.
double NoiseFloorFactor(DType dtype);

struct TensorMetrics {
  int64_t numel = 0;
  bool bits_equal = false;
  double max_abs_diff = 0.0;
  int64_t max_abs_index = -1;  // flat index; -1 when every element is equal
  double max_rel_diff = 0.0;   // |a-b| / |b|; infinite where b is 0 and a is not
  int64_t max_rel_index = -1;
  double normwise = 0.0;       // ||a-b|| / ||b|| over the finite pairs (0/0 = 0, x/0 = inf)
  int64_t mismatch_count = 0;  // elements failing the tier's elementwise test
  double mismatch_percent = 0.0;
  double ulp_median = 0.0;  // floating dtypes; NaN pairs left out
  uint64_t ulp_max = 0;
  double cosine = 1.0;               // a.b / (|a| |b|): 1 when both are zero, 0 when only one is
  int64_t nonfinite_mismatches = 0;  // positions where NaN or Inf differ (incl. the sign of Inf)
  int64_t first_nonfinite_mismatch = -1;
};

struct Comparison {
  bool pass = false;
  // Why it fails ("dtype float32 vs float64", "shape [2] vs [3]", "NaN/Inf differ at 2
  // positions, first at 5", "normwise 3e-05 > 1e-05", "12 elements beyond the elementwise bound",
  // "bits differ"); empty when it passes.
  std::string reason;
  TensorMetrics metrics;  // zeros when dtype or shape differ
};

// Candidate `a` against reference `b` under `tier`; kNoiseFloor needs `shadow` (a float64 tensor
// of b's shape: the reference program run in float64) and otherwise falls back to kReordered.
Comparison CompareTensors(const rt::Tensor& a, const rt::Tensor& b, Tier tier,
                          const rt::Tensor* shadow = nullptr);

// The distance in units in the last place between two values of a floating dtype given as bits
// (the low 16, 32 or 64 bits of the arguments): the count of representable values between them,
// so +0 and -0 are 0 apart and the two smallest subnormals of opposite sign 2.
uint64_t UlpDistance(DType dtype, uint64_t a_bits, uint64_t b_bits);

}  // namespace irm::diff
