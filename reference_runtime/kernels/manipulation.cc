// Shape kernels: reshape (with Paddle's xshape carrier) and its grad, transpose and its grad,
// concat, concat_grad, split, split_with_num, assign (and assign_out), share_data and add_n.
// Except add_n they only move bytes, so one function serves every runtime dtype; the registry key
// is the dtype of the data input (x, or out_grad for the grads). Outputs get fresh storage except
// share_data's, whose point is to share. The attributes, checks and output shapes are the plans'
// the CUDA kernels share (manipulation_plan.h).
#include <cstring>
#include <numeric>
#include <type_traits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "reference_runtime/kernels/data_kernels.h"
#include "reference_runtime/kernels/manipulation_plan.h"
#include "reference_runtime/kernels/numeric.h"
#include "reference_runtime/kernels/register.h"

namespace irm::rt {
namespace {

using data::MakeOutput;
using data::Numel;

// ---- reshape -----------------------------------------------------------------------------------

// reshape(x; shape) -> out, xshape (the shape carrier of plan::XShapeCarrier, holding no element).
Status Reshape(KernelCall& call) {
  const Tensor& x = call.input(0);
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> target, plan::PlanReshape(x, call.attrs));
  IRM_ASSIGN_OR_RETURN(Tensor out, x.Clone().Reshaped(std::move(target)));
  call.SetOutput(0, std::move(out));
  call.SetOutput(1, Tensor::ZerosUnchecked(x.dtype(), plan::XShapeCarrier(x.shape())));
  return Status::Ok();
}

// reshape_grad(xshape, out_grad) -> x_grad: out_grad's elements under x's shape.
Status ReshapeGrad(KernelCall& call) {
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> x_shape,
                       plan::PlanReshapeGrad(call.input(0), call.input(1)));
  IRM_ASSIGN_OR_RETURN(Tensor x_grad, call.input(1).Clone().Reshaped(std::move(x_shape)));
  call.SetOutput(0, std::move(x_grad));
  return Status::Ok();
}

// ---- transpose ---------------------------------------------------------------------------------

// out[i_0, ..., i_{r-1}] = x[j] where j[perm[k]] = i_k. Word is an unsigned type of the element
// size: the copy needs the bytes, not the type.
template <typename Word>
void TransposeWords(const Word* x, const std::vector<int64_t>& x_shape,
                    const std::vector<int>& perm, Word* out,
                    const std::vector<int64_t>& out_shape) {
  const size_t rank = perm.size();
  const int64_t n = Numel(out_shape);
  if (n == 0) return;
  if (rank == 0) {
    out[0] = x[0];
    return;
  }
  std::vector<int64_t> x_stride(rank, 1);
  for (size_t k = rank - 1; k > 0; --k) x_stride[k - 1] = x_stride[k] * x_shape[k];
  // Strides in x of a step along each out dim.
  std::vector<int64_t> step(rank);
  for (size_t k = 0; k < rank; ++k) step[k] = x_stride[static_cast<size_t>(perm[k])];
  const int64_t inner = out_shape[rank - 1];
  const int64_t inner_step = step[rank - 1];
  std::vector<int64_t> index(rank, 0);
  for (int64_t o = 0; o < n; o += inner) {
    int64_t src = 0;
    for (size_t k = 0; k + 1 < rank; ++k) src += index[k] * step[k];
    for (int64_t j = 0; j < inner; ++j) out[o + j] = x[src + j * inner_step];
    for (size_t k = rank - 1; k > 0;) {
      --k;
      if (++index[k] < out_shape[k]) break;
      index[k] = 0;
    }
  }
}

Tensor TransposeTensor(const Tensor& x, const std::vector<int>& perm) {
  std::vector<int64_t> out_shape;
  for (int p : perm) out_shape.push_back(x.dim(p));
  Tensor out = Tensor::ZerosUnchecked(x.dtype(), out_shape);
  switch (DTypeSize(x.dtype())) {
    case 1:
      TransposeWords(x.data<uint8_t>(), x.shape(), perm, out.data<uint8_t>(), out_shape);
      break;
    case 2:
      TransposeWords(x.data<uint16_t>(), x.shape(), perm, out.data<uint16_t>(), out_shape);
      break;
    case 4:
      TransposeWords(x.data<uint32_t>(), x.shape(), perm, out.data<uint32_t>(), out_shape);
      break;
    default:
      TransposeWords(x.data<uint64_t>(), x.shape(), perm, out.data<uint64_t>(), out_shape);
      break;
  }
  return out;
}

// transpose(x; perm) -> out with out.dim(k) = x.dim(perm[k]).
Status Transpose(KernelCall& call) {
  IRM_ASSIGN_OR_RETURN(std::vector<int> perm, plan::PlanTranspose(call.input(0), call.attrs));
  call.SetOutput(0, TransposeTensor(call.input(0), perm));
  return Status::Ok();
}

// transpose_grad(out_grad; perm) -> x_grad: out_grad transposed by the inverse permutation.
Status TransposeGrad(KernelCall& call) {
  IRM_ASSIGN_OR_RETURN(std::vector<int> inverse,
                       plan::PlanTransposeGrad(call.input(0), call.attrs));
  call.SetOutput(0, TransposeTensor(call.input(0), inverse));
  return Status::Ok();
}

// ---- concat and split
// ----------------------------------------------------------------------------

// concat(x...; axis) -> out. Inputs must share x[0]'s dtype (the registry key).
Status Concat(KernelCall& call) {
  IRM_ASSIGN_OR_RETURN(const plan::ConcatPlan p,
                       plan::PlanConcat(plan::OperandsOf(call), call.attrs));
  IRM_ASSIGN_OR_RETURN(Tensor out, MakeOutput("concat", call.input(0).dtype(), p.shape));
  const size_t item = DTypeSize(out.dtype());
  for (size_t i = 0; i < call.num_inputs(); ++i) {
    const Tensor& x = call.input(i);
    data::CopyBox(static_cast<const std::byte*>(x.raw()), x.shape(),
                  std::vector<int64_t>(p.shape.size(), 0), static_cast<std::byte*>(out.raw()),
                  p.shape, p.starts[i], x.shape(), item);
  }
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

// Cuts `whole` into the plan's pieces and hands piece i to output i.
Status Cut(KernelCall& call, const Tensor& whole, const plan::CutPlan& p) {
  for (size_t i = 0; i < p.shapes.size(); ++i) {
    if (!call.wants_output(i)) continue;
    Tensor piece = Tensor::ZerosUnchecked(whole.dtype(), p.shapes[i]);
    data::CopyBox(static_cast<const std::byte*>(whole.raw()), whole.shape(), p.starts[i],
                  static_cast<std::byte*>(piece.raw()), p.shapes[i],
                  std::vector<int64_t>(p.shapes[i].size(), 0), p.shapes[i],
                  DTypeSize(whole.dtype()));
    call.SetOutput(i, std::move(piece));
  }
  return Status::Ok();
}

// concat_grad(x..., out_grad; axis) -> x_grad...: out_grad cut back into x's shapes. The registry
// key is out_grad's dtype; the x only give their shapes.
Status ConcatGrad(KernelCall& call) {
  const size_t n = call.num_inputs() - 1;
  IRM_ASSIGN_OR_RETURN(const plan::CutPlan p,
                       plan::PlanConcatGrad(plan::OperandsOf(call, n), call.input(n), call.attrs,
                                            call.outputs.size()));
  return Cut(call, call.input(n), p);
}

// split(x; sections, axis) -> out...: one output per section; one section may be -1 (the rest).
Status Split(KernelCall& call) {
  IRM_ASSIGN_OR_RETURN(const plan::CutPlan p,
                       plan::PlanSplit(call.input(0), call.attrs, call.outputs.size()));
  return Cut(call, call.input(0), p);
}

// split_with_num(x; num, axis) -> out...: num equal pieces.
Status SplitWithNum(KernelCall& call) {
  IRM_ASSIGN_OR_RETURN(const plan::CutPlan p,
                       plan::PlanSplitWithNum(call.input(0), call.attrs, call.outputs.size()));
  return Cut(call, call.input(0), p);
}

// ---- copies
// --------------------------------------------------------------------------------------

// assign(x) -> out: a copy with its own storage.
Status Assign(KernelCall& call) {
  call.SetOutput(0, call.input(0).Clone());
  return Status::Ok();
}

// share_data(x) -> out: x itself, the same storage (Paddle's share_data/share_buffer).
Status ShareData(KernelCall& call) {
  call.SetOutput(0, call.input(0));
  return Status::Ok();
}

// ---- add_n
// ---------------------------------------------------------------------------------------

// add_n(inputs...) -> out: the element-wise sum, added in input order (((in0 + in1) + in2) + ...)
// in the compute type (float32 for float16/bfloat16, stored once at the end). Integer sums wrap
// modulo 2^bits (computed unsigned: signed overflow would be undefined).
template <typename T, typename = void>
struct AddNAccumulator {
  using type = Compute<T>;
};
template <typename T>
struct AddNAccumulator<T, std::enable_if_t<std::is_integral_v<T>>> {
  using type = std::make_unsigned_t<T>;
};

template <typename T>
struct AddNKernel {
  static Status Run(KernelCall& call) {
    const Tensor& first = call.input(0);
    for (size_t i = 1; i < call.num_inputs(); ++i) {
      const Tensor& in = call.input(i);
      if (in.dtype() != first.dtype() || in.shape() != first.shape()) {
        return KernelError(fmt::format("add_n: inputs[{}] {} does not match inputs[0] {}", i,
                                       in.Describe(), first.Describe()));
      }
    }
    using Acc = typename AddNAccumulator<T>::type;
    std::vector<Acc> acc(static_cast<size_t>(first.numel()), Acc{0});
    for (const Tensor* in : call.inputs) {
      const T* v = in->data<T>();
      for (size_t j = 0; j < acc.size(); ++j) {
        if constexpr (std::is_integral_v<T>) {
          acc[j] = static_cast<Acc>(acc[j] + static_cast<Acc>(v[j]));
        } else {
          acc[j] += Load<T>(v[j]);
        }
      }
    }
    Tensor out = Tensor::ZerosUnchecked(first.dtype(), first.shape());
    T* o = out.data<T>();
    for (size_t j = 0; j < acc.size(); ++j) {
      if constexpr (std::is_integral_v<T>) {
        o[j] = static_cast<T>(acc[j]);
      } else {
        o[j] = Store<T>(acc[j]);
      }
    }
    call.SetOutput(0, std::move(out));
    return Status::Ok();
  }
};

}  // namespace

Status RegisterManipulationKernels(KernelRegistry& registry) {
  constexpr size_t kAny = KernelSignature::kVariadic;
  const struct {
    const char* name;
    KernelFn fn;
    KernelSignature signature;
  } kernels[] = {
      {"reshape", &Reshape, {1, 1, 2}},
      {"reshape_grad", &ReshapeGrad, {2, 2, 1}},
      {"transpose", &Transpose, {1, 1, 1}},
      {"transpose_grad", &TransposeGrad, {1, 1, 1}},
      {"concat", &Concat, {1, kAny, 1}},
      {"concat_grad", &ConcatGrad, {2, kAny, kAny}},
      {"split", &Split, {1, 1, kAny}},
      {"split_with_num", &SplitWithNum, {1, 1, kAny}},
      {"assign", &Assign, {1, 1, 1}},
      // assign_out_(x, output): the executor writes out into output; the copy is assign's.
      {"assign_out", &Assign, {2, 2, 1}},
      {"share_data", &ShareData, {1, 1, 1}},
  };
  for (const auto& k : kernels) {
    IRM_RETURN_IF_ERROR(data::RegisterForEveryDType(registry, k.name, k.fn, k.signature));
  }
  return RegisterForTypes<AddNKernel, Float16, BFloat16, float, double, int32_t, int64_t>(
      registry, "add_n", {1, kAny, 1});
}

}  // namespace irm::rt
