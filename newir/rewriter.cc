// Rewriter helpers.
#include "newir/rewriter.h"

#include <fmt/format.h>

namespace irm::newir {

Status EraseOp(Operation* op) {
  if (op->parent_block() == nullptr) {
    return Status(StatusCode::kInvalidArgument, LocationOf(*op),
                  fmt::format("cannot erase '{}': it is not in a block", op->name()));
  }
  for (size_t i = 0; i < op->num_results(); ++i) {
    if (!op->result(i)->use_empty()) {
      return Status(StatusCode::kInvalid, LocationOf(*op),
                    fmt::format("cannot erase '{}': result {} still has {} use(s)", op->name(), i,
                                op->result(i)->use_count()));
    }
  }
  if (op->HasUsedResults()) {
    return Status(StatusCode::kInvalid, LocationOf(*op),
                  fmt::format("cannot erase '{}': a value defined in its regions is still used "
                              "outside it",
                              op->name()));
  }
  op->parent_block()->Remove(op);  // the returned owner frees the op here
  return Status::Ok();
}

Status ReplaceOp(Operation* op, const std::vector<Value*>& values) {
  if (values.size() != op->num_results()) {
    return Status(StatusCode::kInvalidArgument, LocationOf(*op),
                  fmt::format("cannot replace '{}': it has {} results but {} values were given",
                              op->name(), op->num_results(), values.size()));
  }
  for (size_t i = 0; i < values.size(); ++i) op->result(i)->ReplaceAllUsesWith(values[i]);
  return EraseOp(op);
}

void MoveBefore(Operation* op, Operation* before) {
  if (op == before) return;
  Block* to = before->parent_block();
  to->Insert(before, op->parent_block()->Remove(op));
}

void MoveAfter(Operation* op, Operation* after) {
  if (op == after) return;
  Block* to = after->parent_block();
  std::unique_ptr<Operation> owned = op->parent_block()->Remove(op);
  to->Insert(after->next(), std::move(owned));
}

void MoveToEnd(Operation* op, Block& block) { block.PushBack(op->parent_block()->Remove(op)); }

}  // namespace irm::newir
