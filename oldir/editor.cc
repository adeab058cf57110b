// Implementation of the op and var editors.
#include "oldir/editor.h"

namespace irm::oldir {
namespace {

proto::OpDesc::Var* FindOrAddSlot(google::protobuf::RepeatedPtrField<proto::OpDesc::Var>* slots,
                                  std::string_view slot) {
  for (proto::OpDesc::Var& v : *slots) {
    if (v.parameter() == slot) return &v;
  }
  proto::OpDesc::Var* v = slots->Add();
  v->set_parameter(std::string(slot));
  return v;
}

void SetArguments(proto::OpDesc::Var* slot, std::vector<std::string> names) {
  slot->clear_arguments();
  for (std::string& name : names) slot->add_arguments(std::move(name));
}

}  // namespace

OpEditor& OpEditor::SetType(std::string type) {
  desc_->set_type(std::move(type));
  return *this;
}

OpEditor& OpEditor::SetInput(std::string_view slot, std::vector<std::string> names) {
  SetArguments(FindOrAddSlot(desc_->mutable_inputs(), slot), std::move(names));
  return *this;
}

OpEditor& OpEditor::SetOutput(std::string_view slot, std::vector<std::string> names) {
  SetArguments(FindOrAddSlot(desc_->mutable_outputs(), slot), std::move(names));
  return *this;
}

OpEditor& OpEditor::SetAttr(std::string_view name, const AttrValue& value) {
  proto::OpDesc::Attr* target = nullptr;
  // The first attr of that name: the one Op::FindAttr reads, should a malformed op have two.
  for (proto::OpDesc::Attr& attr : *desc_->mutable_attrs()) {
    if (attr.name() == name) {
      target = &attr;
      break;
    }
  }
  if (target == nullptr) {
    target = desc_->add_attrs();
    target->set_name(std::string(name));
  }
  WriteAttrValue(value, target);
  return *this;
}

OpEditor& OpEditor::RemoveAttr(std::string_view name) {
  auto* attrs = desc_->mutable_attrs();
  for (int i = 0; i < attrs->size(); ++i) {
    if (attrs->Get(i).name() == name) {
      attrs->DeleteSubrange(i, 1);
      break;
    }
  }
  return *this;
}

VarEditor& VarEditor::SetDenseTensor(proto::VarType::Type dtype, const std::vector<int64_t>& dims,
                                     int32_t lod_level) {
  proto::VarType* type = desc_->mutable_type();
  type->Clear();
  type->set_type(proto::VarType::DENSE_TENSOR);
  proto::VarType::DenseTensorDesc* dense = type->mutable_dense_tensor();
  dense->mutable_tensor()->set_data_type(dtype);
  for (int64_t d : dims) dense->mutable_tensor()->add_dims(d);
  if (lod_level != 0) dense->set_legacy_lod_level(lod_level);
  return *this;
}

VarEditor& VarEditor::SetType(proto::VarType::Type type) {
  desc_->mutable_type()->Clear();
  desc_->mutable_type()->set_type(type);
  return *this;
}

VarEditor& VarEditor::SetPersistable(bool value) {
  desc_->set_persistable(value);
  return *this;
}

VarEditor& VarEditor::SetStopGradient(bool value) {
  desc_->set_stop_gradient(value);
  return *this;
}

VarEditor& VarEditor::SetIsParameter(bool value) {
  desc_->set_is_parameter(value);
  return *this;
}

VarEditor& VarEditor::SetNeedCheckFeed(bool value) {
  desc_->set_need_check_feed(value);
  return *this;
}

}  // namespace irm::oldir
