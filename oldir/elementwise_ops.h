// The legacy elementwise family (elementwise_add, _sub, _mul, _div, _max, _mod, _floordiv, _pow):
// one row per op saying what every legacy table needs to know about it — its phi kernel, whether
// it has a grad op and what that grad op reads. The schema rows (op_schema.cc), the grad rules
// (grad_makers.cc) and the legacy binding rows (reference_runtime/legacy_bindings.cc) are
// generated from this list, so a new op of the family is one row here on the legacy side. The
// PIR side has its own list (newir/pd_op_elementwise.h) and the translator its own rows: the
// three stay independent (docs/architecture.md, invariant 1).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace irm::oldir {

// Whether a grad op re-feeds the forward output Out.
enum class ElementwiseGradOut : uint8_t {
  kNo,           // X, Y, Out@GRAD only
  kDispensable,  // Out may be there (pre-2019 writers fed it) but nothing reads it
  kRequired,     // the grad maker re-feeds Out and the grad kernel reads it (divide_grad)
};

struct LegacyElementwiseOp {
  std::string_view type;    // "elementwise_add"
  std::string_view kernel;  // phi's kernel of the forward op: "add"
  // The grad op and its phi kernel; both empty when Paddle registers no grad maker we model (the
  // op then has no grad rule and autodiff stops at it).
  std::string_view grad_type = {};  // "elementwise_add_grad"
  std::string_view grad_kernel = {};
  // The first Paddle release (PaddleVersion) whose grad maker always feeds X; 0: every release.
  int64_t grad_x_since = 0;
  ElementwiseGradOut grad_out = ElementwiseGradOut::kNo;

  bool has_grad() const { return !grad_type.empty(); }
};

// Every op of the family, in the order above.
const std::vector<LegacyElementwiseOp>& LegacyElementwiseOps();
// The row of a forward op type, or null.
const LegacyElementwiseOp* FindLegacyElementwiseOp(std::string_view type);

}  // namespace irm::oldir
