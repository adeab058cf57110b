// Special handlers (special_ops.h).
#include "translator/special_ops.h"

#include <charconv>
#include <string>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "translator/legacy_types.h"
#include "translator/op_context.h"

namespace irm::translator {
namespace {

using newir::Attribute;
using newir::DataType;
using newir::Type;
using newir::Value;

// The target shape of a reshape of a tensor with `from` dims to `to` dims: dynamic dims of `to`
// become 0 (copy the input's dim) where `from` has a dynamic dim at the same place, and one
// other may become -1 (inferred).
StatusOr<std::vector<int64_t>> ReshapeTarget(OpContext& ctx, const std::vector<int64_t>& from,
                                             const std::vector<int64_t>& to) {
  std::vector<int64_t> shape = to;
  bool inferred = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] != -1) continue;
    if (i < from.size() && from[i] == -1) {
      shape[i] = 0;
    } else if (!inferred) {
      inferred = true;
    } else {
      return ctx.Error(fmt::format("cannot reshape [{}] to [{}]: more than one dim is unknown",
                                   fmt::join(from, ", "), fmt::join(to, ", ")));
    }
  }
  return shape;
}

// pd_op.reshape of `x` to a tensor of `to` dims (and x's element type).
StatusOr<Value*> Reshape(OpContext& ctx, Value* x, const std::vector<int64_t>& to) {
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ReshapeTarget(ctx, x->type().dims(), to));
  Value* shape_value = ctx.FullIntArray(shape);
  return ctx
      .Emit("pd_op.reshape", {x, shape_value}, {Type::DenseTensor(x->type().dtype(), to), Type()})
      ->result(0);
}

// Y's dims padded for numpy-style broadcasting against X under the legacy `axis`, or nullopt when
// none is needed (axis -1, or Y already aligned with X's trailing dims).
StatusOr<std::optional<std::vector<int64_t>>> AlignedDims(OpContext& ctx, const Type& x,
                                                          const Type& y) {
  const int32_t axis = ctx.AttrOr<int32_t>("axis", -1);
  const auto x_rank = static_cast<int64_t>(x.dims().size());
  const auto y_rank = static_cast<int64_t>(y.dims().size());
  if (axis == -1 || axis == x_rank - y_rank) return std::optional<std::vector<int64_t>>();
  const int64_t trailing = x_rank - axis - y_rank;
  if (axis < 0 || trailing < 0) {
    return ctx.Error(
        fmt::format("axis {} does not place Y (rank {}) inside X (rank {})", axis, y_rank, x_rank));
  }
  std::vector<int64_t> dims = y.dims();
  dims.insert(dims.end(), static_cast<size_t>(trailing), 1);
  return std::optional<std::vector<int64_t>>(std::move(dims));
}

}  // namespace

Status TranslateFeed(OpContext& ctx) {
  const std::vector<std::string> outs = ctx.OutputNames("Out");
  if (outs.size() != 1) return ctx.Error("feed must write one var");
  IRM_ASSIGN_OR_RETURN(const oldir::Var var, ctx.VarOf(outs[0]));
  IRM_ASSIGN_OR_RETURN(Type type, ctx.TypeOfName(outs[0]));
  newir::Operation* op = ctx.Emit("pd_op.data", {}, {type}, DataAttributes(var));
  ctx.Bind(outs[0], op->result(0));
  return Status::Ok();
}

Status TranslateFetch(OpContext& ctx) {
  const std::vector<std::string> ins = ctx.InputNames("X");
  if (ins.size() != 1) return ctx.Error("fetch must read one var");
  IRM_ASSIGN_OR_RETURN(Value * x, ctx.ValueOf(ins[0]));
  ctx.Emit("pd_op.fetch", {x}, {x->type()},
           {{"name", Attribute::String(ins[0])},
            {"col", Attribute::Int32(ctx.AttrOr<int32_t>("col", 0))}});
  return Status::Ok();
}

Status TranslateFillConstant(OpContext& ctx) {
  for (const char* slot : {"ValueTensor", "ShapeTensor", "ShapeTensorList"}) {
    if (ctx.HasInput(slot)) {
      return Status(
          StatusCode::kUnimplemented, ctx.location(),
          fmt::format("fill_constant with {} (pd_op.full_with_tensor) is not supported", slot));
    }
  }
  const std::vector<std::string> outs = ctx.OutputNames("Out");
  if (outs.size() != 1) return ctx.Error("fill_constant must write one var");
  IRM_ASSIGN_OR_RETURN(Type type, ctx.TypeOfName(outs[0]));
  // str_value, when set, holds the value exactly (an int64 a float cannot).
  double value = ctx.AttrOr<float>("value", 0.0f);
  if (const std::string text = ctx.AttrOr<std::string>("str_value", ""); !text.empty()) {
    try {
      value = std::stod(text);
    } catch (const std::exception&) {
      return ctx.Error(fmt::format("str_value '{}' is not a number", text));
    }
  }
  std::vector<int64_t> shape = ctx.AttrOr<std::vector<int64_t>>("shape", {});
  if (shape.empty()) {
    const std::vector<int32_t> ints = ctx.AttrOr<std::vector<int32_t>>("shape", {});
    shape.assign(ints.begin(), ints.end());
  }
  const newir::Place place = ctx.AttrOr<bool>("force_cpu", false)
                                 ? newir::Place::Of(newir::AllocationType::kCpu)
                                 : newir::Place{};
  const DataType dtype =
      DataTypeOfVarType(ctx.AttrOr<int32_t>("dtype", 5)).value_or(DataType::kFloat32);
  newir::Operation* op =
      ctx.Emit("pd_op.full", {}, {type}, FullAttributes(shape, value, dtype, place));
  ctx.Bind(outs[0], op->result(0));
  return Status::Ok();
}

Status TranslateAssign(OpContext& ctx) {
  const std::vector<std::string> ins = ctx.InputNames("X");
  const std::vector<std::string> outs = ctx.OutputNames("Out");
  if (ins.size() != 1 || outs.size() != 1) return ctx.Error("assign must copy one var to one var");
  IRM_ASSIGN_OR_RETURN(Value * x, ctx.ValueOf(ins[0]));
  // Writing over a var that already has a value copies into it (Paddle's assign_out_).
  const bool exists = ins[0] != outs[0] && (ctx.scope().Find(outs[0]) != nullptr ||
                                            ctx.state().externals.FindLocal(outs[0]) != nullptr);
  newir::Operation* op;
  if (exists) {
    IRM_ASSIGN_OR_RETURN(Value * output, ctx.ValueOf(outs[0]));
    op = ctx.Emit("pd_op.assign_out_", {x, output}, {output->type()});
  } else {
    IRM_ASSIGN_OR_RETURN(Type type, ctx.TypeOfName(outs[0]));
    op = ctx.Emit("pd_op.assign", {x}, {type});
  }
  ctx.Bind(outs[0], op->result(0));
  return Status::Ok();
}

Status TranslateAssignValue(OpContext& ctx) {
  const std::vector<std::string> outs = ctx.OutputNames("Out");
  if (outs.size() != 1) return ctx.Error("assign_value must write one var");
  IRM_ASSIGN_OR_RETURN(Type type, ctx.TypeOfName(outs[0]));
  const int32_t code = ctx.AttrOr<int32_t>("dtype", -1);
  const std::optional<DataType> dtype = DataTypeOfVarType(code);
  if (!dtype) return ctx.Error(fmt::format("dtype {} is not an element type", code));
  // The values live in the list of the dtype (or in `values`, Paddle 3.x's typed scalars).
  std::vector<Attribute> values;
  auto add = [&](newir::ScalarValue v) { values.push_back(Attribute::Scalar(std::move(v))); };
  if (ctx.HasAttr("values")) {
    const std::vector<oldir::proto::Scalar> scalars =
        ctx.AttrOr<std::vector<oldir::proto::Scalar>>("values", {});
    StatusOr<Attribute> mirrored = ConvertAttr(scalars, {.kind = newir::AttrKind::kNull});
    if (mirrored.ok() && mirrored->AsArray() != nullptr && !mirrored->AsArray()->empty()) {
      values.assign(mirrored->AsArray()->begin(), mirrored->AsArray()->end());
    }
  }
  if (values.empty()) {
    switch (*dtype) {
      case DataType::kBool:
        for (int32_t v : ctx.AttrOr<std::vector<int32_t>>("bool_values", {})) add({*dtype, v != 0});
        break;
      case DataType::kInt32:
        for (int32_t v : ctx.AttrOr<std::vector<int32_t>>("int32_values", {})) {
          add({*dtype, static_cast<int64_t>(v)});
        }
        break;
      case DataType::kInt64:
        for (int64_t v : ctx.AttrOr<std::vector<int64_t>>("int64_values", {})) add({*dtype, v});
        break;
      case DataType::kFloat32:
        for (float v : ctx.AttrOr<std::vector<float>>("fp32_values", {})) {
          add({*dtype, static_cast<double>(v)});
        }
        break;
      case DataType::kFloat64:
        for (double v : ctx.AttrOr<std::vector<double>>("fp64_values", {})) add({*dtype, v});
        break;
      default:
        return ctx.Error(
            fmt::format("assign_value of {} is not supported", newir::DataTypeName(*dtype)));
    }
  }
  std::vector<Attribute> shape;
  for (int32_t d : ctx.AttrOr<std::vector<int32_t>>("shape", {})) {
    shape.push_back(Attribute::Int32(d));
  }
  newir::Operation* op = ctx.Emit("pd_op.assign_value", {}, {type},
                                  {{"shape", Attribute::Array(std::move(shape))},
                                   {"dtype", Attribute::DataTypeAttr(*dtype)},
                                   {"values", Attribute::Array(std::move(values))},
                                   {"place", Attribute::PlaceAttr(newir::Place{})}});
  ctx.Bind(outs[0], op->result(0));
  return Status::Ok();
}

Status TranslateElementwise(OpContext& ctx) {
  IRM_ASSIGN_OR_RETURN(Value * x, ctx.Input("X"));
  IRM_ASSIGN_OR_RETURN(Value * y, ctx.Input("Y"));
  IRM_ASSIGN_OR_RETURN(auto aligned, AlignedDims(ctx, x->type(), y->type()));
  if (aligned) {
    IRM_ASSIGN_OR_RETURN(y, Reshape(ctx, y, *aligned));
  }
  IRM_ASSIGN_OR_RETURN(const newir::OpInfo* info,
                       ctx.LookUp(ctx.row().new_op, ctx.WritesAnInput()));
  return EmitByTable(ctx, *info, {.operands = {{"y", y}}}).status();
}

Status TranslateElementwiseGrad(OpContext& ctx) {
  IRM_ASSIGN_OR_RETURN(Value * x, ctx.Input("X"));
  IRM_ASSIGN_OR_RETURN(Value * y, ctx.Input("Y"));
  const Type y_type = y->type();
  IRM_ASSIGN_OR_RETURN(auto aligned, AlignedDims(ctx, x->type(), y_type));
  TableOverrides overrides{.attrs = {{"axis", Attribute::Int32(-1)}}};
  if (aligned) {
    IRM_ASSIGN_OR_RETURN(y, Reshape(ctx, y, *aligned));
    overrides.operands.emplace_back("y", y);
    overrides.result_types.emplace_back("y_grad", y->type());
  }
  IRM_ASSIGN_OR_RETURN(const newir::OpInfo* info, ctx.LookUp(ctx.row().new_op, false));
  IRM_ASSIGN_OR_RETURN(newir::Operation * op, EmitByTable(ctx, *info, overrides));
  const std::vector<std::string> y_grad = ctx.OutputNames("Y@GRAD");
  if (aligned && !y_grad.empty()) {
    // y_grad has the padded dims; the legacy Y@GRAD has Y's.
    IRM_ASSIGN_OR_RETURN(Value * back, Reshape(ctx, op->result(1), y_type.dims()));
    ctx.Bind(y_grad[0], back);
  }
  return Status::Ok();
}

Status TranslateReduce(OpContext& ctx) {
  // reduce_all reduces every dim: the new ops say so with an empty axis.
  std::vector<int32_t> dims = ctx.AttrOr<std::vector<int32_t>>("dim", {0});
  if (ctx.AttrOr<bool>("reduce_all", false)) dims.clear();
  const std::vector<int64_t> axis(dims.begin(), dims.end());
  IRM_ASSIGN_OR_RETURN(const newir::OpInfo* info, ctx.LookUp(ctx.row().new_op, false));
  TableOverrides overrides;
  bool axis_is_operand = false;
  for (const newir::OperandSpec& spec : info->operands) axis_is_operand |= spec.name == "axis";
  if (axis_is_operand) {
    overrides.operands.emplace_back("axis", ctx.FullIntArray(axis));
  } else {
    overrides.attrs.emplace_back("axis", Attribute::IntArrayAttr(axis));
  }
  return EmitByTable(ctx, *info, overrides).status();
}

Status TranslateSplit(OpContext& ctx) {
  const int32_t num = ctx.AttrOr<int32_t>("num", 0);
  Value* axis;
  if (ctx.HasInput("AxisTensor")) {
    IRM_ASSIGN_OR_RETURN(axis, ctx.Input("AxisTensor"));
  } else {
    axis = ctx.FullScalar(ctx.AttrOr<int32_t>("axis", 0), DataType::kInt32);
  }
  TableOverrides overrides{.operands = {{"axis", axis}}};
  if (num > 0) {
    IRM_ASSIGN_OR_RETURN(const newir::OpInfo* info, ctx.LookUp("split_with_num", false));
    return EmitByTable(ctx, *info, overrides).status();
  }
  Value* sections;
  if (ctx.HasInput("SectionsTensorList")) {
    IRM_ASSIGN_OR_RETURN(std::vector<Value*> items, ctx.Inputs("SectionsTensorList"));
    sections = ctx.Combine(items);
  } else {
    const std::vector<int32_t> s = ctx.AttrOr<std::vector<int32_t>>("sections", {});
    sections = ctx.FullIntArray(std::vector<int64_t>(s.begin(), s.end()));
  }
  overrides.operands.emplace_back("sections", sections);
  IRM_ASSIGN_OR_RETURN(const newir::OpInfo* info, ctx.LookUp("split", false));
  return EmitByTable(ctx, *info, overrides).status();
}

Status TranslateTrilTriu(OpContext& ctx) {
  const bool lower = ctx.AttrOr<bool>("lower", true);
  const bool grad = ctx.op().type().ends_with("_grad");
  const std::string name = fmt::format("{}{}", lower ? "tril" : "triu", grad ? "_grad" : "");
  IRM_ASSIGN_OR_RETURN(const newir::OpInfo* info, ctx.LookUp(name, !grad && ctx.WritesAnInput()));
  return EmitByTable(ctx, *info).status();
}

Status TranslateReshapeGrad(OpContext& ctx) {
  // The new IR has no XShape: X@GRAD is Out@GRAD reshaped to X's dims, which X@GRAD declares.
  const std::vector<std::string> outs = ctx.OutputNames("X@GRAD");
  if (outs.empty()) return Status::Ok();
  IRM_ASSIGN_OR_RETURN(Value * out_grad, ctx.Input("Out@GRAD"));
  IRM_ASSIGN_OR_RETURN(Type type, ctx.TypeOfName(outs[0]));
  IRM_ASSIGN_OR_RETURN(Value * x_grad, Reshape(ctx, out_grad, type.dims()));
  ctx.Bind(outs[0], x_grad);
  return Status::Ok();
}

Status TranslateSetValue(OpContext& ctx) {
  if (ctx.HasInput("ValueTensor")) {
    IRM_ASSIGN_OR_RETURN(const newir::OpInfo* info,
                         ctx.LookUp("set_value_with_tensor", ctx.WritesAnInput()));
    return EmitByTable(ctx, *info).status();
  }
  // The constant: Paddle 3.x's `values` when non-empty, else the first non-empty typed list in
  // the order of phi's argument mapping (set_value_sig.cc), each element a Scalar of its type.
  std::vector<Attribute> values;
  if (ctx.HasAttr("values")) {
    const std::vector<oldir::proto::Scalar> scalars =
        ctx.AttrOr<std::vector<oldir::proto::Scalar>>("values", {});
    StatusOr<Attribute> mirrored = ConvertAttr(scalars, {.kind = newir::AttrKind::kNull});
    if (mirrored.ok() && mirrored->AsArray() != nullptr) {
      values.assign(mirrored->AsArray()->begin(), mirrored->AsArray()->end());
    }
  }
  auto add = [&](DataType dtype, std::variant<bool, int64_t, double> v) {
    values.push_back(Attribute::Scalar({dtype, v}));
  };
  if (values.empty()) {
    for (float v : ctx.AttrOr<std::vector<float>>("fp32_values", {})) {
      add(DataType::kFloat32, static_cast<double>(v));
    }
  }
  if (values.empty()) {
    for (double v : ctx.AttrOr<std::vector<double>>("fp64_values", {})) add(DataType::kFloat64, v);
  }
  if (values.empty()) {
    for (int32_t v : ctx.AttrOr<std::vector<int32_t>>("int32_values", {})) {
      add(DataType::kInt32, static_cast<int64_t>(v));
    }
  }
  if (values.empty()) {
    for (int64_t v : ctx.AttrOr<std::vector<int64_t>>("int64_values", {})) {
      add(DataType::kInt64, v);
    }
  }
  if (values.empty()) {
    for (int32_t v : ctx.AttrOr<std::vector<int32_t>>("bool_values", {})) {
      add(DataType::kBool, v != 0);
    }
  }
  if (values.empty()) {
    for (float v : ctx.AttrOr<std::vector<float>>("fp16_values", {})) {
      add(DataType::kFloat16, static_cast<double>(v));
    }
  }
  if (values.empty()) {
    return ctx.Error("set_value has no ValueTensor and no values");
  }
  IRM_ASSIGN_OR_RETURN(const newir::OpInfo* info, ctx.LookUp("set_value", ctx.WritesAnInput()));
  return EmitByTable(ctx, *info, {.attrs = {{"values", Attribute::Array(std::move(values))}}})
      .status();
}

}  // namespace irm::translator
