// Row-major GEMMs on cuBLAS in deterministic settings, for kernels whose products are matrix
// products (conv2d's im2col GEMMs). Each thread gets its own handle, created on first use and kept
// for the thread's life, with CUBLAS_PEDANTIC_MATH (no TF32, the prescribed precision in every
// phase), atomics not allowed (CUBLAS_ATOMICS_NOT_ALLOWED) and a fixed 32 MiB workspace
// (cublasSetWorkspace): cuBLAS then picks the same algorithm for a shape on every call, so a GEMM
// gives the same bits run after run. float32 computes in CUBLAS_COMPUTE_32F_PEDANTIC, float64 in
// CUBLAS_COMPUTE_64F_PEDANTIC. (matmul_kernels.cc keeps a handle of its own with the same
// settings.)
#pragma once

#include <cstdint>
#include <string_view>

#include "common/status.h"
#include "reference_runtime/tensor.h"

namespace irm::rt::cuda {

// c[m, n] = op(a)[m, k] · op(b)[k, n] for `batches` row-major matrices, the i-th at a + i *
// stride_a (likewise b and c; a stride of 0 shares one matrix), where op(a) is a stored [k, m] and
// transposed when trans_a (likewise b, stored [n, k] when trans_b). c is overwritten.
struct RowMajorGemm {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  const void* a = nullptr;
  int64_t stride_a = 0;
  const void* b = nullptr;
  int64_t stride_b = 0;
  void* c = nullptr;
  int64_t stride_c = 0;
  int64_t batches = 1;
};

// Runs `gemm` for float32 or float64 operands on the backend's stream. Nothing runs when a dim or
// the batch count is 0. Errors (a dim beyond cuBLAS's int range, a cuBLAS failure) name `op`:
// "gpu: conv2d: cublasGemmStridedBatchedEx failed: ...".
Status RunRowMajorGemm(DType dtype, const RowMajorGemm& gemm, std::string_view op);

}  // namespace irm::rt::cuda
