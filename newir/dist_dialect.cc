// Op table of the `pd_dist` dialect (Paddle's paddle/fluid/pir/dialect/distributed/ir/dist_op.h):
// the ops that move tensors between dense and distributed types and between distributions. Paddle
// registers them in the pd_dist dialect but names them "dist_op.<op>", so this file also holds the
// mapping between op-name prefixes and dialects, and the ops' verifier hooks (which side of each
// op is dense and which distributed; the op_dist_attr itself is checked for every op by
// verify_dist.h).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "newir/dialect.h"
#include "newir/operation.h"

namespace irm::newir {
namespace {

// shard_tensor and reshard carry their distribution in `op_dist_attr` (Paddle's ShardTensorOp
// builder takes a tensor_dist_attr but stores an OperationDistAttribute under this name).
// dtensor_from_local and dtensor_to_local have no attributes in Paddle (dist_op.cc: attributes_num
// 0; the dist type of their dist side says it all), so there it is optional.
AttrSpec OpDistAttr() { return {"op_dist_attr", AttrKind::kOperationDist, true, {}}; }
AttrSpec OptionalOpDistAttr() { return {"op_dist_attr", AttrKind::kOperationDist, false, {}}; }

enum class Side { kDense, kDist };

// What the one operand and the one result of a dist op are, and how their types relate (as
// Paddle's dist_op.cc builds them): kSameDense (shard_tensor, reshard: only the distribution
// changes, the global dense type stays), kFromLocal (the operand is the result's local tensor),
// kToLocal (the result is the operand's local tensor). Null types pass (Paddle's reshard allows
// them).
enum class Relation { kSameDense, kFromLocal, kToLocal };

std::string LocalDims(const Type& dist) {
  return fmt::format("[{}]", fmt::join(dist.local_dims(), ","));
}

Status VerifyDistOp(const Operation& op, Side in, Side out, Relation relation) {
  if (op.num_operands() != 1 || op.num_results() != 1 || op.operand(0) == nullptr) {
    return Status::Ok();  // the table checks report counts and empty slots
  }
  const Type& x = op.operand(0)->type();
  const Type& y = op.result(0)->type();
  auto invalid = [&op](std::string message) {
    return Status(StatusCode::kInvalid, LocationOf(op), std::move(message));
  };
  auto check_side = [&](const Type& t, Side side, const char* what) -> Status {
    if (t.IsNull()) return Status::Ok();
    const TypeKind want =
        side == Side::kDense ? TypeKind::kDenseTensor : TypeKind::kDistDenseTensor;
    if (t.kind() == want) return Status::Ok();
    return invalid(fmt::format("{} must be a {}, found {}", what,
                               side == Side::kDense ? "dense tensor" : "pd_dist.tensor",
                               t.ToString()));
  };
  IRM_RETURN_IF_ERROR(check_side(x, in, "operand 0"));
  IRM_RETURN_IF_ERROR(check_side(y, out, "result 0"));
  if (x.IsNull() || y.IsNull()) return Status::Ok();
  switch (relation) {
    case Relation::kSameDense: {
      const Type x_dense = in == Side::kDense ? x : x.dense();
      if (x_dense != y.dense()) {
        return invalid(
            fmt::format("{} changes only the distribution, but operand 0 is {} and "
                        "result 0 is {}",
                        op.name(), x_dense.ToString(), y.dense().ToString()));
      }
      break;
    }
    case Relation::kFromLocal:
      if (x.dtype() != y.dtype() || x.dims() != y.local_dims()) {
        return invalid(
            fmt::format("operand 0 ({}) is not the local tensor of result 0 ({}, local "
                        "dims {})",
                        x.ToString(), y.ToString(), LocalDims(y)));
      }
      break;
    case Relation::kToLocal:
      if (x.dtype() != y.dtype() || y.dims() != x.local_dims()) {
        return invalid(
            fmt::format("result 0 ({}) is not the local tensor of operand 0 ({}, local "
                        "dims {})",
                        y.ToString(), x.ToString(), LocalDims(x)));
      }
      break;
  }
  return Status::Ok();
}

Status VerifyShardTensor(const Operation& op) {
  return VerifyDistOp(op, Side::kDense, Side::kDist, Relation::kSameDense);
}
Status VerifyReshard(const Operation& op) {
  return VerifyDistOp(op, Side::kDist, Side::kDist, Relation::kSameDense);
}
Status VerifyDtensorFromLocal(const Operation& op) {
  return VerifyDistOp(op, Side::kDense, Side::kDist, Relation::kFromLocal);
}
Status VerifyDtensorToLocal(const Operation& op) {
  return VerifyDistOp(op, Side::kDist, Side::kDense, Relation::kToLocal);
}

}  // namespace

std::string_view DialectOfOpName(std::string_view op_name) {
  const size_t dot = op_name.find('.');
  if (dot == std::string_view::npos) return {};
  const std::string_view prefix = op_name.substr(0, dot);
  return prefix == kDistOpPrefix ? std::string_view("pd_dist") : prefix;
}

std::string_view OpNamePrefixOfDialect(std::string_view dialect) {
  return dialect == "pd_dist" ? kDistOpPrefix : dialect;
}

Status RegisterDistDialect(OpRegistry& registry) {
  // Operand and result names follow dist_op.h (shard_tensor: input -> out; the others: x -> out).
  // dtensor_from_local / dtensor_to_local: result names not checked against Paddle's sources;
  // "out" is assumed.
  std::vector<OpInfo> ops = {
      {.name = "dist_op.shard_tensor",
       .summary = "turns a dense tensor into a distributed tensor (dense -> pd_dist.tensor)",
       .operands = {{"input"}},
       .results = {{"out"}},
       .attributes = {OpDistAttr()},
       .verify = VerifyShardTensor},
      {.name = "dist_op.reshard",
       .summary = "changes the distribution of a distributed tensor",
       .operands = {{"x"}},
       .results = {{"out"}},
       .attributes = {OpDistAttr()},
       .verify = VerifyReshard},
      {.name = "dist_op.dtensor_from_local",
       .summary = "wraps a rank's local dense tensor as a distributed tensor",
       .operands = {{"x"}},
       .results = {{"out"}},
       .attributes = {OptionalOpDistAttr()},
       .verify = VerifyDtensorFromLocal},
      {.name = "dist_op.dtensor_to_local",
       .summary = "takes the local dense tensor of a distributed tensor",
       .operands = {{"x"}},
       .results = {{"out"}},
       .attributes = {OptionalOpDistAttr()},
       .verify = VerifyDtensorToLocal},
  };
  for (OpInfo& op : ops) IRM_RETURN_IF_ERROR(registry.Register(std::move(op)));
  return Status::Ok();
}

}  // namespace irm::newir
