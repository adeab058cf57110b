// Op table of the `pd_dist` dialect (Paddle's paddle/fluid/pir/dialect/distributed/ir/dist_op.h):
// the ops that move tensors between dense and distributed types and between distributions. Paddle
// registers them in the pd_dist dialect but names them "dist_op.<op>", so this file also holds the
// mapping between op-name prefixes and dialects.
#include "newir/dialect.h"

namespace irm::newir {
namespace {

// Every dist op carries its distribution in `op_dist_attr` (Paddle's ShardTensorOp builder takes
// a tensor_dist_attr but stores an OperationDistAttribute under this name).
AttrSpec OpDistAttr() { return {"op_dist_attr", AttrKind::kOperationDist, true, {}}; }

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
  // dtensor_from_local / dtensor_to_local result names are not in paddle-ir.md; "out" is assumed.
  std::vector<OpInfo> ops = {
      {.name = "dist_op.shard_tensor",
       .summary = "turns a dense tensor into a distributed tensor (dense -> pd_dist.tensor)",
       .operands = {{"input"}},
       .results = {{"out"}},
       .attributes = {OpDistAttr()}},
      {.name = "dist_op.reshard",
       .summary = "changes the distribution of a distributed tensor",
       .operands = {{"x"}},
       .results = {{"out"}},
       .attributes = {OpDistAttr()}},
      {.name = "dist_op.dtensor_from_local",
       .summary = "wraps a rank's local dense tensor as a distributed tensor",
       .operands = {{"x"}},
       .results = {{"out"}},
       .attributes = {OpDistAttr()}},
      {.name = "dist_op.dtensor_to_local",
       .summary = "takes the local dense tensor of a distributed tensor",
       .operands = {{"x"}},
       .results = {{"out"}},
       .attributes = {OpDistAttr()}},
  };
  for (OpInfo& op : ops) IRM_RETURN_IF_ERROR(registry.Register(std::move(op)));
  return Status::Ok();
}

}  // namespace irm::newir
