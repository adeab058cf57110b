// The SPMD rules of the layers a translated transformer adds to matmuls and elementwise ops
// (spmd_rules.h): layer_norm, embedding, softmax, dropout, scale, add_n, triu, transpose, concat,
// split and slice, each following the Paddle function its header names.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "newir/auto_parallel/spmd_rule_notation.h"
#include "newir/auto_parallel/spmd_rules.h"

namespace irm::newir {

using spmd::CheckRank;
using spmd::Invalid;
using spmd::kAlphabet;
using spmd::LayoutLike;
using spmd::MappingOf;
using spmd::NormalizeAxis;

namespace {

std::vector<int64_t> Unsharded(size_t rank) { return std::vector<int64_t>(rank, -1); }

// The mesh dims `mapping` shards, each as Partial(sum).
std::map<int64_t, ReduceType> SumOver(const std::vector<int64_t>& mapping) {
  std::map<int64_t, ReduceType> partial;
  for (int64_t m : mapping) {
    if (m != -1) partial[m] = ReduceType::kSum;
  }
  return partial;
}

// The letters of layer_norm's x: a letter per dim before begin_norm_axis ('1' for dims the
// flattened mean cannot hold sharded), '1' for the normalised dims.
std::string LayerNormLetters(size_t ndim, size_t begin, size_t mean_rank) {
  std::string letters(ndim, '1');
  const size_t shardable = mean_rank == begin ? begin : std::min<size_t>(begin, 1);
  for (size_t i = 0; i < shardable; ++i) letters[i] = kAlphabet[i];
  return letters;
}

StatusOr<size_t> BeginNormAxis(int64_t begin_norm_axis, size_t ndim) {
  if (begin_norm_axis < 0 || static_cast<size_t>(begin_norm_axis) > ndim) {
    return Invalid(fmt::format("begin_norm_axis {} of a {}-d x", begin_norm_axis, ndim));
  }
  return static_cast<size_t>(begin_norm_axis);
}

}  // namespace

StatusOr<SpmdDecision> LayerNormSpmd(const DistTensorSpec& x, const DistTensorSpec& scale,
                                     const DistTensorSpec& bias, int64_t begin_norm_axis,
                                     size_t mean_rank) {
  IRM_RETURN_IF_ERROR(CheckRank(x, "x"));
  IRM_ASSIGN_OR_RETURN(const size_t begin, BeginNormAxis(begin_norm_axis, x.shape.size()));
  const std::string letters = LayerNormLetters(x.shape.size(), begin, mean_rank);
  IRM_ASSIGN_OR_RETURN(AxisShardings shardings, MergeShardings({{letters, x.dist.dims_mapping}}));
  const std::vector<int64_t> x_mapping = MappingOf(letters, shardings);
  std::vector<int64_t> mean_mapping(
      x_mapping.begin(),
      x_mapping.begin() + static_cast<std::ptrdiff_t>(std::min(mean_rank, x_mapping.size())));
  SpmdDecision decision;
  decision.inputs = {LayoutLike(x.dist, x_mapping),
                     LayoutLike(scale.dist, Unsharded(scale.shape.size())),
                     LayoutLike(bias.dist, Unsharded(bias.shape.size()))};
  decision.outputs = {LayoutLike(x.dist, x_mapping), LayoutLike(x.dist, mean_mapping),
                      LayoutLike(x.dist, mean_mapping)};
  return decision;
}

StatusOr<SpmdDecision> LayerNormGradSpmd(const DistTensorSpec& x, const DistTensorSpec& scale,
                                         const DistTensorSpec& bias, const DistTensorSpec& mean,
                                         const DistTensorSpec& variance,
                                         const DistTensorSpec& out_grad, int64_t begin_norm_axis) {
  IRM_RETURN_IF_ERROR(CheckRank(x, "x"));
  IRM_RETURN_IF_ERROR(CheckRank(out_grad, "out_grad"));
  IRM_RETURN_IF_ERROR(CheckRank(mean, "mean"));
  IRM_RETURN_IF_ERROR(CheckRank(variance, "variance"));
  if (out_grad.shape.size() != x.shape.size()) {
    return Invalid(
        fmt::format("out_grad has {} dims, x {}", out_grad.shape.size(), x.shape.size()));
  }
  IRM_ASSIGN_OR_RETURN(const size_t begin, BeginNormAxis(begin_norm_axis, x.shape.size()));
  const size_t mean_rank = mean.shape.size();
  const std::string letters = LayerNormLetters(x.shape.size(), begin, mean_rank);
  const std::string mean_letters = letters.substr(0, std::min(mean_rank, letters.size()));
  if (mean_letters.size() != mean_rank || variance.shape.size() != mean_rank) {
    return Invalid("mean and variance must have the same rank, at most x's");
  }
  IRM_ASSIGN_OR_RETURN(AxisShardings shardings,
                       MergeShardings({{letters, x.dist.dims_mapping},
                                       {mean_letters, mean.dist.dims_mapping},
                                       {mean_letters, variance.dist.dims_mapping},
                                       {letters, out_grad.dist.dims_mapping}}));
  const std::vector<int64_t> x_mapping = MappingOf(letters, shardings);
  const std::vector<int64_t> mean_mapping = MappingOf(mean_letters, shardings);
  const std::map<int64_t, ReduceType> partial = SumOver(x_mapping);
  SpmdDecision decision;
  decision.inputs = {LayoutLike(x.dist, x_mapping),
                     LayoutLike(scale.dist, Unsharded(scale.shape.size())),
                     LayoutLike(bias.dist, Unsharded(bias.shape.size())),
                     LayoutLike(mean.dist, mean_mapping),
                     LayoutLike(variance.dist, mean_mapping),
                     LayoutLike(out_grad.dist, x_mapping)};
  decision.outputs = {LayoutLike(out_grad.dist, x_mapping),
                      LayoutLike(scale.dist, Unsharded(scale.shape.size()), partial),
                      LayoutLike(bias.dist, Unsharded(bias.shape.size()), partial)};
  return decision;
}

StatusOr<SpmdDecision> EmbeddingSpmd(const DistTensorSpec& x, const DistTensorSpec& weight,
                                     int64_t padding_idx, bool sparse) {
  IRM_RETURN_IF_ERROR(CheckRank(x, "x"));
  IRM_RETURN_IF_ERROR(CheckRank(weight, "weight"));
  if (weight.shape.size() != 2) {
    return Invalid(
        fmt::format("the embedding table must have 2 dims, has {}", weight.shape.size()));
  }
  const int64_t row_mesh_dim = weight.dist.dims_mapping[0];
  if (row_mesh_dim != -1 && padding_idx != -1) {
    return Invalid(fmt::format(
        "row-wise parallel of the embedding table (rows sharded by mesh dim {}) does not support "
        "padding_idx {}",
        row_mesh_dim, padding_idx));
  }
  if (row_mesh_dim != -1 && sparse) {
    return Invalid(fmt::format(
        "row-wise parallel of the embedding table (rows sharded by mesh dim {}) does not support "
        "sparse",
        row_mesh_dim));
  }
  // Embedding's alphabet leaves out j and k, the table's letters.
  constexpr std::string_view kIds = "abcdefghilmnopqrstuvwxyz";
  if (x.shape.size() > kIds.size()) return Invalid("too many ids dims");
  const std::string x_letters(kIds.substr(0, x.shape.size()));
  IRM_ASSIGN_OR_RETURN(AxisShardings shardings, MergeShardings({{x_letters, x.dist.dims_mapping},
                                                                {"jk", weight.dist.dims_mapping}}));
  std::map<int64_t, ReduceType> partial;
  if (row_mesh_dim != -1) partial[row_mesh_dim] = ReduceType::kSum;
  SpmdDecision decision;
  decision.inputs = {LayoutLike(x.dist, MappingOf(x_letters, shardings)),
                     LayoutLike(weight.dist, MappingOf("jk", shardings))};
  decision.outputs = {LayoutLike(x.dist, MappingOf(x_letters + "k", shardings), partial)};
  return decision;
}

StatusOr<SpmdDecision> EmbeddingGradSpmd(const DistTensorSpec& x, const DistTensorSpec& weight,
                                         const DistTensorSpec& out_grad, bool sparse) {
  IRM_RETURN_IF_ERROR(CheckRank(x, "x"));
  IRM_RETURN_IF_ERROR(CheckRank(weight, "weight"));
  IRM_RETURN_IF_ERROR(CheckRank(out_grad, "out_grad"));
  if (sparse) return Invalid("embedding_grad of a sparse embedding is not supported");
  if (weight.shape.size() != 2 || out_grad.shape.size() != x.shape.size() + 1) {
    return Invalid("embedding_grad needs a 2-d weight and out_grad of one dim more than the ids");
  }
  // w_grad = einsum("..j,..k->jk", onehot(x), out_grad) with the one-hot dim j unsharded.
  constexpr std::string_view kBatch = "abcdefghilmnopqrstuvwxyz";
  const std::string batch(kBatch.substr(0, x.shape.size()));
  std::vector<int64_t> onehot = x.dist.dims_mapping;
  onehot.push_back(-1);
  IRM_ASSIGN_OR_RETURN(
      AxisShardings shardings,
      MergeShardings({{batch + "j", onehot}, {batch + "k", out_grad.dist.dims_mapping}}));
  std::vector<int64_t> weight_mapping = weight.dist.dims_mapping;
  weight_mapping[0] = -1;
  SpmdDecision decision;
  decision.inputs = {LayoutLike(x.dist, MappingOf(batch, shardings)),
                     LayoutLike(weight.dist, weight_mapping),
                     LayoutLike(out_grad.dist, MappingOf(batch + "k", shardings))};
  decision.outputs = {
      LayoutLike(weight.dist, MappingOf("jk", shardings), SumOver(MappingOf(batch, shardings)))};
  return decision;
}

StatusOr<SpmdDecision> SoftmaxSpmd(const DistTensorSpec& x, int64_t axis) {
  IRM_RETURN_IF_ERROR(CheckRank(x, "x"));
  if (x.shape.empty()) {
    const TensorDistAttr layout = LayoutLike(x.dist, {});
    return SpmdDecision{{layout}, {layout}};
  }
  const int64_t a = NormalizeAxis(axis, x.shape.size());
  if (a < 0) return Invalid(fmt::format("softmax axis {} of a {}-d x", axis, x.shape.size()));
  std::vector<int64_t> mapping = x.dist.dims_mapping;
  mapping[static_cast<size_t>(a)] = -1;
  const TensorDistAttr layout = LayoutLike(x.dist, mapping);
  return SpmdDecision{{layout}, {layout}};
}

StatusOr<SpmdDecision> SoftmaxGradSpmd(const DistTensorSpec& out, const DistTensorSpec& out_grad,
                                       int64_t axis) {
  IRM_RETURN_IF_ERROR(CheckRank(out, "out"));
  IRM_RETURN_IF_ERROR(CheckRank(out_grad, "out_grad"));
  if (out.shape.size() != out_grad.shape.size()) {
    return Invalid("out and out_grad must have the same rank");
  }
  const std::string letters(kAlphabet.substr(0, out.shape.size()));
  IRM_ASSIGN_OR_RETURN(
      AxisShardings shardings,
      MergeShardings({{letters, out.dist.dims_mapping}, {letters, out_grad.dist.dims_mapping}}));
  std::vector<int64_t> mapping = MappingOf(letters, shardings);
  if (!mapping.empty()) {
    const int64_t a = NormalizeAxis(axis, mapping.size());
    if (a < 0) return Invalid(fmt::format("softmax axis {} of a {}-d out", axis, mapping.size()));
    mapping[static_cast<size_t>(a)] = -1;
  }
  SpmdDecision decision;
  decision.inputs = {LayoutLike(out.dist, mapping), LayoutLike(out_grad.dist, mapping)};
  decision.outputs = {LayoutLike(out_grad.dist, mapping)};
  return decision;
}

StatusOr<SpmdDecision> DropoutSpmd(const DistTensorSpec& x,
                                   const std::optional<DistTensorSpec>& seed_tensor) {
  IRM_RETURN_IF_ERROR(CheckRank(x, "x"));
  const TensorDistAttr layout = LayoutLike(x.dist, x.dist.dims_mapping);
  std::optional<TensorDistAttr> seed;
  if (seed_tensor) seed = LayoutLike(seed_tensor->dist, Unsharded(seed_tensor->shape.size()));
  return SpmdDecision{{layout, seed}, {layout, layout}};
}

StatusOr<SpmdDecision> DropoutGradSpmd(const DistTensorSpec& mask, const DistTensorSpec& out_grad) {
  IRM_RETURN_IF_ERROR(CheckRank(mask, "mask"));
  IRM_RETURN_IF_ERROR(CheckRank(out_grad, "out_grad"));
  if (mask.shape.size() != out_grad.shape.size()) {
    return Invalid("mask and out_grad must have the same rank");
  }
  const std::string letters(kAlphabet.substr(0, mask.shape.size()));
  IRM_ASSIGN_OR_RETURN(
      AxisShardings shardings,
      MergeShardings({{letters, mask.dist.dims_mapping}, {letters, out_grad.dist.dims_mapping}}));
  const std::vector<int64_t> mapping = MappingOf(letters, shardings);
  SpmdDecision decision;
  decision.inputs = {LayoutLike(mask.dist, mapping), LayoutLike(out_grad.dist, mapping)};
  decision.outputs = {LayoutLike(out_grad.dist, mapping)};
  return decision;
}

SpmdDecision ScaleSpmd(const DistTensorSpec& x, const std::optional<DistTensorSpec>& scale) {
  const TensorDistAttr layout = LayoutLike(x.dist, x.dist.dims_mapping);
  std::optional<TensorDistAttr> factor;
  if (scale) factor = LayoutLike(scale->dist, Unsharded(scale->shape.size()));
  return SpmdDecision{{layout, factor}, {layout}};
}

StatusOr<SpmdDecision> AddNSpmd(const std::vector<DistTensorSpec>& inputs) {
  if (inputs.empty()) return Invalid("add_n needs at least one input");
  const size_t ndim = inputs[0].shape.size();
  const std::string letters(kAlphabet.substr(0, std::min(ndim, kAlphabet.size())));
  std::vector<std::pair<std::string, std::vector<int64_t>>> tensors;
  for (const DistTensorSpec& input : inputs) {
    IRM_RETURN_IF_ERROR(CheckRank(input, "an input"));
    if (input.shape.size() != ndim) {
      return Invalid(fmt::format("add_n's inputs must have the rank of the first, {}", ndim));
    }
    tensors.emplace_back(letters, input.dist.dims_mapping);
  }
  IRM_ASSIGN_OR_RETURN(AxisShardings shardings, MergeShardings(tensors));
  bool same_partial = true;
  for (const DistTensorSpec& input : inputs) {
    same_partial = same_partial && !input.dist.partial_status.empty() &&
                   input.dist.partial_status == inputs[0].dist.partial_status;
  }
  const std::map<int64_t, ReduceType> partial =
      same_partial ? inputs[0].dist.partial_status : std::map<int64_t, ReduceType>{};
  SpmdDecision decision;
  for (const DistTensorSpec& input : inputs) {
    decision.inputs.push_back(LayoutLike(input.dist, MappingOf(letters, shardings), partial));
  }
  decision.outputs = {decision.inputs[0]};
  return decision;
}

StatusOr<SpmdDecision> TriuSpmd(const DistTensorSpec& x) {
  IRM_RETURN_IF_ERROR(CheckRank(x, "x"));
  if (x.shape.size() < 2) return Invalid("triu needs at least 2 dims");
  std::vector<int64_t> mapping = x.dist.dims_mapping;
  mapping[mapping.size() - 1] = -1;
  mapping[mapping.size() - 2] = -1;
  const TensorDistAttr layout = LayoutLike(x.dist, mapping);
  return SpmdDecision{{layout}, {layout}};
}

StatusOr<SpmdDecision> ConcatSpmd(const std::vector<DistTensorSpec>& inputs, int64_t axis) {
  if (inputs.empty()) return Invalid("concat needs at least one input");
  const size_t ndim = inputs[0].shape.size();
  const int64_t a = NormalizeAxis(axis, ndim);
  if (a < 0) return Invalid(fmt::format("concat axis {} of {}-d inputs", axis, ndim));
  std::string letters(kAlphabet.substr(0, std::min(ndim, kAlphabet.size())));
  letters[static_cast<size_t>(a)] = '1';
  std::vector<std::pair<std::string, std::vector<int64_t>>> tensors;
  for (const DistTensorSpec& input : inputs) {
    IRM_RETURN_IF_ERROR(CheckRank(input, "an input"));
    if (input.shape.size() != ndim) {
      return Invalid(fmt::format("concat's inputs must have the rank of the first, {}", ndim));
    }
    tensors.emplace_back(letters, input.dist.dims_mapping);
  }
  IRM_ASSIGN_OR_RETURN(AxisShardings shardings, MergeShardings(tensors));
  SpmdDecision decision;
  for (const DistTensorSpec& input : inputs) {
    decision.inputs.push_back(LayoutLike(input.dist, MappingOf(letters, shardings)));
  }
  decision.outputs = {LayoutLike(inputs[0].dist, MappingOf(letters, shardings))};
  return decision;
}

StatusOr<SpmdDecision> SplitSpmd(const DistTensorSpec& x, int64_t axis, size_t num_outputs) {
  IRM_RETURN_IF_ERROR(CheckRank(x, "x"));
  const int64_t a = NormalizeAxis(axis, x.shape.size());
  if (a < 0) return Invalid(fmt::format("split axis {} of a {}-d x", axis, x.shape.size()));
  std::vector<int64_t> mapping = x.dist.dims_mapping;
  mapping[static_cast<size_t>(a)] = -1;
  const TensorDistAttr layout = LayoutLike(x.dist, mapping);
  SpmdDecision decision;
  decision.inputs = {layout};
  decision.outputs.assign(num_outputs, layout);
  return decision;
}

StatusOr<SpmdDecision> SliceSpmd(const DistTensorSpec& x, const std::vector<int64_t>& axes,
                                 const std::vector<int64_t>& decrease_axis) {
  IRM_RETURN_IF_ERROR(CheckRank(x, "x"));
  std::vector<int64_t> mapping = x.dist.dims_mapping;
  std::vector<bool> sliced(mapping.size(), false);
  for (int64_t axis : axes) {
    const int64_t a = NormalizeAxis(axis, mapping.size());
    if (a < 0) return Invalid(fmt::format("slice axis {} of a {}-d x", axis, mapping.size()));
    mapping[static_cast<size_t>(a)] = -1;
    sliced[static_cast<size_t>(a)] = true;
  }
  // Only a sliced axis can be decreased (test_slice_rule.py: decrease_axis [0] with axes [-1]
  // keeps every dim).
  std::vector<int64_t> out;
  for (size_t i = 0; i < mapping.size(); ++i) {
    const bool decreased =
        sliced[i] && std::any_of(decrease_axis.begin(), decrease_axis.end(), [&](int64_t d) {
          return NormalizeAxis(d, mapping.size()) == static_cast<int64_t>(i);
        });
    if (!decreased) out.push_back(mapping[i]);
  }
  return SpmdDecision{{LayoutLike(x.dist, mapping)}, {LayoutLike(x.dist, out)}};
}

namespace {

StatusOr<std::vector<size_t>> NormalizedPerm(const std::vector<int64_t>& perm, size_t ndim) {
  if (perm.size() != ndim) {
    return Invalid(fmt::format("perm {} of a {}-d tensor", fmt::join(perm, ","), ndim));
  }
  std::vector<size_t> out;
  std::vector<bool> seen(ndim, false);
  for (int64_t p : perm) {
    const int64_t a = NormalizeAxis(p, ndim);
    if (a < 0 || seen[static_cast<size_t>(a)]) {
      return Invalid(
          fmt::format("perm {} is not a permutation of {} dims", fmt::join(perm, ","), ndim));
    }
    seen[static_cast<size_t>(a)] = true;
    out.push_back(static_cast<size_t>(a));
  }
  return out;
}

}  // namespace

StatusOr<SpmdDecision> TransposeSpmd(const DistTensorSpec& x, const std::vector<int64_t>& perm) {
  IRM_RETURN_IF_ERROR(CheckRank(x, "x"));
  IRM_ASSIGN_OR_RETURN(std::vector<size_t> p, NormalizedPerm(perm, x.shape.size()));
  std::vector<int64_t> out;
  for (size_t axis : p) out.push_back(x.dist.dims_mapping[axis]);
  return SpmdDecision{{LayoutLike(x.dist, x.dist.dims_mapping)}, {LayoutLike(x.dist, out)}};
}

StatusOr<SpmdDecision> TransposeGradSpmd(const DistTensorSpec& out_grad,
                                         const std::vector<int64_t>& perm) {
  IRM_RETURN_IF_ERROR(CheckRank(out_grad, "out_grad"));
  IRM_ASSIGN_OR_RETURN(std::vector<size_t> p, NormalizedPerm(perm, out_grad.shape.size()));
  std::vector<int64_t> x_grad(p.size(), -1);
  for (size_t i = 0; i < p.size(); ++i) x_grad[p[i]] = out_grad.dist.dims_mapping[i];
  return SpmdDecision{{LayoutLike(out_grad.dist, out_grad.dist.dims_mapping)},
                      {LayoutLike(out_grad.dist, x_grad)}};
}

}  // namespace irm::newir
