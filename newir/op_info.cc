// The op registry.
#include "newir/op_info.h"

#include <fmt/format.h>

#include "common/builtin_registry.h"
#include "newir/dialect.h"

namespace irm::newir {

std::string_view OpInfo::dialect() const {
  const size_t dot = name.find('.');
  return dot == std::string::npos ? std::string_view() : std::string_view(name).substr(0, dot);
}

const AttrSpec* OpInfo::FindAttribute(std::string_view attr_name) const {
  for (const AttrSpec& a : attributes) {
    if (a.name == attr_name) return &a;
  }
  return nullptr;
}

const OpRegistry& OpRegistry::Global() {
  static const OpRegistry* const kRegistry =
      BuildBuiltinRegistry<OpRegistry>("op registry", RegisterAllDialects);
  return *kRegistry;
}

Status OpRegistry::Register(OpInfo info) {
  if (ops_.contains(info.name)) {
    return Status(StatusCode::kInvalid, Location{},
                  fmt::format("op '{}' is registered twice", info.name));
  }
  std::string name = info.name;
  const auto it = ops_.emplace(std::move(name), std::make_unique<OpInfo>(std::move(info))).first;
  by_name_.emplace(it->first, it->second.get());  // the key never moves: std::map nodes stay
  return Status::Ok();
}

const OpInfo* OpRegistry::Lookup(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

std::vector<const OpInfo*> OpRegistry::OpsOfDialect(std::string_view dialect) const {
  std::vector<const OpInfo*> out;
  for (const auto& [name, info] : ops_) {
    if (info->dialect() == dialect) out.push_back(info.get());
  }
  return out;
}

}  // namespace irm::newir
