// The zero-bubble backward split (pipeline_zero_bubble.h).
#include "oldir/passes/pipeline_zero_bubble.h"

#include <fmt/format.h>

#include <utility>

#include "oldir/builder.h"
#include "oldir/editor.h"
#include "oldir/op_role.h"
#include "oldir/passes/pipeline_stages.h"

namespace irm::oldir::passes {

namespace {

// dims with the first two folded into one (-1 when either is dynamic).
std::vector<int64_t> FoldFirstTwo(const std::vector<int64_t>& dims) {
  std::vector<int64_t> folded = {dims[0] < 0 || dims[1] < 0 ? -1 : dims[0] * dims[1]};
  folded.insert(folded.end(), dims.begin() + 2, dims.end());
  return folded;
}

std::vector<int32_t> ToInts(const std::vector<int64_t>& dims) { return {dims.begin(), dims.end()}; }

std::string FirstOrEmpty(const Op::Names* names) {
  return names == nullptr || names->empty() ? std::string() : *names->begin();
}

// Makes the replacement ops with the grad op's common attributes, and declares their vars.
class Rewriter {
 public:
  Rewriter(const proto::OpDesc& grad_op, proto::BlockDesc& block) : block_(block) {
    const Op op(&grad_op);
    scratch_.set_role(op.role());
    scratch_.set_namescope(op.AttrOr<std::string>(kOpNamescopeAttr, "/"));
    scratch_.set_device(op.AttrOr<std::string>(kOpDeviceAttr, ""));
    chunk_ = ChunkOf(grad_op);
  }

  proto::OpDesc Matmul(const std::string& x, const std::string& y, const std::string& out,
                       bool trans_x, bool trans_y) {
    return Finish(*scratch_.root().AppendOp("matmul_v2", {{"X", {x}}, {"Y", {y}}}, {{"Out", {out}}},
                                            {{"trans_x", trans_x}, {"trans_y", trans_y}}));
  }

  proto::OpDesc Reshape(const std::string& x, const std::string& out,
                        const std::vector<int64_t>& shape) {
    return Finish(*scratch_.root().AppendOp(
        "reshape2", {{"Shape", {}}, {"ShapeTensor", {}}, {"X", {x}}},
        {{"Out", {out}}, {"XShape", {x + "@reshape.xshape"}}}, {{"shape", ToInts(shape)}}));
  }

  // Declares `name` like a tensor of `dtype` and `dims` unless the block has it.
  void Declare(const std::string& name, proto::VarType::Type dtype,
               const std::vector<int64_t>& dims) {
    for (const proto::VarDesc& var : block_.vars()) {
      if (var.name() == name) return;
    }
    *block_.add_vars() = *scratch_.root().CreateVar(name, dtype, dims);
  }

 private:
  proto::OpDesc Finish(proto::OpDesc op) {
    OpEditor(&op).SetAttr(kChunkIdAttr, int32_t{chunk_});
    return op;
  }

  ProgramBuilder scratch_;
  proto::BlockDesc& block_;
  int chunk_ = 0;
};

}  // namespace

Status SplitMatmulGradToMatmul(Program& main, const std::string& file) {
  const Block root = main.root();
  Program edited = main;
  proto::BlockDesc& block = *edited.mutable_desc()->mutable_blocks(0);
  google::protobuf::RepeatedPtrField<proto::OpDesc> ops;
  for (int i = 0; i < root.num_ops(); ++i) {
    const Op op = root.op(i);
    if (op.type() != "matmul_v2_grad" || op.AttrOr<bool>("trans_x", false) ||
        op.AttrOr<bool>("trans_y", false)) {
      *ops.Add() = op.desc();
      continue;
    }
    const std::string x = FirstOrEmpty(op.Input("X"));
    const std::string y = FirstOrEmpty(op.Input("Y"));
    const std::string out_grad = FirstOrEmpty(op.Input("Out@GRAD"));
    std::string x_grad = FirstOrEmpty(op.Output("X@GRAD"));
    std::string y_grad = FirstOrEmpty(op.Output("Y@GRAD"));
    if (x_grad == kEmptyVarName) x_grad.clear();
    if (y_grad == kEmptyVarName) y_grad.clear();
    const std::optional<Var> x_var = root.FindVar(x);
    const std::optional<Var> og_var = root.FindVar(out_grad);
    if (!x_var || !og_var || y.empty()) {
      return Status(StatusCode::kInvalid, OpLocation(file, root, i),
                    "matmul_v2_grad without declared X, Y and Out@GRAD cannot be split");
    }
    const std::vector<int64_t> x_dims = x_var->dims();
    const std::vector<int64_t> og_dims = og_var->dims();
    if (x_dims.size() != og_dims.size() || x_dims.size() < 2 ||
        (x_dims.size() > 2 && (x_dims[0] != og_dims[0] || x_dims[1] != og_dims[1]))) {
      return Status(StatusCode::kInvalid, OpLocation(file, root, i),
                    fmt::format("split_matmul_grad_to_matmul needs X and Out@GRAD of one rank "
                                "(and, above rank 2, the same first two dims); X is [{}], "
                                "Out@GRAD [{}]",
                                fmt::join(x_dims, ", "), fmt::join(og_dims, ", ")));
    }
    Rewriter rewrite(op.desc(), block);
    const proto::VarType::Type dtype = x_var->dtype().value_or(proto::VarType::FP32);
    if (!x_grad.empty()) *ops.Add() = rewrite.Matmul(out_grad, y, x_grad, false, true);
    if (y_grad.empty()) continue;
    if (x_dims.size() == 2) {
      *ops.Add() = rewrite.Matmul(x, out_grad, y_grad, true, false);
      continue;
    }
    const std::optional<Var> yg_var = root.FindVar(y_grad);
    if (!yg_var) {
      return Status(StatusCode::kInvalid, OpLocation(file, root, i),
                    fmt::format("Y@GRAD '{}' is not declared", y_grad));
    }
    const std::vector<int64_t> new_x = FoldFirstTwo(x_dims);
    const std::vector<int64_t> new_og = FoldFirstTwo(og_dims);
    std::vector<int64_t> product(new_x.begin(), new_x.end() - 2);
    product.push_back(new_x.back());
    product.push_back(new_og.back());
    const std::string x2 = x + "@reshape.out";
    const std::string og2 = out_grad + "@reshape.out";
    const std::string yg2 = y_grad + "@reshape.out";
    rewrite.Declare(x2, dtype, new_x);
    rewrite.Declare(og2, dtype, new_og);
    rewrite.Declare(yg2, dtype, product);
    for (const auto& [name, dims] : {std::pair<std::string, std::vector<int64_t>>{x, x_dims},
                                     {out_grad, og_dims},
                                     {yg2, product}}) {
      std::vector<int64_t> xshape = {0};
      xshape.insert(xshape.end(), dims.begin(), dims.end());
      rewrite.Declare(name + "@reshape.xshape", dtype, xshape);
    }
    *ops.Add() = rewrite.Reshape(x, x2, new_x);
    *ops.Add() = rewrite.Reshape(out_grad, og2, new_og);
    *ops.Add() = rewrite.Matmul(x2, og2, yg2, true, false);
    *ops.Add() = rewrite.Reshape(yg2, y_grad, yg_var->dims());
  }
  block.mutable_ops()->Swap(&ops);
  edited.Reindex();
  main = std::move(edited);
  return Status::Ok();
}

std::vector<BackwardPart> BackwardParts(const Program& main) {
  const Block root = main.root();
  const int n = root.num_ops();
  const auto is_param = [&](const std::string& name) {
    const std::optional<Var> var = root.FindVar(name.substr(0, name.find('@')));
    return var && var->is_parameter();
  };
  const auto outputs = [&](int i) {
    std::vector<std::string> names;
    for (const proto::OpDesc::Var& slot : root.op(i).desc().outputs()) {
      for (const std::string& name : slot.arguments()) {
        if (!name.empty()) names.push_back(name);
      }
    }
    return names;
  };
  static const char* const kPattern[] = {"reshape2", "reshape2", "matmul_v2", "reshape2",
                                         "elementwise_add"};
  const auto weight_pattern_at = [&](int i) {
    if (i + 4 >= n) return false;
    for (int k = 0; k < 5; ++k) {
      const Op op = root.op(i + k);
      if (!IsBackward(op.role()) || op.type() != kPattern[k]) return false;
      if (op.type() == "matmul_v2") {
        const std::vector<std::string> names = outputs(i + k);
        if (names.empty() || !is_param(names.front())) return false;
      }
    }
    return true;
  };
  std::vector<BackwardPart> parts(static_cast<size_t>(n), BackwardPart::kB);
  for (int i = 0; i < n; ++i) {
    const std::vector<std::string> names = outputs(i);
    if (names.empty()) continue;
    if (weight_pattern_at(i)) {
      for (int k = 0; k < 5; ++k) parts[static_cast<size_t>(i + k)] = BackwardPart::kW;
      i += 4;
      continue;
    }
    bool all_params = true;
    for (const std::string& name : names) all_params = all_params && is_param(name);
    if (all_params) parts[static_cast<size_t>(i)] = BackwardPart::kW;
  }
  return parts;
}

}  // namespace irm::oldir::passes
