// Row-major GEMMs on cuBLAS in deterministic settings, for the kernels whose products are matrix
// products (matmul and matmul_grad, conv2d's im2col GEMMs): one handle and one workspace per
// thread serve them all. Each thread's handle is created on first use and kept for the thread's
// life, as cuBLAS advises, with CUBLAS_PEDANTIC_MATH (the prescribed precision in every phase: no
// TF32, no reduced-precision reductions for 16-bit inputs), atomics not allowed
// (CUBLAS_ATOMICS_NOT_ALLOWED, cuBLAS's default, set explicitly) and a fixed 32 MiB workspace
// (cublasSetWorkspace): cuBLAS then picks the same algorithm for a shape on every call, so a GEMM
// gives the same bits run after run. float64 computes in CUBLAS_COMPUTE_64F_PEDANTIC; float32,
// float16 and bfloat16 in CUBLAS_COMPUTE_32F_PEDANTIC (16-bit operands multiply with a float32
// accumulator and are stored once, as the CPU kernels do).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/status.h"
#include "reference_runtime/tensor.h"

namespace irm::rt::cuda {

// c[m, n] = op(a)[m, k] · op(b)[k, n] for `batches` row-major matrices, the i-th at a + i *
// stride_a (likewise b and c; a stride of 0 shares one matrix), where op(a) is a stored [k, m] and
// transposed when trans_a (likewise b, stored [n, k] when trans_b). c is overwritten unless
// `accumulate`.
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
  // c += op(a) · op(b) (beta = 1, added in the compute type) instead of overwriting c.
  bool accumulate = false;
  // c's storage type where it is not the operands': float32 for 16-bit operands whose products
  // are summed before one rounding (matmul_grad over broadcast batches). Absent: the operands'.
  std::optional<DType> c_dtype;
  // One cublasGemmEx instead of cublasGemmStridedBatchedEx (batches must be 1; the strides are
  // not read). The call is part of what decides the algorithm cuBLAS picks, and so the bits:
  // matmul's per-batch products of batch dims that broadcast both ways keep the call they had.
  bool single_gemm_ex = false;
};

// Runs `gemm` for float32, float64, float16 or bfloat16 operands (`dtype`) on the backend's stream.
// Nothing runs when a dim or the batch count is 0. Errors (a dim beyond cuBLAS's int range, a
// cuBLAS failure) name `op`: "gpu: conv2d: cublasGemmStridedBatchedEx failed: ...".
Status RunRowMajorGemm(DType dtype, const RowMajorGemm& gemm, std::string_view op);

}  // namespace irm::rt::cuda
