// Creation kernels: full, full_like, full_int_array and assign_value, for every runtime dtype.
// Their values come from attributes and are converted to the output dtype by cast's rules
// (convert.h), so that full(value, int8) and cast(full(value, float64), int8) agree. The registry
// key is the output dtype: the dtype attribute (full_like: x's dtype when it has none, as Paddle's
// `data_type: dtype > x`); a kernel called for another dtype than the attribute says reports it
// rather than produce a tensor of the wrong type.
#include <fmt/format.h>

#include "reference_runtime/kernels/convert.h"
#include "reference_runtime/kernels/data_kernels.h"
#include "reference_runtime/kernels/register.h"

namespace irm::rt {
namespace {

// The output dtype `wanted` must be the kernel's own, T.
template <typename T>
Status CheckKernelDType(DType wanted, std::string_view kernel, std::string_view source) {
  if (wanted == DTypeOf<T>()) return Status::Ok();
  return KernelError(fmt::format("{}: {} says {} but the {} kernel was called", kernel, source,
                                 DTypeName(wanted), DTypeName(DTypeOf<T>())));
}

template <typename T>
T ConvertNumber(const data::Number& value) {
  if (const int64_t* i = std::get_if<int64_t>(&value)) return ConvertElement<T>(*i);
  return ConvertElement<T>(std::get<double>(value));
}

template <typename T>
void Fill(Tensor& t, T value) {
  T* out = t.data<T>();
  for (int64_t i = 0; i < t.numel(); ++i) out[i] = value;
}

// full(; shape, value, dtype) -> out: shape filled with value. full_ (in place) passes its
// `output` operand as an input; the kernel does not read it and makes a fresh tensor.
template <typename T>
struct FullKernel {
  static Status Run(KernelCall& call) {
    IRM_ASSIGN_OR_RETURN(DType dtype, data::RuntimeDTypeAttr(call.attrs, "dtype", "full"));
    IRM_RETURN_IF_ERROR(CheckKernelDType<T>(dtype, "full", "the dtype attribute"));
    IRM_ASSIGN_OR_RETURN(std::vector<int64_t> shape, call.attrs.Get<std::vector<int64_t>>("shape"));
    IRM_ASSIGN_OR_RETURN(data::Number value, data::NumberAttr(call.attrs, "value"));
    IRM_ASSIGN_OR_RETURN(Tensor out, data::MakeOutput("full", dtype, std::move(shape)));
    Fill(out, ConvertNumber<T>(value));
    call.SetOutput(0, std::move(out));
    return Status::Ok();
  }
};

// full_like(x; value, dtype) -> out: x's shape filled with value, of dtype (x's when absent).
template <typename T>
struct FullLikeKernel {
  static Status Run(KernelCall& call) {
    const Tensor& x = call.input(0);
    if (call.attrs.Has("dtype")) {
      IRM_ASSIGN_OR_RETURN(DType dtype, data::RuntimeDTypeAttr(call.attrs, "dtype", "full_like"));
      IRM_RETURN_IF_ERROR(CheckKernelDType<T>(dtype, "full_like", "the dtype attribute"));
    } else {
      IRM_RETURN_IF_ERROR(
          CheckKernelDType<T>(x.dtype(), "full_like", "x's dtype (no dtype attribute)"));
    }
    IRM_ASSIGN_OR_RETURN(data::Number value, data::NumberAttr(call.attrs, "value"));
    Tensor out = Tensor::ZerosUnchecked(DTypeOf<T>(), x.shape());
    Fill(out, ConvertNumber<T>(value));
    call.SetOutput(0, std::move(out));
    return Status::Ok();
  }
};

// full_int_array(; value, dtype) -> out: the 1-D tensor of the values.
template <typename T>
struct FullIntArrayKernel {
  static Status Run(KernelCall& call) {
    IRM_ASSIGN_OR_RETURN(DType dtype,
                         data::RuntimeDTypeAttr(call.attrs, "dtype", "full_int_array"));
    IRM_RETURN_IF_ERROR(CheckKernelDType<T>(dtype, "full_int_array", "the dtype attribute"));
    IRM_ASSIGN_OR_RETURN(std::vector<int64_t> values,
                         call.attrs.Get<std::vector<int64_t>>("value"));
    Tensor out = Tensor::ZerosUnchecked(dtype, {static_cast<int64_t>(values.size())});
    T* o = out.data<T>();
    for (size_t i = 0; i < values.size(); ++i) o[i] = ConvertElement<T>(values[i]);
    call.SetOutput(0, std::move(out));
    return Status::Ok();
  }
};

// assign_value(; shape, dtype, values) -> out: the values in C order. values is a float array
// (ints beyond 2^53 are then inexact, as in any float attribute) or an int array, kept exact.
// assign_value_ passes its `output` operand as an input, which is not read.
template <typename T>
struct AssignValueKernel {
  static Status Run(KernelCall& call) {
    IRM_ASSIGN_OR_RETURN(DType dtype, data::RuntimeDTypeAttr(call.attrs, "dtype", "assign_value"));
    IRM_RETURN_IF_ERROR(CheckKernelDType<T>(dtype, "assign_value", "the dtype attribute"));
    IRM_ASSIGN_OR_RETURN(std::vector<int64_t> shape, call.attrs.Get<std::vector<int64_t>>("shape"));
    std::vector<data::Number> values;
    auto it = call.attrs.values().find("values");
    if (it != call.attrs.values().end() &&
        std::holds_alternative<std::vector<int64_t>>(it->second)) {
      for (int64_t v : std::get<std::vector<int64_t>>(it->second)) values.emplace_back(v);
    } else {
      IRM_ASSIGN_OR_RETURN(std::vector<double> floats,
                           call.attrs.Get<std::vector<double>>("values"));
      for (double v : floats) values.emplace_back(v);
    }
    IRM_ASSIGN_OR_RETURN(Tensor out, data::MakeOutput("assign_value", dtype, shape));
    if (static_cast<int64_t>(values.size()) != out.numel()) {
      return KernelError(fmt::format("assign_value: {} values for shape {} ({} elements)",
                                     values.size(), ShapeToString(shape), out.numel()));
    }
    T* o = out.data<T>();
    for (size_t i = 0; i < values.size(); ++i) o[i] = ConvertNumber<T>(values[i]);
    call.SetOutput(0, std::move(out));
    return Status::Ok();
  }
};

}  // namespace

Status RegisterCreationKernels(KernelRegistry& registry) {
  IRM_RETURN_IF_ERROR(data::RegisterTemplateForEveryDType<FullKernel>(registry, "full", {0, 1, 1}));
  IRM_RETURN_IF_ERROR(
      data::RegisterTemplateForEveryDType<FullLikeKernel>(registry, "full_like", {1, 1, 1}));
  IRM_RETURN_IF_ERROR(data::RegisterTemplateForEveryDType<FullIntArrayKernel>(
      registry, "full_int_array", {0, 0, 1}));
  return data::RegisterTemplateForEveryDType<AssignValueKernel>(registry, "assign_value",
                                                                {0, 1, 1});
}

}  // namespace irm::rt
