// What the SPMD rules (spmd_rules.h) share to write their einsum notation: a layout made for a
// tensor from merged letter shardings, and the Partial status of an output that lacks a sharded
// letter. Paddle's counterparts are in paddle/phi/infermeta/spmd_rules/utils.cc (named on each).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "newir/auto_parallel/spmd_rules.h"

namespace irm::newir::spmd {

inline constexpr std::string_view kAlphabet = "abcdefghijklmnopqrstuvwxyz";

inline Status Invalid(std::string message) {
  return Status(StatusCode::kInvalid, Location{}, std::move(message));
}

// A layout on `like`'s mesh with the given dims mapping and partial status (what Paddle's
// CopyTensorDistAttrForOutput then set_dims_mapping make: the source's Partial does not carry).
inline TensorDistAttr LayoutLike(const TensorDistAttr& like, std::vector<int64_t> dims_mapping,
                                 std::map<int64_t, ReduceType> partial = {}) {
  TensorDistAttr dist;
  dist.mesh = like.mesh;
  dist.dims_mapping = std::move(dims_mapping);
  dist.partial_status = std::move(partial);
  return dist;
}

// GetDimsMappingForAxes (utils.cc): the mesh dim of each letter, -1 for '1' and unknown letters.
inline std::vector<int64_t> MappingOf(std::string_view letters, const AxisShardings& shardings) {
  std::vector<int64_t> mapping;
  for (char letter : letters) {
    auto it = shardings.find(letter);
    mapping.push_back(letter == '1' || it == shardings.end() ? -1 : it->second);
  }
  return mapping;
}

// ResoluteOutputPartialDimension (utils.cc): the mesh dims that shard a letter `out` lacks.
inline std::map<int64_t, ReduceType> PartialOutside(const AxisShardings& shardings,
                                                    std::string_view out, ReduceType reduce) {
  std::map<int64_t, ReduceType> partial;
  for (const auto& [letter, mesh_dim] : shardings) {
    if (mesh_dim != -1 && out.find(letter) == std::string_view::npos) partial[mesh_dim] = reduce;
  }
  return partial;
}

inline Status CheckRank(const DistTensorSpec& t, const char* what) {
  if (t.dist.dims_mapping.size() == t.shape.size()) return Status::Ok();
  return Status(StatusCode::kInvalid, Location{},
                std::string(what) + " has " + std::to_string(t.shape.size()) +
                    " dims but its dims_mapping has " + std::to_string(t.dist.dims_mapping.size()) +
                    " entries");
}

// An axis in [-ndim, ndim) made non-negative; -1 when out of range.
inline int64_t NormalizeAxis(int64_t axis, size_t ndim) {
  const auto n = static_cast<int64_t>(ndim);
  if (axis < 0) axis += n;
  return axis >= 0 && axis < n ? axis : -1;
}

}  // namespace irm::newir::spmd
