// Types and attributes in PIR JSON, both ways: `{"#": "<dialect id>.<name>", "D": data}` objects
// ("0.t_dtensor", "1.a_intarray", "4.a_tensor_dist"), `VD` for special floats, `{"#": "NULL"}`
// for a null type or attribute. Shared by the program writer and reader; internal to them.
#pragma once

#include "newir/attributes.h"
#include "newir/pir_json_access.h"
#include "newir/pir_json_out.h"
#include "newir/types.h"

namespace irm::newir::pir_json {

// {"#": "NULL"}.
void WriteNull(JsonOut& out);
// Never fail: what cannot be written (null) is written as NULL.
void WriteType(JsonOut& out, const Type& type);
void WriteAttr(JsonOut& out, const Attribute& attr);

// Reads types and attributes, checking every element (names, dialect ids, `D` arities, value
// ranges, dist-type consistency).
class AttrReader : public JsonAccess {
 public:
  using JsonAccess::JsonAccess;

  StatusOr<Type> ReadType(const json& j, const Ptr& ptr) const;
  StatusOr<Attribute> ReadAttr(const json& j, const Ptr& ptr) const;

 private:
  // A type's or attribute's "#": "1.a_intarray" has dialect "pd_op" and local name
  // "a_intarray"; "NULL" has no dialect. The views point into the document.
  struct Name {
    std::string_view dialect;
    std::string_view local;
    std::string_view full;
  };
  StatusOr<Name> ReadName(const json& j, const Ptr& ptr) const;
  StatusOr<ProcessMesh> MeshData(const json& j, const Ptr& ptr, std::string_view full) const;
  StatusOr<LoD> ReadLoD(const json& j, const Ptr& ptr) const;
  StatusOr<DataLayout> Layout(const json& j, const Ptr& ptr) const;
  StatusOr<Type> Dtype(const json& j, const Ptr& ptr) const;
  StatusOr<double> FloatValue(const json& j, const Ptr& ptr) const;
  StatusOr<ProcessMesh> Mesh(const json& j, const Ptr& ptr) const;
  StatusOr<DataType> ReadDataType(const json& j, const Ptr& ptr) const;
  StatusOr<Attribute> TensorDist(const json& t, const Ptr& d) const;
};

}  // namespace irm::newir::pir_json
