// Converting legacy attributes to kernel attributes (legacy_bindings.h): the widening rules of
// ConvertLegacyAttr, dtype codes, and BindLegacyAttrs, which applies a binding's attribute rules
// and hook to one op.
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "oldir/attribute.h"
#include "oldir/params_io.h"
#include "reference_runtime/legacy_bindings.h"

namespace irm::rt {
namespace {

namespace proto = oldir::proto;

const char* KindName(AttrKind kind) {
  switch (kind) {
    case AttrKind::kBool:
      return "a bool";
    case AttrKind::kInt:
      return "an int";
    case AttrKind::kFloat:
      return "a float";
    case AttrKind::kString:
      return "a string";
    case AttrKind::kInts:
      return "an int array";
    case AttrKind::kFloats:
      return "a float array";
    case AttrKind::kDType:
      return "a dtype";
  }
  return "?";
}

}  // namespace

StatusOr<AttrValue> LegacyAttrOr(const oldir::Op& op, std::string_view name, AttrKind kind,
                                 AttrValue fallback) {
  if (!op.HasAttr(name)) return fallback;
  StatusOr<oldir::AttrValue> value = op.GetAttr(name);
  if (!value.ok()) return KernelError(value.status().message());
  return ConvertLegacyAttr(name, *value, kind);
}

StatusOr<DType> DTypeFromLegacyCode(std::string_view attr, int64_t code) {
  std::optional<DType> dtype;
  if (code >= 0 && code <= INT32_MAX) {
    dtype = oldir::DTypeFromVarType(static_cast<proto::VarType::Type>(code));
  }
  if (!dtype || !IsRuntimeDType(*dtype)) {
    return KernelError(
        fmt::format("attribute '{}' holds dtype code {}, which is no runtime dtype", attr, code));
  }
  return *dtype;
}

StatusOr<AttrValue> ConvertLegacyAttr(std::string_view name, const oldir::AttrValue& value,
                                      AttrKind kind) {
  const auto scalar_double = [](const proto::Scalar& s) -> std::optional<double> {
    switch (s.type()) {
      case proto::Scalar::BOOLEAN:
        return s.b() ? 1.0 : 0.0;
      case proto::Scalar::LONG:
        return static_cast<double>(s.i());
      case proto::Scalar::FLOAT64:
        return s.r();
      default:
        return std::nullopt;
    }
  };
  std::optional<AttrValue> out;
  switch (kind) {
    case AttrKind::kBool:
      if (const bool* b = std::get_if<bool>(&value)) out = *b;
      break;
    case AttrKind::kInt:
    case AttrKind::kDType:
      if (const int32_t* i = std::get_if<int32_t>(&value)) out = int64_t{*i};
      if (const int64_t* l = std::get_if<int64_t>(&value)) out = *l;
      if (const proto::Scalar* s = std::get_if<proto::Scalar>(&value);
          s != nullptr && s->type() == proto::Scalar::LONG) {
        out = int64_t{s->i()};
      }
      if (out && kind == AttrKind::kDType) {
        IRM_ASSIGN_OR_RETURN(DType dtype, DTypeFromLegacyCode(name, std::get<int64_t>(*out)));
        out = dtype;
      }
      break;
    case AttrKind::kFloat:
      // float -> double is exact: the kernel sees the float the program holds.
      if (const float* f = std::get_if<float>(&value)) out = static_cast<double>(*f);
      if (const double* d = std::get_if<double>(&value)) out = *d;
      if (const int32_t* i = std::get_if<int32_t>(&value)) out = static_cast<double>(*i);
      if (const int64_t* l = std::get_if<int64_t>(&value)) out = static_cast<double>(*l);
      if (const proto::Scalar* s = std::get_if<proto::Scalar>(&value)) {
        if (std::optional<double> d = scalar_double(*s)) out = *d;
      }
      break;
    case AttrKind::kString:
      if (const std::string* s = std::get_if<std::string>(&value)) out = *s;
      break;
    case AttrKind::kInts:
      if (const auto* v = std::get_if<std::vector<int32_t>>(&value)) {
        out = std::vector<int64_t>(v->begin(), v->end());
      }
      if (const auto* v = std::get_if<std::vector<int64_t>>(&value)) out = *v;
      break;
    case AttrKind::kFloats: {
      std::vector<double> doubles;
      bool ok = true;
      std::visit(
          [&](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::vector<float>> ||
                          std::is_same_v<T, std::vector<double>> ||
                          std::is_same_v<T, std::vector<int32_t>> ||
                          std::is_same_v<T, std::vector<int64_t>>) {
              doubles.assign(v.begin(), v.end());
            } else if constexpr (std::is_same_v<T, std::vector<proto::Scalar>>) {
              for (const proto::Scalar& s : v) {
                std::optional<double> d = scalar_double(s);
                ok = ok && d.has_value();
                doubles.push_back(d.value_or(0.0));
              }
            } else {
              ok = false;
            }
          },
          value);
      if (ok) out = std::move(doubles);
      break;
    }
  }
  if (!out) {
    return KernelError(fmt::format("attribute '{}' is {}, which does not convert to {}", name,
                                   oldir::AttrTypeName(oldir::AttrTypeOf(value)), KindName(kind)));
  }
  return *std::move(out);
}

Status BindLegacyAttrs(const LegacyBinding& binding, const oldir::Op& op, std::string& kernel,
                       KernelAttrs& attrs) {
  kernel = std::string(binding.kernel);
  for (const AttrRule& rule : binding.attrs) {
    if (rule.legacy.empty() || !op.HasAttr(rule.legacy)) {
      if (!rule.fallback) {
        return KernelError(fmt::format("attribute '{}' is missing", rule.legacy));
      }
      attrs.Set(std::string(rule.kernel), *rule.fallback);
      continue;
    }
    IRM_ASSIGN_OR_RETURN(AttrValue value, LegacyAttrOr(op, rule.legacy, rule.kind, false));
    attrs.Set(std::string(rule.kernel), std::move(value));
  }
  if (binding.hook != nullptr) IRM_RETURN_IF_ERROR(binding.hook(op, kernel, attrs));
  return Status::Ok();
}

}  // namespace irm::rt
