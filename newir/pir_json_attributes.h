// Types and attributes in PIR JSON, both ways: `{"#": "<dialect id>.<name>", "D": data}` objects
// ("0.t_dtensor", "1.a_intarray", "4.a_tensor_dist"), `VD` for special floats, `{"#": "NULL"}`
// for a null type or attribute. Shared by the program writer and reader; internal to them.
#pragma once

#include "newir/attributes.h"
#include "newir/pir_json_access.h"
#include "newir/types.h"

namespace irm::newir::pir_json {

// {"#": "NULL"}.
json NullJson();
// Never fail: what cannot be written (null) is written as NULL.
json TypeToJson(const Type& type);
json AttrToJson(const Attribute& attr);

// Reads types and attributes, checking every element (names, dialect ids, `D` arities, value
// ranges, dist-type consistency).
class AttrReader : public JsonAccess {
 public:
  using JsonAccess::JsonAccess;

  StatusOr<Type> ReadType(const json& j, const Ptr& ptr) const;
  StatusOr<Attribute> ReadAttr(const json& j, const Ptr& ptr) const;

 private:
  // Splits "1.a_intarray" into its dialect ("pd_op") and local name; "NULL" has no dialect.
  StatusOr<std::pair<std::string_view, std::string>> Name(const json& j, const Ptr& ptr) const;
  StatusOr<LoD> ReadLoD(const json& j, const Ptr& ptr) const;
  StatusOr<DataLayout> Layout(const json& j, const Ptr& ptr) const;
  StatusOr<Type> Dtype(const json& j, const Ptr& ptr) const;
  StatusOr<double> FloatValue(const json& j, const Ptr& ptr) const;
  StatusOr<ProcessMesh> Mesh(const json& j, const Ptr& ptr) const;
  StatusOr<DataType> ReadDataType(const json& j, const Ptr& ptr) const;
  StatusOr<Attribute> TensorDist(const json& t, const Ptr& d) const;
};

}  // namespace irm::newir::pir_json
