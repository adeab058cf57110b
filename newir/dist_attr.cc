// Printing and hashing of the distributed-tensor metadata structs.
#include "newir/dist_attr.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "newir/hash.h"
#include "newir/text_print.h"

namespace irm::newir {

const char* ReduceTypeName(ReduceType type) {
  switch (type) {
    case ReduceType::kSum:
      return "SUM";
    case ReduceType::kMax:
      return "MAX";
    case ReduceType::kMin:
      return "MIN";
    case ReduceType::kProd:
      return "PRODUCT";
    case ReduceType::kAvg:
      return "AVG";
    case ReduceType::kAny:
      return "ANY";
    case ReduceType::kAll:
      return "ALL";
  }
  return "UNKNOWN";
}

std::optional<ReduceType> ReduceTypeFromInt(int64_t value) {
  if (value < 0 || value >= kNumReduceTypes) return std::nullopt;
  return static_cast<ReduceType>(value);
}

size_t ProcessMesh::Hash() const {
  size_t h = HashRange(0, shape);
  h = HashRange(h, process_ids);
  return HashRange(h, dim_names);
}

std::string ProcessMesh::ToString() const { return ProcessMeshText(*this); }

std::string Placement::ToString() const { return PlacementText(*this); }

size_t TensorDistAttr::Hash() const {
  size_t h = HashRange(mesh.Hash(), dims_mapping);
  for (const auto& [dim, reduce] : partial_status) {
    h = HashCombine(HashCombine(h, HashOf(dim)), static_cast<size_t>(reduce));
  }
  if (placements) {
    for (const Placement& p : *placements) {
      h = HashCombine(h, static_cast<size_t>(p.kind) * 31 + static_cast<size_t>(p.dim) * 7 +
                             static_cast<size_t>(p.reduce));
    }
  }
  return h;
}

std::string TensorDistAttr::ToString() const { return TensorDistText(*this); }

}  // namespace irm::newir
