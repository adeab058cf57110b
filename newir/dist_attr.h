// Distributed-tensor metadata of Paddle's `pd_dist` dialect as plain value structs: the process
// mesh, how a tensor is laid out over it (dims_mapping, partial status, placements) and reduce
// types. Types (DistDenseTensorType) and attributes (TensorDist, OperationDist) both wrap these, so
// they live apart from either.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace irm::newir {

// phi::ReduceType; the numbers are what JSON files store.
enum class ReduceType : int32_t {
  kSum = 0,
  kMax = 1,
  kMin = 2,
  kProd = 3,
  kAvg = 4,
  kAny = 5,
  kAll = 6,
};
inline constexpr int32_t kNumReduceTypes = 7;

// "SUM", "MAX", "MIN", "PRODUCT", "AVG", "ANY", "ALL" as Paddle prints them.
const char* ReduceTypeName(ReduceType type);
std::optional<ReduceType> ReduceTypeFromInt(int64_t value);

struct ProcessMesh {
  std::vector<int64_t> shape;
  std::vector<int64_t> process_ids;
  std::vector<std::string> dim_names;

  bool operator==(const ProcessMesh&) const = default;
  size_t Hash() const;
  // "mesh_shape:[2,2],process_ids:[0,1,2,3]", then our ",dim_names:[\"x\",\"y\"]" when there are
  // names (Paddle does not print them; text_print.h).
  std::string ToString() const;
};

// One entry of a placements list: Shard(dim=d), Replicate() or Partial(reduce_type=T).
struct Placement {
  enum class Kind { kReplicate, kShard, kPartial };
  Kind kind = Kind::kReplicate;
  int64_t dim = 0;                       // kShard only
  ReduceType reduce = ReduceType::kSum;  // kPartial only

  static Placement Replicate() { return {}; }
  static Placement Shard(int64_t dim) { return {Kind::kShard, dim, ReduceType::kSum}; }
  static Placement Partial(ReduceType reduce) { return {Kind::kPartial, 0, reduce}; }

  bool operator==(const Placement&) const = default;
  std::string ToString() const;
};

// TensorDistAttribute: dims_mapping[i] is the mesh dim tensor dim i is sharded over (-1: not
// sharded); partial_status maps a mesh dim to the pending reduction along it.
struct TensorDistAttr {
  ProcessMesh mesh;
  std::vector<int64_t> dims_mapping;
  std::map<int64_t, ReduceType> partial_status;
  std::optional<std::vector<Placement>> placements;

  bool operator==(const TensorDistAttr&) const = default;
  size_t Hash() const;
  // "mesh_shape:[2],process_ids:[0,1],dims_mappings:[0,-1]" then ", partial(0,SUM),partial(1,AVG)"
  // and ", placements:[Shard(dim=0), Replicate()]" when set (dist_dialect.cc's form; text_print.h).
  std::string ToString() const;
};

}  // namespace irm::newir
