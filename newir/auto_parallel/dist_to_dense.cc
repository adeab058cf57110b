// One rank's dense program (dist_to_dense.h).
#include "newir/auto_parallel/dist_to_dense.h"

#include <fmt/format.h>

#include "newir/attributes.h"
#include "newir/auto_parallel/shard_layout.h"
#include "newir/rewriter.h"

namespace irm::newir {
namespace {

StatusOr<Type> LocalType(const Type& type, int64_t rank) {
  if (type.kind() == TypeKind::kVector) {
    std::vector<Type> elements;
    for (const Type& element : type.elements()) {
      IRM_ASSIGN_OR_RETURN(Type local, LocalType(element, rank));
      elements.push_back(std::move(local));
    }
    return Type::Vector(std::move(elements));
  }
  const TensorDistAttr* dist = type.dist_attr();
  if (dist == nullptr) return type;
  const int64_t holder = MeshCoordinate(dist->mesh, rank) || dist->mesh.process_ids.empty()
                             ? rank
                             : dist->mesh.process_ids.front();
  return LocalDenseTypeOn(type, holder);
}

Status Retype(Value& value, int64_t rank, const Operation& at) {
  StatusOr<Type> local = LocalType(value.type(), rank);
  if (!local.ok()) return Status(local.status().code(), LocationOf(at), local.status().message());
  value.set_type(*std::move(local));
  return Status::Ok();
}

}  // namespace

Status DistToDense(Program& program, int64_t rank) {
  std::vector<Operation*> ops;
  program.module().Walk([&](Operation* op) {
    if (op != &program.module()) ops.push_back(op);
  });
  for (Operation* op : ops) {
    if (op->name() == "dist_op.reshard") {
      return Status(StatusCode::kInvalid, LocationOf(*op),
                    "dist_op.reshard is left: run lower-reshard before dist-to-dense");
    }
  }
  std::vector<Operation*> unwrapped;
  for (Operation* op : ops) {
    const std::string_view name = op->name();
    const bool shard = name == "dist_op.shard_tensor";
    if (!shard && name != "dist_op.dtensor_from_local" && name != "dist_op.dtensor_to_local") {
      continue;
    }
    Value* inner = op->operand(0);
    if (shard) {
      // The operand becomes the local tensor the shard stands for.
      StatusOr<Type> local = LocalType(op->result(0)->type(), rank);
      if (!local.ok()) {
        return Status(local.status().code(), LocationOf(*op), local.status().message());
      }
      inner->set_type(*local);
      if (Operation* producer = inner->defining_op();
          producer != nullptr && producer->name() == "pd_op.data") {
        producer->SetAttribute("shape", Attribute::IntArrayFrom(local->dims()));
      }
    }
    op->result(0)->ReplaceAllUsesWith(inner);
    unwrapped.push_back(op);
  }
  for (Operation* op : unwrapped) IRM_RETURN_IF_ERROR(EraseOp(op));
  Status status = Status::Ok();
  program.module().Walk([&](Operation* op) {
    if (!status.ok() || op == &program.module()) return;
    op->RemoveAttribute("op_dist_attr");
    for (size_t i = 0; i < op->num_results() && status.ok(); ++i) {
      status = Retype(*op->result(i), rank, *op);
    }
    for (size_t r = 0; r < op->num_regions() && status.ok(); ++r) {
      Region& region = op->region(r);
      for (size_t b = 0; b < region.num_blocks() && status.ok(); ++b) {
        Block& block = region.block(b);
        for (size_t a = 0; a < block.num_arguments() && status.ok(); ++a) {
          status = Retype(*block.argument(a), rank, *op);
        }
      }
    }
  });
  return status;
}

}  // namespace irm::newir
