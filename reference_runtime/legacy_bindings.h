// The legacy binding table: for every legacy op type that runs through a kernel, which kernel it
// is and how the op's slots and attributes map onto the kernel's signature (kernel.h: the pd_op
// signature, mutable IntArray/Scalar operands as attributes). Written from the legacy ops'
// semantics (Paddle's op makers and kernels), independently of the translator's op-compat table
// (docs/architecture.md, invariant 1): a wrong row here or there shows up as a parity failure.
//
// Ops the executor runs itself (feed, fetch, conditional_block, while, the stream-ordering no-ops)
// and the communication ops, which need the multi-rank runtime, are classified here too, so that
// one file says what the legacy executor knows.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "oldir/program.h"
#include "reference_runtime/kernel.h"

namespace irm::rt {

// How many vars a slot binds. kOne: one var (an input must be there; an output may be absent or
// @EMPTY@, and is then not wanted). kOptional: an input that may be absent (a null kernel input).
// kList: any number, each one kernel input or output (add_n's inputs, split's outputs).
enum class Arity : uint8_t { kOne, kOptional, kList };

struct SlotRule {
  std::string_view slot;
  Arity arity = Arity::kOne;
};

// The kernel attribute kinds (kernel.h's AttrValue alternatives) a legacy attribute converts to.
enum class AttrKind : uint8_t { kBool, kInt, kFloat, kString, kInts, kFloats, kDType };

// A legacy attribute copied to a kernel attribute, converted to `kind`. `fallback` is the legacy
// op maker's default, used when the op does not carry the attribute; none means the attribute is
// required (a program without it cannot run). An empty `legacy` name is a kernel attribute the
// legacy op has no counterpart for: always `fallback`.
struct AttrRule {
  std::string_view legacy;
  std::string_view kernel;
  AttrKind kind;
  std::optional<AttrValue> fallback;
};

// Inputs whose tensor values override an attribute (legacy ops take a shape, an axis or a scalar
// either as an attribute or as a tensor computed at run time).
enum class TensorAttrKind : uint8_t {
  kIntArray,  // one 1-D int32/int64 tensor: its values (reshape2's Shape)
  kIntList,   // a list of 1-element int32/int64 tensors, one value each (ShapeTensor lists)
  kScalar,    // a 1-element tensor of any dtype: its value as a double (ScaleTensor)
  kInt,       // a 1-element int32/int64 tensor: its value (AxisTensor)
};

// Applied in table order when the slot holds vars, so a later rule wins over an earlier one
// (fill_constant's ShapeTensor over its ShapeTensorList, as Paddle's kernels decide).
struct TensorAttrRule {
  std::string_view slot;
  std::string_view kernel_attr;
  TensorAttrKind kind;
};

// The dtype the kernel is looked up for: the DType attribute `attr` when the bound attributes
// hold it (full, uniform, full_like with an explicit dtype), else kernel input `input` (an index
// into the flattened kernel inputs).
struct DTypeRule {
  size_t input = 0;
  std::string_view attr;
};

// Legacy elementwise and compare ops align a lower-rank operand at `axis` instead of at the
// trailing dims: the executor reshapes that operand so that numpy broadcasting means the same
// (kForward), and for grad ops also reshapes its gradient back (kGrad).
enum class LegacyBroadcast : uint8_t { kNone, kForward, kGrad };

// Adjustments no table row can express (a kernel chosen by an attribute, a value taken from one
// of several attributes); run once per op when the executor prepares the program. Errors are
// unlocated kInvalid statuses naming the attribute.
using BindHook = Status (*)(const oldir::Op& op, std::string& kernel, KernelAttrs& attrs);

struct LegacyBinding {
  std::string_view op_type;
  std::string_view kernel;
  std::vector<SlotRule> inputs = {};   // in kernel input order
  std::vector<SlotRule> outputs = {};  // in kernel output order
  std::vector<AttrRule> attrs = {};
  std::vector<TensorAttrRule> tensor_attrs = {};
  DTypeRule dtype = {};
  LegacyBroadcast broadcast = LegacyBroadcast::kNone;
  BindHook hook = nullptr;
  // The kernel hands back views of one of its own outputs (coalesce_tensor): an output naming a
  // var the op also reads replaces that var's tensor instead of being copied into its storage,
  // so the var aliases the kernel's buffer afterwards.
  bool outputs_are_views = false;
};

// The binding of a legacy op type, or null when the table has none.
const LegacyBinding* FindLegacyBinding(std::string_view op_type);
// Every binding, sorted by op type.
const std::vector<LegacyBinding>& AllLegacyBindings();

// Ops the executor runs itself rather than through a kernel.
enum class LegacyBuiltin : uint8_t {
  kFeed,
  kFetch,
  kConditionalBlock,
  kWhile,
  kOrderingNoOp,    // c_sync_calc_stream, c_sync_comm_stream: stream ordering, nothing to compute
  kNeedsMultiRank,  // communication ops (c_allreduce_sum, send_v2, barrier, ...)
};
std::optional<LegacyBuiltin> FindLegacyBuiltin(std::string_view op_type);

// The kernel attributes of `op` under `binding`: every AttrRule (converted, or its fallback), then
// the hook, which may also change the kernel name. Errors are unlocated; the caller locates them.
Status BindLegacyAttrs(const LegacyBinding& binding, const oldir::Op& op, std::string& kernel,
                       KernelAttrs& attrs);

// The attribute `name` of `op` converted to `kind`, or `fallback` when the op does not carry it.
StatusOr<AttrValue> LegacyAttrOr(const oldir::Op& op, std::string_view name, AttrKind kind,
                                 AttrValue fallback);

// One legacy attribute value as a kernel attribute of `kind`: ints widen to int64, floats to
// double, INTS/LONGS to int arrays, a dtype code (VarType.Type) to a DType. kInvalid names `name`
// when the value does not convert.
StatusOr<AttrValue> ConvertLegacyAttr(std::string_view name, const oldir::AttrValue& value,
                                      AttrKind kind);

// A VarType.Type code as a runtime DType; kInvalid naming the attribute when it is none.
StatusOr<DType> DTypeFromLegacyCode(std::string_view attr, int64_t code);

}  // namespace irm::rt
