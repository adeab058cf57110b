// How the new-IR executor runs an op of the binding table (pir_bindings.h) on its kernel: the
// operands become kernel inputs (a vector operand one input per element) or attributes (mutable
// IntArray/Scalar operands, read from their tensors), the op's table attributes are converted,
// the dtype is picked, the random-op context is set, and the kernel's fresh outputs become the
// results — written into the storage of the operand they replace for in-place ops, so that every
// value sharing that storage (a parameter of the Scope above all) sees the update.
#include <fmt/format.h>

#include <cstring>
#include <utility>

#include "reference_runtime/dtype_visit.h"
#include "reference_runtime/philox.h"
#include "reference_runtime/pir_interpreter.h"

namespace irm::rt {
namespace {

bool IsIntegerDType(DType dtype) {
  return dtype == DType::kInt8 || dtype == DType::kUInt8 || dtype == DType::kInt16 ||
         dtype == DType::kInt32 || dtype == DType::kInt64;
}

bool IsRealDType(DType dtype) {
  return IsIntegerDType(dtype) || IsFloatingDType(dtype) || dtype == DType::kBool;
}

// The logical name of a value as the translator recorded it: its op's legacy_var_names entry, or
// a block argument's legacy_var_name; empty when none was recorded.
std::string RecordedName(const newir::Value* value) {
  if (value == nullptr) return "";
  if (const newir::Operation* op = value->defining_op()) {
    if (const auto* names = op->attribute("legacy_var_names").AsArray()) {
      if (value->index() < names->size()) {
        if (const std::string_view* name = (*names)[value->index()].AsString())
          return std::string(*name);
      }
    }
    return "";
  }
  auto it = value->attributes().find("legacy_var_name");
  if (it != value->attributes().end() && it->second.AsString() != nullptr) {
    return std::string(*it->second.AsString());
  }
  return "";
}

}  // namespace

Status PirInterpreter::RunPassThrough(const newir::Operation& op, int index) {
  if (op.num_operands() != op.num_results()) {
    return Fail(StatusCode::kInvalid, op, index,
                fmt::format("has {} operands but {} results; an ordering op passes each operand "
                            "through",
                            op.num_operands(), op.num_results()));
  }
  for (size_t i = 0; i < op.num_operands(); ++i) {
    IRM_ASSIGN_OR_RETURN(const PirSlot* slot, Read(op, index, i));
    PirSlot copy = *slot;
    Bind(op.result(i), std::move(copy));
  }
  return Status::Ok();
}

StatusOr<AttrValue> PirInterpreter::ReadMutable(const newir::Operation& op, int index,
                                                size_t operand, OperandRole role) const {
  IRM_ASSIGN_OR_RETURN(const PirSlot* slot, Read(op, index, operand));
  const std::string label = OperandLabel(op, operand);
  if (role == OperandRole::kIntArray) {
    std::vector<int64_t> values;
    if (!slot->is_vector) {
      const Tensor& t = slot->tensor;
      if (!IsIntegerDType(t.dtype())) {
        return Fail(StatusCode::kInvalid, op, index,
                    fmt::format("{} must be an integer tensor, got {}", label, t.Describe()));
      }
      for (int64_t i = 0; i < t.numel(); ++i) values.push_back(ElementAsInt64(t, i));
      return AttrValue(std::move(values));
    }
    for (size_t k = 0; k < slot->elements.size(); ++k) {
      const Tensor& t = slot->elements[k];
      if (!IsIntegerDType(t.dtype()) || t.numel() != 1) {
        return Fail(StatusCode::kInvalid, op, index,
                    fmt::format("element {} of {} must be an integer tensor holding one value, "
                                "got {}",
                                k, label, t.Describe()));
      }
      values.push_back(ElementAsInt64(t, 0));
    }
    return AttrValue(std::move(values));
  }
  if (slot->is_vector) {
    return Fail(StatusCode::kInvalid, op, index,
                fmt::format("{} must be a tensor holding one value, not a vector", label));
  }
  const Tensor& t = slot->tensor;
  if (role == OperandRole::kInt) {
    if (!IsIntegerDType(t.dtype()) || t.numel() != 1) {
      return Fail(StatusCode::kInvalid, op, index,
                  fmt::format("{} must be an integer tensor holding one value, got {}", label,
                              t.Describe()));
    }
    return AttrValue(ElementAsInt64(t, 0));
  }
  if (!IsRealDType(t.dtype()) || t.numel() != 1) {
    return Fail(
        StatusCode::kInvalid, op, index,
        fmt::format("{} must be a real tensor holding one value, got {}", label, t.Describe()));
  }
  return AttrValue(ElementAsDouble(t, 0));
}

StatusOr<DType> PirInterpreter::KernelDType(const newir::Operation& op, const OpBinding& binding,
                                            int index, const KernelAttrs& attrs) const {
  if (binding.dtype_operand < 0) {
    auto it = attrs.values().find("dtype");
    if (it == attrs.values().end() || !std::holds_alternative<DType>(it->second)) {
      return Fail(StatusCode::kInvalid, op, index,
                  "attribute 'dtype' names no dtype the runtime computes with");
    }
    return std::get<DType>(it->second);
  }
  const size_t operand = static_cast<size_t>(binding.dtype_operand);
  IRM_ASSIGN_OR_RETURN(const PirSlot* slot, Read(op, index, operand));
  if (!slot->is_vector) return slot->tensor.dtype();
  if (slot->elements.empty()) {
    return Fail(
        StatusCode::kInvalid, op, index,
        fmt::format("{} is an empty vector: no dtype for the kernel", OperandLabel(op, operand)));
  }
  return slot->elements.front().dtype();
}

StatusOr<Tensor> PirInterpreter::WriteInPlace(const newir::Operation& op, int index, size_t operand,
                                              size_t result, const Tensor& target,
                                              Tensor out) const {
  if (target.dtype() != out.dtype() || target.numel() != out.numel()) {
    const newir::OpInfo* info = op.info();
    const std::string result_name =
        info != nullptr && result < info->results.size() ? info->results[result].name : "";
    return Fail(StatusCode::kInvalid, op, index,
                fmt::format("result {} ('{}') is {} and cannot be written in place into {}, "
                            "which is {}",
                            result, result_name, out.Describe(), OperandLabel(op, operand),
                            target.Describe()));
  }
  Tensor storage = target;
  // memmove: a kernel may hand back a view of the very tensor it writes (share_data).
  if (out.nbytes() > 0 && storage.raw() != out.raw()) {
    std::memmove(storage.raw(), out.raw(), out.nbytes());
  }
  return storage.Reshaped(out.shape());
}

size_t PirInterpreter::NamedElement(const newir::Operation& op, int index) const {
  const std::string name = PirLogicalName(op, 0, index);
  const newir::Value* vector = op.num_operands() > 0 ? op.operand(0) : nullptr;
  const newir::Operation* combine = vector != nullptr ? vector->defining_op() : nullptr;
  if (combine != nullptr && combine->name() == "builtin.combine") {
    for (size_t k = 0; k < combine->num_operands(); ++k) {
      if (RecordedName(combine->operand(k)) == name) return k;
    }
  }
  return 0;
}

Status PirInterpreter::RunKernelOp(const newir::Operation& op, const OpBinding& binding,
                                   int index) {
  if (op.num_operands() != binding.roles.size() ||
      op.num_results() != binding.inplace_operand.size()) {
    return Fail(StatusCode::kInvalid, op, index,
                fmt::format("has {} operands and {} results but its signature has {} and {}",
                            op.num_operands(), op.num_results(), binding.roles.size(),
                            binding.inplace_operand.size()));
  }
  KernelCall call;
  IRM_RETURN_IF_ERROR(Locate(ConvertAttributes(op, binding, call.attrs), op, index));
  for (size_t i = 0; i < op.num_operands(); ++i) {
    const OperandRole role = binding.roles[i];
    if (role == OperandRole::kTarget) continue;
    if (op.operand(i) == nullptr) {
      // An absent optional input is a null input; an absent mutable operand no attribute.
      if (role == OperandRole::kInput) call.inputs.push_back(nullptr);
      continue;
    }
    if (role != OperandRole::kInput) {
      IRM_ASSIGN_OR_RETURN(AttrValue value, ReadMutable(op, index, i, role));
      call.attrs.Set(binding.info->operands[i].name, std::move(value));
      continue;
    }
    IRM_ASSIGN_OR_RETURN(const PirSlot* slot, Read(op, index, i));
    if (slot->is_vector) {
      for (const Tensor& t : slot->elements) call.inputs.push_back(&t);
    } else {
      call.inputs.push_back(&slot->tensor);
    }
  }
  IRM_ASSIGN_OR_RETURN(const DType dtype, KernelDType(op, binding, index, call.attrs));

  // Outputs in result order, a vector result one output per element of its type; a result of
  // null type (an absent optional output) gets a null output.
  std::vector<size_t> first(op.num_results());
  std::vector<size_t> count(op.num_results());
  size_t total = 0;
  for (size_t r = 0; r < op.num_results(); ++r) {
    const newir::Type& type = op.result(r)->type();
    first[r] = total;
    count[r] = type.kind() == newir::TypeKind::kVector ? type.elements().size() : 1;
    total += count[r];
  }
  std::vector<Tensor> outputs(total);
  for (size_t r = 0; r < op.num_results(); ++r) {
    const bool absent = op.result(r)->type().IsNull();
    for (size_t k = 0; k < count[r]; ++k) {
      call.outputs.push_back(absent ? nullptr : &outputs[first[r] + k]);
    }
  }

  call.context.gemm = options_.gemm;
  call.context.program_seed = options_.seed;
  if (binding.random) {
    // A random op's stream and shard follow its first result's logical name: the legacy var name
    // the translator recorded, so both executors draw the same numbers for the same var.
    const std::string name = PirLogicalName(op, 0, index);
    call.context.op_identity = OpIdentity(name);
    auto shard = options_.shards.find(name);
    if (shard != options_.shards.end()) {
      call.context.shard = &shard->second;
      call.context.shard_var = shard->first;
    }
  }

  const Status status = kernels_.Run(binding.kernel, dtype, call);
  if (!status.ok()) return Locate(status, op, index);

  for (size_t r = 0; r < op.num_results(); ++r) {
    const newir::Value* result = op.result(r);
    if (result->type().IsNull()) continue;
    if (result->type().kind() == newir::TypeKind::kVector) {
      PirSlot slot;
      slot.is_vector = true;
      for (size_t k = 0; k < count[r]; ++k) {
        slot.elements.push_back(std::move(outputs[first[r] + k]));
      }
      Bind(result, std::move(slot));
      continue;
    }
    Tensor out = std::move(outputs[first[r]]);
    const int target = binding.inplace_operand[r];
    if (out.defined() && target >= 0 && op.operand(static_cast<size_t>(target)) != nullptr) {
      IRM_ASSIGN_OR_RETURN(const Tensor* into, ReadTensor(op, index, static_cast<size_t>(target)));
      IRM_ASSIGN_OR_RETURN(
          out, WriteInPlace(op, index, static_cast<size_t>(target), r, *into, std::move(out)));
    } else if (out.defined() && binding.inplace_into_named_element && r == 0) {
      IRM_ASSIGN_OR_RETURN(const PirSlot* slot, Read(op, index, 0));
      const size_t element = NamedElement(op, index);
      if (slot->is_vector && element < slot->elements.size()) {
        IRM_ASSIGN_OR_RETURN(
            out, WriteInPlace(op, index, 0, r, slot->elements[element], std::move(out)));
      }
    }
    // A result its kernel did not produce stays undefined: the observer sees null, a reader fails.
    Bind(result, std::move(out));
  }
  return Status::Ok();
}

}  // namespace irm::rt
