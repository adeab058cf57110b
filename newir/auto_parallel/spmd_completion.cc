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

// An array of Int32/Int64 attributes (transpose's perm), empty otherwise.
std::vector<int64_t> IntsAttr(const Operation& op, std::string_view name) {
  std::vector<int64_t> out;
  const AttributeSpan* items = op.attribute(name).AsArray();
  if (items == nullptr) return out;
  for (const Attribute& item : *items) {
    if (const int32_t* v = item.AsInt32()) out.push_back(*v);
    if (const int64_t* v = item.AsInt64()) out.push_back(*v);
  }
  return out;
}

// The value of a mutable int attribute (an axis) given as an operand made by pd_op.full.
std::optional<int64_t> ConstantInt(const Operation& op, size_t i) {
  const Value* v = i < op.num_operands() ? op.operand(i) : nullptr;
  const Operation* full = v != nullptr ? v->defining_op() : nullptr;
  if (full == nullptr || full->name() != "pd_op.full") return std::nullopt;
  const double* value = full->attribute("value").AsDouble();
  if (value == nullptr) return std::nullopt;
  return static_cast<int64_t>(*value);
}

bool IsSplit(std::string_view name) {
  return name == "pd_op.split" || name == "pd_op.split_with_num";
}

using Specs = std::vector<std::optional<DistTensorSpec>>;

size_t ResultRank(const Operation& op, size_t i) {
  return i < op.num_results() && !op.result(i)->type().IsNull() ? op.result(i)->type().dims().size()
                                                                : 0;
}

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
  if (name == "pd_op.relu_grad" || name == "pd_op.tanh_grad" || name == "pd_op.sigmoid_grad" ||
      name == "pd_op.gelu_grad" || name == "pd_op.silu_grad") {
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
    // The dynamic-graph rule: the reference kernels run each rank's piece as a whole tensor, so
    // a sharded vocabulary is gathered first (the static rule keeps it sharded for
    // c_softmax_with_cross_entropy).
    return CrossEntropyWithSoftmaxSpmd(*in[0], *in[1], IntAttr(op, "axis", -1),
                                       BoolAttr(op, "soft_label", false),
                                       /*support_shard_softmax_dim=*/false);
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
  if (name == "pd_op.layer_norm") {
    IRM_RETURN_IF_ERROR(need(3));
    return LayerNormSpmd(*in[0], *in[1], *in[2], IntAttr(op, "begin_norm_axis", 1),
                         ResultRank(op, 1));
  }
  if (name == "pd_op.layer_norm_grad") {
    IRM_RETURN_IF_ERROR(need(6));
    return LayerNormGradSpmd(*in[0], *in[1], *in[2], *in[3], *in[4], *in[5],
                             IntAttr(op, "begin_norm_axis", 1));
  }
  if (name == "pd_op.embedding") {
    IRM_RETURN_IF_ERROR(need(2));
    return EmbeddingSpmd(*in[0], *in[1], IntAttr(op, "padding_idx", -1),
                         BoolAttr(op, "sparse", false));
  }
  if (name == "pd_op.embedding_grad") {
    IRM_RETURN_IF_ERROR(need(3));
    return EmbeddingGradSpmd(*in[0], *in[1], *in[2], BoolAttr(op, "sparse", false));
  }
  if (name == "pd_op.softmax") {
    IRM_RETURN_IF_ERROR(need(1));
    return SoftmaxSpmd(*in[0], IntAttr(op, "axis", -1));
  }
  if (name == "pd_op.softmax_grad") {
    IRM_RETURN_IF_ERROR(need(2));
    return SoftmaxGradSpmd(*in[0], *in[1], IntAttr(op, "axis", -1));
  }
  if (name == "pd_op.dropout") {
    IRM_RETURN_IF_ERROR(need(1));
    return DropoutSpmd(*in[0], in.size() > 1 ? in[1] : std::nullopt);
  }
  if (name == "pd_op.dropout_grad") {
    IRM_RETURN_IF_ERROR(need(2));
    return DropoutGradSpmd(*in[0], *in[1]);
  }
  if (name == "pd_op.scale") {
    IRM_RETURN_IF_ERROR(need(1));
    return ScaleSpmd(*in[0], in.size() > 1 ? in[1] : std::nullopt);
  }
  if (name == "pd_op.triu") {
    IRM_RETURN_IF_ERROR(need(1));
    return TriuSpmd(*in[0]);
  }
  if (name == "pd_op.transpose") {
    IRM_RETURN_IF_ERROR(need(1));
    return TransposeSpmd(*in[0], IntsAttr(op, "perm"));
  }
  if (name == "pd_op.transpose_grad") {
    IRM_RETURN_IF_ERROR(need(1));
    return TransposeGradSpmd(*in[0], IntsAttr(op, "perm"));
  }
  if (IsSplit(name)) {
    IRM_RETURN_IF_ERROR(need(1));
    const std::optional<int64_t> axis = ConstantInt(op, op.num_operands() - 1);
    if (!axis) {
      return Status(StatusCode::kUnimplemented, Location{},
                    fmt::format("{}'s axis must be made by a pd_op.full", name));
    }
    const Type& pieces = op.result(0)->type();
    return SplitSpmd(*in[0], *axis,
                     pieces.kind() == TypeKind::kVector ? pieces.elements().size() : 1);
  }
  if (name == "pd_op.slice") {
    IRM_RETURN_IF_ERROR(need(1));
    return SliceSpmd(*in[0], IntsAttr(op, "axes"), IntsAttr(op, "decrease_axis"));
  }
  if (name == "pd_op.reshape") {
    // The result type holds the resolved shape (0 and -1 of the shape operand replaced).
    IRM_RETURN_IF_ERROR(need(1));
    return ReshapeSpmd(*in[0], op.result(0)->type().dims());
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

// The tensors an operand stands for: the operands of the builtin.combine that makes a vector
// operand (add_n's), else the operand itself.
std::vector<Value*> TensorsOf(Value* v) {
  if (v != nullptr && v->type().kind() == TypeKind::kVector) {
    Operation* combine = v->defining_op();
    std::vector<Value*> elements;
    if (combine != nullptr && combine->name() == "builtin.combine") {
      for (size_t i = 0; i < combine->num_operands(); ++i) elements.push_back(combine->operand(i));
    }
    return elements;
  }
  return {v};
}

// What a backward built from the forward gives a matmul's out_grad: the layout of the forward
// output, without its Partial status. matmul_grad asks for it when the grad arrives otherwise
// (a column-parallel head whose logits were gathered for the cross entropy), since Paddle's
// MatmulGradInferSpmd only accepts an out_grad that agrees with x and y.
StatusOr<TensorDistAttr> ForwardOutputLayout(const Operation& op, const Specs& specs) {
  IRM_ASSIGN_OR_RETURN(SpmdDecision forward,
                       MatmulSpmd(*specs[0], *specs[1], BoolAttr(op, "transpose_x", false),
                                  BoolAttr(op, "transpose_y", false)));
  TensorDistAttr out = *forward.outputs[0];
  out.partial_status.clear();
  return out;
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
    if (op.name() == "dist_op.dtensor_to_local") return CompleteToLocal(op);
    if (op.name() == "dist_op.dtensor_from_local") return CompleteFromLocal(op);
    if (op.name().starts_with("dist_op.")) return Status::Ok();
    if (op.name() == "builtin.combine") {
      RetypeCombine(op);
      return Status::Ok();
    }
    if (op.name() == "builtin.split") {
      // The pieces take the element types of the vector they come from.
      const Value* v = op.num_operands() == 1 ? op.operand(0) : nullptr;
      if (v != nullptr && v->type().kind() == TypeKind::kVector &&
          v->type().elements().size() == op.num_results()) {
        for (size_t i = 0; i < op.num_results(); ++i) {
          op.result(i)->set_type(v->type().elements()[i]);
        }
      }
      return Status::Ok();
    }
    IRM_RETURN_IF_ERROR(BringToAssignedMesh(op));
    const TensorDistAttr* first = nullptr;
    const Value* first_value = nullptr;
    for (size_t i = 0; i < op.num_operands(); ++i) {
      for (const Value* v : TensorsOf(op.operand(i))) {
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
    }
    if (first == nullptr) return Status::Ok();
    const ProcessMesh mesh = first->mesh;
    if (op.num_regions() > 0) {
      return At(op, first_value, StatusCode::kUnimplemented,
                "completion of ops with regions is not supported");
    }
    IRM_RETURN_IF_ERROR(CheckGivenDistAttr(op, mesh));
    if (op.name() == "pd_op.add_n" || op.name() == "pd_op.concat") {
      return CompleteOverCombine(op, mesh, first_value);
    }

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
      specs.push_back(DistTensorSpec{v->type().dims(), LayoutOf(*v, mesh)});
    }
    for (size_t i = 0; i < op.num_results(); ++i) {
      const Type& t = op.result(i)->type();
      const bool pieces = IsSplit(op.name()) && t.kind() == TypeKind::kVector;
      if (!t.IsNull() && !IsTensor(t) && !pieces) {
        return At(
            op, op.result(i), StatusCode::kUnimplemented,
            fmt::format("result {} is a {}; completion handles tensors only", i, t.ToString()));
      }
    }

    // What each operand holds now; the rule may be shown another layout for one (matmul_grad's
    // out_grad), which then becomes a reshard from this one.
    std::vector<std::optional<TensorDistAttr>> have;
    for (const auto& spec : specs) {
      have.push_back(spec ? std::optional<TensorDistAttr>(spec->dist) : std::nullopt);
    }
    StatusOr<SpmdDecision> decided = Decide(op, specs);
    if (!decided.ok() && decided.status().code() == StatusCode::kUnimplemented &&
        op.name() == "pd_op.matmul_grad" && specs.size() >= 3 && specs[0] && specs[1] && specs[2]) {
      StatusOr<TensorDistAttr> out = ForwardOutputLayout(op, specs);
      if (out.ok()) {
        specs[2]->dist = *out;
        decided = Decide(op, specs);
      }
    }
    if (!decided.ok()) {
      return At(op, first_value, decided.status().code(),
                fmt::format("the SPMD rule of {} refuses its operands' layouts: {}", op.name(),
                            decided.status().message()));
    }
    const SpmdDecision& decision = *decided;

    OperationDistAttr op_dist;
    op_dist.mesh = mesh;
    for (size_t i = 0; i < op.num_operands(); ++i) {
      const bool asked = i < decision.inputs.size() && decision.inputs[i] && have[i];
      if (!asked) {
        op_dist.operands.push_back(have[i] ? Attribute::TensorDist(*have[i]) : Attribute());
        continue;
      }
      const TensorDistAttr& want = *decision.inputs[i];
      IRM_RETURN_IF_ERROR(Bring(op, i, *have[i], want));
      op_dist.operands.push_back(Attribute::TensorDist(want));
    }
    IRM_RETURN_IF_ERROR(SetResults(op, decision, op_dist));
    op.SetAttribute("op_dist_attr", Attribute::OperationDist(std::move(op_dist)));
    ++result_.ops_completed;
    return Status::Ok();
  }

  // An op a pass assigned to a pipeline stage (an op_dist_attr carrying only the mesh and a
  // chunk_id, as Paddle's complete_chunk_id leaves a stage's ops) runs on that mesh: a distributed
  // operand on another mesh first crosses to it with its layout unchanged (Paddle's same-status
  // reshard between stage meshes, reshard_funcs/same_status_reshard_func.py), the reshard taking
  // the reader's op_role and chunk_id as Paddle creates it under its consumer's role
  // (static/pir_pass.py reshard_single_value: pir_op_role_guard). add_n and concat read through a
  // builtin.combine, whose operands cross instead.
  Status BringToAssignedMesh(Operation& op) {
    const OperationDistAttr* given = op.attribute("op_dist_attr").AsOperationDist();
    if (given == nullptr || given->chunk_id < 0 || !given->operands.empty() ||
        !given->results.empty()) {
      return Status::Ok();
    }
    const ProcessMesh mesh = given->mesh;
    auto cross = [&](Operation& reader, size_t i) -> Status {
      Value* v = reader.operand(i);
      if (v == nullptr || v->type().kind() != TypeKind::kDistDenseTensor) return Status::Ok();
      const TensorDistAttr have = *v->type().dist_attr();
      if (have.mesh == mesh) return Status::Ok();
      TensorDistAttr want = have;
      want.mesh = mesh;
      want.placements.reset();
      IRM_RETURN_IF_ERROR(Bring(reader, i, have, want));
      Operation* reshard = reader.operand(i)->defining_op();
      if (reshard != nullptr && reshard->name() == "dist_op.reshard") {
        for (const char* attr : {"op_role", "chunk_id"}) {
          if (op.HasAttribute(attr) && !reshard->HasAttribute(attr)) {
            reshard->SetAttribute(attr, op.attribute(attr));
          }
        }
      }
      return Status::Ok();
    };
    for (size_t i = 0; i < op.num_operands(); ++i) {
      Value* v = op.operand(i);
      Operation* combine = v == nullptr ? nullptr : v->defining_op();
      if (combine != nullptr && combine->name() == "builtin.combine" &&
          v->type().kind() == TypeKind::kVector) {
        for (size_t j = 0; j < combine->num_operands(); ++j) {
          IRM_RETURN_IF_ERROR(cross(*combine, j));
        }
        RetypeCombine(*combine);
        continue;
      }
      IRM_RETURN_IF_ERROR(cross(op, i));
    }
    return Status::Ok();
  }

  // A distributed operand's layout, or replicated on `mesh` for a dense one.
  static TensorDistAttr LayoutOf(const Value& v, const ProcessMesh& mesh) {
    return v.type().kind() == TypeKind::kDistDenseTensor ? *v.type().dist_attr()
                                                         : Replicated(mesh, v.type().dims().size());
  }

  // The results take the decided layouts as pd_dist.tensor types; a vector result (split's
  // pieces) takes one decided layout per element.
  Status SetResults(Operation& op, const SpmdDecision& decision, OperationDistAttr& op_dist) {
    if (op.num_results() == 1 && op.result(0)->type().kind() == TypeKind::kVector) {
      Value* r = op.result(0);
      const std::vector<Type> elements = r->type().elements();
      if (decision.outputs.size() != elements.size()) {
        return At(op, r, StatusCode::kInternal, "the rule decided another number of pieces");
      }
      std::vector<Type> types;
      std::vector<Attribute> entries;
      for (size_t i = 0; i < elements.size(); ++i) {
        StatusOr<Type> type = DistTypeOf(elements[i], *decision.outputs[i]);
        if (!type.ok()) {
          return At(op, r, StatusCode::kInvalid,
                    fmt::format("piece {} cannot be laid out as {}: {}", i,
                                decision.outputs[i]->ToString(), type.status().message()));
        }
        types.push_back(*type);
        entries.push_back(Attribute::TensorDist(*decision.outputs[i]));
      }
      r->set_type(Type::Vector(std::move(types)));
      op_dist.results.push_back(Attribute::Array(std::move(entries)));
      return Status::Ok();
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
    return Status::Ok();
  }

  // A builtin.combine's vector takes the types of what it combines (distributed or not).
  static void RetypeCombine(Operation& combine) {
    std::vector<Type> elements;
    for (size_t i = 0; i < combine.num_operands(); ++i) {
      elements.push_back(combine.operand(i)->type());
    }
    combine.result(0)->set_type(Type::Vector(std::move(elements)));
  }

  // add_n and concat read the vector a builtin.combine makes: the rule decides over the combined
  // tensors, reshards go before the combine, and the op_dist_attr's operand is the array of their
  // layouts (concat's axis operand, a dense constant, replicated).
  Status CompleteOverCombine(Operation& op, const ProcessMesh& mesh, const Value* first_value) {
    Operation* combine =
        op.num_operands() >= 1 && op.operand(0) != nullptr ? op.operand(0)->defining_op() : nullptr;
    if (combine == nullptr || combine->name() != "builtin.combine") {
      return At(op, first_value, StatusCode::kUnimplemented,
                fmt::format("{}'s operand must be made by a builtin.combine", op.name()));
    }
    std::optional<int64_t> axis;
    if (op.name() == "pd_op.concat") {
      axis = ConstantInt(op, 1);
      if (!axis) {
        return At(op, first_value, StatusCode::kUnimplemented,
                  "concat's axis must be made by a pd_op.full");
      }
    }
    std::vector<DistTensorSpec> specs;
    for (size_t i = 0; i < combine->num_operands(); ++i) {
      const Value* v = combine->operand(i);
      if (v == nullptr || !IsTensor(v->type())) {
        return At(op, v, StatusCode::kUnimplemented, "add_n adds tensors only");
      }
      specs.push_back(DistTensorSpec{v->type().dims(), LayoutOf(*v, mesh)});
    }
    StatusOr<SpmdDecision> decided = axis ? ConcatSpmd(specs, *axis) : AddNSpmd(specs);
    if (!decided.ok()) {
      return At(op, first_value, decided.status().code(),
                fmt::format("the SPMD rule of {} refuses its operands' layouts: {}", op.name(),
                            decided.status().message()));
    }
    std::vector<Attribute> wanted;
    for (size_t i = 0; i < specs.size(); ++i) {
      const TensorDistAttr& want = *decided->inputs[i];
      IRM_RETURN_IF_ERROR(Bring(*combine, i, specs[i].dist, want));
      wanted.push_back(Attribute::TensorDist(want));
    }
    RetypeCombine(*combine);
    OperationDistAttr op_dist;
    op_dist.mesh = mesh;
    op_dist.operands = {Attribute::Array(std::move(wanted))};
    for (size_t i = 1; i < op.num_operands(); ++i) {
      const Value* v = op.operand(i);
      op_dist.operands.push_back(v != nullptr && IsTensor(v->type())
                                     ? Attribute::TensorDist(LayoutOf(*v, mesh))
                                     : Attribute());
    }
    IRM_RETURN_IF_ERROR(SetResults(op, *decided, op_dist));
    op.SetAttribute("op_dist_attr", Attribute::OperationDist(std::move(op_dist)));
    ++result_.ops_completed;
    return Status::Ok();
  }

  // dtensor_to_local (local_map.py's entry into a local region): the local tensor is the piece
  // of the layout its op_dist_attr names for the operand (the in_placements; Paddle's
  // DtensorToLocalOp keeps them there), else of the operand's layout as it is. A producer that
  // completion laid out otherwise is resharded to it (local_map's reshard_inputs), and a Partial
  // operand is refused: a rank's piece of a pending sum is no local tensor a dense function can
  // read. The op records operand and result layout.
  Status CompleteToLocal(Operation& op) {
    Value* v = op.num_operands() == 1 ? op.operand(0) : nullptr;
    if (v == nullptr || v->type().kind() != TypeKind::kDistDenseTensor) return Status::Ok();
    const TensorDistAttr have = *v->type().dist_attr();
    TensorDistAttr want = have;
    if (const OperationDistAttr* given = op.attribute("op_dist_attr").AsOperationDist();
        given != nullptr && !given->operands.empty() && given->operands[0].AsTensorDist()) {
      want = *given->operands[0].AsTensorDist();
    }
    if (!want.partial_status.empty()) {
      return At(op, v, StatusCode::kInvalid,
                fmt::format("dtensor_to_local of a Partial layout ({}): reshard it first",
                            want.ToString()));
    }
    if (want.mesh != have.mesh) {
      return At(op, v, StatusCode::kInvalid,
                fmt::format("op_dist_attr names mesh {} but the operand lies on mesh {}",
                            want.mesh.ToString(), have.mesh.ToString()));
    }
    IRM_RETURN_IF_ERROR(Bring(op, 0, have, want));
    StatusOr<std::vector<int64_t>> local =
        LocalDimsOn(v->type().dims(), want, want.mesh.process_ids.front());
    const Type& result = op.result(0)->type();
    if (!local.ok() || result.kind() != TypeKind::kDenseTensor || result.dims() != *local) {
      return At(op, op.result(0), StatusCode::kInvalid,
                fmt::format("the result {} is not the local tensor of {}", result.ToString(),
                            want.ToString()));
    }
    OperationDistAttr dist;
    dist.mesh = want.mesh;
    dist.operands = {Attribute::TensorDist(want)};
    dist.results = {Attribute::TensorDist(LayoutLocal(want))};
    op.SetAttribute("op_dist_attr", Attribute::OperationDist(std::move(dist)));
    ++result_.ops_completed;
    return Status::Ok();
  }

  // dtensor_from_local (local_map.py's out_placements): the result's type says the layout the
  // local tensors make together (Partial included); the op records it.
  Status CompleteFromLocal(Operation& op) {
    if (op.num_results() != 1 || op.result(0)->type().kind() != TypeKind::kDistDenseTensor) {
      return Status::Ok();
    }
    const TensorDistAttr layout = *op.result(0)->type().dist_attr();
    OperationDistAttr dist;
    dist.mesh = layout.mesh;
    dist.operands = {Attribute::TensorDist(LayoutLocal(layout))};
    dist.results = {Attribute::TensorDist(layout)};
    op.SetAttribute("op_dist_attr", Attribute::OperationDist(std::move(dist)));
    ++result_.ops_completed;
    return Status::Ok();
  }

  // The layout entry of a rank's local tensor: replicated on the mesh, as Paddle's dist ops
  // describe their dense side.
  static TensorDistAttr LayoutLocal(const TensorDistAttr& of) {
    return Replicated(of.mesh, of.dims_mapping.size());
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
