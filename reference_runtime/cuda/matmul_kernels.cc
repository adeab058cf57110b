// matmul and matmul_grad on the GPU through cuBLAS, planned as the CPU kernels plan them
// (kernels/matmul_plan.h: paddle.matmul's shapes and errors): the last two dims are the matrices
// (transposed when transpose_x / transpose_y), a 1-D x is a row vector and a 1-D y a column vector
// whose added dim is dropped, and batch dims broadcast.
//
// Every product is a RunRowMajorGemm (cublas_gemm.h): the thread's one cuBLAS handle and
// workspace, with its deterministic settings (pedantic math, no TF32, atomics not allowed, a fixed
// 32 MiB workspace), so that cuBLAS picks the same algorithm, and so the same bits, on every call
// of a shape. 16-bit operands multiply with a float32 accumulator and are stored once
// (CUBLAS_COMPUTE_32F_PEDANTIC), as the CPU kernel does.
#include <cstddef>
#include <optional>
#include <vector>

#include "reference_runtime/cuda/cublas_gemm.h"
#include "reference_runtime/cuda/cuda_kernel.h"
#include "reference_runtime/kernels/broadcast.h"
#include "reference_runtime/kernels/matmul_plan.h"

namespace irm::rt::cuda {
namespace {

using plan::MatmulPlan;

// Row-major c = op(a)[m, k] · op(b)[k, n] of `batches` matrices at the given strides (0: one
// matrix shared by every batch), overwriting c (RowMajorGemm's fields, in its order).
RowMajorGemm Product(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const void* a,
                     int64_t stride_a, const void* b, int64_t stride_b, void* c, int64_t stride_c,
                     int64_t batches) {
  // Then: not accumulate, c of the operands' type, strided-batched.
  return RowMajorGemm{trans_a, trans_b,  m, n,        k,       a,     stride_a,
                      b,       stride_b, c, stride_c, batches, false, std::nullopt,
                      false};
}

Status RunMatmul(CudaKernelCall& call) {
  const char* kernel = "matmul";
  const DeviceTensor& x = call.input(0);
  const DeviceTensor& y = call.input(1);
  IRM_RETURN_IF_ERROR(ExpectDType(y, x.dtype(), "y"));
  IRM_ASSIGN_OR_RETURN(const MatmulPlan p, plan::PlanMatmul(x, y, call.attrs));
  IRM_ASSIGN_OR_RETURN(DeviceTensor out, DeviceTensor::Uninitialized(x.dtype(), p.out, kernel));
  if (out.numel() == 0) {
    call.SetOutput(0, std::move(out));
    return Status::Ok();
  }
  if (p.k == 0) {  // an empty sum: zeros
    IRM_ASSIGN_OR_RETURN(out, DeviceTensor::Zeros(x.dtype(), p.out, kernel));
    call.SetOutput(0, std::move(out));
    return Status::Ok();
  }
  const int64_t batches = p.batch_numel();
  const bool x_full = p.x_matrices() == batches, y_full = p.y_matrices() == batches;
  const bool x_single = p.x_matrices() == 1, y_single = p.y_matrices() == 1;
  if ((x_full || x_single) && (y_full || y_single)) {
    // One strided-batched call: a batch-less operand repeats with stride 0.
    IRM_RETURN_IF_ERROR(RunRowMajorGemm(
        x.dtype(),
        Product(p.trans_x, p.trans_y, p.m, p.n, p.k, x.raw(), x_single ? 0 : p.x_size(), y.raw(),
                y_single ? 0 : p.y_size(), out.raw(), p.out_size(), batches),
        kernel));
    call.SetOutput(0, std::move(out));
    return Status::Ok();
  }
  // Batch dims that broadcast both ways: one cublasGemmEx per out batch.
  const size_t item = DTypeSize(x.dtype());
  const std::vector<int64_t> x_strides = BroadcastStrides(p.x_batch, p.batch);
  const std::vector<int64_t> y_strides = BroadcastStrides(p.y_batch, p.batch);
  std::vector<int64_t> index(p.batch.size(), 0);
  for (int64_t b = 0; b < batches; ++b) {
    int64_t xo = 0, yo = 0;
    for (size_t d = 0; d < p.batch.size(); ++d) {
      xo += index[d] * x_strides[d];
      yo += index[d] * y_strides[d];
    }
    const auto* xp = static_cast<const std::byte*>(x.raw()) + xo * p.x_size() * item;
    const auto* yp = static_cast<const std::byte*>(y.raw()) + yo * p.y_size() * item;
    auto* op = static_cast<std::byte*>(out.raw()) + b * p.out_size() * item;
    RowMajorGemm g = Product(p.trans_x, p.trans_y, p.m, p.n, p.k, xp, 0, yp, 0, op, 0, 1);
    g.single_gemm_ex = true;
    IRM_RETURN_IF_ERROR(RunRowMajorGemm(x.dtype(), g, kernel));
    for (size_t d = p.batch.size(); d-- > 0;) {
      if (++index[d] < p.batch[d]) break;
      index[d] = 0;
    }
  }
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

// ---- matmul_grad
// ---------------------------------------------------------------------------------

const std::byte* At(const DeviceTensor& t, int64_t elements) {
  return static_cast<const std::byte*>(t.raw()) +
         elements * static_cast<int64_t>(DTypeSize(t.dtype()));
}

// x, y, out_grad -> x_grad, y_grad, as the CPU kernel (kernels/matmul.cc, Backward):
//   no transposes:  dx = dout · yᵀ,        dy = xᵀ · dout
//   transpose_x:    dx = y · doutᵀ,        dy = x · dout
//   transpose_y:    dx = dout · y,         dy = doutᵀ · x
//   both:           dx = yᵀ · doutᵀ,       dy = doutᵀ · xᵀ
// When y is one matrix and x is not transposed, x's batches stack into one [batch * m, k] matrix
// (one GEMM each, as the CPU). Otherwise one strided-batched GEMM per operand whose batches are
// all distinct, or, for an operand whose batch dims were broadcast, one GEMM per out batch in
// increasing order adding into its matrix (beta = 1; 16-bit grads accumulate in float32 and are
// rounded once at the end, as the CPU's).
Status RunMatmulGrad(CudaKernelCall& call) {
  const char* kernel = "matmul_grad";
  const DeviceTensor& x = call.input(0);
  const DeviceTensor& y = call.input(1);
  const DeviceTensor& out_grad = call.input(2);
  IRM_RETURN_IF_ERROR(ExpectDType(y, x.dtype(), "y"));
  IRM_RETURN_IF_ERROR(ExpectDType(out_grad, x.dtype(), "out_grad"));
  IRM_ASSIGN_OR_RETURN(const MatmulPlan p, plan::PlanMatmul(x, y, call.attrs));
  IRM_RETURN_IF_ERROR(plan::CheckMatmulGradShape(p, x, y, out_grad));
  const std::vector<int64_t>& xs = x.shape();
  const std::vector<int64_t>& ys = y.shape();
  const bool want_x = call.wants_output(0), want_y = call.wants_output(1);
  DeviceTensor dx, dy;
  if (want_x) {
    IRM_ASSIGN_OR_RETURN(dx, DeviceTensor::Zeros(x.dtype(), xs, kernel));
  }
  if (want_y) {
    IRM_ASSIGN_OR_RETURN(dy, DeviceTensor::Zeros(y.dtype(), ys, kernel));
  }
  const int64_t batches = p.batch_numel();
  if (batches == 0 || p.m == 0 || p.n == 0 || p.k == 0) {  // empty products: the zeros stand
    if (want_x) call.SetOutput(0, std::move(dx));
    if (want_y) call.SetOutput(1, std::move(dy));
    return Status::Ok();
  }
  const int64_t x_size = p.x_size(), y_size = p.y_size(), out_size = p.out_size();
  const int64_t x_matrices = p.x_matrices(), y_matrices = p.y_matrices();

  if (!p.trans_x && y_matrices == 1 && batches > 1) {  // x stacks (the CPU's StacksX)
    const int64_t rows = batches * p.m;
    if (want_x) {
      IRM_RETURN_IF_ERROR(RunRowMajorGemm(
          x.dtype(),
          Product(false, !p.trans_y, rows, p.k, p.n, out_grad.raw(), 0, y.raw(), 0, dx.raw(), 0, 1),
          kernel));
    }
    if (want_y) {
      const RowMajorGemm g =
          p.trans_y
              ? Product(true, false, p.n, p.k, rows, out_grad.raw(), 0, x.raw(), 0, dy.raw(), 0, 1)
              : Product(true, false, p.k, p.n, rows, x.raw(), 0, out_grad.raw(), 0, dy.raw(), 0, 1);
      IRM_RETURN_IF_ERROR(RunRowMajorGemm(x.dtype(), g, kernel));
    }
    if (want_x) call.SetOutput(0, std::move(dx));
    if (want_y) call.SetOutput(1, std::move(dy));
    return Status::Ok();
  }

  // The batch index of the x and y matrices out batch b reads.
  const std::vector<int64_t> x_strides = BroadcastStrides(p.x_batch, p.batch);
  const std::vector<int64_t> y_strides = BroadcastStrides(p.y_batch, p.batch);
  auto matrix_of = [&](int64_t b, const std::vector<int64_t>& strides) {
    int64_t index = 0;
    for (size_t d = p.batch.size(); d-- > 0;) {
      index += (b % p.batch[d]) * strides[d];
      b /= p.batch[d];
    }
    return index;
  };
  // The product of out batch b for the x grad (which_x) or the y grad, into c.
  auto product = [&](bool which_x, int64_t b, void* c, int64_t count) {
    const int64_t xb = matrix_of(b, x_strides), yb = matrix_of(b, y_strides);
    const void* xm = At(x, xb * x_size);
    const void* ym = At(y, yb * y_size);
    const void* g = At(out_grad, b * out_size);
    // Strides for a strided-batched call over every batch (count > 1): only when each operand is
    // either per batch or shared.
    const int64_t sx = x_matrices == 1 ? 0 : x_size, sy = y_matrices == 1 ? 0 : y_size;
    RowMajorGemm r;
    if (which_x) {
      r = p.trans_x
              ? Product(p.trans_y, true, p.k, p.m, p.n, ym, sy, g, out_size, c, x_size, count)
              : Product(false, !p.trans_y, p.m, p.k, p.n, g, out_size, ym, sy, c, x_size, count);
    } else {
      r = p.trans_y
              ? Product(true, p.trans_x, p.n, p.k, p.m, g, out_size, xm, sx, c, y_size, count)
              : Product(!p.trans_x, false, p.k, p.n, p.m, xm, sx, g, out_size, c, y_size, count);
    }
    return r;
  };
  const bool uniform =
      (x_matrices == batches || x_matrices == 1) && (y_matrices == batches || y_matrices == 1);
  for (int which = 0; which < 2; ++which) {
    const bool which_x = which == 0;
    if (which_x ? !want_x : !want_y) continue;
    DeviceTensor& grad = which_x ? dx : dy;
    const int64_t matrices = which_x ? x_matrices : y_matrices;
    const int64_t size = which_x ? x_size : y_size;
    if (matrices == batches && uniform) {  // every batch its own matrix: one call
      IRM_RETURN_IF_ERROR(
          RunRowMajorGemm(x.dtype(), product(which_x, 0, grad.raw(), batches), kernel));
      continue;
    }
    // Broadcast batches: add each out batch's product into its matrix, in increasing b.
    const bool half = x.dtype() == DType::kFloat16 || x.dtype() == DType::kBFloat16;
    DeviceTensor acc;
    if (half) {
      IRM_ASSIGN_OR_RETURN(acc, DeviceTensor::Zeros(DType::kFloat32, grad.shape(), kernel));
    }
    DeviceTensor& target = half ? acc : grad;
    const size_t item = DTypeSize(target.dtype());
    std::vector<bool> written(static_cast<size_t>(matrices), false);
    for (int64_t b = 0; b < batches; ++b) {
      const int64_t mb = matrix_of(b, which_x ? x_strides : y_strides);
      RowMajorGemm r =
          product(which_x, b, static_cast<std::byte*>(target.raw()) + mb * size * item, 1);
      r.accumulate = written[static_cast<size_t>(mb)];
      written[static_cast<size_t>(mb)] = true;
      if (half) r.c_dtype = DType::kFloat32;
      IRM_RETURN_IF_ERROR(RunRowMajorGemm(x.dtype(), r, kernel));
    }
    if (half) {
      IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(x.dtype()));
      IRM_RETURN_IF_ERROR(LaunchStatus(
          LaunchCast(Elem::kFloat32, elem, grad.numel(), acc.raw(), grad.raw(), Stream()), kernel));
    }
  }
  if (want_x) call.SetOutput(0, std::move(dx));
  if (want_y) call.SetOutput(1, std::move(dy));
  return Status::Ok();
}

}  // namespace

Status RegisterCudaMatmulKernels(CudaKernelRegistry& registry) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    IRM_RETURN_IF_ERROR(registry.Register("matmul", dtype, {&RunMatmul, {2, 2, 1}}));
    IRM_RETURN_IF_ERROR(registry.Register("matmul_grad", dtype, {&RunMatmulGrad, {3, 3, 2}}));
  }
  return Status::Ok();
}

}  // namespace irm::rt::cuda
