// GEMM through OpenBLAS or through the fixed-order reference loops (gemm.h).
//
// This file is compiled with -ffp-contract=off (reference_runtime/CMakeLists.txt): the reference
// loops must round every product and every sum separately, as the plain triple loop does, and a
// compiler that fused a multiply and an add into one FMA (whenever the target CPU has one) would
// change the bits from machine to machine. Vectorising across output columns is harmless: each
// lane still computes one output element's own sequence of products and sums in k order.
#include "reference_runtime/kernels/gemm.h"

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace irm::rt {
namespace {

// ---- reference loops ---------------------------------------------------------------------------
//
// Blocked like a GotoBLAS GEMM (panels of op(b) and op(a) packed into contiguous buffers, a
// register tile of kMr x kNr outputs updated by one micro-kernel), with one constraint: the k
// loop is never split or reordered within an element — a tile's accumulators start at zero for
// the first k block and are reloaded from c for the next one, so every element sees
// ((0 + a0*b0) + a1*b1) + ... in increasing k. Panels are zero-padded only in m and n (padding k
// would add terms); padded rows and columns are computed and thrown away.

template <typename T>
struct Blocking {
  // A register tile of kMr x kNr outputs: kMr vectors of 32 bytes — one AVX register each, or
  // two SSE registers (12 accumulators: what SSE's 16 registers hold with room for the operands).
  static constexpr int64_t kMr = 6;
  static constexpr int64_t kNr = 32 / sizeof(T);
  using Vec __attribute__((vector_size(kNr * sizeof(T)))) = T;
  static constexpr int64_t kKc = 256;               // k block (packed panels' depth)
  static constexpr int64_t kMc = 48;                // rows of a packed op(a) block
  static constexpr int64_t kNc = 1024 / sizeof(T);  // columns of a packed op(b) block
};

// Element (i, p) of op(a), op(a) being m x k.
template <typename T>
[[gnu::always_inline]] inline T ElemA(const T* a, bool trans, int64_t m, int64_t k, int64_t i,
                                      int64_t p) {
  return trans ? a[p * m + i] : a[i * k + p];
}
// Element (p, j) of op(b), op(b) being k x n.
template <typename T>
[[gnu::always_inline]] inline T ElemB(const T* b, bool trans, int64_t n, int64_t k, int64_t p,
                                      int64_t j) {
  return trans ? b[j * k + p] : b[p * n + j];
}

// Packs op(b)[pc:pc+kc, jc:jc+nc] as strips of kNr columns: strip s holds kc rows of kNr values.
template <typename T>
[[gnu::always_inline]] inline void PackB(const T* b, bool trans, int64_t n, int64_t k, int64_t pc,
                                         int64_t kc, int64_t jc, int64_t nc, T* out) {
  constexpr int64_t kNr = Blocking<T>::kNr;
  for (int64_t js = 0; js < nc; js += kNr) {
    const int64_t width = std::min(kNr, nc - js);
    for (int64_t p = 0; p < kc; ++p) {
      T* row = out + (js / kNr) * kc * kNr + p * kNr;
      if (!trans && width == kNr) {
        std::memcpy(row, b + (pc + p) * n + jc + js, kNr * sizeof(T));
        continue;
      }
      for (int64_t j = 0; j < kNr; ++j) {
        row[j] = j < width ? ElemB(b, trans, n, k, pc + p, jc + js + j) : T(0);
      }
    }
  }
}

// Packs op(a)[ic:ic+mc, pc:pc+kc] as strips of kMr rows: strip s holds kc columns of kMr values.
template <typename T>
[[gnu::always_inline]] inline void PackA(const T* a, bool trans, int64_t m, int64_t k, int64_t ic,
                                         int64_t mc, int64_t pc, int64_t kc, T* out) {
  constexpr int64_t kMr = Blocking<T>::kMr;
  for (int64_t is = 0; is < mc; is += kMr) {
    const int64_t height = std::min(kMr, mc - is);
    T* strip = out + (is / kMr) * kc * kMr;
    for (int64_t p = 0; p < kc; ++p) {
      for (int64_t r = 0; r < kMr; ++r) {
        strip[p * kMr + r] = r < height ? ElemA(a, trans, m, k, ic + is + r, pc + p) : T(0);
      }
    }
  }
}

// c[0:rows, 0:cols] (row stride ldc) += the kc-deep product of one packed a strip and one packed
// b strip, or = it when `first` (the first k block). The kMr x kNr accumulators are kMr vectors
// (GCC vector extensions: lane j of row r is output (r, j), so lanes never mix); a vector wider
// than the target's registers is split by the compiler.
template <typename T>
[[gnu::always_inline]] inline void MicroKernel(int64_t kc, const T* ap, const T* bp, T* c,
                                               int64_t ldc, int64_t rows, int64_t cols,
                                               bool first) {
  constexpr int64_t kMr = Blocking<T>::kMr;
  constexpr int64_t kNr = Blocking<T>::kNr;
  using Vec = typename Blocking<T>::Vec;
  Vec acc[kMr];
  for (int64_t r = 0; r < kMr; ++r) {
    T row[kNr];
    for (int64_t j = 0; j < kNr; ++j) {
      row[j] = (!first && r < rows && j < cols) ? c[r * ldc + j] : T(0);
    }
    std::memcpy(&acc[r], row, sizeof(Vec));
  }
  for (int64_t p = 0; p < kc; ++p) {
    Vec bv;
    std::memcpy(&bv, bp + p * kNr, sizeof(Vec));
    for (int64_t r = 0; r < kMr; ++r) acc[r] += ap[p * kMr + r] * bv;
  }
  for (int64_t r = 0; r < rows; ++r) {
    T row[kNr];
    std::memcpy(row, &acc[r], sizeof(Vec));
    for (int64_t j = 0; j < cols; ++j) c[r * ldc + j] = row[j];
  }
}

template <typename T>
[[gnu::always_inline]] inline void ReferenceGemm(bool trans_a, bool trans_b, int64_t m, int64_t n,
                                                 int64_t k, const T* a, const T* b, T* c) {
  using B = Blocking<T>;
  const int64_t kc_max = std::min(B::kKc, k);
  const int64_t nc_max = std::min(B::kNc, (n + B::kNr - 1) / B::kNr * B::kNr);
  const int64_t mc_max = std::min(B::kMc, (m + B::kMr - 1) / B::kMr * B::kMr);
  std::vector<T> bpack(static_cast<size_t>(kc_max * nc_max));
  std::vector<T> apack(static_cast<size_t>(kc_max * mc_max));
  for (int64_t jc = 0; jc < n; jc += B::kNc) {
    const int64_t nc = std::min(B::kNc, n - jc);
    for (int64_t pc = 0; pc < k; pc += B::kKc) {
      const int64_t kc = std::min(B::kKc, k - pc);
      PackB(b, trans_b, n, k, pc, kc, jc, nc, bpack.data());
      for (int64_t ic = 0; ic < m; ic += B::kMc) {
        const int64_t mc = std::min(B::kMc, m - ic);
        PackA(a, trans_a, m, k, ic, mc, pc, kc, apack.data());
        // A strip stays in L1 while the packed b block streams from L2; c is walked a row strip
        // at a time (a column of tiles would touch a page per row).
        for (int64_t ir = 0; ir < mc; ir += B::kMr) {
          for (int64_t jr = 0; jr < nc; jr += B::kNr) {
            MicroKernel<T>(kc, apack.data() + (ir / B::kMr) * kc * B::kMr,
                           bpack.data() + (jr / B::kNr) * kc * B::kNr, c + (ic + ir) * n + jc + jr,
                           n, std::min(B::kMr, mc - ir), std::min(B::kNr, nc - jr), pc == 0);
          }
        }
      }
    }
  }
}

// The loops above, compiled twice on x86-64: for the baseline (SSE2) and for AVX2, picked at
// load time. Both give the same bits: only the vector width differs, never an element's
// operations.
#if defined(__x86_64__)
#define IRM_GEMM_TARGET_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define IRM_GEMM_TARGET_CLONES
#endif

IRM_GEMM_TARGET_CLONES void RunReferenceGemm(bool trans_a, bool trans_b, int64_t m, int64_t n,
                                             int64_t k, const float* a, const float* b, float* c) {
  ReferenceGemm<float>(trans_a, trans_b, m, n, k, a, b, c);
}

IRM_GEMM_TARGET_CLONES void RunReferenceGemm(bool trans_a, bool trans_b, int64_t m, int64_t n,
                                             int64_t k, const double* a, const double* b,
                                             double* c) {
  ReferenceGemm<double>(trans_a, trans_b, m, n, k, a, b, c);
}

#undef IRM_GEMM_TARGET_CLONES

// ---- OpenBLAS ----------------------------------------------------------------------------------
//
// OpenBLAS's own threading changes bits: with more than one thread it splits the k loop and the
// edge tiles differently (OpenBLAS 0.3.21 measured here: sgemm past k = 384, dgemm at any k when
// n is not a multiple of its tile), so the output of a multi-threaded call depends on the thread
// count. OpenBLAS therefore always runs single-threaded, and a kBlas GEMM splits op(a) and c into
// blocks of kBlasRowBlock rows — the same blocks whatever the thread count, one OpenBLAS call
// each — which BlasThreads() threads share. Every element is computed by the same call on the
// same data whichever thread runs it.

// Each call packs all of op(b) again: at 256 rows a 1024^3 product through the kernel ran at
// 0.83-0.88 of one direct cblas_sgemm call, at 1024 rows at parity.
constexpr int64_t kBlasRowBlock = 1024;

std::atomic<int> blas_threads{1};
std::once_flag openblas_single_threaded;

CBLAS_TRANSPOSE Op(bool trans) { return trans ? CblasTrans : CblasNoTrans; }

// Leading dims are explicit: a row block of a transposed op(a) keeps the full matrix's stride.
void BlasCall(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a,
              int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, Op(trans_a), Op(trans_b), static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), 1.0f, a, static_cast<blasint>(lda),
              b, static_cast<blasint>(ldb), 0.0f, c, static_cast<blasint>(ldc));
}

void BlasCall(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const double* a,
              int64_t lda, const double* b, int64_t ldb, double* c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, Op(trans_a), Op(trans_b), static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), 1.0, a, static_cast<blasint>(lda),
              b, static_cast<blasint>(ldb), 0.0, c, static_cast<blasint>(ldc));
}

template <typename T>
void BlasGemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a, const T* b,
              T* c) {
  std::call_once(openblas_single_threaded, [] { openblas_set_num_threads(1); });
  const int64_t lda = std::max<int64_t>(1, trans_a ? m : k);
  const int64_t ldb = std::max<int64_t>(1, trans_b ? k : n);
  const int64_t blocks = (m + kBlasRowBlock - 1) / kBlasRowBlock;
  auto run_block = [&](int64_t block) {
    const int64_t row = block * kBlasRowBlock;
    const T* a_block = trans_a ? a + row : a + row * k;
    BlasCall(trans_a, trans_b, std::min(kBlasRowBlock, m - row), n, k, a_block, lda, b, ldb,
             c + row * n, n);
  };
  const int64_t threads = std::min<int64_t>(blas_threads.load(), blocks);
  if (threads <= 1) {
    for (int64_t block = 0; block < blocks; ++block) run_block(block);
    return;
  }
  // Thread t runs blocks t, t + threads, ...; the calling thread is thread 0.
  auto run_share = [&](int64_t t) {
    for (int64_t block = t; block < blocks; block += threads) run_block(block);
  };
  std::vector<std::thread> workers;
  for (int64_t t = 1; t < threads; ++t) workers.emplace_back(run_share, t);
  run_share(0);
  for (std::thread& w : workers) w.join();
}

}  // namespace

template <typename T>
Status Gemm(GemmMode mode, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a,
            const T* b, T* c) {
  if (m < 0 || n < 0 || k < 0) {
    return KernelError(fmt::format("GEMM dims must not be negative (m={}, n={}, k={})", m, n, k));
  }
  if (mode == GemmMode::kBlas && (m > INT_MAX || n > INT_MAX || k > INT_MAX)) {
    return KernelError(
        fmt::format("GEMM dims (m={}, n={}, k={}) exceed the BLAS's 32-bit index range", m, n, k));
  }
  if (m == 0 || n == 0) return Status::Ok();
  if (k == 0) {
    std::fill(c, c + m * n, T(0));
    return Status::Ok();
  }
  if (mode == GemmMode::kReference) {
    RunReferenceGemm(trans_a, trans_b, m, n, k, a, b, c);
  } else {
    BlasGemm(trans_a, trans_b, m, n, k, a, b, c);
  }
  return Status::Ok();
}

template Status Gemm<float>(GemmMode, bool, bool, int64_t, int64_t, int64_t, const float*,
                            const float*, float*);
template Status Gemm<double>(GemmMode, bool, bool, int64_t, int64_t, int64_t, const double*,
                             const double*, double*);

void SetBlasThreads(int threads) { blas_threads.store(std::max(1, threads)); }

int BlasThreads() { return blas_threads.load(); }

}  // namespace irm::rt
