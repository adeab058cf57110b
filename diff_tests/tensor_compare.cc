// Tensor comparison: metrics and tier verdicts (tensor_compare.h). Every element is read as a
// double (exact for every dtype the runtime computes with, int64 beyond 2^53 aside) and its bits
// as an integer for the ULP distance.
#include "diff_tests/tensor_compare.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "reference_runtime/dtype_visit.h"

namespace irm::diff {
namespace {

using rt::Tensor;

constexpr double kInf = std::numeric_limits<double>::infinity();

int BitWidth(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
    case DType::kBFloat16:
      return 16;
    case DType::kFloat32:
      return 32;
    case DType::kFloat64:
      return 64;
    default:
      return 0;
  }
}

uint64_t ElementBits(const Tensor& t, int64_t i) {
  const auto* bytes = static_cast<const unsigned char*>(t.raw());
  switch (BitWidth(t.dtype())) {
    case 16: {
      uint16_t v;
      std::memcpy(&v, bytes + i * 2, 2);
      return v;
    }
    case 32: {
      uint32_t v;
      std::memcpy(&v, bytes + i * 4, 4);
      return v;
    }
    case 64: {
      uint64_t v;
      std::memcpy(&v, bytes + i * 8, 8);
      return v;
    }
    default:
      return 0;
  }
}

// Whether two non-finite-involving values agree: both NaN, or the same infinity.
bool NonFiniteAgree(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b;
}

bool ElementBitsEqual(const Tensor& a, const Tensor& b, int64_t i) {
  const size_t size = DTypeSize(a.dtype());
  return std::memcmp(static_cast<const char*>(a.raw()) + i * size,
                     static_cast<const char*>(b.raw()) + i * size, size) == 0;
}

// ||x - s|| over the positions where both are finite.
double ErrorAgainst(const Tensor& x, const Tensor& shadow) {
  double sum = 0.0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double v = rt::ElementAsDouble(x, i);
    const double s = rt::ElementAsDouble(shadow, i);
    if (!std::isfinite(v) || !std::isfinite(s)) continue;
    sum += (v - s) * (v - s);
  }
  return std::sqrt(sum);
}

}  // namespace

const char* TierName(Tier tier) {
  switch (tier) {
    case Tier::kExact:
      return "exact";
    case Tier::kReordered:
      return "reordered";
    case Tier::kNoiseFloor:
      return "noise-floor";
  }
  return "exact";
}

std::optional<Tier> TierFromName(std::string_view name) {
  if (name == "exact") return Tier::kExact;
  if (name == "reordered") return Tier::kReordered;
  if (name == "noise-floor") return Tier::kNoiseFloor;
  return std::nullopt;
}

ReorderedBounds ReorderedBoundsFor(DType dtype) {
  switch (dtype) {
    case DType::kFloat64:
      return {1e-12, 1e-12, 1e-10};
    case DType::kFloat32:
      return {1e-5, 1e-5, 1e-4};
    case DType::kFloat16:
      return {2e-3, 1e-3, 1e-3};
    case DType::kBFloat16:
      return {1.6e-2, 1e-2, 1.6e-2};
    default:
      return {};
  }
}

double NoiseFloorFactor(DType dtype) {
  return dtype == DType::kFloat16 || dtype == DType::kBFloat16 ? 3.0 : 2.0;
}

uint64_t UlpDistance(DType dtype, uint64_t a_bits, uint64_t b_bits) {
  const int width = BitWidth(dtype);
  if (width == 0) return 0;
  const uint64_t sign = uint64_t{1} << (width - 1);
  const uint64_t mask = width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  // Maps the bits onto a line where neighbours differ by one: negatives below `sign`, positives
  // above, both zeros on it.
  auto key = [&](uint64_t bits) {
    bits &= mask;
    const uint64_t magnitude = bits & ~sign;
    return (bits & sign) != 0 ? sign - magnitude : sign + magnitude;
  };
  const uint64_t ka = key(a_bits);
  const uint64_t kb = key(b_bits);
  return ka > kb ? ka - kb : kb - ka;
}

Comparison CompareTensors(const Tensor& a, const Tensor& b, Tier tier, const Tensor* shadow) {
  Comparison c;
  if (!a.defined() || !b.defined()) {
    c.reason = a.defined() ? "the reference has no tensor" : "the candidate has no tensor";
    return c;
  }
  if (a.dtype() != b.dtype()) {
    c.reason = fmt::format("dtype {} vs {}", DTypeName(a.dtype()), DTypeName(b.dtype()));
    return c;
  }
  if (a.shape() != b.shape()) {
    c.reason =
        fmt::format("shape {} vs {}", rt::ShapeToString(a.shape()), rt::ShapeToString(b.shape()));
    return c;
  }
  if (tier == Tier::kNoiseFloor && shadow == nullptr) tier = Tier::kReordered;
  TensorMetrics& m = c.metrics;
  m.numel = a.numel();
  m.bits_equal = std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
  const bool floating = rt::IsFloatingDType(a.dtype());
  const ReorderedBounds bounds = ReorderedBoundsFor(a.dtype());

  double max_b = 0.0;
  for (int64_t i = 0; i < m.numel; ++i) {
    const double y = rt::ElementAsDouble(b, i);
    if (std::isfinite(y)) max_b = std::max(max_b, std::fabs(y));
  }
  double diff2 = 0.0, a2 = 0.0, b2 = 0.0, ab = 0.0;
  int64_t beyond_bound = 0;
  std::vector<uint64_t> ulps;
  if (floating) ulps.reserve(static_cast<size_t>(m.numel));
  for (int64_t i = 0; i < m.numel; ++i) {
    const double x = rt::ElementAsDouble(a, i);
    const double y = rt::ElementAsDouble(b, i);
    const bool bits_equal = ElementBitsEqual(a, b, i);
    bool element_fails = false;
    if (!std::isfinite(x) || !std::isfinite(y)) {
      if (!NonFiniteAgree(x, y)) {
        if (m.first_nonfinite_mismatch < 0) m.first_nonfinite_mismatch = i;
        ++m.nonfinite_mismatches;
        element_fails = true;
      }
    } else {
      const double d = std::fabs(x - y);
      if (d > m.max_abs_diff) {
        m.max_abs_diff = d;
        m.max_abs_index = i;
      }
      const double rel = y != 0.0 ? d / std::fabs(y) : (d == 0.0 ? 0.0 : kInf);
      if (rel > m.max_rel_diff) {
        m.max_rel_diff = rel;
        m.max_rel_index = i;
      }
      diff2 += d * d;
      a2 += x * x;
      b2 += y * y;
      ab += x * y;
      if (floating && d > bounds.abs_of_max * max_b + bounds.rel * std::fabs(y)) {
        ++beyond_bound;
        element_fails = true;
      }
      if (!floating && d != 0.0) element_fails = true;
    }
    if (floating && !std::isnan(x) && !std::isnan(y)) {
      ulps.push_back(UlpDistance(a.dtype(), ElementBits(a, i), ElementBits(b, i)));
    }
    if (tier == Tier::kExact ? !bits_equal : element_fails) ++m.mismatch_count;
  }
  m.normwise = b2 > 0.0 ? std::sqrt(diff2) / std::sqrt(b2) : (diff2 == 0.0 ? 0.0 : kInf);
  if (a2 == 0.0 && b2 == 0.0) {
    m.cosine = 1.0;
  } else if (a2 == 0.0 || b2 == 0.0) {
    m.cosine = 0.0;
  } else {
    m.cosine = ab / (std::sqrt(a2) * std::sqrt(b2));
  }
  m.mismatch_percent =
      m.numel > 0 ? 100.0 * static_cast<double>(m.mismatch_count) / static_cast<double>(m.numel)
                  : 0.0;
  if (!ulps.empty()) {
    std::sort(ulps.begin(), ulps.end());
    const size_t n = ulps.size();
    m.ulp_max = ulps.back();
    m.ulp_median =
        n % 2 == 1
            ? static_cast<double>(ulps[n / 2])
            : (static_cast<double>(ulps[n / 2 - 1]) + static_cast<double>(ulps[n / 2])) / 2.0;
  }

  // The verdict.
  if (tier == Tier::kExact || !floating) {
    c.pass = m.bits_equal;
    if (!c.pass)
      c.reason = fmt::format("bits differ at {} of {} elements", m.mismatch_count, m.numel);
    return c;
  }
  if (m.nonfinite_mismatches > 0) {
    c.reason = fmt::format("NaN/Inf differ at {} position{}, first at {}", m.nonfinite_mismatches,
                           m.nonfinite_mismatches == 1 ? "" : "s", m.first_nonfinite_mismatch);
    return c;
  }
  if (tier == Tier::kNoiseFloor) {
    if (shadow->numel() != b.numel()) {
      c.reason = fmt::format("the float64 shadow is {}, the reference {}",
                             rt::ShapeToString(shadow->shape()), rt::ShapeToString(b.shape()));
      return c;
    }
    const double err_a = ErrorAgainst(a, *shadow);
    const double err_b = ErrorAgainst(b, *shadow);
    const double factor = NoiseFloorFactor(a.dtype());
    c.pass = err_a <= factor * err_b;
    if (!c.pass) {
      c.reason =
          fmt::format("error against the float64 shadow {:.6g} > {} x the reference's {:.6g}",
                      err_a, factor, err_b);
    }
    return c;
  }
  if (m.normwise > bounds.normwise) {
    c.reason = fmt::format("normwise {:.6g} > {:g}", m.normwise, bounds.normwise);
    return c;
  }
  if (beyond_bound > 0) {
    c.reason = fmt::format("{} element{} beyond {:g} x max|b| + {:g} x |b|", beyond_bound,
                           beyond_bound == 1 ? "" : "s", bounds.abs_of_max, bounds.rel);
    return c;
  }
  c.pass = true;
  return c;
}

}  // namespace irm::diff
