// Legacy types and attribute values in new-IR terms (legacy_types.h).
#include "translator/legacy_types.h"

#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <fmt/format.h>

namespace irm::translator {
namespace {

namespace pf = ::paddle::framework::proto;
using newir::Attribute;
using newir::AttrKind;
using newir::DataType;

Status Cannot(const oldir::AttrValue& value, AttrKind kind) {
  return Status(StatusCode::kInvalid, Location{},
                fmt::format("a {} attribute cannot become {}",
                            oldir::AttrTypeName(oldir::AttrTypeOf(value)), AttrKindName(kind)));
}

// The integers of INT, LONG, INTS, LONGS and BOOLEAN values.
std::optional<std::vector<int64_t>> Integers(const oldir::AttrValue& value) {
  if (const auto* v = std::get_if<int32_t>(&value)) return std::vector<int64_t>{*v};
  if (const auto* v = std::get_if<int64_t>(&value)) return std::vector<int64_t>{*v};
  if (const auto* v = std::get_if<bool>(&value)) return std::vector<int64_t>{*v ? 1 : 0};
  if (const auto* v = std::get_if<std::vector<int32_t>>(&value)) {
    return std::vector<int64_t>(v->begin(), v->end());
  }
  if (const auto* v = std::get_if<std::vector<int64_t>>(&value)) return *v;
  return std::nullopt;
}

// The integer of an INT, LONG or BOOLEAN value (a single one, not a list): Integers' answer for
// them without making a vector, as most attributes converted are of this kind.
std::optional<int64_t> SingleInteger(const oldir::AttrValue& value) {
  if (const auto* v = std::get_if<int32_t>(&value)) return *v;
  if (const auto* v = std::get_if<int64_t>(&value)) return *v;
  if (const auto* v = std::get_if<bool>(&value)) return *v ? 1 : 0;
  return std::nullopt;
}

std::optional<double> Real(const oldir::AttrValue& value) {
  if (const auto* v = std::get_if<float>(&value)) return *v;
  if (const auto* v = std::get_if<double>(&value)) return *v;
  if (const auto* v = std::get_if<int32_t>(&value)) return *v;
  if (const auto* v = std::get_if<int64_t>(&value)) return static_cast<double>(*v);
  return std::nullopt;
}

newir::ScalarValue ScalarOf(const pf::Scalar& s) {
  switch (s.type()) {
    case pf::Scalar::BOOLEAN:
      return {DataType::kBool, s.b()};
    case pf::Scalar::LONG:
      return {DataType::kInt64, s.i()};
    default:  // FLOAT64 (COMPLEX128 has no ScalarValue form; its real part stands in)
      return {DataType::kFloat64, s.r()};
  }
}

template <typename T, typename Make>
Attribute ArrayOf(const std::vector<T>& items, Make make) {
  std::vector<Attribute> out;
  out.reserve(items.size());
  for (const T& item : items) out.push_back(make(item));
  return Attribute::Array(std::move(out));
}

// An Array of `element` kind from the list in `value`.
StatusOr<Attribute> ConvertArray(const oldir::AttrValue& value, AttrKind element) {
  if (const auto ints = Integers(value);
      ints && !std::holds_alternative<int32_t>(value) && !std::holds_alternative<int64_t>(value)) {
    switch (element) {
      case AttrKind::kInt32:
        for (int64_t i : *ints) {
          if (i < std::numeric_limits<int32_t>::min() || i > std::numeric_limits<int32_t>::max()) {
            return Status(StatusCode::kInvalid, Location{},
                          fmt::format("{} does not fit an int32 array element", i));
          }
        }
        return ArrayOf(*ints, [](int64_t i) { return Attribute::Int32(static_cast<int32_t>(i)); });
      case AttrKind::kInt64:
      case AttrKind::kNull:
        if (element == AttrKind::kNull && std::holds_alternative<std::vector<int32_t>>(value)) {
          return ArrayOf(*ints,
                         [](int64_t i) { return Attribute::Int32(static_cast<int32_t>(i)); });
        }
        return ArrayOf(*ints, [](int64_t i) { return Attribute::Int64(i); });
      default:
        break;
    }
  }
  if (element == AttrKind::kNull) return MirrorAttr(value);
  if (const auto* v = std::get_if<std::vector<float>>(&value)) {
    if (element == AttrKind::kFloat) return ArrayOf(*v, Attribute::Float);
    if (element == AttrKind::kDouble) {
      return ArrayOf(*v, [](float f) { return Attribute::Double(f); });
    }
  }
  if (const auto* v = std::get_if<std::vector<double>>(&value); v && element == AttrKind::kDouble) {
    return ArrayOf(*v, Attribute::Double);
  }
  if (const auto* v = std::get_if<std::vector<std::string>>(&value);
      v && element == AttrKind::kString) {
    return ArrayOf(*v, Attribute::String);
  }
  if (const auto* v = std::get_if<std::vector<bool>>(&value); v && element == AttrKind::kBool) {
    std::vector<Attribute> out;
    for (bool b : *v) out.push_back(Attribute::Bool(b));
    return Attribute::Array(std::move(out));
  }
  return Cannot(value, AttrKind::kArray);
}

}  // namespace

std::optional<DataType> DataTypeOfVarType(int code) {
  switch (code) {
    case pf::VarType::BOOL:
      return DataType::kBool;
    case pf::VarType::INT16:
      return DataType::kInt16;
    case pf::VarType::INT32:
      return DataType::kInt32;
    case pf::VarType::INT64:
      return DataType::kInt64;
    case pf::VarType::FP16:
      return DataType::kFloat16;
    case pf::VarType::FP32:
      return DataType::kFloat32;
    case pf::VarType::FP64:
      return DataType::kFloat64;
    case pf::VarType::UINT8:
      return DataType::kUInt8;
    case pf::VarType::INT8:
      return DataType::kInt8;
    case pf::VarType::BF16:
      return DataType::kBFloat16;
    case pf::VarType::COMPLEX64:
      return DataType::kComplex64;
    case pf::VarType::COMPLEX128:
      return DataType::kComplex128;
    case pf::VarType::FP8_E4M3FN:
      return DataType::kFloat8E4M3FN;
    case pf::VarType::FP8_E5M2:
      return DataType::kFloat8E5M2;
    case pf::VarType::UINT32:
      return DataType::kUInt32;
    case pf::VarType::UINT64:
      return DataType::kUInt64;
    default:
      return std::nullopt;
  }
}

std::optional<newir::Type> ScalarTypeOfVarType(int code) {
  using newir::Type;
  switch (code) {
    case pf::VarType::BOOL:
      return Type::Bool();
    case pf::VarType::INT16:
      return Type::I16();
    case pf::VarType::INT32:
      return Type::I32();
    case pf::VarType::INT64:
      return Type::I64();
    case pf::VarType::FP16:
      return Type::F16();
    case pf::VarType::FP32:
      return Type::F32();
    case pf::VarType::FP64:
      return Type::F64();
    case pf::VarType::UINT8:
      return Type::U8();
    case pf::VarType::INT8:
      return Type::I8();
    case pf::VarType::BF16:
      return Type::BF16();
    case pf::VarType::COMPLEX64:
      return Type::C64();
    case pf::VarType::COMPLEX128:
      return Type::C128();
    case pf::VarType::FP8_E4M3FN:
      return Type::F8E4M3FN();
    case pf::VarType::FP8_E5M2:
      return Type::F8E5M2();
    default:
      return std::nullopt;
  }
}

newir::Type ScalarTypeOfDataType(DataType dtype) {
  using newir::Type;
  switch (dtype) {
    case DataType::kBool:
      return Type::Bool();
    case DataType::kUInt8:
      return Type::U8();
    case DataType::kInt8:
      return Type::I8();
    case DataType::kInt16:
      return Type::I16();
    case DataType::kInt32:
      return Type::I32();
    case DataType::kInt64:
      return Type::I64();
    case DataType::kFloat16:
      return Type::F16();
    case DataType::kBFloat16:
      return Type::BF16();
    case DataType::kFloat32:
      return Type::F32();
    case DataType::kFloat64:
      return Type::F64();
    case DataType::kComplex64:
      return Type::C64();
    case DataType::kComplex128:
      return Type::C128();
    case DataType::kFloat8E4M3FN:
      return Type::F8E4M3FN();
    case DataType::kFloat8E5M2:
      return Type::F8E5M2();
    default:
      return Type::Undefined();
  }
}

StatusOr<newir::Type> TypeOfVar(const oldir::Var& var) {
  const pf::VarType::TensorDesc* tensor = var.tensor_desc();
  if (tensor == nullptr) {
    return Status(StatusCode::kUnimplemented, Location{}.AtVar(var.name()),
                  fmt::format("var '{}' of type {} has no new-IR type", var.name(),
                              pf::VarType::Type_Name(var.type())));
  }
  const std::optional<newir::Type> dtype = ScalarTypeOfVarType(tensor->data_type());
  if (!dtype) {
    return Status(StatusCode::kUnimplemented, Location{}.AtVar(var.name()),
                  fmt::format("var '{}' has element type {}, which has no new-IR type", var.name(),
                              pf::VarType::Type_Name(tensor->data_type())));
  }
  const std::span<const int64_t> dims(tensor->dims().data(), tensor->dims().size());
  switch (var.type()) {
    case pf::VarType::SELECTED_ROWS:
      return newir::Type::SelectedRows(*dtype, {dims.begin(), dims.end()});
    case pf::VarType::DENSE_TENSOR_ARRAY:
      return newir::Type::DenseTensorArray(*dtype, {dims.begin(), dims.end()});
    default:
      return newir::Type::DenseTensorOfDims(*dtype, dims);
  }
}

StatusOr<Attribute> ConvertAttr(const oldir::AttrValue& value, const newir::AttrSpec& target) {
  const std::optional<int64_t> single = SingleInteger(value);
  switch (target.kind) {
    case AttrKind::kNull:
      return MirrorAttr(value);
    case AttrKind::kBool:
      if (single) return Attribute::Bool(*single != 0);
      break;
    case AttrKind::kInt32:
      if (single) {
        const int64_t i = *single;
        if (i < std::numeric_limits<int32_t>::min() || i > std::numeric_limits<int32_t>::max()) {
          return Status(StatusCode::kInvalid, Location{},
                        fmt::format("{} does not fit an int32 attribute", i));
        }
        return Attribute::Int32(static_cast<int32_t>(i));
      }
      break;
    case AttrKind::kInt64:
      if (single) return Attribute::Int64(*single);
      break;
    case AttrKind::kFloat:
      if (const auto* f = std::get_if<float>(&value)) return Attribute::Float(*f);
      if (const auto r = Real(value)) return Attribute::Float(static_cast<float>(*r));
      break;
    case AttrKind::kDouble:
      if (const auto r = Real(value)) return Attribute::Double(*r);
      break;
    case AttrKind::kString:
      if (const auto* s = std::get_if<std::string>(&value)) return Attribute::String(*s);
      break;
    case AttrKind::kArray:
      return ConvertArray(value, target.element_kind);
    case AttrKind::kIntArray:
      if (single) return Attribute::IntArrayFrom(std::span(&*single, 1));
      if (auto ints = Integers(value)) return Attribute::IntArrayAttr(std::move(*ints));
      break;
    case AttrKind::kDataType:
      if (single) {
        if (*single < 0) return Attribute::DataTypeAttr(DataType::kUndefined);
        if (const auto dtype = DataTypeOfVarType(static_cast<int>(*single))) {
          return Attribute::DataTypeAttr(*dtype);
        }
        return Status(StatusCode::kInvalid, Location{},
                      fmt::format("{} is not a dtype code", *single));
      }
      break;
    case AttrKind::kScalar:
      if (const auto* s = std::get_if<pf::Scalar>(&value)) return Attribute::Scalar(ScalarOf(*s));
      if (const auto* f = std::get_if<float>(&value)) {
        return Attribute::Scalar({DataType::kFloat32, static_cast<double>(*f)});
      }
      if (const auto* d = std::get_if<double>(&value)) {
        return Attribute::Scalar({DataType::kFloat64, *d});
      }
      if (const auto* i = std::get_if<int32_t>(&value)) {
        return Attribute::Scalar({DataType::kInt32, static_cast<int64_t>(*i)});
      }
      if (const auto* l = std::get_if<int64_t>(&value)) {
        return Attribute::Scalar({DataType::kInt64, *l});
      }
      if (const auto* b = std::get_if<bool>(&value))
        return Attribute::Scalar({DataType::kBool, *b});
      break;
    default:
      break;
  }
  return Cannot(value, target.kind);
}

Attribute MirrorAttr(const oldir::AttrValue& value) {
  return std::visit(
      [](const auto& v) -> Attribute {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int32_t>) {
          return Attribute::Int32(v);
        } else if constexpr (std::is_same_v<T, float>) {
          return Attribute::Float(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return Attribute::String(v);
        } else if constexpr (std::is_same_v<T, std::vector<int32_t>>) {
          return ArrayOf(v, Attribute::Int32);
        } else if constexpr (std::is_same_v<T, std::vector<float>>) {
          return ArrayOf(v, Attribute::Float);
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          return ArrayOf(v, Attribute::String);
        } else if constexpr (std::is_same_v<T, bool>) {
          return Attribute::Bool(v);
        } else if constexpr (std::is_same_v<T, std::vector<bool>>) {
          std::vector<Attribute> out;
          for (bool b : v) out.push_back(Attribute::Bool(b));
          return Attribute::Array(std::move(out));
        } else if constexpr (std::is_same_v<T, oldir::BlockRef>) {
          return Attribute::Int32(v.index);
        } else if constexpr (std::is_same_v<T, int64_t>) {
          return Attribute::Int64(v);
        } else if constexpr (std::is_same_v<T, oldir::BlockRefs>) {
          return ArrayOf(v.indices, Attribute::Int32);
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          return ArrayOf(v, Attribute::Int64);
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          return ArrayOf(v, Attribute::Double);
        } else if constexpr (std::is_same_v<T, oldir::VarRef>) {
          return Attribute::String(v.name);
        } else if constexpr (std::is_same_v<T, oldir::VarRefs>) {
          return ArrayOf(v.names, Attribute::String);
        } else if constexpr (std::is_same_v<T, double>) {
          return Attribute::Double(v);
        } else if constexpr (std::is_same_v<T, pf::Scalar>) {
          return Attribute::Scalar(ScalarOf(v));
        } else {
          return ArrayOf(v, [](const pf::Scalar& s) { return Attribute::Scalar(ScalarOf(s)); });
        }
      },
      value);
}

}  // namespace irm::translator
