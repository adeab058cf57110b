// The pd_op elementwise family (add, subtract, multiply, divide, maximum, remainder, floor_divide,
// elementwise_pow): one row per op saying whether it has an in-place variant, a grad op and what
// the grad reads. The dialect's rows (pd_op_elementwise.cc) and the new-IR binding rows
// (reference_runtime/pir_bindings.cc) are generated from this list, so a new op of the family is
// one row here on the PIR side. The legacy side has its own list (oldir/elementwise_ops.h) and the
// translator its own rows: the three stay independent (docs/architecture.md, invariant 1).
#pragma once

#include <string_view>
#include <vector>

namespace irm::newir {

namespace pd_op_table {
class Table;
}

struct PdOpElementwiseOp {
  std::string_view name;     // "add": pd_op.add (x, y) -> out, run by the kernel of that name
  std::string_view summary;  // the row's summary
  bool inplace = false;      // also pd_op.add_, writing x (ops.yaml's inplace (x -> out))
  // Checked by VerifyElementwiseBinaryOp (broadcast-compatible shapes, one dtype).
  bool verify_broadcast = false;
  // The grad op (x, y, [out,] out_grad) -> (x_grad, y_grad), both optional; empty: none.
  std::string_view grad = {};
  bool grad_reads_out = false;  // divide_grad also reads out
  bool grad_axis = false;       // the grad keeps backward.yaml's `axis` (-1)
};

// Every op of the family, in the order above.
const std::vector<PdOpElementwiseOp>& PdOpElementwiseOps();

// Adds the family's rows (forward, in-place variant, grad) to the pd_op table (pd_op_dialect.cc).
void AddElementwise(pd_op_table::Table& t);

}  // namespace irm::newir
