// Device code of the row-wise families (launch.h): layer_norm and its grad, softmax_grad,
// cross_entropy_with_softmax and its grad, embedding and its grad, mean_all_grad. Every sum runs
// in one thread along its row (or column) from index 0 in the CPU kernel's compute type — the CPU
// kernel's order exactly, without atomics — and the file is compiled without fused multiply-add,
// so that layer_norm, its grad, softmax_grad, embedding_grad and the cross entropy's grad give the
// CPU's bits; the cross entropy's forward uses CUDA's exp and log (a few units in the last place
// from glibc's) and is checked against float64. One thread per row is the simple, exact form: it
// is fast while rows are many and short (a gpt's hidden size); long rows would want a block per
// row with a fixed tree, which changes the bits (reduction.cu's softmax does that).
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "reference_runtime/cuda/device_numeric.cuh"
#include "reference_runtime/cuda/launch.h"

namespace irm::rt::cuda {
namespace {

#define IRM_GRID_STRIDE(i, n)                                                            \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

// An optional parameter of x's dtype or the compute type C, as C; `fill` when absent.
template <typename C>
__device__ __forceinline__ C LoadParam(const AnyFloat& p, int64_t j, C fill) {
  return p.data == nullptr ? fill : LoadAny<C>(p, j);
}

// ---- layer_norm (kernels/normalization.cc)
// ---------------------------------------------------------

template <typename T>
__global__ void LayerNormKernel(int64_t rows, int64_t n, Compute<T> eps, const T* x, AnyFloat scale,
                                AnyFloat bias, T* out, Compute<T>* mean, Compute<T>* variance) {
  using C = Compute<T>;
  const C count = static_cast<C>(n);
  IRM_GRID_STRIDE(r, rows) {
    const T* row = x + r * n;
    T* y = out + r * n;
    C sum = 0;
    for (int64_t j = 0; j < n; ++j) sum += Load(row[j]);
    const C mu = sum / count;
    C square_sum = 0;
    for (int64_t j = 0; j < n; ++j) {
      const C d = Load(row[j]) - mu;
      square_sum += d * d;
    }
    const C var = square_sum / count;
    const C rstd = C{1} / sqrt(var + eps);
    for (int64_t j = 0; j < n; ++j) {
      y[j] = Store<T>((Load(row[j]) - mu) * rstd * LoadParam(scale, j, C{1}) +
                      LoadParam(bias, j, C{0}));
    }
    mean[r] = mu;
    variance[r] = var;
  }
}

template <typename T>
__global__ void LayerNormGradRowsKernel(int64_t rows, int64_t n, Compute<T> eps, const T* x,
                                        AnyFloat scale, const Compute<T>* mean,
                                        const Compute<T>* variance, const T* out_grad, T* x_grad) {
  using C = Compute<T>;
  const C count = static_cast<C>(n);
  IRM_GRID_STRIDE(r, rows) {
    const T* row = x + r * n;
    const T* dy = out_grad + r * n;
    T* dx = x_grad + r * n;
    const C mu = mean[r];
    const C rstd = C{1} / sqrt(variance[r] + eps);
    C g_sum = 0;
    C gx_sum = 0;
    for (int64_t j = 0; j < n; ++j) {
      const C xhat = (Load(row[j]) - mu) * rstd;
      const C g = Load(dy[j]) * LoadParam(scale, j, C{1});
      g_sum += g;
      gx_sum += g * xhat;
    }
    const C g_mean = g_sum / count;
    const C gx_mean = gx_sum / count;
    for (int64_t j = 0; j < n; ++j) {
      const C xhat = (Load(row[j]) - mu) * rstd;
      const C g = Load(dy[j]) * LoadParam(scale, j, C{1});
      dx[j] = Store<T>(rstd * (g - g_mean - xhat * gx_mean));
    }
  }
}

template <typename T>
__global__ void LayerNormGradColumnsKernel(int64_t rows, int64_t n, Compute<T> eps, const T* x,
                                           const Compute<T>* mean, const Compute<T>* variance,
                                           const T* out_grad, AnyFloatOut scale_grad,
                                           AnyFloatOut bias_grad) {
  using C = Compute<T>;
  IRM_GRID_STRIDE(j, n) {
    C scale_sum = 0;
    C bias_sum = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const C rstd = C{1} / sqrt(variance[r] + eps);
      const C dyj = Load(out_grad[r * n + j]);
      scale_sum += dyj * ((Load(x[r * n + j]) - mean[r]) * rstd);
      bias_sum += dyj;
    }
    if (scale_grad.data != nullptr) StoreAny(scale_grad, j, scale_sum);
    if (bias_grad.data != nullptr) StoreAny(bias_grad, j, bias_sum);
  }
}

// ---- softmax_grad, cross entropy (kernels/softmax.cc)
// ----------------------------------------------

template <typename T>
__global__ void SoftmaxGradKernel(int64_t outer, int64_t size, int64_t inner, const T* y,
                                  const T* g, T* dx) {
  using C = Compute<T>;
  IRM_GRID_STRIDE(line, outer * inner) {
    const int64_t base = (line / inner) * size * inner + line % inner;
    C dot = 0;
    for (int64_t j = 0; j < size; ++j) {
      const int64_t k = base + j * inner;
      dot += Load(g[k]) * Load(y[k]);
    }
    for (int64_t j = 0; j < size; ++j) {
      const int64_t k = base + j * inner;
      dx[k] = Store<T>(Load(y[k]) * (Load(g[k]) - dot));
    }
  }
}

__device__ __forceinline__ int64_t HardLabel(const void* label, Elem elem, int64_t row) {
  return elem == Elem::kInt64 ? static_cast<const int64_t*>(label)[row]
                              : static_cast<int64_t>(static_cast<const int32_t*>(label)[row]);
}

template <typename T>
__global__ void CrossEntropyKernel(CrossEntropyDesc d, const T* x, const void* label, T* softmax,
                                   T* loss) {
  using C = Compute<T>;
  IRM_GRID_STRIDE(row, d.outer * d.inner) {
    const int64_t base = (row / d.inner) * d.size * d.inner + row % d.inner;
    C shift = 0;
    C log_sum = 0;
    C sum = 1;
    if (d.use_softmax) {
      C max = -INFINITY;
      for (int64_t j = 0; j < d.size; ++j) {
        const C v = Load(x[base + j * d.inner]);
        max = max < v ? v : max;  // std::max(max, v)
      }
      sum = 0;
      for (int64_t j = 0; j < d.size; ++j) sum += exp(Load(x[base + j * d.inner]) - max);
      shift = max;
      log_sum = log(sum);
    }
    // log softmax_j: (x_j - shift) - log_sum with use_softmax, log(x_j) without.
    auto log_prob = [&](int64_t j) -> C {
      const C v = Load(x[base + j * d.inner]);
      return d.use_softmax ? (v - shift) - log_sum : log(v);
    };
    for (int64_t j = 0; j < d.size; ++j) {
      const C v = Load(x[base + j * d.inner]);
      softmax[base + j * d.inner] = Store<T>(d.use_softmax ? exp(v - shift) / sum : v);
    }
    C l = 0;
    if (d.soft_label) {
      const T* y = static_cast<const T*>(label);
      for (int64_t j = 0; j < d.size; ++j) l -= Load(y[base + j * d.inner]) * log_prob(j);
    } else {
      const int64_t k = HardLabel(label, d.label_elem, row);
      if (k != d.ignore_index) l = -log_prob(k);
    }
    loss[row] = Store<T>(l);
  }
}

template <typename T>
__global__ void CrossEntropyGradKernel(CrossEntropyDesc d, const void* label, const T* p,
                                       const T* loss_grad, T* dx) {
  using C = Compute<T>;
  IRM_GRID_STRIDE(row, d.outer * d.inner) {
    const int64_t base = (row / d.inner) * d.size * d.inner + row % d.inner;
    const C g = Load(loss_grad[row]);
    if (d.soft_label) {
      const T* y = static_cast<const T*>(label);
      C label_sum = 0;
      if (d.use_softmax) {
        for (int64_t j = 0; j < d.size; ++j) label_sum += Load(y[base + j * d.inner]);
      }
      for (int64_t j = 0; j < d.size; ++j) {
        const int64_t k = base + j * d.inner;
        const C yj = Load(y[k]);
        const C pj = Load(p[k]);
        dx[k] = Store<T>(d.use_softmax ? (pj * label_sum - yj) * g : -yj / pj * g);
      }
      continue;
    }
    const int64_t c = HardLabel(label, d.label_elem, row);
    for (int64_t j = 0; j < d.size; ++j) {
      const int64_t k = base + j * d.inner;
      const C pj = Load(p[k]);
      C v = 0;  // ignored rows, and the other classes without use_softmax
      if (c != d.ignore_index) {
        if (d.use_softmax) {
          v = (j == c ? pj - C{1} : pj) * g;
        } else if (j == c) {
          v = -g / pj;
        }
      }
      dx[k] = Store<T>(v);
    }
  }
}

// ---- embedding (kernels/indexing.cc), mean_all_grad (kernels/reduction.cc)
// -------------------------

template <typename Word>
__global__ void EmbeddingKernel(int64_t count, int64_t width, const int64_t* ids,
                                int64_t padding_idx, const Word* weight, Word* out) {
  IRM_GRID_STRIDE(e, count * width) {
    const int64_t id = ids[e / width];
    out[e] = id == padding_idx ? Word{0} : weight[id * width + e % width];
  }
}

template <typename T>
__global__ void EmbeddingGradKernel(int64_t rows, int64_t width, const int64_t* row_start,
                                    const int64_t* order, const T* g, T* out) {
  using C = Compute<T>;
  IRM_GRID_STRIDE(e, rows * width) {
    const int64_t r = e / width, j = e % width;
    C acc = 0;
    for (int64_t k = row_start[r]; k < row_start[r + 1]; ++k) acc += Load(g[order[k] * width + j]);
    out[e] = Store<T>(acc);
  }
}

template <typename T>
__global__ void MeanAllGradKernel(int64_t n, const T* g, T* dx) {
  using C = Compute<T>;
  const T value = Store<T>(Load(g[0]) / static_cast<C>(n));
  IRM_GRID_STRIDE(i, n) { dx[i] = value; }
}

}  // namespace

cudaError_t LaunchLayerNorm(Elem elem, int64_t rows, int64_t n, double epsilon, const void* x,
                            AnyFloat scale, AnyFloat bias, void* out, void* mean, void* variance,
                            cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  return DispatchFloating(elem, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    using C = Compute<T>;
    LayerNormKernel<T><<<GridFor(rows), kThreads, 0, stream>>>(
        rows, n, static_cast<C>(epsilon), static_cast<const T*>(x), scale, bias,
        static_cast<T*>(out), static_cast<C*>(mean), static_cast<C*>(variance));
    return cudaGetLastError();
  });
}

cudaError_t LaunchLayerNormGrad(Elem elem, int64_t rows, int64_t n, double epsilon, const void* x,
                                AnyFloat scale, const void* mean, const void* variance,
                                const void* out_grad, void* x_grad, AnyFloatOut scale_grad,
                                AnyFloatOut bias_grad, cudaStream_t stream) {
  return DispatchFloating(elem, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    using C = Compute<T>;
    const C eps = static_cast<C>(epsilon);
    if (rows > 0 && x_grad != nullptr) {
      LayerNormGradRowsKernel<T><<<GridFor(rows), kThreads, 0, stream>>>(
          rows, n, eps, static_cast<const T*>(x), scale, static_cast<const C*>(mean),
          static_cast<const C*>(variance), static_cast<const T*>(out_grad),
          static_cast<T*>(x_grad));
      const cudaError_t err = cudaGetLastError();
      if (err != cudaSuccess) return err;
    }
    if (n > 0 && (scale_grad.data != nullptr || bias_grad.data != nullptr)) {
      LayerNormGradColumnsKernel<T><<<GridFor(n), kThreads, 0, stream>>>(
          rows, n, eps, static_cast<const T*>(x), static_cast<const C*>(mean),
          static_cast<const C*>(variance), static_cast<const T*>(out_grad), scale_grad, bias_grad);
    }
    return cudaGetLastError();
  });
}

cudaError_t LaunchSoftmaxGrad(Elem elem, int64_t outer, int64_t size, int64_t inner,
                              const void* out, const void* out_grad, void* x_grad,
                              cudaStream_t stream) {
  const int64_t lines = outer * inner;
  if (lines == 0 || size == 0) return cudaSuccess;
  return DispatchFloating(elem, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    SoftmaxGradKernel<T><<<GridFor(lines), kThreads, 0, stream>>>(
        outer, size, inner, static_cast<const T*>(out), static_cast<const T*>(out_grad),
        static_cast<T*>(x_grad));
    return cudaGetLastError();
  });
}

cudaError_t LaunchCrossEntropy(Elem elem, const CrossEntropyDesc& desc, const void* input,
                               const void* label, void* softmax, void* loss, cudaStream_t stream) {
  const int64_t lines = desc.outer * desc.inner;
  if (lines == 0) return cudaSuccess;
  return DispatchFloating(elem, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    CrossEntropyKernel<T><<<GridFor(lines), kThreads, 0, stream>>>(
        desc, static_cast<const T*>(input), label, static_cast<T*>(softmax), static_cast<T*>(loss));
    return cudaGetLastError();
  });
}

cudaError_t LaunchCrossEntropyGrad(Elem elem, const CrossEntropyDesc& desc, const void* label,
                                   const void* softmax, const void* loss_grad, void* input_grad,
                                   cudaStream_t stream) {
  const int64_t lines = desc.outer * desc.inner;
  if (lines == 0) return cudaSuccess;
  return DispatchFloating(elem, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    CrossEntropyGradKernel<T><<<GridFor(lines), kThreads, 0, stream>>>(
        desc, label, static_cast<const T*>(softmax), static_cast<const T*>(loss_grad),
        static_cast<T*>(input_grad));
    return cudaGetLastError();
  });
}

cudaError_t LaunchEmbedding(int element_size, int64_t count, int64_t width, const int64_t* ids,
                            int64_t padding_idx, const void* weight, void* out,
                            cudaStream_t stream) {
  const int64_t n = count * width;
  if (n == 0) return cudaSuccess;
  auto launch = [&](auto word) -> cudaError_t {
    using Word = decltype(word);
    EmbeddingKernel<Word><<<GridFor(n), kThreads, 0, stream>>>(
        count, width, ids, padding_idx, static_cast<const Word*>(weight), static_cast<Word*>(out));
    return cudaGetLastError();
  };
  switch (element_size) {
    case 1:
      return launch(uint8_t{});
    case 2:
      return launch(uint16_t{});
    case 4:
      return launch(uint32_t{});
    case 8:
      return launch(uint64_t{});
    default:
      return cudaErrorInvalidValue;
  }
}

cudaError_t LaunchEmbeddingGrad(Elem elem, int64_t rows, int64_t width, const int64_t* row_start,
                                const int64_t* order, const void* out_grad, void* weight_grad,
                                cudaStream_t stream) {
  const int64_t n = rows * width;
  if (n == 0) return cudaSuccess;
  return DispatchFloating(elem, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    EmbeddingGradKernel<T><<<GridFor(n), kThreads, 0, stream>>>(rows, width, row_start, order,
                                                                static_cast<const T*>(out_grad),
                                                                static_cast<T*>(weight_grad));
    return cudaGetLastError();
  });
}

cudaError_t LaunchMeanAllGrad(Elem elem, int64_t n, const void* out_grad, void* x_grad,
                              cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return DispatchFloating(elem, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    MeanAllGradKernel<T><<<GridFor(n), kThreads, 0, stream>>>(n, static_cast<const T*>(out_grad),
                                                              static_cast<T*>(x_grad));
    return cudaGetLastError();
  });
}

}  // namespace irm::rt::cuda
