// The reshape SPMD rule (spmd_rules.h, ReshapeSpmd): Paddle's dim_trans machinery
// (paddle/phi/infermeta/spmd_rules/dim_trans.cc, MakeReshapeDimTrans and InferFromDimTrans)
// reduced to what it decides: x's dims and the output's dims are cut into groups of equal
// product, and each group passes on at most the sharding of its first input dim.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "newir/auto_parallel/spmd_rule_notation.h"
#include "newir/auto_parallel/spmd_rules.h"

namespace irm::newir {
namespace {

// Input dims [in_begin, in_end) become output dims [out_begin, out_end).
struct DimGroup {
  size_t in_begin = 0, in_end = 0, out_begin = 0, out_end = 0;
};

Status Mismatch(const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
  return spmd::Invalid(
      fmt::format("cannot reshape [{}] to [{}]", fmt::join(in, ","), fmt::join(out, ",")));
}

// The groups of MakeReshapeDimTrans.
StatusOr<std::vector<DimGroup>> Groups(const std::vector<int64_t>& in,
                                       const std::vector<int64_t>& out) {
  std::vector<DimGroup> groups;
  size_t i = 0, j = 0;
  while (true) {
    // A dim of size 1 facing one of size 1 keeps itself (and its sharding); others are left out.
    if (i < in.size() && j < out.size() && in[i] == 1 && out[j] == 1) {
      groups.push_back({i, i + 1, j, j + 1});
      ++i;
      ++j;
      continue;
    }
    while (i < in.size() && in[i] == 1) ++i;
    while (j < out.size() && out[j] == 1) ++j;
    if (i == in.size() && j == out.size()) break;
    if (i == in.size() || j == out.size()) return Mismatch(in, out);
    DimGroup g{i, i + 1, j, j + 1};
    if (in[i] < 0 || out[j] < 0) {
      // A dynamic dim can only stay itself.
      if (in[i] >= 0 || out[j] >= 0) return Mismatch(in, out);
    } else {
      int64_t in_size = in[i], out_size = out[j];
      while (in_size != out_size) {
        if (in_size < out_size) {
          if (g.in_end == in.size() || in[g.in_end] < 0) return Mismatch(in, out);
          in_size *= in[g.in_end++];
        } else {
          if (g.out_end == out.size() || out[g.out_end] < 0) return Mismatch(in, out);
          out_size *= out[g.out_end++];
        }
      }
    }
    groups.push_back(g);
    i = g.in_end;
    j = g.out_end;
  }
  return groups;
}

}  // namespace

StatusOr<SpmdDecision> ReshapeSpmd(const DistTensorSpec& x, const std::vector<int64_t>& out_shape) {
  IRM_RETURN_IF_ERROR(spmd::CheckRank(x, "x"));
  IRM_ASSIGN_OR_RETURN(std::vector<DimGroup> groups, Groups(x.shape, out_shape));
  const std::vector<int64_t>& src = x.dist.dims_mapping;
  std::vector<int64_t> x_mapping(src.size(), -1);
  std::vector<int64_t> out_mapping(out_shape.size(), -1);
  for (const DimGroup& g : groups) {
    const int64_t mesh_dim = src[g.in_begin];
    if (mesh_dim < 0) continue;
    const int64_t pieces = x.dist.mesh.shape[static_cast<size_t>(mesh_dim)];
    const bool one_to_one = g.in_end - g.in_begin == 1 && g.out_end - g.out_begin == 1;
    // A merged group keeps the first dim's sharding only where its pieces are whole rows of the
    // merged dim, and a split one gives it to the first output dim where that dim divides:
    // otherwise the split rule's pieces (ceil(size/n)) of the two shapes would hold other
    // elements.
    const bool first_in_divides = g.in_end - g.in_begin == 1 || x.shape[g.in_begin] % pieces == 0;
    const bool first_out_divides =
        g.out_end - g.out_begin == 1 || out_shape[g.out_begin] % pieces == 0;
    if (one_to_one || (first_in_divides && first_out_divides)) {
      x_mapping[g.in_begin] = mesh_dim;
      out_mapping[g.out_begin] = mesh_dim;
    }
  }
  return SpmdDecision{{spmd::LayoutLike(x.dist, x_mapping)},
                      {spmd::LayoutLike(x.dist, out_mapping)}};
}

}  // namespace irm::newir
