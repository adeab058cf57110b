// GEMM, the one matrix-product entry point of the CPU kernels (matmul, its grad, and whatever
// else multiplies matrices): c = op(a) · op(b), row-major, c overwritten, for float and double.
// Two modes (kernel.h's GemmMode): kBlas calls OpenBLAS — fast, but its bits depend on the CPU
// kernel OpenBLAS picks at run time; kReference runs fixed-order loops — every output element is
// the sum of its k products in increasing k, in the element type, with no fused multiply-add —
// so its bits are the same on every machine and equal those of the plain triple loop.
#pragma once

#include <cstdint>

#include "common/status.h"
#include "reference_runtime/kernel.h"

namespace irm::rt {

// c[m, n] = op(a) · op(b), where op(a) is a[m, k] (or a[k, m] transposed when trans_a) and op(b)
// is b[k, n] (or b[n, k] transposed when trans_b); all row-major and densely packed. k == 0
// writes zeros. An error (nothing written) when a dim is negative, or, in kBlas mode, exceeds
// the BLAS's 32-bit index range.
template <typename T>
Status Gemm(GemmMode mode, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a,
            const T* b, T* c);

extern template Status Gemm<float>(GemmMode, bool, bool, int64_t, int64_t, int64_t, const float*,
                                   const float*, float*);
extern template Status Gemm<double>(GemmMode, bool, bool, int64_t, int64_t, int64_t, const double*,
                                    const double*, double*);

// The number of threads a kBlas GEMM may run on (process-wide; 1 until set: the runtime runs one
// rank per thread and gives each rank one BLAS thread). OpenBLAS itself always runs on one
// thread; a GEMM splits its rows into fixed blocks that these threads share, so that the bits
// never depend on this number (gemm.cc says why).
void SetBlasThreads(int threads);
int BlasThreads();

}  // namespace irm::rt
