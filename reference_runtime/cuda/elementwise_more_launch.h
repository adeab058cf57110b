// Launchers of elementwise_more.cu (the device side of logical_kernels.cc,
// elementwise_more_kernels.cc and prod_kernels.cc): comparisons and logic with bool results,
// integer divide, floor_divide, remainder, elementwise_pow and its grad, floor, increment, and the
// product reduction with its grad. Plain descriptions only, as launch.h.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "reference_runtime/cuda/launch.h"

namespace irm::rt::cuda {

enum class CompareOp : uint8_t {
  kEqual,
  kNotEqual,
  kLessThan,
  kGreaterThan,
  kLogicalAnd,
  kLogicalOr,
  kLogicalXor,
};
// out[i] = op(x[x_walk(i)], y[y_walk(i)]) as a bool, for every dtype (kernels/elementwise.cc).
cudaError_t LaunchCompare(CompareOp op, Elem elem, int64_t n, const Walk& x_walk,
                          const Walk& y_walk, const void* x, const void* y, bool* out,
                          cudaStream_t stream);
// out[i] = !x[i] (a NaN is true, hence false here).
cudaError_t LaunchLogicalNot(Elem elem, int64_t n, const void* x, bool* out, cudaStream_t stream);

enum class ArithOp : uint8_t { kDivide, kFloorDivide, kRemainder, kPow };
// out[i] = op(x[x_walk(i)], y[y_walk(i)]) in the compute type (kDivide: int32 and int64 only; the
// floating divide is launch.h's). Integer divisors are checked by the host first (FirstZero).
cudaError_t LaunchArith(ArithOp op, Elem elem, int64_t n, const Walk& x_walk, const Walk& y_walk,
                        const void* x, const void* y, void* out, cudaStream_t stream);
// first_zero[0] = the smallest i < n with y[i] == 0, or n (int32 and int64 y): one block taking
// the minimum, which is the same whatever order the threads run in.
cudaError_t LaunchFirstZero(Elem elem, int64_t n, const void* y, int64_t* first_zero,
                            cudaStream_t stream);

// elementwise_pow_grad of one operand (launch.h's GradPlan; self is x or y, other the other one):
// x_grad terms out_grad * y * pow(x, y - 1), y_grad terms out_grad * log(x) * pow(x, y), summed in
// increasing output index from zero.
cudaError_t LaunchPowGrad(bool self_is_y, Elem elem, const GradPlan& plan, const void* self,
                          const void* other, const void* out_grad, void* grad, cudaStream_t stream);

// out[i] = floor(x[i]) (floating types).
cudaError_t LaunchFloor(Elem elem, int64_t n, const void* x, void* out, cudaStream_t stream);
// out[i] = x[i] + step in the compute type (integers wrap); step is a valid value of it.
cudaError_t LaunchIncrement(Elem elem, int64_t n, double step, const void* x, void* out,
                            cudaStream_t stream);

// prod: out element o is the product, from 1 in r = 0, 1, ..., of x[out_walk(o) +
// reduced_walk(r)], one thread per out element (integers wrap).
cudaError_t LaunchProd(Elem elem, const ReducePlanDesc& plan, const void* x, void* out,
                       cudaStream_t stream);
// prod_grad: x_grad[i] = out_grad[o] * out[o] * (1 / x[i]) with o = WalkOffset(from, i).
cudaError_t LaunchProdGrad(Elem elem, int64_t n, const Walk& from, const void* x, const void* out,
                           AnyFloat out_grad, void* x_grad, cudaStream_t stream);

}  // namespace irm::rt::cuda
