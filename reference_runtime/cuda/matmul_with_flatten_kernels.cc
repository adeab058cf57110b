// The CUDA twins of matmul_with_flatten and its grad (kernels/matmul_with_flatten.cc, the legacy
// `mul`): x and y flattened to matrices at x_num_col_dims / y_num_col_dims, the product and its
// grads by the CUDA matmul and matmul_grad kernels (matmul_kernels.cc) on those views, reshaped
// back — the CPU kernel's composition, on the device's GEMM.
#include <fmt/format.h>

#include <functional>
#include <numeric>
#include <vector>

#include "reference_runtime/cuda/cuda_kernel.h"

namespace irm::rt::cuda {
namespace {

int64_t Product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  return std::accumulate(dims.begin() + static_cast<std::ptrdiff_t>(begin),
                         dims.begin() + static_cast<std::ptrdiff_t>(end), int64_t{1},
                         std::multiplies<int64_t>());
}

StatusOr<DeviceTensor> Flatten(const DeviceTensor& t, const char* name, int64_t col_dims) {
  if (t.rank() < 2 || col_dims < 1 || col_dims >= t.rank()) {
    return KernelError(fmt::format("{}_num_col_dims is {}, expected 1 to {} for {} of shape {}",
                                   name, col_dims, t.rank() - 1, name, ShapeToString(t.shape())));
  }
  const auto split = static_cast<size_t>(col_dims);
  return t.Reshaped({Product(t.shape(), 0, split), Product(t.shape(), split, t.shape().size())});
}

struct Flattened {
  DeviceTensor x, y;
  std::vector<int64_t> out_dims;
};

StatusOr<Flattened> FlattenCall(const CudaKernelCall& call) {
  IRM_ASSIGN_OR_RETURN(const int64_t x_cols, call.attrs.GetOr<int64_t>("x_num_col_dims", 1));
  IRM_ASSIGN_OR_RETURN(const int64_t y_cols, call.attrs.GetOr<int64_t>("y_num_col_dims", 1));
  Flattened f;
  IRM_ASSIGN_OR_RETURN(f.x, Flatten(call.input(0), "x", x_cols));
  IRM_ASSIGN_OR_RETURN(f.y, Flatten(call.input(1), "y", y_cols));
  const std::vector<int64_t>& xd = call.input(0).shape();
  const std::vector<int64_t>& yd = call.input(1).shape();
  f.out_dims.assign(xd.begin(), xd.begin() + x_cols);
  f.out_dims.insert(f.out_dims.end(), yd.begin() + y_cols, yd.end());
  return f;
}

Status RunMatmulWithFlatten(CudaKernelCall& call) {
  IRM_ASSIGN_OR_RETURN(Flattened f, FlattenCall(call));
  DeviceTensor out;
  CudaKernelCall product;
  product.inputs = {&f.x, &f.y};
  product.outputs = {&out};
  product.context = call.context;
  IRM_RETURN_IF_ERROR(CudaKernelRegistry::Global().Run("matmul", f.x.dtype(), product));
  IRM_ASSIGN_OR_RETURN(DeviceTensor shaped, out.Reshaped(f.out_dims));
  call.SetOutput(0, std::move(shaped));
  return Status::Ok();
}

Status RunMatmulWithFlattenGrad(CudaKernelCall& call) {
  IRM_ASSIGN_OR_RETURN(Flattened f, FlattenCall(call));
  const DeviceTensor& out_grad = call.input(2);
  if (out_grad.shape() != f.out_dims) {
    return KernelError(fmt::format("out_grad has shape {}, expected {} (the shape of out)",
                                   ShapeToString(out_grad.shape()), ShapeToString(f.out_dims)));
  }
  IRM_ASSIGN_OR_RETURN(const DeviceTensor dout,
                       out_grad.Reshaped({f.x.shape()[0], f.y.shape()[1]}));
  DeviceTensor dx, dy;
  CudaKernelCall grad;
  grad.inputs = {&f.x, &f.y, &dout};
  grad.outputs = {call.wants_output(0) ? &dx : nullptr, call.wants_output(1) ? &dy : nullptr};
  grad.context = call.context;
  IRM_RETURN_IF_ERROR(CudaKernelRegistry::Global().Run("matmul_grad", f.x.dtype(), grad));
  if (call.wants_output(0)) {
    IRM_ASSIGN_OR_RETURN(DeviceTensor shaped, dx.Reshaped(call.input(0).shape()));
    call.SetOutput(0, std::move(shaped));
  }
  if (call.wants_output(1)) {
    IRM_ASSIGN_OR_RETURN(DeviceTensor shaped, dy.Reshaped(call.input(1).shape()));
    call.SetOutput(1, std::move(shaped));
  }
  return Status::Ok();
}

}  // namespace

Status RegisterCudaMatmulWithFlattenKernels(CudaKernelRegistry& registry) {
  const std::initializer_list<DType> dtypes = {DType::kFloat32, DType::kFloat64};
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "matmul_with_flatten", dtypes, &RunMatmulWithFlatten, {2, 2, 1}));
  return RegisterForDTypes(registry, "matmul_with_flatten_grad", dtypes, &RunMatmulWithFlattenGrad,
                           {3, 3, 2});
}

}  // namespace irm::rt::cuda
