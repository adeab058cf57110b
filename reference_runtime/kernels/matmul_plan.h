// The device-independent half of matmul and matmul_grad: paddle.matmul's shapes (the last two dims
// are the matrices, transposed when transpose_x / transpose_y; a 1-D x is a row vector [1, k] and
// a 1-D y a column vector [k, 1] whose added dim is dropped from out, their transpose flag
// ignored; the batch dims before them broadcast as in NumPy) and matmul_grad's out_grad check. The
// CPU kernels (matmul.cc) and the CUDA kernels (cuda/matmul_kernels.cc) both plan with these and
// only multiply their own way, so that the two check the same things in the same order with the
// same words.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "reference_runtime/kernel.h"
#include "reference_runtime/kernels/plan_operand.h"

namespace irm::rt::plan {

// The product op(x)[m, k] · op(y)[k, n] per out batch: the batch dims, which operand is stored
// transposed (never a 1-D one), and out's shape.
struct MatmulPlan {
  std::vector<int64_t> x_batch, y_batch, batch;  // batch = broadcast(x_batch, y_batch)
  int64_t m = 0, n = 0, k = 0;
  bool trans_x = false, trans_y = false;
  std::vector<int64_t> out;

  static int64_t NumelOf(const std::vector<int64_t>& dims);
  int64_t batch_numel() const { return NumelOf(batch); }
  // The matrices x and y hold (the product of their batch dims).
  int64_t x_matrices() const { return NumelOf(x_batch); }
  int64_t y_matrices() const { return NumelOf(y_batch); }
  // Elements of one matrix of x, y and out.
  int64_t x_size() const { return m * k; }
  int64_t y_size() const { return k * n; }
  int64_t out_size() const { return m * n; }
};

// The plan for x and y of these shapes, or the error ("x is 0-D; matmul needs at least 1 dim",
// "x [2, 3] (transposed) and y [2, 4] do not multiply: inner dims 2 and 4 differ", or the batch
// dims that do not broadcast).
StatusOr<MatmulPlan> PlanMatmul(const std::vector<int64_t>& x, const std::vector<int64_t>& y,
                                bool transpose_x, bool transpose_y);
// The same with the transposes read from the call's attributes (transpose_x, transpose_y; false
// when absent).
StatusOr<MatmulPlan> PlanMatmul(const Operand& x, const Operand& y, const KernelAttrs& attrs);

// matmul_grad's out_grad must have out's shape.
Status CheckMatmulGradShape(const MatmulPlan& plan, const Operand& x, const Operand& y,
                            const Operand& out_grad);

}  // namespace irm::rt::plan
