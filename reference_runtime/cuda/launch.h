// The boundary between the host code of the CUDA backend (g++: attributes, shape checks, errors,
// allocation) and its device code (nvcc: the .cu files). Only plain descriptions cross it: element
// types, element counts, dims and strides of at most kMaxDims dims, raw device pointers and a
// stream. Every launcher returns the launch's cudaError_t; the host turns it into a Status naming
// the op (cuda_status.h). Keeping the Status, fmt and registry code out of nvcc keeps the CUDA
// translation units few and quick to compile.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace irm::rt::cuda {

// Device element types, in the order of irm::DType's runtime dtypes (device_tensor.h maps them).
enum class Elem : uint8_t {
  kBool,
  kInt8,
  kUInt8,
  kInt16,
  kInt32,
  kInt64,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
};

inline constexpr int kMaxDims = 8;

// A C-order walk over `dims`: walk element i has the multi-index of i in dims and the offset
// sum(index[d] * strides[d]) into a tensor (a stride of 0 repeats an element).
struct Walk {
  int rank = 0;
  int64_t dims[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};
};

// ---- elementwise.cu
// ------------------------------------------------------------------------------

enum class BinaryOp : uint8_t { kAdd, kSubtract, kMultiply, kDivide };

// out[i] = op(x[x_walk(i)], y[y_walk(i)]) for i < n; both walks have out's dims.
cudaError_t LaunchBinary(BinaryOp op, Elem elem, int64_t n, const Walk& x_walk, const Walk& y_walk,
                         const void* x, const void* y, void* out, cudaStream_t stream);

// The grad of one operand ("self") of a broadcasting binary op, summed back to its shape: for
// self element j (j < self_numel), the sum over the outputs i that read it, in increasing i, of
// the op's term. `kept` walks the self elements over out's dims that self keeps (strides into
// out_grad in kept.strides, into the other operand in other_kept_strides); `reduced` walks the
// broadcast dims the sum runs over (likewise). `out` is the forward result (divide's y grad).
struct GradPlan {
  int64_t self_numel = 0;
  Walk kept;
  int64_t other_kept_strides[kMaxDims] = {};
  Walk reduced;
  int64_t other_reduced_strides[kMaxDims] = {};
  int64_t reduce_count = 1;
};
cudaError_t LaunchBinaryGrad(BinaryOp op, bool self_is_y, Elem elem, const GradPlan& plan,
                             const void* self, const void* other, const void* out,
                             const void* out_grad, void* grad, cudaStream_t stream);

// out[i] = after ? scale * x[i] + bias : scale * (x[i] + bias), in x's compute type (integers
// wrap); scale and bias are already valid values of that type.
cudaError_t LaunchScale(Elem elem, int64_t n, double scale, double bias, bool bias_after_scale,
                        const void* x, void* out, cudaStream_t stream);

// out[i] = the element_size bytes of `pattern` (full, full_like: the host converted the value).
cudaError_t LaunchFill(int element_size, int64_t n, uint64_t pattern, void* out,
                       cudaStream_t stream);

// out[i] = x[i] converted by cast's rules (kernels/convert.h).
cudaError_t LaunchCast(Elem from, Elem to, int64_t n, const void* x, void* out,
                       cudaStream_t stream);

// ---- reduction.cu
// --------------------------------------------------------------------------------

// Sums (or means) over a reduction: out element o reads x at out_walk(o) + reduced_walk(r) for
// r < reduce_count. `splits` blocks share one out element when it is large (ReduceSplits), each
// writing a partial into `partials` (out_numel * splits accumulators of 8 bytes), then one block
// per out element adds its partials. Every sum is a fixed tree: the same bits on every run.
struct ReducePlanDesc {
  int64_t out_numel = 0;
  Walk out_walk;
  Walk reduced_walk;
  int64_t reduce_count = 1;
};
int ReduceSplits(int64_t reduce_count);
cudaError_t LaunchSum(Elem x_elem, Elem out_elem, bool mean, const ReducePlanDesc& plan,
                      const void* x, void* out, void* partials, cudaStream_t stream);

// Softmax along the middle dim of [outer, size, inner].
cudaError_t LaunchSoftmax(Elem elem, int64_t outer, int64_t size, int64_t inner, const void* x,
                          void* out, cudaStream_t stream);

}  // namespace irm::rt::cuda
