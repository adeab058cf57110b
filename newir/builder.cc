// Builder op creation.
#include "newir/builder.h"

namespace irm::newir {

Operation* Builder::Create(std::string_view name, const std::vector<Value*>& operands,
                           const std::vector<Type>& result_types, AttributeMap attributes,
                           size_t num_regions) {
  const OpInfo* info = registry_->Lookup(name);
  return Insert(
      Operation::Create(name, operands, result_types, std::move(attributes), num_regions, info));
}

Operation* Builder::Create(const OpInfo& info, const std::vector<Value*>& operands,
                           const std::vector<Type>& result_types, AttributeMap attributes,
                           size_t num_regions) {
  return Insert(Operation::Create(info.name, operands, result_types, std::move(attributes),
                                  num_regions, &info));
}

}  // namespace irm::newir
