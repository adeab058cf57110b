// The legacy elementwise family (elementwise_ops.h), written from Paddle's makers:
// paddle/fluid/operators/elementwise/elementwise_op.h (ElementwiseOpMaker, ElementwiseGradOpMaker)
// and elementwise_{add,sub,mul,div,max,mod,floordiv,pow}_op.cc; the kernels are the phi names of
// paddle/phi/ops/yaml/op_compat.yaml (elementwise_max is maximum, elementwise_mod remainder,
// elementwise_floordiv floor_divide).
#include "oldir/elementwise_ops.h"

#include "oldir/schema_era.h"

namespace irm::oldir {

const std::vector<LegacyElementwiseOp>& LegacyElementwiseOps() {
  using Out = ElementwiseGradOut;
  // X came late to three grad makers: the add/sub grad makers (REGISTER_ELEMWISE_GRAD_MAKER, from
  // commit 595a2c83, 2018-08-01) and the div grad maker fed only Y and Out@GRAD (and Out), until
  // commit 0e7baabe (2019-11-19, after the 1.6 branch) added X to all three: Paddle 1.0 to 1.6
  // programs lack it. Before 2019 mul and div used DefaultGradOpDescMaker, which also fed Out.
  constexpr int64_t kXSince = PaddleVersion(1, 7);
  static const std::vector<LegacyElementwiseOp> ops = {
      {"elementwise_add", "add", "elementwise_add_grad", "add_grad", kXSince, Out::kNo},
      {"elementwise_sub", "subtract", "elementwise_sub_grad", "subtract_grad", kXSince, Out::kNo},
      {"elementwise_mul", "multiply", "elementwise_mul_grad", "multiply_grad", 0,
       Out::kDispensable},
      // ElementwiseDivGradOpMaker also re-feeds Out.
      {"elementwise_div", "divide", "elementwise_div_grad", "divide_grad", kXSince, Out::kRequired},
      {"elementwise_max", "maximum"},
      // elementwise_mod / elementwise_floordiv: the gradient-merge step counter (step %= k).
      {"elementwise_mod", "remainder"},
      {"elementwise_floordiv", "floor_divide"},
      // ElementwisePowOpGradMaker (elementwise_pow_op.cc): X, Y, Out@GRAD.
      {"elementwise_pow", "elementwise_pow", "elementwise_pow_grad", "elementwise_pow_grad", 0,
       Out::kNo},
  };
  return ops;
}

const LegacyElementwiseOp* FindLegacyElementwiseOp(std::string_view type) {
  for (const LegacyElementwiseOp& op : LegacyElementwiseOps()) {
    if (op.type == type) return &op;
  }
  return nullptr;
}

}  // namespace irm::oldir
