// matmul and matmul_grad on the GPU through cuBLAS, with paddle.matmul's shapes as the CPU kernel
// (kernels/matmul.cc): the last two dims are the matrices (transposed when transpose_x /
// transpose_y), a 1-D x is a row vector and a 1-D y a column vector whose added dim is dropped,
// and batch dims broadcast.
//
// Deterministic settings, per thread's cuBLAS handle: CUBLAS_PEDANTIC_MATH (the prescribed
// precision in every phase: no TF32, no reduced-precision reductions for 16-bit inputs), atomics
// not allowed (CUBLAS_ATOMICS_NOT_ALLOWED, cuBLAS's default, set explicitly), and a fixed 32 MiB
// workspace set with cublasSetWorkspace, so that cuBLAS picks the same algorithm, and so the same
// bits, on every call of a shape. 16-bit operands multiply with a float32 accumulator and are
// stored once (cublasGemmEx with CUBLAS_COMPUTE_32F_PEDANTIC), as the CPU kernel does.
#include <cublas_v2.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "reference_runtime/cuda/cuda_kernel.h"
#include "reference_runtime/cuda/device_allocator.h"
#include "reference_runtime/kernels/broadcast.h"

namespace irm::rt::cuda {
namespace {

constexpr size_t kWorkspaceBytes = size_t{32} << 20;

Status CublasStatus(cublasStatus_t status, std::string_view what) {
  if (status == CUBLAS_STATUS_SUCCESS) return Status::Ok();
  return Status(StatusCode::kInternal, Location{},
                fmt::format("gpu: matmul: {} failed: {} ({})", what, cublasGetStatusName(status),
                            cublasGetStatusString(status)));
}

// This thread's handle with the settings of the file comment (created on first use; kept for the
// thread's life, as cuBLAS advises).
StatusOr<cublasHandle_t> Handle() {
  struct Holder {
    cublasHandle_t handle = nullptr;
    void* workspace = nullptr;
    ~Holder() {
      if (handle != nullptr) cublasDestroy(handle);
      DeviceAllocator::Global().Free(workspace);
    }
  };
  thread_local Holder holder;
  if (holder.handle != nullptr) return holder.handle;
  cublasHandle_t handle = nullptr;
  IRM_RETURN_IF_ERROR(CublasStatus(cublasCreate(&handle), "cublasCreate"));
  holder.handle = handle;
  IRM_RETURN_IF_ERROR(CublasStatus(cublasSetStream(handle, Stream()), "cublasSetStream"));
  IRM_RETURN_IF_ERROR(
      CublasStatus(cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode"));
  IRM_RETURN_IF_ERROR(CublasStatus(cublasSetAtomicsMode(handle, CUBLAS_ATOMICS_NOT_ALLOWED),
                                   "cublasSetAtomicsMode"));
  IRM_ASSIGN_OR_RETURN(holder.workspace,
                       DeviceAllocator::Global().Allocate(kWorkspaceBytes, "matmul"));
  IRM_RETURN_IF_ERROR(CublasStatus(cublasSetWorkspace(handle, holder.workspace, kWorkspaceBytes),
                                   "cublasSetWorkspace"));
  return handle;
}

struct Types {
  cudaDataType_t data;
  cublasComputeType_t compute;
};
Types TypesOf(DType dtype) {
  switch (dtype) {
    case DType::kFloat64:
      return {CUDA_R_64F, CUBLAS_COMPUTE_64F_PEDANTIC};
    case DType::kFloat16:
      return {CUDA_R_16F, CUBLAS_COMPUTE_32F_PEDANTIC};
    case DType::kBFloat16:
      return {CUDA_R_16BF, CUBLAS_COMPUTE_32F_PEDANTIC};
    default:
      return {CUDA_R_32F, CUBLAS_COMPUTE_32F_PEDANTIC};
  }
}

int64_t Numel(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// Row-major c[m, n] (+)= op(a)[m, k] · op(b)[k, n] for `batches` matrices at the given strides
// (0: one matrix shared by every batch), as the column-major cᵀ = op(b)ᵀ · op(a)ᵀ. `c_type` is
// the output's storage type (float32 for a 16-bit grad being accumulated); `accumulate` adds to c
// (beta = 1) in the float32 or float64 compute type.
struct RowGemm {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  const void* a = nullptr;
  int64_t stride_a = 0;
  const void* b = nullptr;
  int64_t stride_b = 0;
  void* c = nullptr;
  int64_t stride_c = 0;
  int64_t batches = 1;
  bool accumulate = false;
};

Status RunRowGemm(cublasHandle_t handle, DType dtype, cudaDataType_t c_type, const RowGemm& g) {
  const Types types = TypesOf(dtype);
  const double one64 = 1.0, zero64 = 0.0;
  const float one32 = 1.0f, zero32 = 0.0f;
  const bool f64 = dtype == DType::kFloat64;
  const void* alpha = f64 ? static_cast<const void*>(&one64) : &one32;
  const void* beta = g.accumulate ? (f64 ? static_cast<const void*>(&one64) : &one32)
                                  : (f64 ? static_cast<const void*>(&zero64) : &zero32);
  const int64_t lda = g.trans_a ? g.m : g.k;  // the stored row lengths
  const int64_t ldb = g.trans_b ? g.k : g.n;
  return CublasStatus(
      cublasGemmStridedBatchedEx(
          handle, g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
          static_cast<int>(g.n), static_cast<int>(g.m), static_cast<int>(g.k), alpha, g.b,
          types.data, static_cast<int>(ldb), g.stride_b, g.a, types.data, static_cast<int>(lda),
          g.stride_a, beta, g.c, c_type, static_cast<int>(g.n), g.stride_c,
          static_cast<int>(g.batches), types.compute, CUBLAS_GEMM_DEFAULT),
      "cublasGemmStridedBatchedEx");
}

// The product's shapes by paddle.matmul's rules, planned as the CPU kernel plans them
// (kernels/matmul.cc, PlanMatmul, with its errors): a 1-D operand is never transposed; m, n and k
// of op(x)[m, k] · op(y)[k, n]; the batch dims broadcast.
struct MatmulPlan {
  bool x_vector = false, y_vector = false;
  bool trans_x = false, trans_y = false;
  int64_t m = 0, n = 0, k = 0;
  std::vector<int64_t> x_batch, y_batch, batch;  // batch = broadcast(x_batch, y_batch)
  std::vector<int64_t> out_shape;
  // Elements of one matrix of x, y and out.
  int64_t x_size() const { return m * k; }
  int64_t y_size() const { return k * n; }
  int64_t out_size() const { return m * n; }
};

StatusOr<MatmulPlan> PlanMatmul(const CudaKernelCall& call) {
  IRM_ASSIGN_OR_RETURN(bool transpose_x, call.attrs.GetOr<bool>("transpose_x", false));
  IRM_ASSIGN_OR_RETURN(bool transpose_y, call.attrs.GetOr<bool>("transpose_y", false));
  const std::vector<int64_t>& xs = call.input(0).shape();
  const std::vector<int64_t>& ys = call.input(1).shape();
  if (xs.empty()) return KernelError("x is 0-D; matmul needs at least 1 dim");
  if (ys.empty()) return KernelError("y is 0-D; matmul needs at least 1 dim");
  MatmulPlan p;
  p.x_vector = xs.size() == 1;
  p.y_vector = ys.size() == 1;
  p.trans_x = transpose_x && !p.x_vector;
  p.trans_y = transpose_y && !p.y_vector;
  // The matrices as stored: rows and columns.
  const int64_t x_rows = p.x_vector ? 1 : xs[xs.size() - 2], x_cols = xs.back();
  const int64_t y_rows = p.y_vector ? ys[0] : ys[ys.size() - 2],
                y_cols = p.y_vector ? 1 : ys.back();
  p.m = p.trans_x ? x_cols : x_rows;
  const int64_t kx = p.trans_x ? x_rows : x_cols;
  const int64_t ky = p.trans_y ? y_cols : y_rows;
  p.n = p.trans_y ? y_rows : y_cols;
  if (kx != ky) {
    return KernelError(fmt::format("x {}{} and y {}{} do not multiply: inner dims {} and {} differ",
                                   ShapeToString(xs), p.trans_x ? " (transposed)" : "",
                                   ShapeToString(ys), p.trans_y ? " (transposed)" : "", kx, ky));
  }
  p.k = kx;
  p.x_batch.assign(xs.begin(), xs.end() - std::min<ptrdiff_t>(2, xs.size()));
  p.y_batch.assign(ys.begin(), ys.end() - std::min<ptrdiff_t>(2, ys.size()));
  StatusOr<std::vector<int64_t>> batch = BroadcastShapes(p.x_batch, p.y_batch);
  if (!batch.ok()) {
    return KernelError(fmt::format("x {} and y {}: batch dims {} and {} do not broadcast",
                                   ShapeToString(xs), ShapeToString(ys), ShapeToString(p.x_batch),
                                   ShapeToString(p.y_batch)));
  }
  p.batch = std::move(batch).value();
  p.out_shape = p.batch;
  if (!p.x_vector) p.out_shape.push_back(p.m);
  if (!p.y_vector) p.out_shape.push_back(p.n);
  return p;
}

Status RunMatmul(CudaKernelCall& call) {
  const DeviceTensor& x = call.input(0);
  const DeviceTensor& y = call.input(1);
  IRM_RETURN_IF_ERROR(ExpectDType(y, x.dtype(), "y"));
  IRM_ASSIGN_OR_RETURN(const MatmulPlan p, PlanMatmul(call));
  IRM_ASSIGN_OR_RETURN(DeviceTensor out,
                       DeviceTensor::Uninitialized(x.dtype(), p.out_shape, "matmul"));
  if (out.numel() == 0) {
    call.SetOutput(0, std::move(out));
    return Status::Ok();
  }
  if (p.k == 0) {  // an empty sum: zeros
    IRM_ASSIGN_OR_RETURN(out, DeviceTensor::Zeros(x.dtype(), p.out_shape, "matmul"));
    call.SetOutput(0, std::move(out));
    return Status::Ok();
  }
  IRM_ASSIGN_OR_RETURN(cublasHandle_t handle, Handle());
  const Types types = TypesOf(x.dtype());
  const int64_t batches = Numel(p.batch);
  const bool x_full = Numel(p.x_batch) == batches, y_full = Numel(p.y_batch) == batches;
  const bool x_single = Numel(p.x_batch) == 1, y_single = Numel(p.y_batch) == 1;
  if ((x_full || x_single) && (y_full || y_single)) {
    // One strided-batched call: a batch-less operand repeats with stride 0.
    const RowGemm g{p.trans_x,
                    p.trans_y,
                    p.m,
                    p.n,
                    p.k,
                    x.raw(),
                    x_single ? 0 : p.x_size(),
                    y.raw(),
                    y_single ? 0 : p.y_size(),
                    out.raw(),
                    p.out_size(),
                    batches,
                    false};
    IRM_RETURN_IF_ERROR(RunRowGemm(handle, x.dtype(), types.data, g));
    call.SetOutput(0, std::move(out));
    return Status::Ok();
  }
  // Batch dims that broadcast both ways: one product per out batch, as RunRowGemm's one.
  const double one64 = 1.0, zero64 = 0.0;
  const float one32 = 1.0f, zero32 = 0.0f;
  const void* alpha = x.dtype() == DType::kFloat64 ? static_cast<const void*>(&one64) : &one32;
  const void* beta = x.dtype() == DType::kFloat64 ? static_cast<const void*>(&zero64) : &zero32;
  const size_t item = DTypeSize(x.dtype());
  const cublasOperation_t op_y = p.trans_y ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_x = p.trans_x ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int64_t ld_y = p.trans_y ? p.k : p.n, ld_x = p.trans_x ? p.m : p.k;  // stored row lengths
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
    IRM_RETURN_IF_ERROR(CublasStatus(
        cublasGemmEx(handle, op_y, op_x, static_cast<int>(p.n), static_cast<int>(p.m),
                     static_cast<int>(p.k), alpha, yp, types.data, static_cast<int>(ld_y), xp,
                     types.data, static_cast<int>(ld_x), beta, op, types.data,
                     static_cast<int>(p.n), types.compute, CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx"));
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
  const DeviceTensor& x = call.input(0);
  const DeviceTensor& y = call.input(1);
  const DeviceTensor& out_grad = call.input(2);
  IRM_RETURN_IF_ERROR(ExpectDType(y, x.dtype(), "y"));
  IRM_RETURN_IF_ERROR(ExpectDType(out_grad, x.dtype(), "out_grad"));
  IRM_ASSIGN_OR_RETURN(const MatmulPlan p, PlanMatmul(call));
  const std::vector<int64_t>& xs = x.shape();
  const std::vector<int64_t>& ys = y.shape();
  if (out_grad.shape() != p.out_shape) {
    return KernelError(fmt::format("out_grad {} is not matmul's out shape {} for x {} and y {}",
                                   ShapeToString(out_grad.shape()), ShapeToString(p.out_shape),
                                   ShapeToString(xs), ShapeToString(ys)));
  }
  const bool want_x = call.wants_output(0), want_y = call.wants_output(1);
  DeviceTensor dx, dy;
  if (want_x) {
    IRM_ASSIGN_OR_RETURN(dx, DeviceTensor::Zeros(x.dtype(), xs, "matmul_grad"));
  }
  if (want_y) {
    IRM_ASSIGN_OR_RETURN(dy, DeviceTensor::Zeros(y.dtype(), ys, "matmul_grad"));
  }
  const int64_t batches = Numel(p.batch);
  if (batches == 0 || p.m == 0 || p.n == 0 || p.k == 0) {  // empty products: the zeros stand
    if (want_x) call.SetOutput(0, std::move(dx));
    if (want_y) call.SetOutput(1, std::move(dy));
    return Status::Ok();
  }
  IRM_ASSIGN_OR_RETURN(cublasHandle_t handle, Handle());
  const Types types = TypesOf(x.dtype());
  const int64_t x_size = p.x_size(), y_size = p.y_size(), out_size = p.out_size();
  const int64_t x_matrices = Numel(p.x_batch), y_matrices = Numel(p.y_batch);

  if (!p.trans_x && y_matrices == 1 && batches > 1) {  // x stacks (the CPU's StacksX)
    const int64_t rows = batches * p.m;
    if (want_x) {
      RowGemm g{false,   !p.trans_y, rows,     p.k, p.n, out_grad.raw(), 0,
                y.raw(), 0,          dx.raw(), 0,   1,   false};
      IRM_RETURN_IF_ERROR(RunRowGemm(handle, x.dtype(), types.data, g));
    }
    if (want_y) {
      RowGemm g = p.trans_y ? RowGemm{true,    false, p.n,      p.k, rows, out_grad.raw(), 0,
                                      x.raw(), 0,     dy.raw(), 0,   1,    false}
                            : RowGemm{true,           false, p.k,      p.n, rows, x.raw(), 0,
                                      out_grad.raw(), 0,     dy.raw(), 0,   1,    false};
      IRM_RETURN_IF_ERROR(RunRowGemm(handle, x.dtype(), types.data, g));
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
    RowGemm r;
    if (which_x) {
      r = p.trans_x ? RowGemm{p.trans_y, true,     p.k, p.m,    p.n,   ym,   sy,
                              g,         out_size, c,   x_size, count, false}
                    : RowGemm{false, !p.trans_y, p.m, p.k,    p.n,   g,    out_size,
                              ym,    sy,         c,   x_size, count, false};
    } else {
      r = p.trans_y ? RowGemm{true, p.trans_x, p.n, p.k,    p.m,   g,    out_size,
                              xm,   sx,        c,   y_size, count, false}
                    : RowGemm{!p.trans_x, false,    p.k, p.n,    p.m,   xm,   sx,
                              g,          out_size, c,   y_size, count, false};
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
          RunRowGemm(handle, x.dtype(), types.data, product(which_x, 0, grad.raw(), batches)));
      continue;
    }
    // Broadcast batches: add each out batch's product into its matrix, in increasing b.
    const bool half = x.dtype() == DType::kFloat16 || x.dtype() == DType::kBFloat16;
    DeviceTensor acc;
    if (half) {
      IRM_ASSIGN_OR_RETURN(acc, DeviceTensor::Zeros(DType::kFloat32, grad.shape(), "matmul_grad"));
    }
    DeviceTensor& target = half ? acc : grad;
    const size_t item = DTypeSize(target.dtype());
    std::vector<bool> written(static_cast<size_t>(matrices), false);
    for (int64_t b = 0; b < batches; ++b) {
      const int64_t mb = matrix_of(b, which_x ? x_strides : y_strides);
      RowGemm r = product(which_x, b, static_cast<std::byte*>(target.raw()) + mb * size * item, 1);
      r.accumulate = written[static_cast<size_t>(mb)];
      written[static_cast<size_t>(mb)] = true;
      IRM_RETURN_IF_ERROR(RunRowGemm(handle, x.dtype(), half ? CUDA_R_32F : types.data, r));
    }
    if (half) {
      IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(x.dtype()));
      IRM_RETURN_IF_ERROR(LaunchStatus(
          LaunchCast(Elem::kFloat32, elem, grad.numel(), acc.raw(), grad.raw(), Stream()),
          "matmul_grad"));
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
