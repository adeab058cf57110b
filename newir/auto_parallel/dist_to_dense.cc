// One rank's dense program (dist_to_dense.h).
#include "newir/auto_parallel/dist_to_dense.h"

#include <fmt/format.h>

#include "newir/attributes.h"
#include "newir/auto_parallel/shard_layout.h"
#include "newir/builder.h"
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

// A pd_op.embedding whose table is sharded by rows on a mesh holding `rank` becomes
// pd_op.c_embedding (weight, x) {start_index: the first row the rank holds, vocab_size: the
// table's rows}, which looks up the ids its rows hold and gives zeros for the others: the kernel
// Paddle's EmbeddingInferSpmd leaves the Partial sum to (paddle/phi/infermeta/spmd_rules/
// embedding.h: row-wise parallel is c_embedding's, used by the static graph).
Status VocabParallelLookup(Operation& op, int64_t rank) {
  const OperationDistAttr* dist = op.attribute("op_dist_attr").AsOperationDist();
  if (dist == nullptr || dist->operands.size() < 2) return Status::Ok();
  const TensorDistAttr* table = dist->operands[1].AsTensorDist();
  if (table == nullptr || table->dims_mapping.empty() || table->dims_mapping[0] < 0) {
    return Status::Ok();
  }
  const std::optional<std::vector<int64_t>> coordinate = MeshCoordinate(table->mesh, rank);
  if (!coordinate) return Status::Ok();  // not the rank's op
  const Value* weight = op.operand(1);
  const std::vector<int64_t>& rows = weight->type().dims();
  const auto mesh_dim = static_cast<size_t>(table->dims_mapping[0]);
  StatusOr<ShardPiece> piece =
      PieceOf(rows.at(0), table->mesh.shape[mesh_dim], (*coordinate)[mesh_dim]);
  if (!piece.ok()) return Status(piece.status().code(), LocationOf(op), piece.status().message());
  AttributeMap attributes;
  for (const auto& [name, value] : op.attributes()) {
    if (name != "padding_idx" && name != "sparse") attributes.emplace(name, value);
  }
  attributes.insert_or_assign("start_index", Attribute::Int64(piece->offset));
  attributes.insert_or_assign("vocab_size", Attribute::Int64(rows.at(0)));
  Builder b(*op.parent_block());
  b.SetInsertionPoint(op);
  Operation* lookup = b.Create("pd_op.c_embedding", {op.operand(1), op.operand(0)},
                               {op.result(0)->type()}, std::move(attributes));
  op.result(0)->ReplaceAllUsesWith(lookup->result(0));
  return EraseOp(&op);
}

// Paddle's dist_to_dense_pass.cc: a distributed pd_op.reshape's shape operand, a
// pd_op.full_int_array, becomes the rank's local dims of the result (a dynamic dim stays -1).
// A shape read by other ops too is copied first, so that only this reshape changes.
Status LocaliseReshapeShape(Operation& reshape) {
  Value* shape = reshape.num_operands() > 1 ? reshape.operand(1) : nullptr;
  Operation* producer = shape != nullptr ? shape->defining_op() : nullptr;
  if (producer == nullptr || producer->name() != "pd_op.full_int_array") {
    return Status(StatusCode::kUnimplemented, LocationOf(reshape),
                  "a distributed reshape's shape must be made by a pd_op.full_int_array");
  }
  if (shape->use_count() > 1) {
    Builder b(*reshape.parent_block());
    b.SetInsertionPoint(reshape);
    IrMapping mapping;
    producer = b.Clone(*producer, mapping);
    reshape.SetOperand(1, producer->result(0));
  }
  std::vector<Attribute> dims;
  for (int64_t d : reshape.result(0)->type().dims()) dims.push_back(Attribute::Int64(d));
  producer->SetAttribute("value", Attribute::Array(std::move(dims)));
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
  // Before the layouts go: the row-parallel lookups, and which reshapes were distributed.
  std::vector<Operation*> reshapes;
  for (Operation* op : ops) {
    if (op->name() == "pd_op.reshape" && op->HasAttribute("op_dist_attr")) reshapes.push_back(op);
    if (op->name() == "pd_op.embedding") IRM_RETURN_IF_ERROR(VocabParallelLookup(*op, rank));
  }
  ops.clear();
  program.module().Walk([&](Operation* op) {
    if (op != &program.module()) ops.push_back(op);
  });
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
  IRM_RETURN_IF_ERROR(status);
  for (Operation* reshape : reshapes) IRM_RETURN_IF_ERROR(LocaliseReshapeShape(*reshape));
  return Status::Ok();
}

}  // namespace irm::newir
