// The pd_op elementwise family (pd_op_elementwise.h), written from Paddle's paddle/phi/ops/yaml/
// ops.yaml and backward.yaml (add, subtract, multiply, divide, maximum, remainder, floor_divide
// and the grads; maximum has no in-place form there), and legacy/static_ops.yaml and
// static_backward.yaml (elementwise_pow and its grad: no axis in PIR).
#include "newir/pd_op_elementwise.h"

#include <string>

#include "newir/pd_op_table.h"
#include "newir/pd_op_verify.h"

namespace irm::newir {

const std::vector<PdOpElementwiseOp>& PdOpElementwiseOps() {
  // name, summary, in place, verified, grad, grad reads out, grad has axis
  static const std::vector<PdOpElementwiseOp> ops = {
      {"add", "elementwise add", true, true, "add_grad", false, true},
      {"subtract", "elementwise subtract", true, true, "subtract_grad", false, true},
      {"multiply", "elementwise multiply", true, true, "multiply_grad", false, true},
      {"divide", "elementwise divide", true, true, "divide_grad", true, true},
      {"maximum", "elementwise maximum", false, true},
      // remainder is the legacy elementwise_mod, floor_divide elementwise_floordiv.
      {"remainder", "elementwise x mod y", true, true},
      {"floor_divide", "elementwise x // y", true, true},
      {"elementwise_pow", "elementwise x ** y", false, false, "elementwise_pow_grad", false, false},
  };
  return ops;
}

void AddElementwise(pd_op_table::Table& t) {
  using namespace pd_op_table;  // NOLINT(build/namespaces): the row builders, read as a table
  for (const PdOpElementwiseOp& op : PdOpElementwiseOps()) {
    OpInfo forward =
        Op(std::string(op.name), std::string(op.summary), {In("x"), In("y")}, {Out("out")});
    if (op.verify_broadcast) forward = Verified(std::move(forward), VerifyElementwiseBinaryOp);
    if (op.inplace) {
      t.AddWithInplace(std::move(forward));
    } else {
      t.Add(std::move(forward));
    }
    if (op.grad.empty()) continue;
    std::vector<OperandSpec> operands = {In("x"), In("y")};
    if (op.grad_reads_out) operands.push_back(In("out"));
    operands.push_back(In("out_grad"));
    std::vector<AttrSpec> attributes;
    if (op.grad_axis) attributes.push_back(I32("axis", -1));
    t.Add(Op(std::string(op.grad), "gradient of " + std::string(op.name), std::move(operands),
             {OptOut("x_grad"), OptOut("y_grad")}, std::move(attributes)));
  }
}

}  // namespace irm::newir
