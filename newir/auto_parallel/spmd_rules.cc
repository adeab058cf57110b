// The SPMD rules (spmd_rules.h), each following the Paddle function its header names.
#include "newir/auto_parallel/spmd_rules.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "newir/auto_parallel/spmd_rule_notation.h"

namespace irm::newir {
namespace {

using spmd::CheckRank;
using spmd::Invalid;
using spmd::kAlphabet;
using spmd::LayoutLike;
using spmd::MappingOf;
using spmd::PartialOutside;

// Batch letters of matmul skip k, m and n, which name the matrix dims (matmul.cc).
constexpr std::string_view kMatmulAlphabet = "abcdefghijlopqrstuvwxyz";

void SwapLastTwo(std::vector<int64_t>& v) {
  if (v.size() >= 2) std::iter_swap(v.end() - 2, v.end() - 1);
}

// Mesh, dims_mapping and partial status agree (DistAttrsAreBasicallyEqual in matmul.cc).
bool SameLayout(const TensorDistAttr& a, const TensorDistAttr& b) {
  return a.mesh == b.mesh && a.dims_mapping == b.dims_mapping &&
         a.partial_status == b.partial_status;
}

struct MatmulLetters {
  std::string x, y, out;
};

// FillMatmulOperandNotation (matmul.cc).
StatusOr<MatmulLetters> MatmulNotation(size_t x_ndim, size_t y_ndim) {
  auto batch = [](size_t ndim, size_t of) {
    return std::string(kMatmulAlphabet.substr(of - ndim, ndim));
  };
  if (x_ndim == 1 && y_ndim == 1) return MatmulLetters{"k", "k", ""};
  if (x_ndim == 1 && y_ndim > 1) {
    const std::string b = batch(y_ndim - 2, y_ndim - 2);
    return MatmulLetters{"k", b + "kn", b + "n"};
  }
  if (x_ndim > 1 && y_ndim == 1) {
    const std::string b = batch(x_ndim - 2, x_ndim - 2);
    return MatmulLetters{b + "mk", "k", b + "m"};
  }
  if (x_ndim > 1 && y_ndim > 1) {
    const size_t max_batch = std::max(x_ndim, y_ndim) - 2;
    const std::string bx = batch(x_ndim - 2, max_batch);
    const std::string by = batch(y_ndim - 2, max_batch);
    return MatmulLetters{bx + "mk", by + "kn", (x_ndim > y_ndim ? bx : by) + "mn"};
  }
  return Invalid(fmt::format("matmul of a {}-d x and a {}-d y", x_ndim, y_ndim));
}

// GetMatmulInferredDistAttr (matmul.cc): a dim of size 1 is not sharded.
TensorDistAttr MatmulInputLayout(const DistTensorSpec& t, std::string_view letters,
                                 const AxisShardings& shardings, bool trans) {
  std::vector<int64_t> shape = t.shape;
  if (trans) SwapLastTwo(shape);
  std::vector<int64_t> mapping = MappingOf(letters, shardings);
  for (size_t i = 0; i < mapping.size() && i < shape.size(); ++i) {
    if (shape[i] == 1) mapping[i] = -1;
  }
  if (trans) SwapLastTwo(mapping);
  return LayoutLike(t.dist, std::move(mapping));
}

// ReduceGradBroadCastDims (utils.cc): a grad of an input broadcast against out_grad is Partial
// (sum) along the mesh dims that shard the dims it was broadcast over, and those dims go.
TensorDistAttr ReduceBroadcastDims(const std::vector<int64_t>& input_shape,
                                   const TensorDistAttr& grad,
                                   const std::vector<int64_t>& out_grad_shape) {
  const size_t diff = out_grad_shape.size() - std::min(out_grad_shape.size(), input_shape.size());
  std::map<int64_t, ReduceType> partial = grad.partial_status;
  std::vector<int64_t> mapping;
  for (size_t i = 0; i < grad.dims_mapping.size(); ++i) {
    const int64_t m = grad.dims_mapping[i];
    const bool dropped = i < diff;
    const bool broadcast = !dropped && input_shape[i - diff] == 1 && out_grad_shape[i] != 1;
    if ((dropped || broadcast) && m != -1) partial[m] = ReduceType::kSum;
    if (!dropped) mapping.push_back(broadcast ? -1 : m);
  }
  return LayoutLike(grad, std::move(mapping), std::move(partial));
}

std::vector<int64_t> NormalizedAxes(std::vector<int64_t> axes, size_t ndim) {
  if (axes.empty()) {
    for (size_t i = 0; i < ndim; ++i) axes.push_back(static_cast<int64_t>(i));
  }
  for (int64_t& a : axes) {
    if (a < 0) a += static_cast<int64_t>(ndim);
  }
  std::sort(axes.begin(), axes.end());
  return axes;
}

// The letters of cross_entropy_with_softmax's tensors and the softmax axis check.
struct SoftmaxLetters {
  std::string x, label, loss;
  char axis_letter = 0;
  size_t axis = 0;
};

StatusOr<SoftmaxLetters> SoftmaxNotation(size_t ndim, int64_t axis, bool soft_label) {
  const int64_t normalized = axis < 0 ? axis + static_cast<int64_t>(ndim) : axis;
  if (normalized < 0 || normalized >= static_cast<int64_t>(ndim)) {
    return Invalid(fmt::format("softmax axis {} of a {}-d input", axis, ndim));
  }
  SoftmaxLetters l;
  l.axis = static_cast<size_t>(normalized);
  l.x = std::string(kAlphabet.substr(0, ndim));
  l.axis_letter = l.x[l.axis];
  l.loss = l.x;
  l.loss[l.axis] = '1';
  l.label = soft_label ? l.x : l.loss;
  return l;
}

// cross_entropy_with_softmax.cc: the softmax axis may be sharded only for hard labels on the last
// axis (test_cross_entropy_with_softmax_rule.py: "Soft Label Error", "Soft Normalized axis
// Error").
Status CheckSoftmaxAxis(const SoftmaxLetters& l, const AxisShardings& shardings, size_t ndim,
                        bool soft_label) {
  auto it = shardings.find(l.axis_letter);
  if (it == shardings.end() || it->second == -1) return Status::Ok();
  if (soft_label) {
    return Invalid(
        fmt::format("the softmax axis {} is sharded by mesh dim {}, which soft labels do not allow",
                    l.axis, it->second));
  }
  if (l.axis + 1 != ndim) {
    return Invalid(fmt::format(
        "the softmax axis {} is sharded by mesh dim {}, which is allowed on the last axis only",
        l.axis, it->second));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<AxisShardings> MergeShardings(
    const std::vector<std::pair<std::string, std::vector<int64_t>>>& tensors) {
  AxisShardings merged;
  std::map<int64_t, std::string> letters_on;  // mesh dim -> letters, in the order they took it
  for (const auto& [letters, mapping] : tensors) {
    if (letters.size() != mapping.size()) {
      return Invalid(fmt::format("{} letters '{}' for a dims mapping of {} entries", letters.size(),
                                 letters, mapping.size()));
    }
    for (size_t i = 0; i < letters.size(); ++i) {
      const char letter = letters[i];
      if (letter == '1') continue;
      int64_t mesh_dim = mapping[i];
      auto it = merged.find(letter);
      if (it != merged.end() && it->second != mesh_dim) {
        if (mesh_dim == -1) {
          mesh_dim = it->second;
        } else if (it->second != -1) {
          return Status(StatusCode::kUnimplemented, Location{},
                        fmt::format("tensor axis '{}' is sharded by two mesh dims, {} and {}",
                                    letter, it->second, mesh_dim));
        }
      }
      merged[letter] = mesh_dim;
      if (mesh_dim != -1 && letters_on[mesh_dim].find(letter) == std::string::npos) {
        letters_on[mesh_dim] += letter;
      }
    }
  }
  for (const auto& [mesh_dim, letters] : letters_on) {
    for (size_t i = 1; i < letters.size(); ++i) merged[letters[i]] = -1;
  }
  return merged;
}

StatusOr<SpmdDecision> MatmulSpmd(const DistTensorSpec& x, const DistTensorSpec& y, bool trans_x,
                                  bool trans_y) {
  IRM_RETURN_IF_ERROR(CheckRank(x, "x"));
  IRM_RETURN_IF_ERROR(CheckRank(y, "y"));
  if ((trans_x && x.shape.size() < 2) || (trans_y && y.shape.size() < 2)) {
    return Invalid("a transposed matmul operand needs at least 2 dims");
  }
  IRM_ASSIGN_OR_RETURN(MatmulLetters letters, MatmulNotation(x.shape.size(), y.shape.size()));
  std::vector<int64_t> x_mapping = x.dist.dims_mapping;
  std::vector<int64_t> y_mapping = y.dist.dims_mapping;
  if (trans_x) SwapLastTwo(x_mapping);
  if (trans_y) SwapLastTwo(y_mapping);
  IRM_ASSIGN_OR_RETURN(AxisShardings shardings,
                       MergeShardings({{letters.x, x_mapping}, {letters.y, y_mapping}}));
  SpmdDecision decision;
  decision.inputs = {MatmulInputLayout(x, letters.x, shardings, trans_x),
                     MatmulInputLayout(y, letters.y, shardings, trans_y)};
  decision.outputs = {LayoutLike(x.dist, MappingOf(letters.out, shardings),
                                 PartialOutside(shardings, letters.out, ReduceType::kSum))};
  return decision;
}

StatusOr<SpmdDecision> MatmulGradSpmd(const DistTensorSpec& x_in, const DistTensorSpec& y_in,
                                      const DistTensorSpec& out_grad, bool trans_x, bool trans_y) {
  IRM_RETURN_IF_ERROR(CheckRank(out_grad, "out_grad"));
  IRM_ASSIGN_OR_RETURN(SpmdDecision forward, MatmulSpmd(x_in, y_in, trans_x, trans_y));
  const DistTensorSpec x{x_in.shape, *forward.inputs[0]};
  const DistTensorSpec y{y_in.shape, *forward.inputs[1]};
  // dx and dy as matmuls of the forward operands and out_grad, and which of their inputs are x,
  // y and out_grad (the four cases of MatmulGradInferSpmd).
  SpmdDecision dx, dy;
  TensorDistAttr x_req, y_req, g_req;
  std::vector<std::pair<TensorDistAttr, TensorDistAttr>> must_agree;
  if (!trans_x && !trans_y) {  // dX = G Y', dY = X' G
    IRM_ASSIGN_OR_RETURN(dx, MatmulSpmd(out_grad, y, false, true));
    IRM_ASSIGN_OR_RETURN(dy, MatmulSpmd(x, out_grad, true, false));
    x_req = *dy.inputs[0], y_req = *dx.inputs[1], g_req = *dx.inputs[0];
    must_agree = {{y_req, y.dist}, {x_req, x.dist}, {g_req, *dy.inputs[1]}};
  } else if (!trans_x && trans_y) {  // dX = G Y, dY = G' X
    IRM_ASSIGN_OR_RETURN(dx, MatmulSpmd(out_grad, y, false, false));
    IRM_ASSIGN_OR_RETURN(dy, MatmulSpmd(out_grad, x, true, false));
    x_req = *dy.inputs[1], y_req = *dx.inputs[1], g_req = *dx.inputs[0];
    must_agree = {
        {g_req, out_grad.dist}, {y_req, y.dist}, {*dy.inputs[0], out_grad.dist}, {x_req, x.dist}};
  } else if (trans_x && !trans_y) {  // dX = Y G', dY = X G
    IRM_ASSIGN_OR_RETURN(dx, MatmulSpmd(y, out_grad, false, true));
    IRM_ASSIGN_OR_RETURN(dy, MatmulSpmd(x, out_grad, false, false));
    x_req = *dy.inputs[0], y_req = *dx.inputs[0], g_req = *dx.inputs[1];
    must_agree = {
        {y_req, y.dist}, {g_req, out_grad.dist}, {x_req, x.dist}, {*dy.inputs[1], out_grad.dist}};
  } else {  // dX = Y' G', dY = G' X'
    IRM_ASSIGN_OR_RETURN(dx, MatmulSpmd(y, out_grad, true, true));
    IRM_ASSIGN_OR_RETURN(dy, MatmulSpmd(out_grad, x, true, true));
    x_req = *dy.inputs[1], y_req = *dx.inputs[0], g_req = *dx.inputs[1];
    must_agree = {
        {y_req, y.dist}, {g_req, out_grad.dist}, {*dy.inputs[0], out_grad.dist}, {x_req, x.dist}};
  }
  for (const auto& [asked, given] : must_agree) {
    if (!SameLayout(asked, given)) {
      return Status(
          StatusCode::kUnimplemented, Location{},
          fmt::format("matmul_grad needs {} where it has {}", asked.ToString(), given.ToString()));
    }
  }
  SpmdDecision decision;
  decision.inputs = {x_req, y_req, g_req};
  decision.outputs = {ReduceBroadcastDims(x.shape, *dx.outputs[0], out_grad.shape),
                      ReduceBroadcastDims(y.shape, *dy.outputs[0], out_grad.shape)};
  return decision;
}

SpmdDecision ElementwiseUnarySpmd(const DistTensorSpec& x) {
  const TensorDistAttr layout = LayoutLike(x.dist, x.dist.dims_mapping);
  return {{layout}, {layout}};
}

StatusOr<SpmdDecision> ElementwiseBinarySpmd(const DistTensorSpec& x, const DistTensorSpec& y) {
  IRM_RETURN_IF_ERROR(CheckRank(x, "x"));
  IRM_RETURN_IF_ERROR(CheckRank(y, "y"));
  const size_t n = std::max(x.shape.size(), y.shape.size());
  const std::string out(kAlphabet.substr(0, n));
  // The broadcast size of out dim j: 1 only when every tensor that has the dim has size 1.
  auto out_is_one = [&](size_t j) {
    for (const DistTensorSpec* t : {&x, &y}) {
      const size_t offset = n - t->shape.size();
      if (j >= offset && t->shape[j - offset] != 1) return false;
    }
    return true;
  };
  auto letters_of = [&](const DistTensorSpec& t) {
    const size_t offset = n - t.shape.size();
    std::string letters(kAlphabet.substr(offset, t.shape.size()));
    for (size_t i = 0; i < letters.size(); ++i) {
      if (t.shape[i] == 1 && !out_is_one(i + offset)) letters[i] = '1';
    }
    return letters;
  };
  const std::string x_letters = letters_of(x), y_letters = letters_of(y);
  IRM_ASSIGN_OR_RETURN(AxisShardings shardings, MergeShardings({{x_letters, x.dist.dims_mapping},
                                                                {y_letters, y.dist.dims_mapping}}));
  SpmdDecision decision;
  decision.inputs = {LayoutLike(x.dist, MappingOf(x_letters, shardings)),
                     LayoutLike(y.dist, MappingOf(y_letters, shardings))};
  decision.outputs = {LayoutLike(x.dist, MappingOf(out, shardings))};
  return decision;
}

SpmdDecision ElementwiseUnaryGradSpmd(const DistTensorSpec& /*x*/, const DistTensorSpec& out_grad) {
  const TensorDistAttr layout = LayoutLike(out_grad.dist, out_grad.dist.dims_mapping);
  return {{layout, layout}, {layout}};
}

SpmdDecision ElementwiseBinaryGradSpmd(const DistTensorSpec& x, const DistTensorSpec& y,
                                       const DistTensorSpec& out_grad) {
  const std::vector<int64_t>& g = out_grad.dist.dims_mapping;
  // An input with fewer dims, or with a dim of size 1 where out_grad's is sharded
  // (DimsNotEqualOrHasBroadcastDim, GetExplicitReduceDim): its grad is summed over the dims it
  // was broadcast along, so it is Partial(sum) on the mesh dims that shard them.
  auto for_input = [&](const DistTensorSpec& t, TensorDistAttr& input, TensorDistAttr& grad) {
    const size_t diff = g.size() - std::min(g.size(), t.shape.size());
    std::vector<int64_t> mapping(g.begin() + static_cast<std::ptrdiff_t>(diff), g.end());
    std::map<int64_t, ReduceType> partial;
    for (size_t i = 0; i < diff; ++i) {
      if (g[i] != -1) partial[g[i]] = ReduceType::kSum;
    }
    for (size_t i = 0; i < mapping.size() && i < t.shape.size(); ++i) {
      if (t.shape[i] == 1 && mapping[i] != -1) {
        partial[mapping[i]] = ReduceType::kSum;
        mapping[i] = -1;
      }
    }
    input = LayoutLike(t.dist, mapping);
    grad = LayoutLike(out_grad.dist, std::move(mapping), std::move(partial));
  };
  TensorDistAttr x_in, x_grad, y_in, y_grad;
  for_input(x, x_in, x_grad);
  for_input(y, y_in, y_grad);
  return {{x_in, y_in, LayoutLike(out_grad.dist, g)}, {x_grad, y_grad}};
}

SpmdDecision ReductionSpmd(const DistTensorSpec& x, std::vector<int64_t> axes, bool keep_dim,
                           ReduceType reduce) {
  const std::string x_letters(kAlphabet.substr(0, x.shape.size()));
  axes = NormalizedAxes(std::move(axes), x.shape.size());
  std::string out_letters;
  for (size_t i = 0; i < x_letters.size(); ++i) {
    const bool reduced = std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(i));
    if (!reduced) {
      out_letters += x_letters[i];
    } else if (keep_dim) {
      out_letters += '1';
    }
  }
  // One tensor alone cannot conflict: its mapping names each mesh dim once (the verifier's rule).
  StatusOr<AxisShardings> shardings = MergeShardings({{x_letters, x.dist.dims_mapping}});
  const AxisShardings merged = shardings.ok() ? *shardings : AxisShardings{};
  return {{LayoutLike(x.dist, x.dist.dims_mapping)},
          {LayoutLike(x.dist, MappingOf(out_letters, merged),
                      PartialOutside(merged, out_letters, reduce))}};
}

SpmdDecision ReductionGradSpmd(const DistTensorSpec& x, const DistTensorSpec& out_grad,
                               std::vector<int64_t> axes, bool keep_dim) {
  const TensorDistAttr g = LayoutLike(out_grad.dist, out_grad.dist.dims_mapping);
  std::vector<int64_t> mapping = g.dims_mapping;
  if (!keep_dim || x.shape.size() != out_grad.shape.size()) {
    for (int64_t axis : NormalizedAxes(std::move(axes), x.shape.size())) {
      const auto at = static_cast<size_t>(std::clamp<int64_t>(axis, 0, mapping.size()));
      mapping.insert(mapping.begin() + static_cast<std::ptrdiff_t>(at), -1);
    }
  }
  const TensorDistAttr x_layout = LayoutLike(x.dist, mapping);
  return {{x_layout, g}, {x_layout}};
}

StatusOr<SpmdDecision> CrossEntropyWithSoftmaxSpmd(const DistTensorSpec& x,
                                                   const DistTensorSpec& label, int64_t axis,
                                                   bool soft_label,
                                                   bool support_shard_softmax_dim) {
  IRM_RETURN_IF_ERROR(CheckRank(x, "input"));
  IRM_RETURN_IF_ERROR(CheckRank(label, "label"));
  if (label.shape.size() != x.shape.size()) {
    return Invalid(fmt::format("label has {} dims, input {}", label.shape.size(), x.shape.size()));
  }
  IRM_ASSIGN_OR_RETURN(SoftmaxLetters l, SoftmaxNotation(x.shape.size(), axis, soft_label));
  IRM_ASSIGN_OR_RETURN(
      AxisShardings shardings,
      MergeShardings({{l.x, x.dist.dims_mapping}, {l.label, label.dist.dims_mapping}}));
  IRM_RETURN_IF_ERROR(CheckSoftmaxAxis(l, shardings, x.shape.size(), soft_label));
  // GetCrossEntropyNotations: without support_shard_softmax_dim the input and softmax are asked
  // for the axis as '1'.
  std::string x_dst = l.x;
  if (!support_shard_softmax_dim) x_dst[l.axis] = '1';
  const std::string label_dst = soft_label ? x_dst : l.label;
  SpmdDecision decision;
  decision.inputs = {LayoutLike(x.dist, MappingOf(x_dst, shardings)),
                     LayoutLike(label.dist, MappingOf(label_dst, shardings))};
  decision.outputs = {LayoutLike(x.dist, MappingOf(x_dst, shardings)),
                      LayoutLike(x.dist, MappingOf(l.loss, shardings))};
  return decision;
}

StatusOr<SpmdDecision> CrossEntropyWithSoftmaxGradSpmd(const DistTensorSpec& label,
                                                       const DistTensorSpec& softmax,
                                                       const DistTensorSpec& loss_grad,
                                                       int64_t axis, bool soft_label) {
  IRM_RETURN_IF_ERROR(CheckRank(label, "label"));
  IRM_RETURN_IF_ERROR(CheckRank(softmax, "softmax"));
  IRM_RETURN_IF_ERROR(CheckRank(loss_grad, "loss_grad"));
  IRM_ASSIGN_OR_RETURN(SoftmaxLetters l, SoftmaxNotation(softmax.shape.size(), axis, soft_label));
  if (label.shape.size() != l.x.size() || loss_grad.shape.size() != l.x.size()) {
    return Invalid("label, softmax and loss_grad must have the same number of dims");
  }
  IRM_ASSIGN_OR_RETURN(AxisShardings shardings,
                       MergeShardings({{l.label, label.dist.dims_mapping},
                                       {l.x, softmax.dist.dims_mapping},
                                       {l.loss, loss_grad.dist.dims_mapping}}));
  // The grad kernel needs whole rows: every tensor is asked for the softmax axis unsharded
  // (GetCrossEntropyGradNotations without support_shard_softmax_dim), and x_grad is laid out as
  // the label then is.
  std::string label_dst = l.label;
  label_dst[l.axis] = '1';
  const TensorDistAttr label_layout = LayoutLike(label.dist, MappingOf(label_dst, shardings));
  SpmdDecision decision;
  decision.inputs = {label_layout, LayoutLike(softmax.dist, MappingOf(l.loss, shardings)),
                     LayoutLike(loss_grad.dist, MappingOf(l.loss, shardings))};
  decision.outputs = {LayoutLike(softmax.dist, label_layout.dims_mapping)};
  return decision;
}

StatusOr<SpmdDecision> SgdSpmd(const DistTensorSpec& param, const DistTensorSpec& learning_rate,
                               const DistTensorSpec& grad,
                               const std::optional<DistTensorSpec>& master_param) {
  IRM_ASSIGN_OR_RETURN(SpmdDecision merged, ElementwiseBinarySpmd(param, grad));
  const TensorDistAttr param_layout = *merged.inputs[0];
  std::optional<TensorDistAttr> master;
  if (master_param) master = LayoutLike(master_param->dist, param_layout.dims_mapping);
  SpmdDecision decision;
  decision.inputs = {param_layout, LayoutLike(learning_rate.dist, learning_rate.dist.dims_mapping),
                     *merged.inputs[1], master};
  decision.outputs = {param_layout, master};
  return decision;
}

StatusOr<SpmdDecision> AdamSpmd(const std::vector<std::optional<DistTensorSpec>>& in) {
  enum { kParam, kGrad, kLr, kMoment1, kMoment2, kMoment2Max, kBeta1Pow, kBeta2Pow, kMaster };
  if (in.size() < 9 || !in[kParam] || !in[kGrad] || !in[kLr] || !in[kMoment1] || !in[kMoment2] ||
      !in[kBeta1Pow] || !in[kBeta2Pow]) {
    return Invalid("adam needs param, grad, learning_rate, moment1, moment2 and the beta pows");
  }
  IRM_ASSIGN_OR_RETURN(SpmdDecision merged, ElementwiseBinarySpmd(*in[kParam], *in[kGrad]));
  const size_t rank = in[kParam]->shape.size();
  std::vector<const std::vector<int64_t>*> sources = {
      &merged.inputs[0]->dims_mapping, &merged.inputs[1]->dims_mapping,
      &in[kMoment1]->dist.dims_mapping, &in[kMoment2]->dist.dims_mapping};
  if (in[kMoment2Max]) sources.push_back(&in[kMoment2Max]->dist.dims_mapping);
  std::vector<int64_t> mapping;
  for (size_t d = 0; d < rank; ++d) {
    int64_t kept = -1;
    for (const std::vector<int64_t>* source : sources) {
      const int64_t m = d < source->size() ? (*source)[d] : -1;
      if (m == -1) continue;
      if (kept == -1) {
        kept = m;
      } else if (kept != m) {
        kept = -1;
        break;
      }
    }
    mapping.push_back(kept);
  }
  auto like = [&](size_t i, const std::vector<int64_t>& m) -> std::optional<TensorDistAttr> {
    if (i >= in.size() || !in[i]) return std::nullopt;
    return LayoutLike(in[i]->dist, m);
  };
  auto keep = [&](size_t i) -> std::optional<TensorDistAttr> {
    if (i >= in.size() || !in[i]) return std::nullopt;
    return LayoutLike(in[i]->dist, in[i]->dist.dims_mapping);
  };
  SpmdDecision decision;
  decision.inputs = {like(kParam, mapping),   like(kGrad, mapping),    keep(kLr),
                     like(kMoment1, mapping), like(kMoment2, mapping), like(kMoment2Max, mapping),
                     keep(kBeta1Pow),         keep(kBeta2Pow),         like(kMaster, mapping)};
  for (size_t i = decision.inputs.size(); i < in.size(); ++i) decision.inputs.push_back(keep(i));
  decision.outputs = {decision.inputs[kParam],    decision.inputs[kMoment1],
                      decision.inputs[kMoment2],  decision.inputs[kMoment2Max],
                      decision.inputs[kBeta1Pow], decision.inputs[kBeta2Pow],
                      decision.inputs[kMaster]};
  return decision;
}

SpmdDecision ReplicatedSpmd(const std::vector<std::optional<DistTensorSpec>>& inputs,
                            const std::vector<std::optional<size_t>>& output_ranks) {
  TensorDistAttr mesh_of;
  for (const auto& input : inputs) {
    if (input) {
      mesh_of = input->dist;
      break;
    }
  }
  SpmdDecision decision;
  for (const auto& input : inputs) {
    if (!input) {
      decision.inputs.emplace_back();
      continue;
    }
    decision.inputs.push_back(LayoutLike(mesh_of, std::vector<int64_t>(input->shape.size(), -1)));
  }
  for (const auto& rank : output_ranks) {
    if (!rank) {
      decision.outputs.emplace_back();
      continue;
    }
    decision.outputs.push_back(LayoutLike(mesh_of, std::vector<int64_t>(*rank, -1)));
  }
  return decision;
}

}  // namespace irm::newir
