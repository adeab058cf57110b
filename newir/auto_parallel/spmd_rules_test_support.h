// Test support for the SPMD rules' tests: meshes, the tensors a rule sees (DistTensorSpec), and
// what a decision gave a tensor.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

#include "newir/auto_parallel/spmd_rules.h"

namespace irm::newir::testing {

using Dims = std::vector<int64_t>;
using Partials = std::map<int64_t, ReduceType>;

inline ProcessMesh Mesh(Dims shape, Dims ids) {
  ProcessMesh mesh;
  mesh.shape = std::move(shape);
  mesh.process_ids = std::move(ids);
  return mesh;
}

inline DistTensorSpec Spec(Dims shape, const ProcessMesh& mesh, Dims mapping,
                           Partials partial = {}) {
  DistTensorSpec spec;
  spec.shape = std::move(shape);
  spec.dist.mesh = mesh;
  spec.dist.dims_mapping = std::move(mapping);
  spec.dist.partial_status = std::move(partial);
  return spec;
}

// The dims mapping a decision gave; {-99} (and a test failure) when it gave none.
inline Dims MappingOf(const std::optional<TensorDistAttr>& dist) {
  EXPECT_TRUE(dist.has_value());
  return dist ? dist->dims_mapping : Dims{-99};
}

}  // namespace irm::newir::testing
