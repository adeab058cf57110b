// matmul on the GPU through cuBLAS, with paddle.matmul's shapes as the CPU kernel
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

Status RunMatmul(CudaKernelCall& call) {
  const DeviceTensor& x = call.input(0);
  const DeviceTensor& y = call.input(1);
  IRM_RETURN_IF_ERROR(ExpectDType(y, x.dtype(), "y"));
  IRM_ASSIGN_OR_RETURN(bool transpose_x, call.attrs.GetOr<bool>("transpose_x", false));
  IRM_ASSIGN_OR_RETURN(bool transpose_y, call.attrs.GetOr<bool>("transpose_y", false));
  const std::vector<int64_t>& xs = x.shape();
  const std::vector<int64_t>& ys = y.shape();
  if (xs.empty()) return KernelError("x is 0-D; matmul needs at least 1 dim");
  if (ys.empty()) return KernelError("y is 0-D; matmul needs at least 1 dim");
  const bool x_vector = xs.size() == 1;
  const bool y_vector = ys.size() == 1;
  const bool trans_x = transpose_x && !x_vector;
  const bool trans_y = transpose_y && !y_vector;
  const int64_t x_rows = x_vector ? 1 : xs[xs.size() - 2], x_cols = xs.back();
  const int64_t y_rows = y_vector ? ys[0] : ys[ys.size() - 2], y_cols = y_vector ? 1 : ys.back();
  const int64_t m = trans_x ? x_cols : x_rows;
  const int64_t kx = trans_x ? x_rows : x_cols;
  const int64_t ky = trans_y ? y_cols : y_rows;
  const int64_t n = trans_y ? y_rows : y_cols;
  if (kx != ky) {
    return KernelError(fmt::format("x {}{} and y {}{} do not multiply: inner dims {} and {} differ",
                                   ShapeToString(xs), trans_x ? " (transposed)" : "",
                                   ShapeToString(ys), trans_y ? " (transposed)" : "", kx, ky));
  }
  const int64_t k = kx;
  const std::vector<int64_t> x_batch(xs.begin(), xs.end() - std::min<ptrdiff_t>(2, xs.size()));
  const std::vector<int64_t> y_batch(ys.begin(), ys.end() - std::min<ptrdiff_t>(2, ys.size()));
  StatusOr<std::vector<int64_t>> batch_or = BroadcastShapes(x_batch, y_batch);
  if (!batch_or.ok()) {
    return KernelError(fmt::format("x {} and y {}: batch dims {} and {} do not broadcast",
                                   ShapeToString(xs), ShapeToString(ys), ShapeToString(x_batch),
                                   ShapeToString(y_batch)));
  }
  const std::vector<int64_t> batch = std::move(batch_or).value();
  std::vector<int64_t> out_shape = batch;
  if (!x_vector) out_shape.push_back(m);
  if (!y_vector) out_shape.push_back(n);
  IRM_ASSIGN_OR_RETURN(DeviceTensor out,
                       DeviceTensor::Uninitialized(x.dtype(), out_shape, "matmul"));
  if (out.numel() == 0) {
    call.SetOutput(0, std::move(out));
    return Status::Ok();
  }
  if (k == 0) {  // an empty sum: zeros
    IRM_ASSIGN_OR_RETURN(out, DeviceTensor::Zeros(x.dtype(), out_shape, "matmul"));
    call.SetOutput(0, std::move(out));
    return Status::Ok();
  }
  IRM_ASSIGN_OR_RETURN(cublasHandle_t handle, Handle());
  const Types types = TypesOf(x.dtype());
  const double one64 = 1.0, zero64 = 0.0;
  const float one32 = 1.0f, zero32 = 0.0f;
  const void* alpha = x.dtype() == DType::kFloat64 ? static_cast<const void*>(&one64) : &one32;
  const void* beta = x.dtype() == DType::kFloat64 ? static_cast<const void*>(&zero64) : &zero32;
  const size_t item = DTypeSize(x.dtype());
  // Row-major out[m, n] = op(x)[m, k] op(y)[k, n] is column-major out^T = op(y)^T op(x)^T: cuBLAS
  // gets y first. Leading dims are the stored row lengths.
  const cublasOperation_t op_y = trans_y ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_x = trans_x ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int64_t ld_y = y_cols, ld_x = x_cols, ld_out = n;
  const int64_t x_stride = m * k, y_stride = k * n, out_stride = m * n;
  const int64_t batches = Numel(batch);
  const std::vector<int64_t> x_strides = BroadcastStrides(x_batch, batch);
  const std::vector<int64_t> y_strides = BroadcastStrides(y_batch, batch);
  const bool x_full = Numel(x_batch) == batches, y_full = Numel(y_batch) == batches;
  const bool x_single = Numel(x_batch) == 1, y_single = Numel(y_batch) == 1;
  if ((x_full || x_single) && (y_full || y_single)) {
    // One strided-batched call: a batch-less operand repeats with stride 0.
    IRM_RETURN_IF_ERROR(CublasStatus(
        cublasGemmStridedBatchedEx(
            handle, op_y, op_x, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k),
            alpha, y.raw(), types.data, static_cast<int>(ld_y), y_single ? 0 : y_stride, x.raw(),
            types.data, static_cast<int>(ld_x), x_single ? 0 : x_stride, beta, out.raw(),
            types.data, static_cast<int>(ld_out), out_stride, static_cast<int>(batches),
            types.compute, CUBLAS_GEMM_DEFAULT),
        "cublasGemmStridedBatchedEx"));
    call.SetOutput(0, std::move(out));
    return Status::Ok();
  }
  // Batch dims that broadcast both ways: one product per out batch.
  std::vector<int64_t> index(batch.size(), 0);
  for (int64_t b = 0; b < batches; ++b) {
    int64_t xo = 0, yo = 0;
    for (size_t d = 0; d < batch.size(); ++d) {
      xo += index[d] * x_strides[d];
      yo += index[d] * y_strides[d];
    }
    const auto* xp = static_cast<const std::byte*>(x.raw()) + xo * x_stride * item;
    const auto* yp = static_cast<const std::byte*>(y.raw()) + yo * y_stride * item;
    auto* op = static_cast<std::byte*>(out.raw()) + b * out_stride * item;
    IRM_RETURN_IF_ERROR(CublasStatus(
        cublasGemmEx(handle, op_y, op_x, static_cast<int>(n), static_cast<int>(m),
                     static_cast<int>(k), alpha, yp, types.data, static_cast<int>(ld_y), xp,
                     types.data, static_cast<int>(ld_x), beta, op, types.data,
                     static_cast<int>(ld_out), types.compute, CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx"));
    for (size_t d = batch.size(); d-- > 0;) {
      if (++index[d] < batch[d]) break;
      index[d] = 0;
    }
  }
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

}  // namespace

Status RegisterCudaMatmulKernels(CudaKernelRegistry& registry) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    IRM_RETURN_IF_ERROR(registry.Register("matmul", dtype, {&RunMatmul, {2, 2, 1}}));
  }
  return Status::Ok();
}

}  // namespace irm::rt::cuda
