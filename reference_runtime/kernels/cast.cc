// The cast kernel: converts x to the dtype attribute, between every pair of runtime dtypes, by
// the element rules in convert.h (float -> int truncates toward zero, NaN -> 0, out of range
// saturates; integers wrap; floats round to nearest even once). The registry key is x's dtype;
// the output dtype comes from the attribute.
#include "reference_runtime/kernels/convert.h"
#include "reference_runtime/kernels/data_kernels.h"
#include "reference_runtime/kernels/register.h"

namespace irm::rt {
namespace {

template <typename From>
struct CastKernel {
  static Status Run(KernelCall& call) {
    const Tensor& x = call.input(0);
    IRM_ASSIGN_OR_RETURN(DType dtype, data::RuntimeDTypeAttr(call.attrs, "dtype", "cast"));
    Tensor out = Tensor::ZerosUnchecked(dtype, x.shape());
    const From* in = x.data<From>();
    data::VisitDType(dtype, [&](auto zero) {
      using To = decltype(zero);
      To* o = out.data<To>();
      for (int64_t i = 0; i < x.numel(); ++i) o[i] = ConvertElement<To>(in[i]);
    });
    call.SetOutput(0, std::move(out));
    return Status::Ok();
  }
};

}  // namespace

Status RegisterCastKernels(KernelRegistry& registry) {
  return data::RegisterTemplateForEveryDType<CastKernel>(registry, "cast", {1, 1, 1});
}

}  // namespace irm::rt
