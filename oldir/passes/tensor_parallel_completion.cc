// Completion of a serial training program over the mp mesh (tensor_parallel_completion.h). The
// rules and impl choices follow Paddle's legacy auto-parallel:
// - matmul_v2 (python/paddle/distributed/auto_parallel/static/operators/dist_matmul.py): a weight
//   split on its last dim is column parallel (DistributedMatmulV2Impl0: X replicated, Out split
//   on its last dim), on its first dim row parallel (DistributedMatmulV2Impl1: X split on its
//   last dim, Out partial then replicated); two activations multiply batch-wise when only their
//   batch dims are split (the attention heads);
// - lookup_table_v2 with the table split on dim 0 (operators/dist_embedding.py, row_parallel);
// - softmax_with_cross_entropy with the logits split on the softmax axis, the last one
//   (operators/dist_cross_entropy.py, DistributedCrossEntropyImpl1, parallel cross entropy);
// - elementwise ops broadcast as dist_eltwise.py does, reshape2 / transpose2 move the split dim
//   (dist_reshape.py, dist_transpose.py), and an op whose inputs are all replicated is
//   replicated (dist_default.py);
// - backward: completion.py's complete_backward_annotation gives a gradient its forward var's
//   dims_mapping; complete_update_annotation gives an optimizer op's state the dims_mapping of
//   the parameter it updates.
#include "oldir/passes/tensor_parallel_completion.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <optional>
#include <set>

#include "oldir/op_role.h"

namespace irm::oldir::passes {
namespace {

// The forward var a gradient belongs to: "x@GRAD" and "x@GRAD@RENAME@block0@1" -> "x".
std::string ForwardName(const std::string& name) {
  const size_t at = name.find(kGradSuffix);
  return at == std::string::npos ? name : name.substr(0, at);
}

std::vector<std::string> Args(const google::protobuf::RepeatedPtrField<proto::OpDesc::Var>& slots) {
  std::vector<std::string> out;
  for (const proto::OpDesc::Var& slot : slots) {
    for (const std::string& arg : slot.arguments()) out.push_back(arg);
  }
  return out;
}

int NormalizeAxis(int axis, size_t rank) { return axis < 0 ? axis + static_cast<int>(rank) : axis; }

class Completer {
 public:
  Completer(const Program& main, const Placements& placements, int mp)
      : root_(main.root()), placements_(placements), mp_(mp) {}

  StatusOr<TensorParallelCompletion> Run() {
    IRM_RETURN_IF_ERROR(SeedParameters());
    for (int i = 0; i < root_.num_ops(); ++i) {
      const Op op = root_.op(i);
      if (IsForward(op.role())) IRM_RETURN_IF_ERROR(Forward(i, op));
    }
    // Gradients take their forward var's mapping (also the renamed partial gradients).
    for (int v = 0; v < root_.num_vars(); ++v) {
      const std::string& name = root_.var(v).name();
      if (name.find(kGradSuffix) == std::string::npos) continue;
      auto base = out_.vars.find(ForwardName(name));
      if (base != out_.vars.end()) out_.vars[name] = Fit(base->second, name);
    }
    for (int i = 0; i < root_.num_ops(); ++i) {
      const Op op = root_.op(i);
      if (IsBackward(op.role()) && !IsOptimize(op.role())) Backward(i, op);
    }
    for (int i = 0; i < root_.num_ops(); ++i) {
      const Op op = root_.op(i);
      if (IsOptimize(op.role())) IRM_RETURN_IF_ERROR(Optimizer(i, op));
    }
    IRM_RETURN_IF_ERROR(CheckDivisible());
    return std::move(out_);
  }

 private:
  std::vector<int64_t> Dims(const std::string& name) const {
    std::optional<Var> var = root_.FindVar(name);
    return var ? var->dims() : std::vector<int64_t>{};
  }

  // `mapping` cut or padded to the rank of `name` (a gradient of the same rank as its var).
  DimsMapping Fit(DimsMapping mapping, const std::string& name) const {
    mapping.resize(Dims(name).size(), -1);
    return mapping;
  }

  DimsMapping Get(const std::string& name) const {
    auto it = out_.vars.find(name);
    if (it != out_.vars.end()) return it->second;
    return DimsMapping(Dims(name).size(), -1);
  }

  void Set(const std::string& name, DimsMapping mapping) { out_.vars[name] = std::move(mapping); }
  void Replicate(const std::string& name) { Set(name, DimsMapping(Dims(name).size(), -1)); }

  Status Refuse(int i, const Op& op, const std::string& why) const {
    return Status(StatusCode::kInvalidArgument, Location{}.InBlock(0).AtOp(i, op.type()),
                  fmt::format("tensor parallelism: op {} ({}) {}", i, op.type(), why));
  }

  bool UsedAsTable(const std::string& name) const {
    for (int i = 0; i < root_.num_ops(); ++i) {
      const Op op = root_.op(i);
      if (op.type() == "lookup_table_v2" && op.SingleInput("W") == name) return true;
    }
    return false;
  }

  // The parameters' placements, checked against their vars: a parameter split on a dim
  // mp_degree does not divide is refused here, before any activation is looked at.
  Status SeedParameters() {
    for (const auto& [name, mapping] : placements_) {
      std::optional<Var> var = root_.FindVar(name);
      if (!var || !var->is_parameter()) {
        return Status(StatusCode::kInvalidArgument, Location{}.InBlock(0).AtVar(name),
                      fmt::format("a placement names '{}', which is no parameter of the main "
                                  "program's root block",
                                  name));
      }
      if (mapping.size() != var->dims().size()) {
        return Status(StatusCode::kInvalidArgument, Location{}.InBlock(0).AtVar(name),
                      fmt::format("parameter '{}' has {} dims but its placement {} entries", name,
                                  var->dims().size(), mapping.size()));
      }
    }
    for (int v = 0; v < root_.num_vars(); ++v) {
      const Var var = root_.var(v);
      if (!var.is_parameter()) continue;
      auto it = placements_.find(var.name());
      DimsMapping mapping =
          it != placements_.end() ? it->second : DimsMapping(var.dims().size(), -1);
      const std::vector<int64_t> dims = var.dims();
      for (size_t d = 0; d < mapping.size(); ++d) {
        if (mapping[d] < 0) continue;
        if (mapping[d] != 0) {
          return Status(StatusCode::kInvalidArgument, Location{}.InBlock(0).AtVar(var.name()),
                        fmt::format("parameter '{}' is split over mesh dim {}; the mp mesh has "
                                    "one dim (0)",
                                    var.name(), mapping[d]));
        }
        if (dims[d] <= 0 || dims[d] % mp_ != 0) {
          const bool vocabulary = d == 0 && UsedAsTable(var.name());
          return Status(
              StatusCode::kInvalidArgument, Location{}.InBlock(0).AtVar(var.name()),
              fmt::format("mp_degree {} does not divide dim {} ({}) of parameter "
                          "'{}'{}",
                          mp_, d, dims[d], var.name(),
                          vocabulary ? fmt::format(", the vocabulary of {}", dims[d]) : ""));
        }
      }
      Set(var.name(), std::move(mapping));
    }
    return Status::Ok();
  }

  Status Forward(int i, const Op& op) {
    bool sharded = false;
    for (const std::string& arg : Args(op.desc().inputs())) sharded |= IsSharded(Get(arg));
    const std::string& type = op.type();
    if (!sharded) {
      // dist_default: every output replicated, the op as is.
      for (const std::string& arg : Args(op.desc().outputs())) {
        std::optional<Var> var = root_.FindVar(arg);
        if (!var || !var->is_parameter()) Replicate(arg);
      }
      return Status::Ok();
    }
    if (type == "matmul_v2") return Matmul(i, op);
    if (type == "elementwise_add" || type == "elementwise_sub" || type == "elementwise_mul" ||
        type == "elementwise_div") {
      return Elementwise(i, op);
    }
    if (type == "relu" || type == "gelu" || type == "tanh" || type == "sigmoid" ||
        type == "scale" || type == "dropout" || type == "assign" || type == "cast" ||
        type == "softmax" || type == "tril_triu") {
      return SameShape(i, op);
    }
    if (type == "reshape2") return Reshape(i, op);
    if (type == "transpose2") return Transpose(i, op);
    if (type == "lookup_table_v2") return Embedding(i, op);
    if (type == "softmax_with_cross_entropy") return CrossEntropy(i, op);
    std::string inputs;
    for (const std::string& arg : Args(op.desc().inputs())) {
      if (IsSharded(Get(arg))) inputs += (inputs.empty() ? "'" : ", '") + arg + "'";
    }
    return Refuse(i, op,
                  fmt::format("has the sharded input {} and no tensor-parallel rule", inputs));
  }

  Status Matmul(int i, const Op& op) {
    std::optional<std::string> x = op.SingleInput("X");
    std::optional<std::string> y = op.SingleInput("Y");
    std::optional<std::string> out = op.SingleOutput("Out");
    if (!x || !y || !out) return Refuse(i, op, "needs one X, one Y and one Out");
    DimsMapping xm = Get(*x);
    DimsMapping ym = Get(*y);
    if (xm.size() < 2 || ym.size() < 2) return Refuse(i, op, "multiplies a sharded vector");
    if (op.AttrOr<bool>("trans_x", false)) std::swap(xm[xm.size() - 1], xm[xm.size() - 2]);
    if (op.AttrOr<bool>("trans_y", false)) std::swap(ym[ym.size() - 1], ym[ym.size() - 2]);
    DimsMapping om(Dims(*out).size(), -1);
    if (placements_.count(*y) && IsSharded(ym)) {
      if (ym.size() != 2) return Refuse(i, op, "multiplies by a sharded weight of rank > 2");
      if (ym[0] < 0 && ym[1] >= 0) {
        if (IsSharded(xm)) {
          return Refuse(i, op,
                        fmt::format("is column parallel (weight '{}') but its input '{}' "
                                    "is sharded",
                                    *y, *x));
        }
        om.back() = ym[1];
        Set(*out, om);
        out_.ops[i] = ShardedOp::kColumnParallelMatmul;
        weights_[*y] = ShardedOp::kColumnParallelMatmul;
        return Status::Ok();
      }
      if (ym[0] >= 0 && ym[1] < 0) {
        DimsMapping expected(xm.size(), -1);
        expected.back() = ym[0];
        if (xm != expected) {
          return Refuse(i, op,
                        fmt::format("is row parallel (weight '{}') but its input '{}' is "
                                    "not split on its last dim alone: a reshard is needed",
                                    *y, *x));
        }
        Set(*out, om);
        out_.ops[i] = ShardedOp::kRowParallelMatmul;
        weights_[*y] = ShardedOp::kRowParallelMatmul;
        return Status::Ok();
      }
      return Refuse(i, op, fmt::format("has weight '{}' split on both dims", *y));
    }
    if (placements_.count(*y)) {
      return Refuse(i, op,
                    fmt::format("multiplies the sharded '{}' by the replicated weight "
                                "'{}': a reshard is needed",
                                *x, *y));
    }
    // Two activations: only the batch dims (all but the last two) may be split.
    if (xm[xm.size() - 1] >= 0 || xm[xm.size() - 2] >= 0 || ym[ym.size() - 1] >= 0 ||
        ym[ym.size() - 2] >= 0) {
      return Refuse(i, op, "multiplies activations split on a matrix dim: a reshard is needed");
    }
    const size_t batch = om.size() - 2;
    for (size_t k = 0; k < batch; ++k) {
      const int64_t xk = static_cast<int64_t>(k) - static_cast<int64_t>(om.size() - xm.size());
      const int64_t yk = static_cast<int64_t>(k) - static_cast<int64_t>(om.size() - ym.size());
      const int64_t a = xk >= 0 ? xm[xk] : -1;
      const int64_t b = yk >= 0 ? ym[yk] : -1;
      if (a >= 0 && b >= 0 && a != b) return Refuse(i, op, "has incompatible batch splits");
      if ((a >= 0) != (b >= 0)) {
        return Refuse(i, op, fmt::format("has batch dim {} split in one operand only", k));
      }
      om[k] = a;
    }
    Set(*out, om);
    return Status::Ok();
  }

  Status Elementwise(int i, const Op& op) {
    std::optional<std::string> x = op.SingleInput("X");
    std::optional<std::string> y = op.SingleInput("Y");
    std::optional<std::string> out = op.SingleOutput("Out");
    if (!x || !y || !out) return Refuse(i, op, "needs one X, one Y and one Out");
    const DimsMapping xm = Get(*x);
    const DimsMapping ym = Get(*y);
    const std::vector<int64_t> xd = Dims(*x);
    const std::vector<int64_t> yd = Dims(*y);
    if (ym.size() > xm.size() || xd.size() != xm.size() || yd.size() != ym.size()) {
      return Refuse(i, op, "broadcasts X to Y's rank");
    }
    const int axis = op.AttrOr<int32_t>("axis", -1);
    const size_t start = axis < 0 ? xm.size() - ym.size() : static_cast<size_t>(axis);
    if (start + ym.size() > xm.size()) return Refuse(i, op, "has an axis out of range");
    DimsMapping om = xm;
    for (size_t j = 0; j < ym.size(); ++j) {
      const size_t k = start + j;
      if (ym[j] == xm[k]) continue;
      if (ym[j] < 0 && yd[j] == 1) continue;  // Y broadcasts along X's split dim
      if (xm[k] < 0 && xd[k] == 1) {
        om[k] = ym[j];
        continue;
      }
      return Refuse(i, op,
                    fmt::format("adds '{}' (dims_mapping {}) and '{}' (dims_mapping {}): "
                                "their dim {} is split differently, a reshard is needed",
                                *x, xm, *y, ym, k));
    }
    Set(*out, om);
    return Status::Ok();
  }

  Status SameShape(int i, const Op& op) {
    std::optional<std::string> x = op.SingleInput("X");
    if (!x) return Refuse(i, op, "needs one X");
    const DimsMapping xm = Get(*x);
    if (op.type() == "softmax") {
      const int axis = NormalizeAxis(op.AttrOr<int32_t>("axis", -1), xm.size());
      if (axis < 0 || static_cast<size_t>(axis) >= xm.size() || xm[axis] >= 0) {
        return Refuse(i, op, "normalises along a split dim");
      }
    }
    if (op.type() == "tril_triu" &&
        (xm.size() < 2 || xm[xm.size() - 1] >= 0 || xm[xm.size() - 2] >= 0)) {
      return Refuse(i, op, "masks a matrix split on a matrix dim");
    }
    for (const char* slot : {"Out", "Mask"}) {
      if (std::optional<std::string> out = op.SingleOutput(slot)) Set(*out, Fit(xm, *out));
    }
    return Status::Ok();
  }

  Status Reshape(int i, const Op& op) {
    std::optional<std::string> x = op.SingleInput("X");
    std::optional<std::string> out = op.SingleOutput("Out");
    if (!x || !out) return Refuse(i, op, "needs one X and one Out");
    for (const char* slot : {"Shape", "ShapeTensor"}) {
      const Op::Names* names = op.Input(slot);
      if (names != nullptr && !names->empty())
        return Refuse(i, op, "takes its shape from a tensor");
    }
    const DimsMapping xm = Get(*x);
    const std::vector<int64_t> xd = Dims(*x);
    std::vector<int32_t> shape = op.AttrOr<std::vector<int32_t>>("shape", {});
    size_t k = 0;
    while (k < xm.size() && xm[k] < 0) ++k;
    // The dims before the split one are kept (0 in the target), those after it replicated, and
    // the split dim's tail regroups into the target's tail: the split then falls on the tail's
    // leading factor.
    bool ok = xd.size() == xm.size() && k < shape.size();
    for (size_t j = 0; ok && j < k; ++j) ok = shape[j] == 0;
    for (size_t j = k + 1; ok && j < xm.size(); ++j) ok = xm[j] < 0;
    int64_t tail_in = 1;
    int64_t tail_out = 1;
    for (size_t j = k; ok && j < xd.size(); ++j) {
      ok = xd[j] > 0;
      tail_in *= xd[j];
    }
    for (size_t j = k; ok && j < shape.size(); ++j) {
      ok = shape[j] > 0;
      tail_out *= shape[j];
    }
    if (!ok || tail_in != tail_out) {
      return Refuse(i, op,
                    fmt::format("reshapes '{}' (dims {}, dims_mapping {}) to {}, which "
                                "does not keep the split dim a leading factor",
                                *x, xd, xm, shape));
    }
    if (shape[k] % mp_ != 0) {
      return Refuse(i, op,
                    fmt::format("reshapes the split dim {} of '{}' into {} with leading "
                                "factor {}, which mp_degree {} does not divide (the "
                                "attention heads: {} heads over {} ranks)",
                                k, *x, shape, shape[k], mp_, shape[k], mp_));
    }
    DimsMapping om(shape.size(), -1);
    om[k] = xm[k];
    Set(*out, Fit(om, *out));
    if (std::optional<std::string> xshape = op.SingleOutput("XShape")) {
      DimsMapping xs{-1};
      xs.insert(xs.end(), xm.begin(), xm.end());
      Set(*xshape, Fit(xs, *xshape));
      std::vector<int32_t> local = shape;
      local[k] /= mp_;
      local_reshapes_[*xshape] = local;
      out_.reshapes[i] = std::move(local);
    }
    return Status::Ok();
  }

  Status Transpose(int i, const Op& op) {
    std::optional<std::string> x = op.SingleInput("X");
    std::optional<std::string> out = op.SingleOutput("Out");
    if (!x || !out) return Refuse(i, op, "needs one X and one Out");
    const DimsMapping xm = Get(*x);
    const std::vector<int32_t> axis = op.AttrOr<std::vector<int32_t>>("axis", {});
    if (axis.size() != xm.size()) return Refuse(i, op, "has a permutation of another rank");
    DimsMapping om(axis.size(), -1);
    for (size_t j = 0; j < axis.size(); ++j) {
      if (axis[j] < 0 || static_cast<size_t>(axis[j]) >= xm.size()) {
        return Refuse(i, op, "has a permutation out of range");
      }
      om[j] = xm[axis[j]];
    }
    Set(*out, om);
    if (std::optional<std::string> xshape = op.SingleOutput("XShape")) {
      DimsMapping xs{-1};
      xs.insert(xs.end(), xm.begin(), xm.end());
      Set(*xshape, Fit(xs, *xshape));
    }
    return Status::Ok();
  }

  Status Embedding(int i, const Op& op) {
    std::optional<std::string> ids = op.SingleInput("Ids");
    std::optional<std::string> w = op.SingleInput("W");
    std::optional<std::string> out = op.SingleOutput("Out");
    if (!ids || !w || !out) return Refuse(i, op, "needs one Ids, one W and one Out");
    const DimsMapping wm = Get(*w);
    if (IsSharded(Get(*ids)) || wm.size() != 2 || wm[0] < 0 || wm[1] >= 0) {
      return Refuse(i, op,
                    fmt::format("looks up '{}' (dims_mapping {}): only a table split on "
                                "its rows with replicated ids is vocabulary parallel",
                                *w, wm));
    }
    Replicate(*out);
    out_.ops[i] = ShardedOp::kVocabParallelEmbedding;
    tables_.insert(*w);
    return Status::Ok();
  }

  Status CrossEntropy(int i, const Op& op) {
    std::optional<std::string> logits = op.SingleInput("Logits");
    std::optional<std::string> label = op.SingleInput("Label");
    std::optional<std::string> softmax = op.SingleOutput("Softmax");
    std::optional<std::string> loss = op.SingleOutput("Loss");
    if (!logits || !label || !softmax || !loss) {
      return Refuse(i, op, "needs one Logits, Label, Softmax and Loss");
    }
    const DimsMapping lm = Get(*logits);
    const int axis = NormalizeAxis(op.AttrOr<int32_t>("axis", -1), lm.size());
    DimsMapping expected(lm.size(), -1);
    if (!expected.empty()) expected.back() = 0;
    if (op.AttrOr<bool>("soft_label", false) || IsSharded(Get(*label)) ||
        axis != static_cast<int>(lm.size()) - 1 || lm != expected) {
      return Refuse(i, op,
                    "is parallel only with hard labels, replicated, and logits split "
                    "on the softmax axis, the last one");
    }
    Set(*softmax, lm);
    Replicate(*loss);
    out_.ops[i] = ShardedOp::kParallelCrossEntropy;
    parallel_softmax_.insert(*softmax);
    return Status::Ok();
  }

  void Backward(int i, const Op& op) {
    const std::string& type = op.type();
    if (type == "matmul_v2_grad") {
      auto it = op.SingleInput("Y") ? weights_.find(*op.SingleInput("Y")) : weights_.end();
      if (it == weights_.end()) return;
      out_.ops[i] = it->second == ShardedOp::kColumnParallelMatmul
                        ? ShardedOp::kColumnParallelMatmulGrad
                        : ShardedOp::kRowParallelMatmulGrad;
    } else if (type == "lookup_table_v2_grad") {
      if (op.SingleInput("W") && tables_.count(*op.SingleInput("W"))) {
        out_.ops[i] = ShardedOp::kVocabParallelEmbeddingGrad;
      }
    } else if (type == "softmax_with_cross_entropy_grad") {
      if (op.SingleInput("Softmax") && parallel_softmax_.count(*op.SingleInput("Softmax"))) {
        out_.ops[i] = ShardedOp::kParallelCrossEntropyGrad;
      }
    } else if (type == "reshape2_grad") {
      std::optional<std::string> xshape = op.SingleInput("XShape");
      auto it = xshape ? local_reshapes_.find(*xshape) : local_reshapes_.end();
      if (it != local_reshapes_.end()) out_.reshapes[i] = it->second;
    }
  }

  // The state an optimizer op updates with a sharded parameter is split like the parameter:
  // every argument of the parameter's shape (grad, moments, outputs).
  Status Optimizer(int i, const Op& op) {
    std::optional<std::string> param = op.SingleInput("Param");
    std::vector<std::string> args = Args(op.desc().inputs());
    for (const std::string& arg : Args(op.desc().outputs())) args.push_back(arg);
    if (!param) {
      for (const std::string& arg : args) {
        if (IsSharded(Get(arg))) {
          return Refuse(i, op,
                        fmt::format("updates the sharded '{}' without a Param: an "
                                    "optimizer-stage op across the shards has no rule",
                                    arg));
        }
      }
      return Status::Ok();
    }
    const DimsMapping pm = Get(*param);
    const std::vector<int64_t> pd = Dims(*param);
    for (const std::string& arg : args) {
      if (Dims(arg) == pd) {
        Set(arg, pm);
      } else if (IsSharded(Get(arg))) {
        return Refuse(i, op,
                      fmt::format("reads the sharded '{}', not of its parameter's shape", arg));
      } else if (!out_.vars.count(arg)) {
        Replicate(arg);
      }
    }
    return Status::Ok();
  }

  Status CheckDivisible() const {
    for (int v = 0; v < root_.num_vars(); ++v) {
      const Var var = root_.var(v);
      auto it = out_.vars.find(var.name());
      if (it == out_.vars.end()) continue;
      const std::vector<int64_t> dims = var.dims();
      for (size_t d = 0; d < it->second.size() && d < dims.size(); ++d) {
        if (it->second[d] < 0) continue;
        if (dims[d] <= 0 || dims[d] % mp_ != 0) {
          return Status(StatusCode::kInvalidArgument, Location{}.InBlock(0).AtVar(var.name()),
                        fmt::format("'{}' is split on dim {} ({}), which mp_degree {} does not "
                                    "divide",
                                    var.name(), d, dims[d], mp_));
        }
      }
    }
    return Status::Ok();
  }

  const Block root_;
  const Placements& placements_;
  const int mp_;
  TensorParallelCompletion out_;
  std::map<std::string, ShardedOp> weights_;  // split weight -> its forward matmul's impl
  std::set<std::string> tables_;              // vocabulary-parallel tables
  std::set<std::string> parallel_softmax_;    // Softmax outputs of parallel cross entropies
  std::map<std::string, std::vector<int32_t>> local_reshapes_;  // XShape -> local shape attr
};

}  // namespace

StatusOr<TensorParallelCompletion> CompleteTensorParallel(const Program& main,
                                                          const Placements& placements,
                                                          int mp_degree) {
  if (main.num_blocks() == 0) {
    return Status(StatusCode::kInvalidArgument, Location{}, "the main program has no block");
  }
  if (mp_degree < 1) {
    return Status(StatusCode::kInvalidArgument, Location{},
                  fmt::format("mp_degree {} must be positive", mp_degree));
  }
  return Completer(main, placements, mp_degree).Run();
}

}  // namespace irm::oldir::passes
