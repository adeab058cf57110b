// SPMD completion (spmd_completion.h): op by op, the rule's decision, reshards where operands
// must change layout, op_dist_attr and distributed result types.
#include "newir/auto_parallel/spmd_completion.h"

#include <fmt/format.h>

#include "newir/attributes.h"
#include "newir/auto_parallel/shard_layout.h"
#include "newir/auto_parallel/spmd_rules.h"
#include "newir/builder.h"
#include "newir/operation.h"

namespace irm::newir {
namespace {

// The name a diagnostic gives a value: the legacy variable it came from when the translator
// recorded one, a feed's name, the name of the tensor a dist op wraps, else its producer and
// result index.
std::string NameOf(const Value& value) {
  const Operation* op = value.defining_op();
  if (op == nullptr) return "a block argument";
  if (const AttributeSpan* list = op->attribute("legacy_var_names").AsArray();
      list != nullptr && value.index() < list->size()) {
    if (const std::string_view* name = (*list)[value.index()].AsString();
        name != nullptr && !name->empty()) {
      return std::string(*name);
    }
  }
  if (op->name() == "pd_op.data") {
    if (const std::string_view* name = op->attribute("name").AsString()) return std::string(*name);
  }
  if (op->name().starts_with("dist_op.") && op->num_operands() == 1 && op->operand(0) != nullptr) {
    return NameOf(*op->operand(0));
  }
  return fmt::format("result {} of {}", value.index(), op->name());
}

Status At(const Operation& op, const Value* value, StatusCode code, std::string message) {
  Location location = LocationOf(op);
  if (value != nullptr) location.var = NameOf(*value);
  return Status(code, std::move(location), std::move(message));
}

bool SameLayout(const TensorDistAttr& a, const TensorDistAttr& b) {
  return a.mesh == b.mesh && a.dims_mapping == b.dims_mapping &&
         a.partial_status == b.partial_status;
}

bool IsReplicated(const TensorDistAttr& dist) {
  if (!dist.partial_status.empty()) return false;
  for (int64_t m : dist.dims_mapping) {
    if (m != -1) return false;
  }
  return true;
}

bool IsTensor(const Type& type) {
  return type.kind() == TypeKind::kDenseTensor || type.kind() == TypeKind::kDistDenseTensor;
}

TensorDistAttr Replicated(const ProcessMesh& mesh, size_t rank) {
  TensorDistAttr dist;
  dist.mesh = mesh;
  dist.dims_mapping.assign(rank, -1);
  return dist;
}

// The pd_dist.tensor of a dense (or distributed) tensor type laid out by `dist`, recording the
// local dims of the mesh's first process (the largest piece when a dim does not divide).
StatusOr<Type> DistTypeOf(const Type& type, const TensorDistAttr& dist) {
  const Type dense = type.kind() == TypeKind::kDistDenseTensor ? type.dense() : type;
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> local,
                       LocalDimsOn(dense.dims(), dist, dist.mesh.process_ids.front()));
  return Type::DistDenseTensor(dense, dist, std::move(local));
}

bool BoolAttr(const Operation& op, std::string_view name, bool otherwise) {
  const bool* v = op.attribute(name).AsBool();
  return v != nullptr ? *v : otherwise;
}

int64_t IntAttr(const Operation& op, std::string_view name, int64_t otherwise) {
  const Attribute a = op.attribute(name);
  if (const int32_t* v = a.AsInt32()) return *v;
  if (const int64_t* v = a.AsInt64()) return *v;
  return otherwise;
}

using Specs = std::vector<std::optional<DistTensorSpec>>;

// The rule of `op`, by name. Every rule follows the Paddle function spmd_rules.h names.
StatusOr<SpmdDecision> Decide(const Operation& op, const Specs& in) {
  const std::string_view name = op.name();
  auto need = [&](size_t count) -> Status {
    for (size_t i = 0; i < count; ++i) {
      if (i >= in.size() || !in[i]) {
        return Status(StatusCode::kInvalid, Location{},
                      fmt::format("{} needs operand {}", name, i));
      }
    }
    return Status::Ok();
  };
  if (name == "pd_op.matmul") {
    IRM_RETURN_IF_ERROR(need(2));
    return MatmulSpmd(*in[0], *in[1], BoolAttr(op, "transpose_x", false),
                      BoolAttr(op, "transpose_y", false));
  }
  if (name == "pd_op.matmul_grad") {
    IRM_RETURN_IF_ERROR(need(3));
    return MatmulGradSpmd(*in[0], *in[1], *in[2], BoolAttr(op, "transpose_x", false),
                          BoolAttr(op, "transpose_y", false));
  }
  if (name == "pd_op.add" || name == "pd_op.subtract" || name == "pd_op.multiply" ||
      name == "pd_op.divide" || name == "pd_op.maximum" || name == "pd_op.minimum") {
    IRM_RETURN_IF_ERROR(need(2));
    return ElementwiseBinarySpmd(*in[0], *in[1]);
  }
  if (name == "pd_op.add_grad" || name == "pd_op.subtract_grad") {
    IRM_RETURN_IF_ERROR(need(3));
    return ElementwiseBinaryGradSpmd(*in[0], *in[1], *in[2]);
  }
  if (in.size() == 1 && (name == "pd_op.relu" || name == "pd_op.gelu" || name == "pd_op.tanh" ||
                         name == "pd_op.sigmoid" || name == "pd_op.exp" || name == "pd_op.silu")) {
    IRM_RETURN_IF_ERROR(need(1));
    return ElementwiseUnarySpmd(*in[0]);
  }
  if (name == "pd_op.relu_grad" || name == "pd_op.tanh_grad" || name == "pd_op.sigmoid_grad") {
    IRM_RETURN_IF_ERROR(need(2));
    return ElementwiseUnaryGradSpmd(*in[0], *in[1]);
  }
  if (name == "pd_op.mean_all") {
    IRM_RETURN_IF_ERROR(need(1));
    return ReductionSpmd(*in[0], {}, false, ReduceType::kAvg);
  }
  if (name == "pd_op.mean_all_grad") {
    IRM_RETURN_IF_ERROR(need(2));
    return ReductionGradSpmd(*in[0], *in[1], {}, false);
  }
  if (name == "pd_op.cross_entropy_with_softmax") {
    IRM_RETURN_IF_ERROR(need(2));
    return CrossEntropyWithSoftmaxSpmd(*in[0], *in[1], IntAttr(op, "axis", -1),
                                       BoolAttr(op, "soft_label", false));
  }
  if (name == "pd_op.cross_entropy_with_softmax_grad") {
    IRM_RETURN_IF_ERROR(need(3));
    return CrossEntropyWithSoftmaxGradSpmd(*in[0], *in[1], *in[2], IntAttr(op, "axis", -1),
                                           BoolAttr(op, "soft_label", false));
  }
  if (name == "pd_op.sgd_" || name == "pd_op.sgd") {
    IRM_RETURN_IF_ERROR(need(3));
    return SgdSpmd(*in[0], *in[1], *in[2], in.size() > 3 ? in[3] : std::nullopt);
  }
  if (name == "pd_op.adamw_" || name == "pd_op.adamw" || name == "pd_op.adam_" ||
      name == "pd_op.adam") {
    return AdamSpmd(in);
  }
  // Paddle's fallback for ops without a rule, and what fetches need: everything replicated.
  std::vector<std::optional<size_t>> ranks;
  for (size_t i = 0; i < op.num_results(); ++i) {
    const Type& t = op.result(i)->type();
    if (t.IsNull()) {
      ranks.emplace_back();
    } else {
      ranks.emplace_back(t.dims().size());
    }
  }
  return ReplicatedSpmd(in, ranks);
}

class Completion {
 public:
  explicit Completion(Program& program) : program_(program) {}

  StatusOr<SpmdCompletionResult> Run() {
    for (Operation* op : program_.block().ops()) IRM_RETURN_IF_ERROR(Complete(*op));
    return result_;
  }

 private:
  Status Complete(Operation& op) {
    if (op.name().starts_with("dist_op.")) return Status::Ok();
    const TensorDistAttr* first = nullptr;
    const Value* first_value = nullptr;
    for (size_t i = 0; i < op.num_operands(); ++i) {
      const Value* v = op.operand(i);
      if (v == nullptr || v->type().kind() != TypeKind::kDistDenseTensor) continue;
      const TensorDistAttr* dist = v->type().dist_attr();
      if (first == nullptr) {
        first = dist;
        first_value = v;
      } else if (dist->mesh != first->mesh) {
        return At(
            op, v, StatusCode::kInvalid,
            fmt::format("operand {} lies on mesh {} but {} lies on mesh {}; an op runs on "
                        "one mesh",
                        i, dist->mesh.ToString(), NameOf(*first_value), first->mesh.ToString()));
      }
    }
    if (first == nullptr) return Status::Ok();
    const ProcessMesh mesh = first->mesh;
    if (op.num_regions() > 0) {
      return At(op, first_value, StatusCode::kUnimplemented,
                "completion of ops with regions is not supported");
    }
    IRM_RETURN_IF_ERROR(CheckGivenDistAttr(op, mesh));

    Specs specs;
    for (size_t i = 0; i < op.num_operands(); ++i) {
      const Value* v = op.operand(i);
      if (v == nullptr || v->type().IsNull()) {
        specs.emplace_back();
        continue;
      }
      if (!IsTensor(v->type())) {
        return At(op, v, StatusCode::kUnimplemented,
                  fmt::format("operand {} is a {}; completion handles tensors only", i,
                              v->type().ToString()));
      }
      const TensorDistAttr dist = v->type().kind() == TypeKind::kDistDenseTensor
                                      ? *v->type().dist_attr()
                                      : Replicated(mesh, v->type().dims().size());
      specs.push_back(DistTensorSpec{v->type().dims(), dist});
    }
    for (size_t i = 0; i < op.num_results(); ++i) {
      const Type& t = op.result(i)->type();
      if (!t.IsNull() && !IsTensor(t)) {
        return At(
            op, op.result(i), StatusCode::kUnimplemented,
            fmt::format("result {} is a {}; completion handles tensors only", i, t.ToString()));
      }
    }

    StatusOr<SpmdDecision> decided = Decide(op, specs);
    if (!decided.ok()) {
      return At(op, first_value, decided.status().code(),
                fmt::format("the SPMD rule of {} refuses its operands' layouts: {}", op.name(),
                            decided.status().message()));
    }
    const SpmdDecision& decision = *decided;
    IRM_RETURN_IF_ERROR(CheckRunnable(op, decision));

    OperationDistAttr op_dist;
    op_dist.mesh = mesh;
    for (size_t i = 0; i < op.num_operands(); ++i) {
      const bool asked = i < decision.inputs.size() && decision.inputs[i] && specs[i];
      if (!asked) {
        op_dist.operands.push_back(specs[i] ? Attribute::TensorDist(specs[i]->dist) : Attribute());
        continue;
      }
      const TensorDistAttr& want = *decision.inputs[i];
      IRM_RETURN_IF_ERROR(Bring(op, i, specs[i]->dist, want));
      op_dist.operands.push_back(Attribute::TensorDist(want));
    }
    for (size_t i = 0; i < op.num_results(); ++i) {
      Value* r = op.result(i);
      if (r->type().IsNull() || i >= decision.outputs.size() || !decision.outputs[i]) {
        op_dist.results.push_back(Attribute());
        continue;
      }
      StatusOr<Type> type = DistTypeOf(r->type(), *decision.outputs[i]);
      if (!type.ok()) {
        return At(op, r, StatusCode::kInvalid,
                  fmt::format("result {} cannot be laid out as {}: {}", i,
                              decision.outputs[i]->ToString(), type.status().message()));
      }
      r->set_type(*type);
      op_dist.results.push_back(Attribute::TensorDist(*decision.outputs[i]));
    }
    op.SetAttribute("op_dist_attr", Attribute::OperationDist(std::move(op_dist)));
    ++result_.ops_completed;
    return Status::Ok();
  }

  // An op_dist_attr the op already carries must name the mesh its operands lie on.
  Status CheckGivenDistAttr(const Operation& op, const ProcessMesh& mesh) const {
    const OperationDistAttr* given = op.attribute("op_dist_attr").AsOperationDist();
    if (given == nullptr) return Status::Ok();
    auto differs = [&mesh](const Attribute& entry) {
      const TensorDistAttr* t = entry.AsTensorDist();
      return t != nullptr && t->mesh != mesh;
    };
    bool inconsistent = given->mesh != mesh;
    for (const Attribute& a : given->operands) inconsistent = inconsistent || differs(a);
    for (const Attribute& a : given->results) inconsistent = inconsistent || differs(a);
    if (!inconsistent) return Status::Ok();
    Location location = LocationOf(op);
    location.attr = "op_dist_attr";
    return Status(StatusCode::kInvalid, std::move(location),
                  fmt::format("op_dist_attr names mesh {} (or an entry on another mesh) but the "
                              "op's distributed operands lie on mesh {}",
                              given->mesh.ToString(), mesh.ToString()));
  }

  // The reference kernels run each rank's piece as a whole tensor: a softmax over a sharded axis
  // needs Paddle's c_softmax_with_cross_entropy, which no pass here lowers to.
  Status CheckRunnable(const Operation& op, const SpmdDecision& decision) const {
    // (The grad rule always asks for the softmax axis unsharded.)
    if (op.name() != "pd_op.cross_entropy_with_softmax") return Status::Ok();
    const Value* v = op.operand(0);
    if (v == nullptr || decision.inputs.empty() || !decision.inputs[0]) return Status::Ok();
    const std::vector<int64_t>& mapping = decision.inputs[0]->dims_mapping;
    int64_t axis = IntAttr(op, "axis", -1);
    if (axis < 0) axis += static_cast<int64_t>(mapping.size());
    if (axis < 0 || axis >= static_cast<int64_t>(mapping.size()) || mapping[axis] == -1) {
      return Status::Ok();
    }
    return At(op, v, StatusCode::kUnimplemented,
              fmt::format("the softmax axis {} is sharded by mesh dim {}: that needs "
                          "c_softmax_with_cross_entropy, which is not lowered",
                          axis, mapping[axis]));
  }

  // Makes operand `i` of `op` have layout `want`, by a reshard before the op (a dense operand is
  // first wrapped as replicated). One reshard serves every later reader wanting the same layout.
  Status Bring(Operation& op, size_t i, const TensorDistAttr& have, const TensorDistAttr& want) {
    Value* v = op.operand(i);
    const bool dense = v->type().kind() == TypeKind::kDenseTensor;
    if (SameLayout(have, want) || (dense && IsReplicated(want) && want.mesh == have.mesh)) {
      return Status::Ok();
    }
    for (const Resharded& r : resharded_) {
      if (r.source == v && SameLayout(r.layout, want)) {
        op.SetOperand(i, r.value);
        return Status::Ok();
      }
    }
    Builder b(program_.block());
    b.SetInsertionPoint(op);
    Value* source = v;
    if (dense) {
      IRM_ASSIGN_OR_RETURN(Type wrapped, DistTypeOf(v->type(), have));
      OperationDistAttr shard;
      shard.mesh = have.mesh;
      shard.results = {Attribute::TensorDist(have)};
      source = b.Create("dist_op.shard_tensor", {v}, {wrapped},
                        {{"op_dist_attr", Attribute::OperationDist(std::move(shard))}})
                   ->result(0);
    }
    StatusOr<Type> type = DistTypeOf(source->type(), want);
    if (!type.ok()) {
      return At(op, v, StatusCode::kInvalid,
                fmt::format("operand {} cannot be laid out as {}: {}", i, want.ToString(),
                            type.status().message()));
    }
    OperationDistAttr reshard;
    reshard.mesh = want.mesh;
    reshard.operands = {Attribute::TensorDist(have)};
    reshard.results = {Attribute::TensorDist(want)};
    Value* out = b.Create("dist_op.reshard", {source}, {*type},
                          {{"op_dist_attr", Attribute::OperationDist(std::move(reshard))}})
                     ->result(0);
    op.SetOperand(i, out);
    resharded_.push_back({v, want, out});
    ++result_.reshards_inserted;
    return Status::Ok();
  }

  struct Resharded {
    Value* source;
    TensorDistAttr layout;
    Value* value;
  };

  Program& program_;
  std::vector<Resharded> resharded_;
  SpmdCompletionResult result_;
};

}  // namespace

StatusOr<SpmdCompletionResult> CompleteSpmd(Program& program) { return Completion(program).Run(); }

}  // namespace irm::newir
