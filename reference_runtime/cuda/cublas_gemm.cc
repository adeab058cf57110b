// Row-major GEMMs on cuBLAS in deterministic settings (cublas_gemm.h).
#include "reference_runtime/cuda/cublas_gemm.h"

#include <cublas_v2.h>
#include <fmt/format.h>

#include <cstddef>
#include <limits>
#include <optional>

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

struct GemmTypes {
  cudaDataType_t operands;
  cudaDataType_t c;
  cublasComputeType_t compute;
};

// The cuBLAS types of operands of `dtype` written into c of `c_dtype`, or nothing for a pair
// cuBLAS is not asked to do here.
std::optional<GemmTypes> TypesOf(DType dtype, DType c_dtype) {
  switch (dtype) {
    case DType::kFloat64:
      if (c_dtype != dtype) return std::nullopt;
      return GemmTypes{CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F_PEDANTIC};
    case DType::kFloat32:
      if (c_dtype != dtype) return std::nullopt;
      return GemmTypes{CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_PEDANTIC};
    case DType::kFloat16:
    case DType::kBFloat16: {
      const cudaDataType_t half = dtype == DType::kFloat16 ? CUDA_R_16F : CUDA_R_16BF;
      if (c_dtype == dtype) return GemmTypes{half, half, CUBLAS_COMPUTE_32F_PEDANTIC};
      if (c_dtype == DType::kFloat32) {
        return GemmTypes{half, CUDA_R_32F, CUBLAS_COMPUTE_32F_PEDANTIC};
      }
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

}  // namespace

Status RunRowMajorGemm(DType dtype, const RowMajorGemm& g, std::string_view op) {
  const DType c_dtype = g.c_dtype.value_or(dtype);
  const std::optional<GemmTypes> types = TypesOf(dtype, c_dtype);
  if (!types.has_value()) {
    return Status(StatusCode::kInternal, Location{},
                  c_dtype == dtype
                      ? fmt::format("gpu: {}: no row-major GEMM for {}", op, DTypeName(dtype))
                      : fmt::format("gpu: {}: no row-major GEMM of {} operands into {}", op,
                                    DTypeName(dtype), DTypeName(c_dtype)));
  }
  if (g.single_gemm_ex && g.batches != 1) {
    return Status(StatusCode::kInternal, Location{},
                  fmt::format("gpu: {}: one cublasGemmEx asked for {} batches", op, g.batches));
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
  // alpha and beta in the compute type: double for float64, float otherwise.
  const bool f64 = dtype == DType::kFloat64;
  const double one64 = 1.0, zero64 = 0.0;
  const float one32 = 1.0f, zero32 = 0.0f;
  const void* alpha = f64 ? static_cast<const void*>(&one64) : &one32;
  const void* beta = g.accumulate ? (f64 ? static_cast<const void*>(&one64) : &one32)
                                  : (f64 ? static_cast<const void*>(&zero64) : &zero32);
  const cublasOperation_t op_a = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  // Row-major c = op(a) · op(b) is column-major cᵀ = op(b)ᵀ · op(a)ᵀ: cuBLAS gets b first.
  if (g.single_gemm_ex) {
    return CublasError(
        cublasGemmEx(handle, op_b, op_a, static_cast<int>(g.n), static_cast<int>(g.m),
                     static_cast<int>(g.k), alpha, g.b, types->operands, static_cast<int>(ldb), g.a,
                     types->operands, static_cast<int>(lda), beta, g.c, types->c,
                     static_cast<int>(g.n), types->compute, CUBLAS_GEMM_DEFAULT),
        op, "cublasGemmEx");
  }
  return CublasError(
      cublasGemmStridedBatchedEx(
          handle, op_b, op_a, static_cast<int>(g.n), static_cast<int>(g.m), static_cast<int>(g.k),
          alpha, g.b, types->operands, static_cast<int>(ldb), g.stride_b, g.a, types->operands,
          static_cast<int>(lda), g.stride_a, beta, g.c, types->c, static_cast<int>(g.n), g.stride_c,
          static_cast<int>(g.batches), types->compute, CUBLAS_GEMM_DEFAULT),
      op, "cublasGemmStridedBatchedEx");
}

}  // namespace irm::rt::cuda
