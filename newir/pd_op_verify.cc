// The pd_op verifier hooks: control-flow yields, matmul inner dims, elementwise broadcasting.
#include "newir/pd_op_verify.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>

#include "newir/block.h"

namespace irm::newir {
namespace {

Status Invalid(const Operation& op, std::string message) {
  return Status(StatusCode::kInvalid, LocationOf(op), std::move(message));
}

bool IsTensor(const Type& t) {
  return t.kind() == TypeKind::kDenseTensor || t.kind() == TypeKind::kDistDenseTensor;
}

bool HasDims(const Type& t) {
  switch (t.kind()) {
    case TypeKind::kDenseTensor:
    case TypeKind::kDistDenseTensor:
    case TypeKind::kDenseTensorArray:
    case TypeKind::kSelectedRows:
      return true;
    default:
      return false;
  }
}

// Null types are reported where the value is defined; the hooks skip them.
const Type* TypeOf(const Value* v) {
  return v != nullptr && !v->type().IsNull() ? &v->type() : nullptr;
}

bool IsBoolTensor(const Type& t) { return IsTensor(t) && t.dtype().kind() == TypeKind::kBool; }

// The cf.yield ending `block`, or null when the block does not end with one (the generic
// terminator check reports that).
const Operation* YieldOf(const Block& block) {
  const Operation* last = block.back();
  return last != nullptr && last->name() == "cf.yield" ? last : nullptr;
}

bool TypesCompatibleAt(const Type& a, const Type& b, int depth) {
  if (a == b) return true;
  if (a.kind() != b.kind()) return false;
  if (a.kind() == TypeKind::kVector) {
    // Types nest only as deep as someone built them; past this depth only equality counts.
    if (depth > 64 || a.elements().size() != b.elements().size()) return false;
    for (size_t i = 0; i < a.elements().size(); ++i) {
      if (!TypesCompatibleAt(a.elements()[i], b.elements()[i], depth + 1)) return false;
    }
    return true;
  }
  if (!HasDims(a) || a.dtype() != b.dtype() || a.dims().size() != b.dims().size()) return false;
  for (size_t i = 0; i < a.dims().size(); ++i) {
    const int64_t x = a.dims()[i];
    const int64_t y = b.dims()[i];
    if (x != y && x >= 0 && y >= 0) return false;
  }
  return true;
}

const char* Plural(size_t n, const char* one, const char* many) { return n == 1 ? one : many; }

// The types of a binary op's two tensor operands; {null, null} when it has not exactly two
// operands or one is not a tensor (the table checks report that).
std::pair<const Type*, const Type*> TwoTensorOperands(const Operation& op) {
  if (op.num_operands() != 2) return {nullptr, nullptr};
  const Type* x = TypeOf(op.operand(0));
  const Type* y = TypeOf(op.operand(1));
  if (x == nullptr || y == nullptr || !IsTensor(*x) || !IsTensor(*y)) return {nullptr, nullptr};
  return {x, y};
}

}  // namespace

bool TypesCompatible(const Type& a, const Type& b) { return TypesCompatibleAt(a, b, 0); }

Status VerifyIfOp(const Operation& op) {
  if (op.num_operands() >= 1) {
    const Type* cond = TypeOf(op.operand(0));
    if (cond != nullptr && !IsBoolTensor(*cond)) {
      return Invalid(
          op, fmt::format("cond (operand 0) must be a bool tensor, found {}", cond->ToString()));
    }
  }
  for (size_t r = 0; r < op.num_regions(); ++r) {
    const Region& region = op.region(r);
    for (size_t b = 0; b < region.num_blocks(); ++b) {
      const Operation* yield = YieldOf(region.block(b));
      if (yield == nullptr) continue;
      const std::string where = region.num_blocks() == 1
                                    ? fmt::format("region {}", r)
                                    : fmt::format("block {} of region {}", b, r);
      if (yield->num_operands() != op.num_results()) {
        return Invalid(
            op, fmt::format("{} yields {} {} but pd_op.if has {} {}", where, yield->num_operands(),
                            Plural(yield->num_operands(), "value", "values"), op.num_results(),
                            Plural(op.num_results(), "result", "results")));
      }
      for (size_t i = 0; i < op.num_results(); ++i) {
        const Type* yielded = TypeOf(yield->operand(i));
        const Type* result = TypeOf(op.result(i));
        if (yielded != nullptr && result != nullptr && !TypesCompatible(*yielded, *result)) {
          return Invalid(op, fmt::format("{} yields {} as value {} but result {} is {}", where,
                                         yielded->ToString(), i, i, result->ToString()));
        }
      }
    }
  }
  return Status::Ok();
}

Status VerifyWhileOp(const Operation& op) {
  if (op.num_operands() < 1) return Status::Ok();  // the operand count check reports it
  const size_t loop = op.num_operands() - 1;
  const Type* cond = TypeOf(op.operand(0));
  if (cond != nullptr && !IsBoolTensor(*cond)) {
    return Invalid(
        op, fmt::format("cond (operand 0) must be a bool tensor, found {}", cond->ToString()));
  }
  if (op.num_results() != loop) {
    return Invalid(op, fmt::format("has {} {} but {} loop {} (the operands after cond)",
                                   op.num_results(), Plural(op.num_results(), "result", "results"),
                                   loop, Plural(loop, "value", "values")));
  }
  for (size_t i = 0; i < loop; ++i) {
    const Type* input = TypeOf(op.operand(i + 1));
    const Type* result = TypeOf(op.result(i));
    if (input != nullptr && result != nullptr && !TypesCompatible(*input, *result)) {
      return Invalid(op, fmt::format("result {} is {} but loop value {} (operand {}) is {}", i,
                                     result->ToString(), i, i + 1, input->ToString()));
    }
  }
  if (op.num_regions() < 1 || op.region(0).empty()) return Status::Ok();
  const Block& body = op.region(0).front();
  if (body.num_arguments() != loop) {
    return Invalid(
        op, fmt::format("the body block has {} {} but there {} {} loop {}", body.num_arguments(),
                        Plural(body.num_arguments(), "argument", "arguments"),
                        Plural(loop, "is", "are"), loop, Plural(loop, "value", "values")));
  }
  for (size_t i = 0; i < loop; ++i) {
    const Type* input = TypeOf(op.operand(i + 1));
    const Type* arg = TypeOf(body.argument(i));
    if (input != nullptr && arg != nullptr && !TypesCompatible(*input, *arg)) {
      return Invalid(op, fmt::format("body argument {} is {} but loop value {} (operand {}) is {}",
                                     i, arg->ToString(), i, i + 1, input->ToString()));
    }
  }
  const Operation* yield = YieldOf(body);
  if (yield == nullptr) return Status::Ok();
  if (yield->num_operands() != loop + 1) {
    return Invalid(
        op, fmt::format("the body's cf.yield passes {} {} but needs {} (the next cond "
                        "and {} loop {})",
                        yield->num_operands(), Plural(yield->num_operands(), "value", "values"),
                        loop + 1, loop, Plural(loop, "value", "values")));
  }
  const Type* next_cond = TypeOf(yield->operand(0));
  if (next_cond != nullptr && !IsBoolTensor(*next_cond)) {
    return Invalid(op, fmt::format("the body's cf.yield passes {} as the next cond; it must be a "
                                   "bool tensor",
                                   next_cond->ToString()));
  }
  for (size_t i = 0; i < loop; ++i) {
    const Type* input = TypeOf(op.operand(i + 1));
    const Type* next = TypeOf(yield->operand(i + 1));
    if (input != nullptr && next != nullptr && !TypesCompatible(*next, *input)) {
      return Invalid(op, fmt::format("the body's cf.yield passes {} as loop value {} (its operand "
                                     "{}) but the loop value is {}",
                                     next->ToString(), i, i + 1, input->ToString()));
    }
  }
  return Status::Ok();
}

Status VerifyMatmulOp(const Operation& op) {
  const auto [x, y] = TwoTensorOperands(op);
  if (x == nullptr) return Status::Ok();
  const std::vector<int64_t>& xd = x->dims();
  const std::vector<int64_t>& yd = y->dims();
  if (xd.empty() || yd.empty()) return Status::Ok();
  const bool* tx_attr = op.attribute("transpose_x").AsBool();
  const bool* ty_attr = op.attribute("transpose_y").AsBool();
  const bool tx = tx_attr != nullptr && *tx_attr;
  const bool ty = ty_attr != nullptr && *ty_attr;
  // A transposed 1-D operand is left to the kernel: Paddle's shape rules for it are not simple.
  if ((xd.size() == 1 && tx) || (yd.size() == 1 && ty)) return Status::Ok();
  const size_t xr = xd.size();
  const size_t yr = yd.size();
  const int64_t kx = xr == 1 ? xd[0] : (tx ? xd[xr - 2] : xd[xr - 1]);
  const int64_t ky = yr == 1 ? yd[0] : (ty ? yd[yr - 1] : yd[yr - 2]);
  if (kx < 0 || ky < 0 || kx == ky) return Status::Ok();
  const std::string x_what =
      xr == 1 ? fmt::format("length {}", kx)
              : (tx ? fmt::format("{} rows, transposed", kx) : fmt::format("{} columns", kx));
  const std::string y_what =
      yr == 1 ? fmt::format("length {}", ky)
              : (ty ? fmt::format("{} columns, transposed", ky) : fmt::format("{} rows", ky));
  return Invalid(op, fmt::format("inner dims differ: x is {} ({}) but y is {} ({})", x->ToString(),
                                 x_what, y->ToString(), y_what));
}

Status VerifyElementwiseBinaryOp(const Operation& op) {
  const auto [x, y] = TwoTensorOperands(op);
  if (x == nullptr) return Status::Ok();
  const std::vector<int64_t>& xd = x->dims();
  const std::vector<int64_t>& yd = y->dims();
  const size_t n = std::min(xd.size(), yd.size());
  for (size_t k = 1; k <= n; ++k) {
    const size_t i = xd.size() - k;
    const size_t j = yd.size() - k;
    const int64_t a = xd[i];
    const int64_t b = yd[j];
    if (a == b || a == 1 || b == 1 || a < 0 || b < 0) continue;
    return Invalid(op, fmt::format("x {} and y {} do not broadcast: dim {} of x is {} but dim {} "
                                   "of y is {}",
                                   x->ToString(), y->ToString(), i, a, j, b));
  }
  return Status::Ok();
}

}  // namespace irm::newir
