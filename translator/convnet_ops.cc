// Conv-net special handlers (convnet_ops.h).
//
// mul / mul_grad follow paddle/fluid/ir_adaptor/translator/op_translator.cc (MulOpTranscriber,
// MulGradOpTranscriber): X is reshaped to [prod(X.dims[:x_num_col_dims]),
// prod(X.dims[x_num_col_dims:])] (a product over an unknown dim is -1), Y likewise, the product is
// pd_op.matmul (transpose_x = transpose_y = false), and Out is its result reshaped to
// X.dims[:x_num_col_dims] + Y.dims[y_num_col_dims:]; the grad reshapes Out@GRAD to the product's
// shape, runs pd_op.matmul_grad and reshapes each gradient back to its input's dims.
#include "translator/convnet_ops.h"

#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "translator/op_context.h"

namespace irm::translator {
namespace {

using newir::Attribute;
using newir::Type;
using newir::Value;

// prod(dims[begin:end]), or -1 when one of them is unknown.
int64_t Product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) {
    if (dims[i] < 0) return -1;
    p *= dims[i];
  }
  return p;
}

// pd_op.reshape of `x` to `to` (at most one unknown dim, inferred).
StatusOr<Value*> Reshape(OpContext& ctx, Value* x, const std::vector<int64_t>& to) {
  int unknown = 0;
  for (int64_t d : to) unknown += d < 0 ? 1 : 0;
  if (unknown > 1) {
    return ctx.Error(
        fmt::format("cannot reshape to [{}]: more than one dim is unknown", fmt::join(to, ", ")));
  }
  Value* shape = ctx.FullIntArray(to);
  return ctx.Emit("pd_op.reshape", {x, shape}, {Type::DenseTensor(x->type().dtype(), to), Type()})
      ->result(0);
}

struct MulShapes {
  std::vector<int64_t> x2, y2, out;
};

StatusOr<MulShapes> ShapesOf(OpContext& ctx, const Type& x, const Type& y) {
  const int32_t x_cols = ctx.AttrOr<int32_t>("x_num_col_dims", 1);
  const int32_t y_cols = ctx.AttrOr<int32_t>("y_num_col_dims", 1);
  const std::vector<int64_t>& xd = x.dims();
  const std::vector<int64_t>& yd = y.dims();
  if (x_cols < 1 || x_cols > static_cast<int32_t>(xd.size()) || y_cols < 1 ||
      y_cols > static_cast<int32_t>(yd.size())) {
    return ctx.Error(fmt::format(
        "x_num_col_dims {} and y_num_col_dims {} must lie in 1 to the rank of X ({}) and Y ({})",
        x_cols, y_cols, xd.size(), yd.size()));
  }
  const auto xc = static_cast<size_t>(x_cols);
  const auto yc = static_cast<size_t>(y_cols);
  MulShapes s;
  s.x2 = {Product(xd, 0, xc), Product(xd, xc, xd.size())};
  s.y2 = {Product(yd, 0, yc), Product(yd, yc, yd.size())};
  s.out.assign(xd.begin(), xd.begin() + x_cols);
  s.out.insert(s.out.end(), yd.begin() + y_cols, yd.end());
  return s;
}

newir::AttributeMap MatmulAttributes() {
  return {{"transpose_x", Attribute::Bool(false)}, {"transpose_y", Attribute::Bool(false)}};
}

}  // namespace

Status TranslateMul(OpContext& ctx) {
  IRM_ASSIGN_OR_RETURN(Value * x, ctx.Input("X"));
  IRM_ASSIGN_OR_RETURN(Value * y, ctx.Input("Y"));
  IRM_ASSIGN_OR_RETURN(const MulShapes s, ShapesOf(ctx, x->type(), y->type()));
  IRM_ASSIGN_OR_RETURN(Value * x2, Reshape(ctx, x, s.x2));
  IRM_ASSIGN_OR_RETURN(Value * y2, Reshape(ctx, y, s.y2));
  const Type product = Type::DenseTensor(x->type().dtype(), {s.x2[0], s.y2[1]});
  Value* out2 = ctx.Emit("pd_op.matmul", {x2, y2}, {product}, MatmulAttributes())->result(0);
  const std::vector<std::string> outs = ctx.OutputNames("Out");
  if (outs.empty()) return Status::Ok();
  IRM_ASSIGN_OR_RETURN(Value * out, Reshape(ctx, out2, s.out));
  ctx.Bind(outs[0], out);
  return Status::Ok();
}

Status TranslateMulGrad(OpContext& ctx) {
  IRM_ASSIGN_OR_RETURN(Value * x, ctx.Input("X"));
  IRM_ASSIGN_OR_RETURN(Value * y, ctx.Input("Y"));
  IRM_ASSIGN_OR_RETURN(Value * out_grad, ctx.Input("Out@GRAD"));
  IRM_ASSIGN_OR_RETURN(const MulShapes s, ShapesOf(ctx, x->type(), y->type()));
  IRM_ASSIGN_OR_RETURN(Value * x2, Reshape(ctx, x, s.x2));
  IRM_ASSIGN_OR_RETURN(Value * y2, Reshape(ctx, y, s.y2));
  IRM_ASSIGN_OR_RETURN(Value * dout2, Reshape(ctx, out_grad, {s.x2[0], s.y2[1]}));
  const std::vector<std::string> x_grad = ctx.OutputNames("X@GRAD");
  const std::vector<std::string> y_grad = ctx.OutputNames("Y@GRAD");
  const Type dtype = x->type().dtype();
  newir::Operation* op = ctx.Emit("pd_op.matmul_grad", {x2, y2, dout2},
                                  {x_grad.empty() ? Type() : Type::DenseTensor(dtype, s.x2),
                                   y_grad.empty() ? Type() : Type::DenseTensor(dtype, s.y2)},
                                  MatmulAttributes());
  if (!x_grad.empty()) {
    IRM_ASSIGN_OR_RETURN(Value * dx, Reshape(ctx, op->result(0), x->type().dims()));
    ctx.Bind(x_grad[0], dx);
  }
  if (!y_grad.empty()) {
    IRM_ASSIGN_OR_RETURN(Value * dy, Reshape(ctx, op->result(1), y->type().dims()));
    ctx.Bind(y_grad[0], dy);
  }
  return Status::Ok();
}

Status TranslateBatchNorm(OpContext& ctx) {
  // pd_op.batch_norm takes momentum as an attribute only; a momentum computed at run time cannot
  // be translated without changing the numbers.
  if (ctx.HasInput("MomentumTensor")) {
    return ctx.Error(
        "MomentumTensor is set: pd_op.batch_norm has no momentum operand (only the attribute)");
  }
  return TranslateByTable(ctx);
}

Status TranslateAffineChannelGrad(OpContext& ctx) {
  // AffineChannelGradMaker (affine_channel_op.cc) feeds X, Scale and Out@GRAD, while
  // pd_op.affine_channel_grad takes bias too, for nothing: AffineChannelGradKernel
  // (paddle/phi/kernels/cpu/affine_channel_grad_kernel.cc) never reads it. Scale, of bias's shape
  // and dtype, stands in when the legacy op has no Bias.
  if (ctx.HasInput("Bias")) return TranslateByTable(ctx);
  IRM_ASSIGN_OR_RETURN(const newir::OpInfo* info, ctx.LookUp("affine_channel_grad", false));
  IRM_ASSIGN_OR_RETURN(Value * scale, ctx.Input("Scale"));
  return EmitByTable(ctx, *info, {.operands = {{"bias", scale}}}).status();
}

}  // namespace irm::translator
