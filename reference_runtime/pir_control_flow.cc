// Control flow of the new-IR executor: pd_op.if runs its true region (0) or its false region (1)
// by a bool condition and takes the values its cf.yield passes as results; pd_op.while binds its
// loop values to the body block's arguments and runs the body while the condition holds, each
// cf.yield passing [next condition, next loop values...]; the last loop values are its results.
// Values pass by sharing storage, as PIR's in-place ops inside a region expect (the body's
// increment_ on a block argument updates the tensor the loop carries). A loop may run long;
// there is no iteration limit.
#include <fmt/format.h>

#include <utility>

#include "newir/block.h"
#include "reference_runtime/pir_interpreter.h"

namespace irm::rt {

StatusOr<bool> PirInterpreter::Condition(const newir::Operation& op, int index, const PirSlot& slot,
                                         const std::string& what) const {
  if (slot.is_vector || slot.tensor.dtype() != DType::kBool || slot.tensor.numel() != 1) {
    return Fail(StatusCode::kInvalid, op, index,
                fmt::format("{} must be a bool tensor holding one value, got {}", what,
                            slot.is_vector ? "a vector" : slot.tensor.Describe()));
  }
  // Read as a byte: any non-zero byte is true, whatever wrote it.
  return static_cast<const uint8_t*>(slot.tensor.raw())[0] != 0;
}

StatusOr<std::vector<PirSlot>> PirInterpreter::RunRegion(const newir::Operation& op, int index,
                                                         size_t region, int depth) {
  if (region >= op.num_regions() || op.region(region).empty()) {
    return Fail(StatusCode::kInvalid, op, index, fmt::format("region {} has no block", region));
  }
  const newir::Block& block = op.region(region).front();
  if (block.empty() || block.back()->name() != "cf.yield") {
    return Fail(StatusCode::kInvalid, op, index,
                fmt::format("region {} does not end with cf.yield", region));
  }
  frames_.push_back({region, index, &op});
  StatusOr<std::vector<PirSlot>> yielded = RunBlock(block, depth + 1);
  frames_.pop_back();
  return yielded;
}

Status PirInterpreter::RunIf(const newir::Operation& op, int index, int depth) {
  IRM_ASSIGN_OR_RETURN(const PirSlot* cond_slot, Read(op, index, 0));
  IRM_ASSIGN_OR_RETURN(const bool cond, Condition(op, index, *cond_slot, "cond (operand 0)"));
  const size_t region = cond ? 0 : 1;
  IRM_ASSIGN_OR_RETURN(std::vector<PirSlot> yielded, RunRegion(op, index, region, depth));
  if (yielded.size() != op.num_results()) {
    return Fail(StatusCode::kInvalid, op, index,
                fmt::format("region {} yields {} values but pd_op.if has {} results", region,
                            yielded.size(), op.num_results()));
  }
  for (size_t i = 0; i < yielded.size(); ++i) Bind(op.result(i), std::move(yielded[i]));
  return Status::Ok();
}

Status PirInterpreter::RunWhile(const newir::Operation& op, int index, int depth) {
  if (op.num_operands() < 1 || op.num_regions() != 1 || op.region(0).empty()) {
    return Fail(StatusCode::kInvalid, op, index, "needs a cond operand and one body region");
  }
  IRM_ASSIGN_OR_RETURN(const PirSlot* cond_slot, Read(op, index, 0));
  IRM_ASSIGN_OR_RETURN(bool cond, Condition(op, index, *cond_slot, "cond (operand 0)"));
  std::vector<PirSlot> values;
  for (size_t i = 1; i < op.num_operands(); ++i) {
    IRM_ASSIGN_OR_RETURN(const PirSlot* slot, Read(op, index, i));
    values.push_back(*slot);
  }
  const newir::Block& body = op.region(0).front();
  if (body.num_arguments() != values.size() || op.num_results() != values.size()) {
    return Fail(StatusCode::kInvalid, op, index,
                fmt::format("has {} loop values, {} body arguments and {} results", values.size(),
                            body.num_arguments(), op.num_results()));
  }
  while (cond) {
    for (size_t k = 0; k < values.size(); ++k) Bind(body.argument(k), std::move(values[k]));
    IRM_ASSIGN_OR_RETURN(std::vector<PirSlot> yielded, RunRegion(op, index, 0, depth));
    if (yielded.size() != values.size() + 1) {
      return Fail(StatusCode::kInvalid, op, index,
                  fmt::format("the body's cf.yield passes {} values but needs {} (the next cond "
                              "and the loop values)",
                              yielded.size(), values.size() + 1));
    }
    IRM_ASSIGN_OR_RETURN(cond, Condition(op, index, yielded[0], "the body's next cond"));
    for (size_t k = 0; k < values.size(); ++k) values[k] = std::move(yielded[k + 1]);
  }
  for (size_t k = 0; k < values.size(); ++k) Bind(op.result(k), std::move(values[k]));
  return Status::Ok();
}

}  // namespace irm::rt
