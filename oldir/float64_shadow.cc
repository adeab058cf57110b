// PromoteToFloat64 (float64_shadow.h).
#include "oldir/float64_shadow.h"

#include <string_view>

namespace irm::oldir {
namespace {

bool IsDtypeAttr(std::string_view name) {
  return name == "dtype" || name == "in_dtype" || name == "out_dtype";
}

int PromoteVar(proto::VarDesc& var) {
  proto::VarType* type = var.mutable_type();
  proto::VarType::TensorDesc* tensor = nullptr;
  if (type->has_dense_tensor()) tensor = type->mutable_dense_tensor()->mutable_tensor();
  if (type->has_selected_rows()) tensor = type->mutable_selected_rows();
  if (type->has_tensor_array()) tensor = type->mutable_tensor_array()->mutable_tensor();
  if (tensor == nullptr || tensor->data_type() != proto::VarType::FP32) return 0;
  tensor->set_data_type(proto::VarType::FP64);
  return 1;
}

int PromoteAttrs(proto::OpDesc& op) {
  int changed = 0;
  for (proto::OpDesc::Attr& attr : *op.mutable_attrs()) {
    if (IsDtypeAttr(attr.name()) && attr.type() == proto::INT && attr.i() == proto::VarType::FP32) {
      attr.set_i(proto::VarType::FP64);
      ++changed;
    }
  }
  if (op.type() != "assign_value") return changed;
  // The values follow the dtype: fp32_values -> fp64_values (the same numbers, exactly).
  for (proto::OpDesc::Attr& attr : *op.mutable_attrs()) {
    if (attr.name() != "fp32_values" || attr.type() != proto::FLOATS) continue;
    proto::OpDesc::Attr promoted;
    promoted.set_name("fp64_values");
    promoted.set_type(proto::FLOAT64S);
    for (float v : attr.floats()) promoted.add_float64s(v);
    attr = std::move(promoted);
    ++changed;
  }
  return changed;
}

}  // namespace

int PromoteToFloat64(Program& program) {
  int changed = 0;
  for (proto::BlockDesc& block : *program.mutable_desc()->mutable_blocks()) {
    for (proto::VarDesc& var : *block.mutable_vars()) changed += PromoteVar(var);
    for (proto::OpDesc& op : *block.mutable_ops()) changed += PromoteAttrs(op);
  }
  return changed;
}

}  // namespace irm::oldir
