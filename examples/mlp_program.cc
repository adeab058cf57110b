// Builds the example MLP training program op by op, the way Paddle's static graph lays it out:
// forward ops (op_role 0), the loss op (256), the loss-gradient seed (257), grad ops in reverse
// order (1, with op_role_var on those producing parameter gradients), then SGD updates (2).
#include "examples/mlp_program.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "oldir/editor.h"

namespace irm::examples {
namespace {

using oldir::OpEditor;
using oldir::VarEditor;
namespace proto = oldir::proto;
using Strings = std::vector<std::string>;

class Writer {
 public:
  Writer(proto::BlockDesc* block, bool with_callstack)
      : block_(block), with_callstack_(with_callstack) {}

  VarEditor Var(const std::string& name, proto::VarType::Type dtype, std::vector<int64_t> dims) {
    proto::VarDesc* var = block_->add_vars();
    var->set_name(name);
    VarEditor editor(var);
    editor.SetDenseTensor(dtype, dims);
    return editor;
  }

  VarEditor Param(const std::string& name, std::vector<int64_t> dims) {
    VarEditor v = Var(name, proto::VarType::FP32, std::move(dims));
    v.SetPersistable(true).SetIsParameter(true);
    return v;
  }

  OpEditor Op(const std::string& type, int role, Strings role_var = {}) {
    OpEditor op(block_->add_ops());
    op.SetType(type);
    op.SetAttr(oldir::kOpRoleAttr, role);
    op.SetAttr(oldir::kOpRoleVarAttr, std::move(role_var));
    op.SetAttr(oldir::kOpNamescopeAttr, std::string("/"));
    if (with_callstack_) {
      op.SetAttr(oldir::kOpCallstackAttr,
                 Strings{fmt::format("  File \"train.py\", line {}, in build_model", 20 + count_),
                         fmt::format("    out = layer(out)  # op {}", count_)});
    }
    op.SetAttr(oldir::kOpDeviceAttr, std::string(""));
    op.SetAttr("with_quant_attr", false);
    ++count_;
    return op;
  }

 private:
  proto::BlockDesc* block_;
  bool with_callstack_;
  int count_ = 0;
};

std::string Grad(const std::string& name) { return name + oldir::kGradSuffix; }

struct Layer {
  std::string input, weight, bias, matmul_out, add_out, relu_out;  // relu_out empty on the last
};

}  // namespace

oldir::Program MakeMlpTrainingProgram(const MlpOptions& options) {
  proto::ProgramDesc desc;
  desc.mutable_version()->set_version(0);
  proto::BlockDesc* block = desc.add_blocks();
  block->set_idx(0);
  block->set_parent_idx(-1);
  Writer w(block, options.with_callstack);

  w.Var("x", proto::VarType::FP32, {-1, options.in_features})
      .SetNeedCheckFeed(true)
      .SetStopGradient(true);
  w.Var("label", proto::VarType::INT64, {-1, 1}).SetNeedCheckFeed(true).SetStopGradient(true);
  w.Var("learning_rate_0", proto::VarType::FP32, {1}).SetPersistable(true).SetStopGradient(true);

  // Forward.
  std::vector<Layer> layers;
  std::string current = "x";
  int64_t width = options.in_features;
  for (int i = 0; i < options.layers; ++i) {
    const bool last = i + 1 == options.layers;
    const int64_t out = last ? options.classes : options.hidden;
    Layer l;
    l.input = current;
    l.weight = fmt::format("linear_{}.w_0", i);
    l.bias = fmt::format("linear_{}.b_0", i);
    l.matmul_out = fmt::format("linear_{}.tmp_0", i);
    l.add_out = fmt::format("linear_{}.tmp_1", i);
    w.Param(l.weight, {width, out});
    w.Param(l.bias, {out});
    w.Var(l.matmul_out, proto::VarType::FP32, {-1, out});
    w.Var(l.add_out, proto::VarType::FP32, {-1, out});
    w.Op("matmul_v2", oldir::kForward)
        .SetInput("X", {l.input})
        .SetInput("Y", {l.weight})
        .SetOutput("Out", {l.matmul_out})
        .SetAttr("trans_x", false)
        .SetAttr("trans_y", false);
    w.Op("elementwise_add", oldir::kForward)
        .SetInput("X", {l.matmul_out})
        .SetInput("Y", {l.bias})
        .SetOutput("Out", {l.add_out})
        .SetAttr("axis", -1);
    current = l.add_out;
    if (!last) {
      l.relu_out = fmt::format("relu_{}.tmp_0", i);
      w.Var(l.relu_out, proto::VarType::FP32, {-1, out});
      w.Op("relu", oldir::kForward).SetInput("X", {l.add_out}).SetOutput("Out", {l.relu_out});
      current = l.relu_out;
    }
    layers.push_back(l);
    width = out;
  }
  const std::string softmax = "softmax_with_cross_entropy_0.tmp_0";
  const std::string loss_vec = "softmax_with_cross_entropy_0.tmp_1";
  const std::string loss = "mean_0.tmp_0";
  w.Var(softmax, proto::VarType::FP32, {-1, options.classes});
  w.Var(loss_vec, proto::VarType::FP32, {-1, 1});
  w.Var(loss, proto::VarType::FP32, {});
  w.Op("softmax_with_cross_entropy", oldir::kForward)
      .SetInput("Logits", {current})
      .SetInput("Label", {"label"})
      .SetOutput("Softmax", {softmax})
      .SetOutput("Loss", {loss_vec})
      .SetAttr("soft_label", false)
      .SetAttr("ignore_index", -100)
      .SetAttr("axis", -1)
      .SetAttr("numeric_stable_mode", true)
      .SetAttr("use_softmax", true);
  w.Op("mean", oldir::kForward | oldir::kLoss).SetInput("X", {loss_vec}).SetOutput("Out", {loss});

  // Backward: the seed, then grad ops in reverse.
  w.Var(Grad(loss), proto::VarType::FP32, {});
  w.Op("fill_constant", oldir::kBackward | oldir::kLoss)
      .SetOutput("Out", {Grad(loss)})
      .SetAttr("shape", std::vector<int64_t>{})
      .SetAttr("value", 1.0f)
      .SetAttr("dtype", static_cast<int32_t>(proto::VarType::FP32))
      .SetAttr("force_cpu", false)
      .SetAttr("str_value", std::string("1.0"))
      .SetAttr("place_type", -1);
  w.Var(Grad(loss_vec), proto::VarType::FP32, {-1, 1});
  w.Op("mean_grad", oldir::kBackward)
      .SetInput("X", {loss_vec})
      .SetInput("Out@GRAD", {Grad(loss)})
      .SetOutput("X@GRAD", {Grad(loss_vec)});
  w.Var(Grad(current), proto::VarType::FP32, {-1, options.classes});
  w.Op("softmax_with_cross_entropy_grad", oldir::kBackward)
      .SetInput("Label", {"label"})
      .SetInput("Softmax", {softmax})
      .SetInput("Loss@GRAD", {Grad(loss_vec)})
      .SetOutput("Logits@GRAD", {Grad(current)})
      .SetAttr("soft_label", false)
      .SetAttr("ignore_index", -100)
      .SetAttr("axis", -1)
      .SetAttr("numeric_stable_mode", true)
      .SetAttr("use_softmax", true);

  for (int i = options.layers - 1; i >= 0; --i) {
    const Layer& l = layers[i];
    const int64_t out = i + 1 == options.layers ? options.classes : options.hidden;
    const int64_t in = i == 0 ? options.in_features : options.hidden;
    if (!l.relu_out.empty()) {
      w.Var(Grad(l.add_out), proto::VarType::FP32, {-1, out});
      w.Op("relu_grad", oldir::kBackward)
          .SetInput("Out", {l.relu_out})
          .SetInput("Out@GRAD", {Grad(l.relu_out)})
          .SetOutput("X@GRAD", {Grad(l.add_out)});
    }
    w.Var(Grad(l.matmul_out), proto::VarType::FP32, {-1, out});
    w.Var(Grad(l.bias), proto::VarType::FP32, {out});
    w.Op("elementwise_add_grad", oldir::kBackward, {l.bias, Grad(l.bias)})
        .SetInput("X", {l.matmul_out})
        .SetInput("Y", {l.bias})
        .SetInput("Out@GRAD", {Grad(l.add_out)})
        .SetOutput("X@GRAD", {Grad(l.matmul_out)})
        .SetOutput("Y@GRAD", {Grad(l.bias)})
        .SetAttr("axis", -1);
    w.Var(Grad(l.weight), proto::VarType::FP32, {in, out});
    OpEditor mm = w.Op("matmul_v2_grad", oldir::kBackward, {l.weight, Grad(l.weight)});
    mm.SetInput("X", {l.input})
        .SetInput("Y", {l.weight})
        .SetInput("Out@GRAD", {Grad(l.matmul_out)})
        .SetOutput("Y@GRAD", {Grad(l.weight)})
        .SetAttr("trans_x", false)
        .SetAttr("trans_y", false);
    if (i > 0) {
      w.Var(Grad(l.input), proto::VarType::FP32, {-1, in});
      mm.SetOutput("X@GRAD", {Grad(l.input)});
    } else {  // x is data (stop_gradient): Paddle keeps the slot, empty
      mm.SetOutput("X@GRAD", {});
    }
  }

  // Optimizer: SGD updates the parameters in place.
  for (const Layer& l : layers) {
    for (const std::string& param : {l.weight, l.bias}) {
      w.Op("sgd", oldir::kOptimize, {param, Grad(param)})
          .SetInput("Param", {param})
          .SetInput("Grad", {Grad(param)})
          .SetInput("LearningRate", {"learning_rate_0"})
          .SetOutput("ParamOut", {param})
          .SetAttr("multi_precision", false);
    }
  }
  return oldir::Program(std::move(desc));
}

}  // namespace irm::examples
