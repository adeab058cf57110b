// Printing and hashing of the distributed-tensor metadata structs.
#include "newir/dist_attr.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "newir/hash.h"

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

std::string ProcessMesh::ToString() const {
  return fmt::format("mesh_shape:[{}],process_ids:[{}]", fmt::join(shape, ","),
                     fmt::join(process_ids, ","));
}

std::string Placement::ToString() const {
  switch (kind) {
    case Kind::kReplicate:
      return "Replicate()";
    case Kind::kShard:
      return fmt::format("Shard(dim={})", dim);
    case Kind::kPartial:
      return fmt::format("Partial(reduce_type={})", ReduceTypeName(reduce));
  }
  return "?";
}

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

std::string TensorDistAttr::ToString() const {
  std::string out =
      fmt::format("{},dims_mappings:[{}]", mesh.ToString(), fmt::join(dims_mapping, ","));
  if (!partial_status.empty()) {
    out += ", partial(";
    bool first = true;
    for (const auto& [dim, reduce] : partial_status) {
      if (!first) out += ",";
      first = false;
      out += fmt::format("{},{}", dim, ReduceTypeName(reduce));
    }
    out += ")";
  }
  if (placements) {
    std::vector<std::string> items;
    for (const Placement& p : *placements) items.push_back(p.ToString());
    out += fmt::format(", placements:[{}]", fmt::join(items, ", "));
  }
  return out;
}

}  // namespace irm::newir
