// matmul_with_flatten and its grad: the legacy `mul` op (paddle/fluid/operators/mul_op.cc; phi's
// matmul_with_flatten, paddle/phi/ops/yaml/legacy/static_ops.yaml, and
// paddle/phi/kernels/impl/matmul_kernel_impl.h MatmulWithFlattenKernel): x is flattened to the
// matrix [prod(x.dims[:x_num_col_dims]), prod(x.dims[x_num_col_dims:])], y likewise with
// y_num_col_dims, and out = x2 · y2 has the dims x.dims[:x_num_col_dims] + y.dims[y_num_col_dims:].
// The grads are those of that product, reshaped back to x's and y's dims.
//
// The products run through the runtime's own matmul and matmul_grad kernels on the flattened
// views, so the bits are exactly those of Paddle's translation of `mul` (reshape, pd_op.matmul,
// reshape: paddle/fluid/ir_adaptor/translator/op_translator.cc, MulOpTranscriber).
#include <cstdint>
#include <vector>

#include "reference_runtime/kernels/matmul_with_flatten_plan.h"
#include "reference_runtime/kernels/register.h"

namespace irm::rt {
namespace {

template <typename T>
struct MatmulWithFlattenKernel {
  static Status Run(KernelCall& call) {
    IRM_ASSIGN_OR_RETURN(plan::FlattenedOperands<Tensor> f, plan::FlattenOperands(call));
    Tensor out;
    KernelCall product{
        .inputs = {&f.x, &f.y}, .outputs = {&out}, .attrs = {}, .context = call.context};
    IRM_RETURN_IF_ERROR(KernelRegistry::Global().Run("matmul", DTypeOf<T>(), product));
    IRM_ASSIGN_OR_RETURN(Tensor shaped, out.Reshaped(f.out_dims));
    call.SetOutput(0, std::move(shaped));
    return Status::Ok();
  }
};

template <typename T>
struct MatmulWithFlattenGradKernel {
  static Status Run(KernelCall& call) {
    IRM_ASSIGN_OR_RETURN(plan::FlattenedOperands<Tensor> f, plan::FlattenOperands(call));
    const Tensor& out_grad = call.input(2);
    IRM_RETURN_IF_ERROR(plan::CheckMatmulWithFlattenOutGrad(out_grad, f.out_dims));
    IRM_ASSIGN_OR_RETURN(const Tensor dout, out_grad.Reshaped({f.x.dim(0), f.y.dim(1)}));
    Tensor dx, dy;
    KernelCall grad{
        .inputs = {&f.x, &f.y, &dout},
        .outputs = {call.wants_output(0) ? &dx : nullptr, call.wants_output(1) ? &dy : nullptr},
        .attrs = {},
        .context = call.context};
    IRM_RETURN_IF_ERROR(KernelRegistry::Global().Run("matmul_grad", DTypeOf<T>(), grad));
    if (call.wants_output(0)) {
      IRM_ASSIGN_OR_RETURN(Tensor shaped, dx.Reshaped(call.input(0).shape()));
      call.SetOutput(0, std::move(shaped));
    }
    if (call.wants_output(1)) {
      IRM_ASSIGN_OR_RETURN(Tensor shaped, dy.Reshaped(call.input(1).shape()));
      call.SetOutput(1, std::move(shaped));
    }
    return Status::Ok();
  }
};

}  // namespace

Status RegisterMatmulWithFlattenKernels(KernelRegistry& registry) {
  IRM_RETURN_IF_ERROR((RegisterForTypes<MatmulWithFlattenKernel, float, double>(
      registry, "matmul_with_flatten", {2, 2, 1})));
  return RegisterForTypes<MatmulWithFlattenGradKernel, float, double>(
      registry, "matmul_with_flatten_grad", {3, 3, 2});
}

}  // namespace irm::rt
