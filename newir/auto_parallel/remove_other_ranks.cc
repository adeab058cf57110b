// Remove other ranks' ops (remove_other_ranks.h).
#include "newir/auto_parallel/remove_other_ranks.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>
#include <vector>

#include "newir/attributes.h"
#include "newir/rewriter.h"

namespace irm::newir {
namespace {

// The mesh an op runs on, or null for a dense op.
const ProcessMesh* MeshOf(const Operation& op) {
  if (const OperationDistAttr* dist = op.attribute("op_dist_attr").AsOperationDist()) {
    return &dist->mesh;
  }
  if (op.name() == "dist_op.dtensor_from_local" && op.num_results() == 1 &&
      op.result(0)->type().dist_attr() != nullptr) {
    return &op.result(0)->type().dist_attr()->mesh;
  }
  if (op.name() == "dist_op.dtensor_to_local" && op.num_operands() == 1 &&
      op.operand(0) != nullptr && op.operand(0)->type().dist_attr() != nullptr) {
    return &op.operand(0)->type().dist_attr()->mesh;
  }
  return nullptr;
}

bool Holds(const ProcessMesh& mesh, int64_t rank) {
  return std::find(mesh.process_ids.begin(), mesh.process_ids.end(), rank) !=
         mesh.process_ids.end();
}

// The op of `top` that holds `op` (itself, or the op whose region it is in).
const Operation* TopLevel(const Operation* op, const Block& top) {
  while (op != nullptr && op->parent_block() != &top) op = op->parent_op();
  return op;
}

}  // namespace

StatusOr<size_t> RemoveOtherRankOps(Program& program, int64_t rank) {
  std::vector<Operation*> ops;
  for (Operation* op : program.block().ops()) ops.push_back(op);
  std::set<const Operation*> gone;
  for (Operation* op : ops) {
    const ProcessMesh* mesh = MeshOf(*op);
    if (mesh != nullptr && !Holds(*mesh, rank)) gone.insert(op);
  }
  // Readers come after their producers: deciding from the last op up sees every reader first.
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    Operation* op = *it;
    if (gone.count(op) != 0 || op->num_regions() != 0 || MeshOf(*op) != nullptr) continue;
    bool read = false;
    bool read_only_by_gone = true;
    for (Value* result : op->results()) {
      for (const OpOperand* use : result->uses()) {
        read = true;
        read_only_by_gone =
            read_only_by_gone && gone.count(TopLevel(use->owner(), program.block())) != 0;
      }
    }
    if (read && read_only_by_gone) gone.insert(op);
  }
  for (Operation* op : ops) {
    if (gone.count(op) != 0) continue;
    Status refused = Status::Ok();
    op->Walk([&](Operation* inner) {
      for (size_t i = 0; i < inner->num_operands() && refused.ok(); ++i) {
        const Value* value = inner->operand(i);
        const Operation* producer =
            value == nullptr ? nullptr : TopLevel(value->defining_op(), program.block());
        if (producer == nullptr || gone.count(producer) == 0) continue;
        const ProcessMesh* mesh = MeshOf(*producer);
        refused = Status(
            StatusCode::kInvalid, LocationOf(*inner),
            fmt::format("rank {} runs this op, whose operand {} is made by {} only on "
                        "ranks [{}]: a value crosses meshes without a reshard",
                        rank, i, producer->name(),
                        mesh != nullptr ? fmt::format("{}", fmt::join(mesh->process_ids, ", "))
                                        : std::string("of another mesh")));
      }
    });
    IRM_RETURN_IF_ERROR(refused);
  }
  size_t erased = 0;
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    if (gone.count(*it) == 0) continue;
    IRM_RETURN_IF_ERROR(EraseOp(*it));
    ++erased;
  }
  return erased;
}

}  // namespace irm::newir
