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

// ---- shared by the families below
// ----------------------------------------------------------------

// A floating tensor whose dtype the kernel reads at run time (optimizer state that is the
// parameter's dtype or float32, layer_norm's scale and bias, 1-element learning rates): loads
// convert to the compute type, stores round once from it. A null `data` is an absent tensor.
struct AnyFloat {
  const void* data = nullptr;
  Elem elem = Elem::kFloat32;
};
struct AnyFloatOut {
  void* data = nullptr;
  Elem elem = Elem::kFloat32;
};

// ---- elementwise.cu
// ------------------------------------------------------------------------------

enum class BinaryOp : uint8_t { kAdd, kSubtract, kMultiply, kDivide, kMaximum };

// out[i] = op(x[x_walk(i)], y[y_walk(i)]) for i < n; both walks have out's dims.
cudaError_t LaunchBinary(BinaryOp op, Elem elem, int64_t n, const Walk& x_walk, const Walk& y_walk,
                         const void* x, const void* y, void* out, cudaStream_t stream);

// (kMaximum is `x > y ? x : y`, as the CPU's maximum; it has no grad here.)

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
  bool square = false;  // sum the squares (squared_l2_norm)
};
int ReduceSplits(int64_t reduce_count);
cudaError_t LaunchSum(Elem x_elem, Elem out_elem, bool mean, const ReducePlanDesc& plan,
                      const void* x, void* out, void* partials, cudaStream_t stream);

// sum_grad, mean_grad: x_grad[i] = out_grad[WalkOffset(from, i)] (divided by `count` for mean)
// in x's compute type, stored once; out_grad may be any floating dtype.
cudaError_t LaunchReduceGrad(Elem x_elem, int64_t n, const Walk& from, AnyFloat out_grad, bool mean,
                             int64_t count, void* x_grad, cudaStream_t stream);
// squared_l2_norm_grad: x_grad[i] = 2 * x[i] * out_grad[0].
cudaError_t LaunchSquaredL2NormGrad(Elem elem, int64_t n, const void* x, AnyFloat out_grad,
                                    void* x_grad, cudaStream_t stream);

// Softmax along the middle dim of [outer, size, inner].
cudaError_t LaunchSoftmax(Elem elem, int64_t outer, int64_t size, int64_t inner, const void* x,
                          void* out, cudaStream_t stream);

// ---- pointwise.cu: activations, add_n, random ops, optimizers
// ------------------------------------

enum class UnaryOp : uint8_t { kRelu, kGelu, kGeluTanh, kTanh, kSigmoid, kSqrt };
// out[i] = op(x[i]) in the compute type (floating types).
cudaError_t LaunchUnary(UnaryOp op, Elem elem, int64_t n, const void* x, void* out,
                        cudaStream_t stream);
// x_grad[i] = out_grad[i] * op'(a[i]); `a` is the forward output for relu, tanh and sigmoid and x
// for gelu (kernels/activation.cc).
cudaError_t LaunchUnaryGrad(UnaryOp op, Elem elem, int64_t n, const void* a, const void* out_grad,
                            void* x_grad, cudaStream_t stream);

// out[i] = ((in[0][i] + in[1][i]) + ...) in the compute type (integers wrap), stored once;
// `inputs` is a device array of `count` device pointers.
cudaError_t LaunchAddN(Elem elem, int64_t n, int64_t count, const void* const* inputs, void* out,
                       cudaStream_t stream);

// The Philox stream of one op (philox.h) and the index each output element draws at: element i
// draws at i, or, when `sharded`, at base + WalkOffset(serial, i) (its index in the serial tensor
// whose shard the output is; serial walks the output's dims with the serial tensor's strides).
struct RandomStream {
  uint64_t seed = 0;
  uint64_t identity = 0;
  bool sharded = false;
  int64_t base = 0;
  Walk serial;
};
// uniform: min + (max - min) * u (53-bit doubles for float64, 24-bit floats in float32 otherwise).
cudaError_t LaunchUniform(Elem elem, int64_t n, const RandomStream& stream_desc, double min,
                          double max, void* out, cudaStream_t stream);
// gaussian: mean + std * normal (Box-Muller in float64), rounded once.
cudaError_t LaunchGaussian(Elem elem, int64_t n, const RandomStream& stream_desc, double mean,
                           double std, void* out, cudaStream_t stream);
// dropout and its grad (kernels/random.cc): keep element i when UniformFloat(i) >= p. `out` and
// `mask` (uint8) are fully written.
cudaError_t LaunchDropout(Elem elem, int64_t n, const RandomStream& stream_desc, float p,
                          bool is_test, bool upscale_in_train, const void* x, void* out,
                          uint8_t* mask, cudaStream_t stream);
cudaError_t LaunchDropoutGrad(Elem elem, int64_t n, float p, bool is_test, bool upscale_in_train,
                              const uint8_t* mask, const void* out_grad, void* x_grad,
                              cudaStream_t stream);

// The optimizers (kernels/optimizer.cc), one thread per element, in the compute type
// (`double_compute`: float64 parameters; float32 otherwise). `param` is where the step starts from
// (the master weight when it is updated); `param_out` takes the result rounded to the parameter's
// dtype and `master_out` (when not null) the same values in the master's dtype. Scalars
// (learning rate, beta powers) are 1-element device tensors read as float64 by every thread.
struct SgdArgs {
  int64_t n = 0;
  AnyFloat param, grad, learning_rate;
  AnyFloatOut param_out, master_out;
};
cudaError_t LaunchSgd(bool double_compute, const SgdArgs& args, cudaStream_t stream);

struct MomentumArgs {
  int64_t n = 0;
  AnyFloat param, grad, velocity, learning_rate;
  AnyFloatOut param_out, velocity_out, master_out;
  double mu = 0.9, coeff = 0.0, rescale = 1.0;
  bool nesterov = false, l2_decay = false;
};
cudaError_t LaunchMomentum(bool double_compute, const MomentumArgs& args, cudaStream_t stream);

struct AdamArgs {
  int64_t n = 0;
  AnyFloat param, grad, learning_rate, moment1, moment2, moment2_max, beta1_pow, beta2_pow;
  AnyFloatOut param_out, moment1_out, moment2_out, moment2_max_out, beta1_pow_out, beta2_pow_out,
      master_out;
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;
  bool amsgrad = false;
  bool decay = false;  // adamw's with_decay
  double lr_ratio = 1.0, coeff = 0.0;
};
// Also writes beta1_pow_out and beta2_pow_out when they are not null.
cudaError_t LaunchAdam(bool double_compute, const AdamArgs& args, cudaStream_t stream);

// ---- rowwise.cu: layer_norm, softmax_grad, cross entropy, embedding, mean_all_grad
// ----------------

// layer_norm over rows x n (kernels/normalization.cc), one thread per row summing along it from
// index 0 as the CPU kernel does; mean and variance in the compute type.
cudaError_t LaunchLayerNorm(Elem elem, int64_t rows, int64_t n, double epsilon, const void* x,
                            AnyFloat scale, AnyFloat bias, void* out, void* mean, void* variance,
                            cudaStream_t stream);
// x_grad one thread per row; scale_grad and bias_grad (when not null) one thread per column,
// adding the rows in order 0, 1, ...
cudaError_t LaunchLayerNormGrad(Elem elem, int64_t rows, int64_t n, double epsilon, const void* x,
                                AnyFloat scale, const void* mean, const void* variance,
                                const void* out_grad, void* x_grad, AnyFloatOut scale_grad,
                                AnyFloatOut bias_grad, cudaStream_t stream);

// softmax_grad along the middle dim of [outer, size, inner], one thread per line.
cudaError_t LaunchSoftmaxGrad(Elem elem, int64_t outer, int64_t size, int64_t inner,
                              const void* out, const void* out_grad, void* x_grad,
                              cudaStream_t stream);

// cross_entropy_with_softmax and its grad along the middle dim of [outer, size, inner], one thread
// per line. Hard labels (int32 or int64, `label_elem`) are already checked against the classes.
struct CrossEntropyDesc {
  int64_t outer = 1, size = 1, inner = 1;
  bool soft_label = false, use_softmax = true;
  int64_t ignore_index = -100;
  Elem label_elem = Elem::kInt64;
};
cudaError_t LaunchCrossEntropy(Elem elem, const CrossEntropyDesc& desc, const void* input,
                               const void* label, void* softmax, void* loss, cudaStream_t stream);
cudaError_t LaunchCrossEntropyGrad(Elem elem, const CrossEntropyDesc& desc, const void* label,
                                   const void* softmax, const void* loss_grad, void* input_grad,
                                   cudaStream_t stream);

// embedding: out row i = weight row ids[i] (zeros for padding_idx); ids are int64, checked.
cudaError_t LaunchEmbedding(int element_size, int64_t count, int64_t width, const int64_t* ids,
                            int64_t padding_idx, const void* weight, void* out,
                            cudaStream_t stream);
// embedding_grad without atomics: weight row r is the sum of the out_grad rows order[k] for k in
// [row_start[r], row_start[r + 1]), which the host sorted by id keeping increasing position (the
// CPU's order), in the compute type from zero, stored once.
cudaError_t LaunchEmbeddingGrad(Elem elem, int64_t rows, int64_t width, const int64_t* row_start,
                                const int64_t* order, const void* out_grad, void* weight_grad,
                                cudaStream_t stream);

// x_grad[i] = out_grad[0] / n (mean_all_grad), stored once.
cudaError_t LaunchMeanAllGrad(Elem elem, int64_t n, const void* out_grad, void* x_grad,
                              cudaStream_t stream);

// ---- layout.cu: data movement by element size
// -----------------------------------------------------

// out[i] = x[base + WalkOffset(walk, i)] for i < n, elements of `element_size` bytes (transpose,
// slice, the pieces of split and concat).
cudaError_t LaunchGather(int element_size, int64_t n, const Walk& walk, int64_t base, const void* x,
                         void* out, cudaStream_t stream);
// out[base + WalkOffset(walk, i)] = x[i] for i < n (concat's pieces, slice_grad).
cudaError_t LaunchScatter(int element_size, int64_t n, const Walk& walk, int64_t base,
                          const void* x, void* out, cudaStream_t stream);
// tril / triu of each [rows, cols] matrix (kept: x's element, else zero); diagonal is clamped.
cudaError_t LaunchTriangle(int element_size, int64_t matrices, int64_t rows, int64_t cols,
                           int64_t diagonal, bool lower, const void* x, void* out,
                           cudaStream_t stream);

}  // namespace irm::rt::cuda
