// How the new-IR executor runs an op of the binding table (pir_bindings.h) on its kernel: the
// operands become kernel inputs (a vector operand one input per element) or attributes (mutable
// IntArray/Scalar operands, read from their tensors), the op's table attributes are converted,
// the dtype is picked, the random-op context is set, and the kernel's fresh outputs become the
// results — written into the storage of the operand they replace for in-place ops, so that every
// value sharing that storage (a parameter of the Scope above all) sees the update.
#include <fmt/format.h>

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

StatusOr<AttrValue> PirInterpreter::ReadMutable(const PirOpPlan& plan, size_t operand,
                                                OperandRole role) const {
  const newir::Operation& op = *plan.op;
  const int index = plan.index;
  IRM_ASSIGN_OR_RETURN(const PirSlot* slot, Read(plan, operand));
  // Named only in an error: formatted there, not on every step.
  auto label = [&] { return OperandLabel(op, operand); };
  if (role == OperandRole::kIntArray) {
    std::vector<int64_t> values;
    if (!slot->is_vector) {
      const Tensor& t = slot->tensor;
      if (!IsIntegerDType(t.dtype())) {
        return Fail(StatusCode::kInvalid, op, index,
                    fmt::format("{} must be an integer tensor, got {}", label(), t.Describe()));
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
                                k, label(), t.Describe()));
      }
      values.push_back(ElementAsInt64(t, 0));
    }
    return AttrValue(std::move(values));
  }
  if (slot->is_vector) {
    return Fail(StatusCode::kInvalid, op, index,
                fmt::format("{} must be a tensor holding one value, not a vector", label()));
  }
  const Tensor& t = slot->tensor;
  if (role == OperandRole::kInt) {
    if (!IsIntegerDType(t.dtype()) || t.numel() != 1) {
      return Fail(StatusCode::kInvalid, op, index,
                  fmt::format("{} must be an integer tensor holding one value, got {}", label(),
                              t.Describe()));
    }
    return AttrValue(ElementAsInt64(t, 0));
  }
  if (!IsRealDType(t.dtype()) || t.numel() != 1) {
    return Fail(
        StatusCode::kInvalid, op, index,
        fmt::format("{} must be a real tensor holding one value, got {}", label(), t.Describe()));
  }
  return AttrValue(ElementAsDouble(t, 0));
}

StatusOr<DType> PirInterpreter::KernelDType(const PirOpPlan& plan, const KernelAttrs& attrs) const {
  const newir::Operation& op = *plan.op;
  const int index = plan.index;
  const OpBinding& binding = *plan.binding;
  if (binding.dtype_operand < 0) {
    auto it = attrs.values().find("dtype");
    if (it == attrs.values().end() || !std::holds_alternative<DType>(it->second)) {
      return Fail(StatusCode::kInvalid, op, index,
                  "attribute 'dtype' names no dtype the runtime computes with");
    }
    return std::get<DType>(it->second);
  }
  const size_t operand = static_cast<size_t>(binding.dtype_operand);
  IRM_ASSIGN_OR_RETURN(const PirSlot* slot, Read(plan, operand));
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
  // A kernel may hand back a view of the very tensor it writes (share_data: CopyBytesFrom moves
  // overlapping bytes), or a device-resident result (the storage takes its device copy).
  storage.CopyBytesFrom(out);
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

Status PirInterpreter::RunKernelOp(const PirOpPlan& plan) {
  const newir::Operation& op = *plan.op;
  const int index = plan.index;
  const OpBinding& binding = *plan.binding;
  if (plan.kernel == nullptr) {
    // Prepared whenever the op matches its binding's signature: it does not.
    return Fail(StatusCode::kInvalid, op, index,
                fmt::format("has {} operands and {} results but its signature has {} and {}",
                            op.num_operands(), op.num_results(), binding.roles.size(),
                            binding.inplace_operand.size()));
  }
  const PirKernelPlan& prepared = *plan.kernel;
  if (!prepared.attrs_status.ok()) return Locate(prepared.attrs_status, op, index);
  KernelCall& call = call_;
  call.inputs.clear();
  call.outputs.clear();
  call.context = KernelContext();
  call.attrs = prepared.attrs;
  for (size_t i = 0; i < op.num_operands(); ++i) {
    const OperandRole role = binding.roles[i];
    if (role == OperandRole::kTarget) continue;
    if (plan.operands[i] == PirOpPlan::kAbsent) {
      // An absent optional input is a null input; an absent mutable operand no attribute.
      if (role == OperandRole::kInput) call.inputs.push_back(nullptr);
      continue;
    }
    if (role != OperandRole::kInput) {
      IRM_ASSIGN_OR_RETURN(AttrValue value, ReadMutable(plan, i, role));
      call.attrs.Set(binding.info->operands[i].name, std::move(value));
      continue;
    }
    IRM_ASSIGN_OR_RETURN(const PirSlot* slot, Read(plan, i));
    if (slot->is_vector) {
      for (const Tensor& t : slot->elements) call.inputs.push_back(&t);
    } else {
      call.inputs.push_back(&slot->tensor);
    }
  }
  IRM_ASSIGN_OR_RETURN(const DType dtype, KernelDType(plan, call.attrs));

  // Outputs in result order, a vector result one output per element of its type; a result of
  // null type (an absent optional output) gets a null output.
  const std::vector<size_t>& first = prepared.first_output;
  const std::vector<size_t>& count = prepared.output_count;
  std::vector<Tensor>& outputs = outputs_;
  outputs.clear();
  outputs.resize(prepared.num_outputs);
  for (size_t r = 0; r < op.num_results(); ++r) {
    for (size_t k = 0; k < count[r]; ++k) {
      call.outputs.push_back(prepared.absent[r] ? nullptr : &outputs[first[r] + k]);
    }
  }

  call.context.gemm = options_.gemm;
  call.context.program_seed = options_.seed;
  if (binding.random) {
    call.context.op_identity = prepared.op_identity;
    auto shard = options_.shards.find(prepared.random_name);
    if (shard != options_.shards.end()) {
      call.context.shard = &shard->second;
      call.context.shard_var = shard->first;
    }
  }

  const Status status = prepared.kernel.Run(dtype, call);
  if (!status.ok()) return Locate(status, op, index);

  for (size_t r = 0; r < op.num_results(); ++r) {
    if (prepared.absent[r]) continue;
    PirSlot& result = slots_[plan.results[r]];
    if (prepared.is_vector[r]) {
      PirSlot slot;
      slot.is_vector = true;
      for (size_t k = 0; k < count[r]; ++k) {
        slot.elements.push_back(std::move(outputs[first[r] + k]));
      }
      result = std::move(slot);
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
    result.tensor = std::move(out);
    result.elements.clear();
    result.is_vector = false;
  }
  return Status::Ok();
}

}  // namespace irm::rt
