// Row-major GEMMs on cuBLAS in deterministic settings (cublas_gemm.h).
#include "reference_runtime/cuda/cublas_gemm.h"

#include <cublas_v2.h>
#include <fmt/format.h>

#include <cstddef>
#include <limits>

#include "reference_runtime/cuda/device_allocator.h"
#include "reference_runtime/cuda/device_tensor.h"

namespace irm::rt::cuda {
namespace {

constexpr size_t kWorkspaceBytes = size_t{32} << 20;

Status CublasError(cublasStatus_t status, std::string_view op, std::string_view what) {
  if (status == CUBLAS_STATUS_SUCCESS) return Status::Ok();
  return Status(StatusCode::kInternal, Location{},
                fmt::format("gpu: {}: {} failed: {} ({})", op, what, cublasGetStatusName(status),
                            cublasGetStatusString(status)));
}

// This thread's handle, configured as the header says before it is handed out.
StatusOr<cublasHandle_t> DeterministicHandle(std::string_view op) {
  struct Holder {
    cublasHandle_t handle = nullptr;
    void* workspace = nullptr;
    ~Holder() {
      if (handle != nullptr) cublasDestroy(handle);
      if (workspace != nullptr) DeviceAllocator::Global().Free(workspace);
    }
  };
  thread_local Holder holder;
  if (holder.handle != nullptr && holder.workspace != nullptr) return holder.handle;
  if (holder.handle == nullptr) {
    cublasHandle_t handle = nullptr;
    IRM_RETURN_IF_ERROR(CublasError(cublasCreate(&handle), op, "cublasCreate"));
    holder.handle = handle;
  }
  IRM_RETURN_IF_ERROR(CublasError(cublasSetStream(holder.handle, Stream()), op, "cublasSetStream"));
  IRM_RETURN_IF_ERROR(
      CublasError(cublasSetMathMode(holder.handle, CUBLAS_PEDANTIC_MATH), op, "cublasSetMathMode"));
  IRM_RETURN_IF_ERROR(CublasError(cublasSetAtomicsMode(holder.handle, CUBLAS_ATOMICS_NOT_ALLOWED),
                                  op, "cublasSetAtomicsMode"));
  IRM_ASSIGN_OR_RETURN(void* workspace, DeviceAllocator::Global().Allocate(kWorkspaceBytes, op));
  const Status set = CublasError(cublasSetWorkspace(holder.handle, workspace, kWorkspaceBytes), op,
                                 "cublasSetWorkspace");
  if (!set.ok()) {
    DeviceAllocator::Global().Free(workspace);
    return set;
  }
  holder.workspace = workspace;  // only now is the handle complete
  return holder.handle;
}

bool FitsInt(int64_t v) { return v >= 0 && v <= std::numeric_limits<int>::max(); }

}  // namespace

Status RunRowMajorGemm(DType dtype, const RowMajorGemm& g, std::string_view op) {
  if (dtype != DType::kFloat32 && dtype != DType::kFloat64) {
    return Status(StatusCode::kInternal, Location{},
                  fmt::format("gpu: {}: no row-major GEMM for {}", op, DTypeName(dtype)));
  }
  if (g.m == 0 || g.n == 0 || g.k == 0 || g.batches == 0) return Status::Ok();
  const int64_t lda = g.trans_a ? g.m : g.k;  // the stored row lengths
  const int64_t ldb = g.trans_b ? g.k : g.n;
  for (int64_t v : {g.m, g.n, g.k, lda, ldb, g.batches}) {
    if (!FitsInt(v)) {
      return Status(StatusCode::kInternal, Location{},
                    fmt::format("gpu: {}: a GEMM dim ({}) exceeds cuBLAS's int range", op, v));
    }
  }
  IRM_ASSIGN_OR_RETURN(cublasHandle_t handle, DeterministicHandle(op));
  const bool f64 = dtype == DType::kFloat64;
  const double one64 = 1.0, zero64 = 0.0;
  const float one32 = 1.0f, zero32 = 0.0f;
  const void* alpha = f64 ? static_cast<const void*>(&one64) : &one32;
  const void* beta = f64 ? static_cast<const void*>(&zero64) : &zero32;
  const cudaDataType_t type = f64 ? CUDA_R_64F : CUDA_R_32F;
  const cublasComputeType_t compute =
      f64 ? CUBLAS_COMPUTE_64F_PEDANTIC : CUBLAS_COMPUTE_32F_PEDANTIC;
  // Row-major c = op(a) · op(b) is column-major cᵀ = op(b)ᵀ · op(a)ᵀ: cuBLAS gets b first.
  return CublasError(
      cublasGemmStridedBatchedEx(
          handle, g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
          static_cast<int>(g.n), static_cast<int>(g.m), static_cast<int>(g.k), alpha, g.b, type,
          static_cast<int>(ldb), g.stride_b, g.a, type, static_cast<int>(lda), g.stride_a, beta,
          g.c, type, static_cast<int>(g.n), g.stride_c, static_cast<int>(g.batches), compute,
          CUBLAS_GEMM_DEFAULT),
      op, "cublasGemmStridedBatchedEx");
}

}  // namespace irm::rt::cuda
