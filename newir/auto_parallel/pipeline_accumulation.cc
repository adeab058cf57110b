// Pipeline micro-batch accumulation (pipeline_accumulation.h).
#include "newir/auto_parallel/pipeline_accumulation.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "newir/attributes.h"
#include "newir/auto_parallel/gradient_merge.h"
#include "newir/auto_parallel/op_roles.h"
#include "newir/builder.h"

namespace irm::newir {
namespace {

std::string ParameterNameOf(const Value& value) {
  const Operation* op = value.defining_op();
  if (op == nullptr || op->name() != "builtin.parameter") return "";
  const std::string_view* name = op->attribute("parameter_name").AsString();
  return name != nullptr ? std::string(*name) : "";
}

bool StaticDims(const Type& type) {
  for (int64_t d : type.dims()) {
    if (d < 0) return false;
  }
  return true;
}

std::string LegacyName(const Value& value) {
  const Operation* op = value.defining_op();
  const AttributeSpan* names =
      op == nullptr ? nullptr : op->attribute("legacy_var_names").AsArray();
  if (names == nullptr || value.index() >= names->size()) return "";
  const std::string_view* name = (*names)[value.index()].AsString();
  return name != nullptr ? std::string(*name) : "";
}

// The buffer's name on every value of it: the values a later job reads are then read as the
// persistable buffer from the shared scope (pipeline_split.h), not carried per micro-batch.
Attribute NameOf(const std::string& buffer) {
  return Attribute::Array({Attribute::String(buffer)});
}

struct Gradient {
  Value* grad = nullptr;
  Operation* producer = nullptr;
  std::string buffer;
};

}  // namespace

StatusOr<size_t> AppendPipelineAccumulation(Program& main, int64_t micro_batches, bool avg) {
  if (micro_batches < 1) {
    return Status(StatusCode::kInvalidArgument, Location::File("pipeline.accumulate_steps"),
                  fmt::format("{} micro-batches: at least 1", micro_batches));
  }
  if (micro_batches == 1) return size_t{0};
  Block& top = main.block();
  std::vector<Operation*> optimizer;
  std::vector<Gradient> grads;
  std::map<const Value*, size_t> index;
  for (Operation* op : top.ops()) {
    if (OpRoleOf(*op) != kOptimizeRole) continue;
    optimizer.push_back(op);
    for (size_t i = 0; i < op->num_operands(); ++i) {
      Value* v = op->operand(i);
      Operation* producer = v == nullptr ? nullptr : v->defining_op();
      if (producer == nullptr || producer->parent_block() != &top ||
          (OpRoleOf(*producer).value_or(0) & kBackwardRole) == 0 || index.count(v) != 0) {
        continue;
      }
      if (v->type().kind() != TypeKind::kDenseTensor || !StaticDims(v->type())) {
        return Status(StatusCode::kInvalid, LocationOf(*producer),
                      "a gradient accumulated across micro-batches needs static dims");
      }
      std::string param = op->num_operands() > 0 && op->operand(0) != nullptr
                              ? ParameterNameOf(*op->operand(0))
                              : "";
      if (param.empty()) {
        // A reader that is no optimizer op of a parameter (the data-parallel all-reduce before
        // one): the gradient's own name says whose it is.
        param = LegacyName(*v);
        if (const size_t at = param.find("@GRAD"); at != std::string::npos) param.resize(at);
      }
      if (param.empty()) param = fmt::format("grad_{}", grads.size());
      index[v] = grads.size();
      grads.push_back({v, producer, param + kGradientMergeBufferSuffix});
    }
  }
  if (grads.empty()) return size_t{0};

  Builder builder(top);
  // The buffers join the program's parameters.
  SetInsertionPointAfterParameters(builder, top);
  std::vector<Value*> buffers;
  for (const Gradient& g : grads) {
    buffers.push_back(builder
                          .Create("builtin.parameter", {}, {g.grad->type()},
                                  {{"parameter_name", Attribute::String(g.buffer)},
                                   {"legacy_var_names", NameOf(g.buffer)},
                                   {"persistable", Attribute::Array({Attribute::Bool(true)})},
                                   {"stop_gradient", Attribute::Array({Attribute::Bool(true)})}})
                          ->result(0));
  }
  auto full = [&builder](const std::vector<int64_t>& shape, double value, Type element,
                         AllocationType place) {
    const DataType dtype = DataTypeOfElement(element).value_or(DataType::kFloat32);
    return builder
        .Create("pd_op.full", {}, {Type::DenseTensor(std::move(element), shape)},
                {{"shape", Attribute::IntArrayFrom(shape)},
                 {"value", Attribute::Double(value)},
                 {"dtype", Attribute::DataTypeAttr(dtype)},
                 {"place", Attribute::PlaceAttr(Place::Of(place))},
                 {"op_role", Attribute::Int32(kOptimizeRole)}})
        ->result(0);
  };
  // merge += grad right after the gradient's producer; the optimizer reads the merged buffer.
  const std::set<const Operation*> optimizer_ops(optimizer.begin(), optimizer.end());
  std::map<Operation*, Operation*> last_after;
  std::vector<Value*> merged(grads.size(), nullptr);
  for (size_t i = 0; i < grads.size(); ++i) {
    Gradient& g = grads[i];
    auto it = last_after.emplace(g.producer, g.producer).first;
    builder.SetInsertionPointAfter(*it->second);
    AttributeMap attrs = {{"grad_merge_add", Attribute::Bool(true)},
                          {"legacy_var_names", NameOf(g.buffer)}};
    for (const char* name : {"op_role", "chunk_id"}) {
      if (g.producer->HasAttribute(name)) attrs.emplace(name, g.producer->attribute(name));
    }
    Operation* add =
        builder.Create("pd_op.add_", {buffers[i], g.grad}, {g.grad->type()}, std::move(attrs));
    it->second = add;
    merged[i] = add->result(0);
    g.grad->ReplaceUsesWithIf(merged[i], [&optimizer_ops](const OpOperand& use) {
      return optimizer_ops.count(use.owner()) != 0;
    });
  }
  // 1/k right before the first optimize-role reader of each buffer (Paddle's
  // _append_scale_op_after_comm puts it before the adam/sgd op reading it).
  std::vector<Value*> latest = merged;
  if (avg) {
    std::set<size_t> scaled;
    for (Operation* op : optimizer) {
      for (size_t i = 0; i < op->num_operands(); ++i) {
        for (size_t g = 0; g < grads.size(); ++g) {
          if (op->operand(i) != merged[g]) continue;
          if (scaled.insert(g).second) {
            builder.SetInsertionPoint(*op);
            Value* factor = full({1}, 1.0 / static_cast<double>(micro_batches), Type::F32(),
                                 AllocationType::kCpu);
            latest[g] = builder
                            .Create("pd_op.scale_", {merged[g], factor}, {merged[g]->type()},
                                    {{"bias", Attribute::Float(0.0f)},
                                     {"bias_after_scale", Attribute::Bool(false)},
                                     {"legacy_var_names", NameOf(grads[g].buffer)},
                                     {"op_role", Attribute::Int32(kOptimizeRole)}})
                            ->result(0);
          }
          op->SetOperand(i, latest[g]);
        }
      }
    }
  }
  // Zero the buffers after the optimizer (Paddle: set_value_with_tensor_(merge, full([1], 0))).
  builder.SetInsertionPointAfter(*optimizer.back());
  auto empty_int_array = [&builder]() {
    return builder
        .Create("pd_op.full_int_array", {}, {Type::DenseTensor(Type::I64(), {0})},
                {{"value", Attribute::Array({})},
                 {"dtype", Attribute::DataTypeAttr(DataType::kInt64)},
                 {"place", Attribute::PlaceAttr(Place::Of(AllocationType::kCpu))},
                 {"op_role", Attribute::Int32(kOptimizeRole)}})
        ->result(0);
  };
  for (size_t g = 0; g < grads.size(); ++g) {
    Value* buffer = latest[g];
    Value* zeros = full({1}, 0.0, buffer->type().dtype(), AllocationType::kUndefined);
    Value* starts = empty_int_array();
    Value* ends = empty_int_array();
    Value* steps = empty_int_array();
    builder.Create("pd_op.set_value_with_tensor_", {buffer, zeros, starts, ends, steps},
                   {buffer->type()},
                   {{"axes", Attribute::Array({})},
                    {"decrease_axes", Attribute::Array({})},
                    {"none_axes", Attribute::Array({})},
                    {"legacy_var_names", NameOf(grads[g].buffer)},
                    {"op_role", Attribute::Int32(kOptimizeRole)}});
  }
  return grads.size();
}

}  // namespace irm::newir
