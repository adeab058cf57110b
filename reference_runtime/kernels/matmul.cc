// matmul and matmul_grad with paddle.matmul's semantics, planned by matmul_plan.h (as the device
// twins plan them): the last two dims are the matrices (transposed when transpose_x /
// transpose_y), a 1-D x is a row vector [1, k] and a 1-D y a column vector [k, 1] whose added dim
// is dropped from out (their transpose flag is ignored, as in Paddle's kernel), and the batch dims
// before them broadcast as in NumPy. Every product goes
// through Gemm (gemm.h) in the mode the executor chose; float16/bfloat16 operands are converted
// to float32, multiplied in float32 and stored once. Grads of an operand whose batch dims were
// broadcast are summed over the out batches that read it, in increasing batch index.
#include <type_traits>
#include <vector>

#include "reference_runtime/kernels/broadcast.h"
#include "reference_runtime/kernels/elementwise.h"
#include "reference_runtime/kernels/gemm.h"
#include "reference_runtime/kernels/matmul_plan.h"
#include "reference_runtime/kernels/register.h"

namespace irm::rt {
namespace {

using plan::MatmulPlan;

// When y is one matrix shared by every batch and x is not transposed, x's batches stack into one
// [batch * m, k] matrix (out's rows stack the same way): one large GEMM instead of many small.
bool StacksX(const MatmulPlan& p) {
  return !p.trans_x && p.y_matrices() == 1 && p.batch_numel() > 1;
}

// Calls f(b, x_index, y_index) for every out batch b in increasing order, with the batch index of
// the x and y matrices it reads.
template <typename F>
void ForEachBatch(const MatmulPlan& p, F&& f) {
  const BroadcastWalk<2> walk = PlanBroadcast<2>(p.batch, {&p.x_batch, &p.y_batch});
  ForEachBroadcast(walk, [&](int64_t b, const std::array<int64_t, 2>& at) { f(b, at[0], at[1]); });
}

// out = x · y over every batch; G is float or double, all arrays densely packed.
template <typename G>
Status Forward(GemmMode mode, const MatmulPlan& p, const G* x, const G* y, G* out) {
  if (StacksX(p)) {
    return Gemm<G>(mode, false, p.trans_y, p.batch_numel() * p.m, p.n, p.k, x, y, out);
  }
  const int64_t x_size = p.m * p.k, y_size = p.k * p.n, out_size = p.m * p.n;
  Status status;
  ForEachBatch(p, [&](int64_t b, int64_t xb, int64_t yb) {
    if (!status.ok()) return;
    status = Gemm<G>(mode, p.trans_x, p.trans_y, p.m, p.n, p.k, x + xb * x_size, y + yb * y_size,
                     out + b * out_size);
  });
  return status;
}

// Accumulates per-batch grads of one operand: the first batch that reads a matrix writes it, the
// later ones add to it — in increasing out batch index.
template <typename G>
class GradSum {
 public:
  GradSum(G* grad, int64_t matrices, int64_t size, bool broadcast)
      : grad_(grad), size_(size), broadcast_(broadcast), written_(static_cast<size_t>(matrices)) {
    if (broadcast_) scratch_.resize(static_cast<size_t>(size));
  }
  // Where the current batch's grad of matrix `index` is to be written.
  G* Target(int64_t index) {
    return broadcast_ && written_[static_cast<size_t>(index)] ? scratch_.data()
                                                              : grad_ + index * size_;
  }
  // After computing into Target(index).
  void Done(int64_t index) {
    if (broadcast_ && written_[static_cast<size_t>(index)]) {
      G* slot = grad_ + index * size_;
      for (int64_t i = 0; i < size_; ++i) slot[i] += scratch_[static_cast<size_t>(i)];
    }
    written_[static_cast<size_t>(index)] = true;
  }

 private:
  G* grad_;
  int64_t size_;
  bool broadcast_;
  std::vector<bool> written_;
  std::vector<G> scratch_;
};

// The grads of x and y (each null when not wanted) from out_grad, densely packed in the
// operands' stored layouts:
//   no transposes:  dx = dout · yᵀ,        dy = xᵀ · dout
//   transpose_x:    dx = y · doutᵀ,        dy = x · dout
//   transpose_y:    dx = dout · y,         dy = doutᵀ · x
//   both:           dx = yᵀ · doutᵀ,       dy = doutᵀ · xᵀ
template <typename G>
Status Backward(GemmMode mode, const MatmulPlan& p, const G* x, const G* y, const G* dout, G* dx,
                G* dy) {
  const int64_t m = p.m, n = p.n, k = p.k;
  if (StacksX(p)) {
    const int64_t rows = p.batch_numel() * m;  // x and dout as [rows, k] and [rows, n]
    if (dx) IRM_RETURN_IF_ERROR(Gemm<G>(mode, false, !p.trans_y, rows, k, n, dout, y, dx));
    if (dy && !p.trans_y) IRM_RETURN_IF_ERROR(Gemm<G>(mode, true, false, k, n, rows, x, dout, dy));
    if (dy && p.trans_y) IRM_RETURN_IF_ERROR(Gemm<G>(mode, true, false, n, k, rows, dout, x, dy));
    return Status::Ok();
  }
  const int64_t x_size = m * k, y_size = k * n, out_size = m * n;
  const int64_t x_matrices = p.x_matrices();
  const int64_t y_matrices = p.y_matrices();
  GradSum<G> x_sum(dx, x_matrices, x_size, x_matrices != p.batch_numel());
  GradSum<G> y_sum(dy, y_matrices, y_size, y_matrices != p.batch_numel());
  Status status;
  ForEachBatch(p, [&](int64_t b, int64_t xb, int64_t yb) {
    if (!status.ok()) return;
    const G* xm = x + xb * x_size;
    const G* ym = y + yb * y_size;
    const G* g = dout + b * out_size;
    if (dx) {
      G* target = x_sum.Target(xb);
      status = p.trans_x ? Gemm<G>(mode, p.trans_y, true, k, m, n, ym, g, target)
                         : Gemm<G>(mode, false, !p.trans_y, m, k, n, g, ym, target);
      x_sum.Done(xb);
    }
    if (dy && status.ok()) {
      G* target = y_sum.Target(yb);
      status = p.trans_y ? Gemm<G>(mode, true, p.trans_x, n, k, m, g, xm, target)
                         : Gemm<G>(mode, !p.trans_x, false, k, n, m, xm, g, target);
      y_sum.Done(yb);
    }
  });
  return status;
}

// The operands in the type GEMM multiplies in: float/double tensors as they are, 16-bit ones
// converted to float32.
template <typename T>
using GemmType = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <typename T>
class AsGemmType {
 public:
  explicit AsGemmType(const Tensor& t) {
    if constexpr (std::is_same_v<T, GemmType<T>>) {
      data_ = t.data<T>();
    } else {
      copy_.resize(static_cast<size_t>(t.numel()));
      const T* in = t.data<T>();
      for (size_t i = 0; i < copy_.size(); ++i) copy_[i] = Load<T>(in[i]);
      data_ = copy_.data();
    }
  }
  const GemmType<T>* data() const { return data_; }

 private:
  const GemmType<T>* data_ = nullptr;
  std::vector<GemmType<T>> copy_;
};

// An output tensor of T and the buffer of GemmType<T> the product is written into (the tensor's
// own storage for float/double).
template <typename T>
class GemmOutput {
 public:
  explicit GemmOutput(Tensor t) : tensor_(std::move(t)) {
    if constexpr (!std::is_same_v<T, GemmType<T>>) {
      buffer_.resize(static_cast<size_t>(tensor_.numel()));
    }
  }
  GemmType<T>* data() {
    if constexpr (std::is_same_v<T, GemmType<T>>) {
      return tensor_.data<T>();
    } else {
      return buffer_.data();
    }
  }
  Tensor Finish() && {
    if constexpr (!std::is_same_v<T, GemmType<T>>) {
      T* out = tensor_.data<T>();
      for (size_t i = 0; i < buffer_.size(); ++i) out[i] = Store<T>(buffer_[i]);
    }
    return std::move(tensor_);
  }

 private:
  Tensor tensor_;
  std::vector<GemmType<T>> buffer_;
};

template <typename T>
struct MatmulKernel {
  static Status Run(KernelCall& call) {
    const Tensor& x = call.input(0);
    const Tensor& y = call.input(1);
    IRM_RETURN_IF_ERROR(ExpectDType(x, DTypeOf<T>(), "x"));
    IRM_RETURN_IF_ERROR(ExpectDType(y, DTypeOf<T>(), "y"));
    IRM_ASSIGN_OR_RETURN(const MatmulPlan shapes, plan::PlanMatmul(x, y, call.attrs));
    IRM_ASSIGN_OR_RETURN(Tensor out_tensor, Tensor::Zeros(DTypeOf<T>(), shapes.out));
    GemmOutput<T> out(std::move(out_tensor));
    const AsGemmType<T> xg(x), yg(y);
    IRM_RETURN_IF_ERROR(Forward(call.context.gemm, shapes, xg.data(), yg.data(), out.data()));
    call.SetOutput(0, std::move(out).Finish());
    return Status::Ok();
  }
};

template <typename T>
struct MatmulGradKernel {
  static Status Run(KernelCall& call) {
    const Tensor& x = call.input(0);
    const Tensor& y = call.input(1);
    const Tensor& out_grad = call.input(2);
    IRM_RETURN_IF_ERROR(ExpectDType(x, DTypeOf<T>(), "x"));
    IRM_RETURN_IF_ERROR(ExpectDType(y, DTypeOf<T>(), "y"));
    IRM_RETURN_IF_ERROR(ExpectDType(out_grad, DTypeOf<T>(), "out_grad"));
    IRM_ASSIGN_OR_RETURN(const MatmulPlan shapes, plan::PlanMatmul(x, y, call.attrs));
    IRM_RETURN_IF_ERROR(plan::CheckMatmulGradShape(shapes, x, y, out_grad));
    const bool want_x = call.wants_output(0), want_y = call.wants_output(1);
    GemmOutput<T> dx(
        Tensor::ZerosUnchecked(DTypeOf<T>(), want_x ? x.shape() : std::vector<int64_t>{0}));
    GemmOutput<T> dy(
        Tensor::ZerosUnchecked(DTypeOf<T>(), want_y ? y.shape() : std::vector<int64_t>{0}));
    const AsGemmType<T> xg(x), yg(y), gg(out_grad);
    IRM_RETURN_IF_ERROR(Backward(call.context.gemm, shapes, xg.data(), yg.data(), gg.data(),
                                 want_x ? dx.data() : nullptr, want_y ? dy.data() : nullptr));
    if (want_x) call.SetOutput(0, std::move(dx).Finish());
    if (want_y) call.SetOutput(1, std::move(dy).Finish());
    return Status::Ok();
  }
};

}  // namespace

Status RegisterMatmulKernels(KernelRegistry& registry) {
  IRM_RETURN_IF_ERROR(RegisterFloating<MatmulKernel>(registry, "matmul", {2, 2, 1}));
  IRM_RETURN_IF_ERROR(RegisterFloating<MatmulGradKernel>(registry, "matmul_grad", {3, 3, 2}));
  return Status::Ok();
}

}  // namespace irm::rt
