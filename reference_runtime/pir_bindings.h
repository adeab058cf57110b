// The new-IR binding table: how each pd_op reaches a shared kernel (kernel.h), written from the
// pd_op signatures of newir/pd_op_dialect.cc and nothing else (docs/architecture.md, invariant 1:
// the translator's op-compat table is a separate, independent table). For every op it says which
// kernel runs, what each operand is to the kernel (an input, a mutable IntArray/Scalar read from
// its tensor and passed as an attribute, or only the storage an in-place result lands in), which
// input or attribute picks the kernel's dtype, which operand each in-place result overwrites, and
// whether the op draws random numbers. Ops the executor interprets itself (builtin.*, cf.yield,
// pd_op.data/feed/fetch, pd_op.if/while: IsInterpretedOp, pir_executor.h) are not in it. Also here:
// the conversions from new-IR types and attributes to the runtime's dtypes and kernel attributes.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "newir/attributes.h"
#include "newir/op_info.h"
#include "newir/operation.h"
#include "newir/types.h"
#include "reference_runtime/kernel.h"
#include "reference_runtime/tensor.h"

namespace irm::rt {

// What an operand is to the kernel.
enum class OperandRole : uint8_t {
  kInput,     // a kernel input; a vector operand gives one input per element, in order
  kIntArray,  // a mutable IntArray: an int tensor, or a vector of one-value int tensors
  kInt,       // a mutable int Scalar (concat's axis): one integer value
  kFloat,     // a mutable float Scalar (scale's scale): one value of any numeric dtype
  kTarget,    // only where an in-place result is written (full_'s output); not a kernel input
};

enum class BindingKind : uint8_t {
  kKernel,         // runs `kernel`
  kPassThrough,    // orders streams only: the results are the operands (sync_calc_stream_)
  kCommunication,  // a collective or point-to-point op: needs the multi-rank runtime
};

struct OpBinding {
  std::string op;  // "pd_op.matmul"
  BindingKind kind = BindingKind::kKernel;
  std::string kernel;  // "matmul"
  const newir::OpInfo* info = nullptr;
  // One per operand of the op (OpInfo::operands), with the operand's name for attributes and
  // messages.
  std::vector<OperandRole> roles;
  // The operand whose tensor (a vector's first element) selects the kernel's dtype, or -1 for the
  // op's "dtype" attribute (creation and random ops).
  int dtype_operand = 0;
  // Per result: the operand whose storage it overwrites, or -1 (a fresh tensor).
  std::vector<int> inplace_operand;
  // add_n_: the result overwrites the element of its vector operand that carries the result's
  // logical name (the legacy sum whose Out is one of its X), else the first element.
  bool inplace_into_named_element = false;
  // Draws random numbers: the kernel gets the op's identity (philox.h).
  bool random = false;
  // Table attributes passed as float arrays whatever their elements (assign_value's values).
  std::vector<std::string> float_array_attrs;
};

class PirBindings {
 public:
  // The table for the ops of newir::OpRegistry::Global(), built once.
  static const PirBindings& Global();
  // The table resolved against `registry`: fails when an op, operand or result the table names
  // is not in it.
  static StatusOr<PirBindings> Build(const newir::OpRegistry& registry);

  // Null for an op without a binding.
  const OpBinding* Find(std::string_view op_name) const;
  std::vector<std::string> OpNames() const;

 private:
  std::map<std::string, OpBinding, std::less<>> bindings_;
};

// The runtime dtype of a new-IR element type (f32 -> float32); nullopt for one the runtime does
// not compute with (index, f8 kinds, undefined).
std::optional<DType> DTypeOfElementType(const newir::Type& element);
// The same for a DataType attribute; nullopt for Undefined and kinds without a runtime dtype.
std::optional<DType> DTypeOfDataType(newir::DataType type);

// Converts the op's table attributes (value, else the table's default) into kernel attributes:
// Int32/Int64 -> int64_t, Float/Double -> double (an integer where the table declares a float
// kind is widened), Bool, String, IntArray and integer arrays -> std::vector<int64_t>, float
// arrays -> std::vector<double>, DataType -> DType, Scalar -> its bool/int64/double. Attributes
// outside the op's table entry (legacy_var_names, op_role, stop_gradient, ...) are not the
// kernel's; neither are places and layouts. An Undefined DataType is left out (the kernel then
// uses its input's dtype). A value no kernel type can hold is an error naming the attribute.
Status ConvertAttributes(const newir::Operation& op, const OpBinding& binding, KernelAttrs& attrs);

}  // namespace irm::rt
