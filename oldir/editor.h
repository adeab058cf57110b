// Typed edits of legacy ops and vars: the write side of the views in oldir/program.h. Editors
// wrap a mutable message; after adding or renaming vars, call Program::Reindex().
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "oldir/attribute.h"
#include "oldir/proto/framework.pb.h"

namespace irm::oldir {

class OpEditor {
 public:
  explicit OpEditor(proto::OpDesc* desc) : desc_(desc) {}

  OpEditor& SetType(std::string type);
  // Replaces the slot's arguments, creating the slot (appended) when the op has none.
  OpEditor& SetInput(std::string_view slot, std::vector<std::string> names);
  OpEditor& SetOutput(std::string_view slot, std::vector<std::string> names);
  // Replaces the attribute's type and value, or appends a new attribute.
  OpEditor& SetAttr(std::string_view name, const AttrValue& value);
  OpEditor& RemoveAttr(std::string_view name);

  proto::OpDesc* desc() { return desc_; }

 private:
  proto::OpDesc* desc_;
};

class VarEditor {
 public:
  explicit VarEditor(proto::VarDesc* desc) : desc_(desc) {}

  // Makes the var a DENSE_TENSOR of the given element type and dims.
  VarEditor& SetDenseTensor(proto::VarType::Type dtype, const std::vector<int64_t>& dims,
                            int32_t lod_level = 0);
  VarEditor& SetType(proto::VarType::Type type);  // for non-tensor vars (FEED_MINIBATCH, ...)
  VarEditor& SetPersistable(bool value);
  VarEditor& SetStopGradient(bool value);
  VarEditor& SetIsParameter(bool value);
  VarEditor& SetNeedCheckFeed(bool value);

  proto::VarDesc* desc() { return desc_; }

 private:
  proto::VarDesc* desc_;
};

}  // namespace irm::oldir
