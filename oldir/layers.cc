// Implementation of the forward layers: per op, the input checks, the output dims Paddle's
// compile-time InferShape gives, the output names and flags, and the full attribute set.
#include "oldir/layers.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <utility>

#include "oldir/initializer.h"

namespace irm::oldir::layers {
namespace {

using models::FeedSpec;
using models::ModelPrograms;
using Dims = std::vector<int64_t>;

// A declared input var, as an op about to be appended sees it.
struct Tensor {
  std::string name;
  proto::VarType::Type dtype = proto::VarType::FP32;
  Dims dims;
  bool stop_gradient = false;
  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
};

// The op about to be appended: where its errors point, and its inputs.
class Site {
 public:
  Site(BlockBuilder& block, std::string type) : block_(block), type_(std::move(type)) {}

  Status Invalid(std::string message, const std::string& var = "") const {
    Location location;
    location.InBlock(block_.index()).AtOp(block_.num_ops(), type_);
    if (!var.empty()) location.AtVar(var);
    return Status(StatusCode::kInvalidArgument, std::move(location), std::move(message));
  }

  StatusOr<Tensor> Input(const std::string& name) const {
    const proto::VarDesc* var = block_.FindVar(name);
    if (var == nullptr) return Invalid(fmt::format("input '{}' is not declared", name), name);
    if (var->type().type() != proto::VarType::DENSE_TENSOR || !var->type().has_dense_tensor()) {
      return Invalid(fmt::format("input '{}' is not a dense tensor", name), name);
    }
    const proto::VarType::TensorDesc& desc = var->type().dense_tensor().tensor();
    return Tensor{name, desc.data_type(), Dims(desc.dims().begin(), desc.dims().end()),
                  var->stop_gradient()};
  }

  StatusOr<std::vector<Tensor>> Inputs(const std::vector<std::string>& names) const {
    if (names.empty()) return Invalid("the op needs at least one input");
    std::vector<Tensor> tensors;
    for (const std::string& name : names) {
      IRM_ASSIGN_OR_RETURN(Tensor t, Input(name));
      tensors.push_back(std::move(t));
    }
    return tensors;
  }

  // An axis in [-rank, rank) made non-negative.
  StatusOr<int64_t> Axis(int64_t axis, const Tensor& x) const {
    if (axis < -x.rank() || axis >= x.rank()) {
      return Invalid(
          fmt::format("axis {} is out of range for '{}' of rank {}", axis, x.name, x.rank()),
          x.name);
    }
    return axis < 0 ? axis + x.rank() : axis;
  }

 private:
  BlockBuilder& block_;
  std::string type_;
};

// One LayerHelper: "<key>_N", its outputs "<key>_N.tmp_K".
class Helper {
 public:
  Helper(BlockBuilder& block, std::string_view key)
      : names_(block.program().names()), prefix_(names_.Generate(key) + ".tmp") {}
  std::string Next() { return names_.Generate(prefix_); }

 private:
  UniqueNameGenerator& names_;
  std::string prefix_;
};

std::string TempName(BlockBuilder& block) { return block.program().names().Temp(); }

bool AllStopGradient(const std::vector<const Tensor*>& inputs) {
  return std::all_of(inputs.begin(), inputs.end(),
                     [](const Tensor* t) { return t->stop_gradient; });
}

std::string Declare(BlockBuilder& block, const std::string& name, proto::VarType::Type dtype,
                    const Dims& dims, bool stop_gradient) {
  block.CreateVar(name, dtype, dims, {.stop_gradient = stop_gradient});
  return name;
}

// Paddle's product of dims, -1 when one is unknown.
int64_t Product(Dims::const_iterator begin, Dims::const_iterator end) {
  int64_t product = 1;
  for (auto it = begin; it != end; ++it) {
    if (*it < 0) return -1;
    product *= *it;
  }
  return product;
}

// "'x' [-1, 3]" for messages.
std::string Describe(const Tensor& t) {
  return fmt::format("'{}' [{}]", t.name, fmt::join(t.dims, ", "));
}

// reshape2 / transpose2: Out, then XShape, whose dims are [0] + x's (Paddle's convention).
ShapeOpOutputs DeclareShapeOp(BlockBuilder& block, std::string_view key, const Tensor& x,
                              const Dims& out_dims) {
  Helper helper(block, key);
  Dims xshape = {0};
  xshape.insert(xshape.end(), x.dims.begin(), x.dims.end());
  ShapeOpOutputs outs;
  outs.out = Declare(block, helper.Next(), x.dtype, out_dims, x.stop_gradient);
  outs.xshape = Declare(block, helper.Next(), x.dtype, xshape, x.stop_gradient);
  return outs;
}

// ---- attribute sets (op maker defaults + op_compat.yaml extras) --------------------------------

AttrList Join(std::initializer_list<AttrList> parts) {
  AttrList out;
  for (const AttrList& part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

AttrList MkldnnExtras() {
  return {{"use_mkldnn", false}, {"mkldnn_data_type", std::string("float32")}};
}
AttrList ElementwiseAttrs(int32_t axis) {
  return Join({{{"axis", axis},
                {"use_quantizer", false},
                {"Scale_x", 1.0f},
                {"Scale_y", 1.0f},
                {"Scale_out", 1.0f}},
               MkldnnExtras()});
}
AttrList ActivationExtras() { return {{"use_mkldnn", false}, {"use_cudnn", false}}; }

StatusOr<std::string> Elementwise(BlockBuilder& block, const std::string& type,
                                  const std::string& x, const std::string& y) {
  Site site(block, type);
  IRM_ASSIGN_OR_RETURN(Tensor tx, site.Input(x));
  IRM_ASSIGN_OR_RETURN(Tensor ty, site.Input(y));
  StatusOr<Dims> dims = BroadcastDims(tx.dims, ty.dims);
  if (!dims.ok()) return site.Invalid(dims.status().message(), y);
  const std::string out =
      Declare(block, TempName(block), tx.dtype, *dims, AllStopGradient({&tx, &ty}));
  block.AppendOp(type, {{"X", {x}}, {"Y", {y}}}, {{"Out", {out}}}, ElementwiseAttrs(-1));
  return out;
}

// An op with input X, output Out of X's dims and dtype, named "<key>_N.tmp_0".
StatusOr<std::string> SameShape(BlockBuilder& block, std::string_view key, const std::string& type,
                                const std::string& x, AttrList attrs, SlotArgs inputs = {}) {
  Site site(block, type);
  IRM_ASSIGN_OR_RETURN(Tensor tx, site.Input(x));
  const std::string out =
      Declare(block, Helper(block, key).Next(), tx.dtype, tx.dims, AllStopGradient({&tx}));
  inputs.emplace_back("X", std::vector<std::string>{x});
  block.AppendOp(type, std::move(inputs), {{"Out", {out}}}, std::move(attrs));
  return out;
}

StatusOr<std::string> Reduce(BlockBuilder& block, std::string_view key, const std::string& type,
                             const std::string& x, const std::vector<int32_t>& dims,
                             bool keep_dim) {
  Site site(block, type);
  IRM_ASSIGN_OR_RETURN(Tensor tx, site.Input(x));
  std::vector<bool> reduced(tx.dims.size(), dims.empty());
  for (int32_t d : dims) {
    IRM_ASSIGN_OR_RETURN(int64_t axis, site.Axis(d, tx));
    reduced[static_cast<size_t>(axis)] = true;
  }
  const bool reduce_all = dims.empty() || dims.size() == tx.dims.size();
  Dims out_dims;
  for (size_t i = 0; i < tx.dims.size(); ++i) {
    if (!reduced[i]) {
      out_dims.push_back(tx.dims[i]);
    } else if (keep_dim) {
      out_dims.push_back(1);
    }
  }
  const std::string out =
      Declare(block, Helper(block, key).Next(), tx.dtype, out_dims, AllStopGradient({&tx}));
  block.AppendOp(type, {{"X", {x}}}, {{"Out", {out}}},
                 {{"dim", dims},
                  {"keep_dim", keep_dim},
                  {"reduce_all", reduce_all},
                  {"in_dtype", -1},
                  {"out_dtype", -1},
                  {"use_mkldnn", false}});
  return out;
}

StatusOr<std::vector<std::string>> SplitImpl(BlockBuilder& block, const std::string& x, int32_t num,
                                             const std::vector<int32_t>& sections, int32_t axis) {
  Site site(block, "split");
  IRM_ASSIGN_OR_RETURN(Tensor tx, site.Input(x));
  IRM_ASSIGN_OR_RETURN(int64_t a, site.Axis(axis, tx));
  const int64_t size = tx.dims[static_cast<size_t>(a)];
  Dims parts;  // the size of each output along the axis
  if (num > 0) {
    if (num < 2) return site.Invalid(fmt::format("num {} must be at least 2", num), x);
    if (size > 0 && size % num != 0) {
      return site.Invalid(fmt::format("dim {} of size {} does not split into {}", a, size, num), x);
    }
    parts.assign(static_cast<size_t>(num), size > 0 ? size / num : -1);
  } else {
    if (sections.empty()) return site.Invalid("split needs num or sections", x);
    int64_t known = 0;
    int unknown = 0;
    for (int32_t s : sections) {
      if (s == -1) {
        ++unknown;
      } else if (s <= 0) {
        return site.Invalid(fmt::format("section {} must be positive or -1", s), x);
      } else {
        known += s;
      }
    }
    if (unknown > 1) return site.Invalid("at most one section may be -1", x);
    if (size > 0 && (unknown == 0 ? known != size : known >= size)) {
      return site.Invalid(fmt::format("sections [{}] do not fit dim {} of size {}",
                                      fmt::join(sections, ", "), a, size),
                          x);
    }
    for (int32_t s : sections) parts.push_back(s != -1 ? s : (size > 0 ? size - known : -1));
  }
  Helper helper(block, "split");
  std::vector<std::string> outs;
  for (int64_t part : parts) {
    Dims dims = tx.dims;
    dims[static_cast<size_t>(a)] = part;
    outs.push_back(Declare(block, helper.Next(), tx.dtype, dims, AllStopGradient({&tx})));
  }
  block.AppendOp("split", {{"X", {x}}, {"AxisTensor", {}}, {"SectionsTensorList", {}}},
                 {{"Out", outs}},
                 Join({{{"axis", static_cast<int32_t>(a)},
                        {"num", num > 0 ? num : 0},
                        {"sections", num > 0 ? std::vector<int32_t>{} : sections}},
                       MkldnnExtras()}));
  return outs;
}

StatusOr<std::string> TrilTriu(BlockBuilder& block, std::string_view key, const std::string& x,
                               int32_t diagonal, bool lower) {
  Site site(block, "tril_triu");
  IRM_ASSIGN_OR_RETURN(Tensor tx, site.Input(x));
  if (tx.rank() < 2) return site.Invalid(fmt::format("'{}' has rank {} (< 2)", x, tx.rank()), x);
  return SameShape(block, key, "tril_triu", x, {{"diagonal", diagonal}, {"lower", lower}});
}

// Python's str(float(v)): the shortest repr, with ".0" on integral values.
std::string PythonFloat(double value) {
  std::string text = fmt::format("{}", value);
  if (text.find_first_not_of("-0123456789") == std::string::npos) text += ".0";
  return text;
}

std::string CreateParameter(ModelPrograms* programs, const std::string& name, const Dims& dims,
                            const Initializer& init) {
  const VarOptions options = {.persistable = true, .is_parameter = true};
  // Paddle declares the startup copy and its initialiser first, then the main program's var.
  programs->startup.root().CreateVar(name, proto::VarType::FP32, dims, options);
  AppendInitializer(programs->startup, name, proto::VarType::FP32, dims, init, programs->seed);
  programs->main.root().CreateVar(name, proto::VarType::FP32, dims, options);
  return name;
}

Status CheckPositive(std::string_view layer, std::initializer_list<int64_t> sizes) {
  for (int64_t size : sizes) {
    if (size <= 0) {
      return Status(StatusCode::kInvalidArgument, Location{},
                    fmt::format("{}: sizes must be positive, got {}", layer, size));
    }
  }
  return Status::Ok();
}

}  // namespace

// ---- shape helpers -----------------------------------------------------------------------------

StatusOr<Dims> BroadcastDims(const Dims& x, const Dims& y) {
  if (x == y) return x;
  const size_t rank = std::max(x.size(), y.size());
  Dims out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Right-aligned: axis -1 puts the shorter operand at the end.
    const int64_t a = i + x.size() >= rank ? x[i + x.size() - rank] : 1;
    const int64_t b = i + y.size() >= rank ? y[i + y.size() - rank] : 1;
    if (a != b && a > 1 && b > 1) {
      return Status(StatusCode::kInvalidArgument, Location{},
                    fmt::format("dims [{}] and [{}] do not broadcast", fmt::join(x, ", "),
                                fmt::join(y, ", ")));
    }
    out[i] = (a > 1 || b > 1 || (a == 1 && b == 1)) ? std::max(a, b) : -1;
  }
  return out;
}

// ---- feeds -------------------------------------------------------------------------------------

StatusOr<std::string> Data(ModelPrograms* programs, const FeedSpec& spec) {
  BlockBuilder& root = programs->main.root();
  if (root.FindLocalVar(spec.name) != nullptr) {
    return Status(StatusCode::kInvalidArgument, Location{}.InBlock(0).AtVar(spec.name),
                  fmt::format("data var '{}' is already declared", spec.name));
  }
  root.CreateVar(spec.name, spec.dtype, spec.shape,
                 {.stop_gradient = true, .need_check_feed = true});
  programs->feeds.push_back(spec);
  return spec.name;
}

Status PrependFeedOps(ModelPrograms* programs) {
  BlockBuilder& root = programs->main.root();
  for (const proto::OpDesc& op : root.desc()->ops()) {
    if (op.type() == "feed") {
      return Status(StatusCode::kInvalidArgument, Location{}.InBlock(0),
                    "the main program already has feed ops");
    }
  }
  for (const FeedSpec& feed : programs->feeds) {
    if (root.FindLocalVar(feed.name) == nullptr) {
      return Status(StatusCode::kInvalidArgument, Location{}.InBlock(0).AtVar(feed.name),
                    fmt::format("fed var '{}' is not declared", feed.name));
    }
  }
  root.CreateTypedVar("feed", proto::VarType::FEED_MINIBATCH, /*persistable=*/true);
  for (size_t i = 0; i < programs->feeds.size(); ++i) {
    root.AppendOp("feed", {{"X", {"feed"}}}, {{"Out", {programs->feeds[i].name}}},
                  {{"col", static_cast<int32_t>(i)}});
    // _prepend_op: move the new op to the front.
    auto* ops = root.desc()->mutable_ops();
    for (int k = ops->size() - 1; k > 0; --k) ops->SwapElements(k, k - 1);
  }
  return Status::Ok();
}

// ---- parameter layers --------------------------------------------------------------------------

StatusOr<LinearLayer> CreateLinear(ModelPrograms* programs, int64_t in, int64_t out,
                                   bool with_bias) {
  IRM_RETURN_IF_ERROR(CheckPositive("nn.Linear", {in, out}));
  UniqueNameGenerator& names = programs->main.names();
  LinearLayer layer;
  layer.name = names.Generate("linear");
  layer.in = in;
  layer.out = out;
  layer.weight = CreateParameter(programs, names.Generate(layer.name + ".w"), {in, out},
                                 Initializer::XavierUniform(in, out));
  if (with_bias) {
    layer.bias = CreateParameter(programs, names.Generate(layer.name + ".b"), {out},
                                 Initializer::Constant(0.0f));
  }
  return layer;
}

StatusOr<std::string> Linear(BlockBuilder& block, const LinearLayer& layer, const std::string& x) {
  Site site(block, "matmul_v2");
  IRM_ASSIGN_OR_RETURN(Tensor tx, site.Input(x));
  IRM_ASSIGN_OR_RETURN(Tensor tw, site.Input(layer.weight));
  if (tx.rank() < 1 || tw.dims.size() != 2 ||
      (tx.dims.back() > 0 && tx.dims.back() != tw.dims[0])) {
    return site.Invalid(fmt::format("{} does not multiply {}", Describe(tx), Describe(tw)), x);
  }
  Helper helper(block, "linear");
  Dims dims = tx.dims;
  dims.back() = tw.dims[1];
  const std::string product =
      Declare(block, helper.Next(), tx.dtype, dims, AllStopGradient({&tx, &tw}));
  block.AppendOp("matmul_v2", {{"X", {x}}, {"Y", {layer.weight}}}, {{"Out", {product}}},
                 Join({{{"trans_x", false}, {"trans_y", false}}, MkldnnExtras()}));
  if (layer.bias.empty()) return product;
  Site add_site(block, "elementwise_add");
  IRM_ASSIGN_OR_RETURN(Tensor tb, add_site.Input(layer.bias));
  const std::string sum =
      Declare(block, helper.Next(), tx.dtype, dims, AllStopGradient({&tx, &tw, &tb}));
  // F.linear adds the bias at axis rank(x) - 1, not -1.
  block.AppendOp("elementwise_add", {{"X", {product}}, {"Y", {layer.bias}}}, {{"Out", {sum}}},
                 ElementwiseAttrs(static_cast<int32_t>(tx.rank() - 1)));
  return sum;
}

StatusOr<LayerNormLayer> CreateLayerNorm(ModelPrograms* programs, int64_t size, float epsilon) {
  IRM_RETURN_IF_ERROR(CheckPositive("nn.LayerNorm", {size}));
  UniqueNameGenerator& names = programs->main.names();
  LayerNormLayer layer;
  layer.name = names.Generate("layer_norm");
  layer.size = size;
  layer.epsilon = epsilon;
  layer.scale = CreateParameter(programs, names.Generate(layer.name + ".w"), {size},
                                Initializer::Constant(1.0f));
  layer.bias = CreateParameter(programs, names.Generate(layer.name + ".b"), {size},
                               Initializer::Constant(0.0f));
  return layer;
}

StatusOr<LayerNormOutputs> LayerNorm(BlockBuilder& block, const LayerNormLayer& layer,
                                     const std::string& x) {
  Site site(block, "layer_norm");
  IRM_ASSIGN_OR_RETURN(Tensor tx, site.Input(x));
  IRM_ASSIGN_OR_RETURN(Tensor ts, site.Input(layer.scale));
  IRM_ASSIGN_OR_RETURN(Tensor tb, site.Input(layer.bias));
  if (tx.rank() < 2 || (tx.dims.back() > 0 && tx.dims.back() != layer.size)) {
    return site.Invalid(
        fmt::format("{} does not end in the normalised size {}", Describe(tx), layer.size), x);
  }
  const int32_t begin_norm_axis = static_cast<int32_t>(tx.rank() - 1);
  // Mean and Variance hold one value per row: the product of the leading dims. Paddle's InferMeta
  // multiplies a -1 through (giving -seq); we write -1, the one negative dim a var may have.
  const Dims rows = {Product(tx.dims.begin(), tx.dims.end() - 1)};
  // F.layer_norm keeps the statistics in float32 for a float16 input.
  const auto stats_dtype = tx.dtype == proto::VarType::FP16 ? proto::VarType::FP32 : tx.dtype;
  Helper helper(block, "layer_norm");
  LayerNormOutputs outs;
  outs.mean = Declare(block, helper.Next(), stats_dtype, rows, true);
  outs.variance = Declare(block, helper.Next(), stats_dtype, rows, true);
  outs.y = Declare(block, helper.Next(), tx.dtype, tx.dims, AllStopGradient({&tx, &ts, &tb}));
  block.AppendOp(
      "layer_norm", {{"X", {x}}, {"Scale", {layer.scale}}, {"Bias", {layer.bias}}},
      {{"Y", {outs.y}}, {"Mean", {outs.mean}}, {"Variance", {outs.variance}}},
      Join({{{"epsilon", layer.epsilon}, {"begin_norm_axis", begin_norm_axis}, {"is_test", false}},
            MkldnnExtras()}));
  return outs;
}

StatusOr<EmbeddingLayer> CreateEmbedding(ModelPrograms* programs, int64_t num, int64_t dim) {
  IRM_RETURN_IF_ERROR(CheckPositive("nn.Embedding", {num, dim}));
  UniqueNameGenerator& names = programs->main.names();
  EmbeddingLayer layer;
  layer.name = names.Generate("embedding");
  layer.num = num;
  layer.dim = dim;
  layer.weight = CreateParameter(programs, names.Generate(layer.name + ".w"), {num, dim},
                                 Initializer::XavierUniform(num, dim));
  return layer;
}

StatusOr<std::string> Embedding(BlockBuilder& block, const EmbeddingLayer& layer,
                                const std::string& ids) {
  Site site(block, "lookup_table_v2");
  IRM_ASSIGN_OR_RETURN(Tensor tids, site.Input(ids));
  IRM_ASSIGN_OR_RETURN(Tensor tw, site.Input(layer.weight));
  if (tids.dtype != proto::VarType::INT64 && tids.dtype != proto::VarType::INT32) {
    return site.Invalid(fmt::format("ids '{}' must be int64 or int32", ids), ids);
  }
  Dims dims = tids.dims;
  dims.push_back(layer.dim);
  const std::string out = Declare(block, Helper(block, "embedding").Next(), tw.dtype, dims,
                                  AllStopGradient({&tids, &tw}));
  block.AppendOp("lookup_table_v2", {{"Ids", {ids}}, {"W", {layer.weight}}}, {{"Out", {out}}},
                 {{"padding_idx", int64_t{-1}},
                  {"is_sparse", false},
                  {"is_distributed", false},
                  {"remote_prefetch", false},
                  {"trainer_id", 0},
                  {"slot", 0},
                  {"height_sections", std::vector<int64_t>{}},
                  {"epmap", std::vector<std::string>{}},
                  {"table_names", std::vector<std::string>{}}});
  return out;
}

// ---- functional layers -------------------------------------------------------------------------

StatusOr<std::string> MatMul(BlockBuilder& block, const std::string& x, const std::string& y,
                             bool trans_x, bool trans_y) {
  Site site(block, "matmul_v2");
  IRM_ASSIGN_OR_RETURN(Tensor tx, site.Input(x));
  IRM_ASSIGN_OR_RETURN(Tensor ty, site.Input(y));
  if (tx.rank() == 0 || ty.rank() == 0)
    return site.Invalid("matmul_v2 needs rank >= 1 operands", x);
  // MatmulInferMeta: a vector operand becomes a matrix, and its extra dim is dropped again.
  Dims dx = tx.dims, dy = ty.dims;
  const bool x_vector = dx.size() == 1, y_vector = dy.size() == 1;
  if (x_vector) dx.insert(dx.begin(), 1);
  if (y_vector) dy.push_back(1);
  const size_t nx = dx.size(), ny = dy.size();
  const int64_t k_x = (trans_x && !x_vector) ? dx[nx - 2] : dx[nx - 1];
  const int64_t k_y = (trans_y && !y_vector) ? dy[ny - 1] : dy[ny - 2];
  if (k_x > 0 && k_y > 0 && k_x != k_y) {
    return site.Invalid(fmt::format("{} and {} do not multiply", Describe(tx), Describe(ty)), y);
  }
  Dims out;
  if (nx > ny) {
    out.assign(dx.begin(), dx.end() - 2);
  } else if (nx < ny) {
    out.assign(dy.begin(), dy.end() - 2);
  } else {
    for (size_t i = 0; i + 2 < nx; ++i) out.push_back(std::max(dx[i], dy[i]));
  }
  if (!x_vector) out.push_back(trans_x ? dx[nx - 1] : dx[nx - 2]);
  if (!y_vector) out.push_back(trans_y ? dy[ny - 2] : dy[ny - 1]);
  const std::string name =
      Declare(block, Helper(block, "matmul_v2").Next(), tx.dtype, out, AllStopGradient({&tx, &ty}));
  block.AppendOp("matmul_v2", {{"X", {x}}, {"Y", {y}}}, {{"Out", {name}}},
                 Join({{{"trans_x", trans_x}, {"trans_y", trans_y}}, MkldnnExtras()}));
  return name;
}

StatusOr<std::string> Add(BlockBuilder& block, const std::string& x, const std::string& y) {
  return Elementwise(block, "elementwise_add", x, y);
}
StatusOr<std::string> Subtract(BlockBuilder& block, const std::string& x, const std::string& y) {
  return Elementwise(block, "elementwise_sub", x, y);
}
StatusOr<std::string> Multiply(BlockBuilder& block, const std::string& x, const std::string& y) {
  return Elementwise(block, "elementwise_mul", x, y);
}
StatusOr<std::string> Divide(BlockBuilder& block, const std::string& x, const std::string& y) {
  return Elementwise(block, "elementwise_div", x, y);
}

StatusOr<std::string> Relu(BlockBuilder& block, const std::string& x) {
  return SameShape(block, "relu", "relu", x, ActivationExtras());
}
StatusOr<std::string> Tanh(BlockBuilder& block, const std::string& x) {
  return SameShape(block, "tanh", "tanh", x, ActivationExtras());
}
StatusOr<std::string> Sigmoid(BlockBuilder& block, const std::string& x) {
  return SameShape(block, "sigmoid", "sigmoid", x, ActivationExtras());
}
StatusOr<std::string> Gelu(BlockBuilder& block, const std::string& x, bool approximate) {
  return SameShape(block, "gelu", "gelu", x,
                   Join({{{"approximate", approximate}}, MkldnnExtras()}));
}
StatusOr<std::string> Softmax(BlockBuilder& block, const std::string& x, int32_t axis) {
  Site site(block, "softmax");
  IRM_ASSIGN_OR_RETURN(Tensor tx, site.Input(x));
  IRM_RETURN_IF_ERROR(site.Axis(axis, tx).status());
  // F.softmax passes use_cudnn=True (the extra's default too).
  return SameShape(block, "softmax", "softmax", x,
                   Join({{{"axis", axis},
                          {"data_format", std::string("AnyLayout")},
                          {"use_cudnn", true},
                          {"is_test", false}},
                         MkldnnExtras()}));
}

StatusOr<DropoutOutputs> Dropout(BlockBuilder& block, const std::string& x, float p, bool is_test,
                                 int32_t program_seed, const std::string& mode) {
  Site site(block, "dropout");
  IRM_ASSIGN_OR_RETURN(Tensor tx, site.Input(x));
  if (!(p >= 0.0f && p <= 1.0f)) {
    return site.Invalid(fmt::format("dropout probability {} is not in [0, 1]", p), x);
  }
  if (mode != "upscale_in_train" && mode != "downgrade_in_infer") {
    return site.Invalid(fmt::format("unknown dropout mode '{}'", mode), x);
  }
  if (p == 0.0f) return DropoutOutputs{x, ""};  // F.dropout's fast path: no op
  Helper helper(block, "dropout");
  DropoutOutputs outs;
  outs.out = Declare(block, helper.Next(), tx.dtype, tx.dims, AllStopGradient({&tx}));
  outs.mask = Declare(block, helper.Next(), proto::VarType::UINT8, tx.dims, true);
  block.AppendOp("dropout", {{"X", {x}}, {"Seed", {}}},
                 {{"Out", {outs.out}}, {"Mask", {outs.mask}}},
                 {{"dropout_prob", p},
                  {"is_test", is_test},
                  {"fix_seed", program_seed != 0},
                  {"seed", program_seed},
                  {"dropout_implementation", mode}});
  return outs;
}

StatusOr<ShapeOpOutputs> Reshape(BlockBuilder& block, const std::string& x,
                                 const std::vector<int32_t>& shape) {
  Site site(block, "reshape2");
  IRM_ASSIGN_OR_RETURN(Tensor tx, site.Input(x));
  Dims out;
  int unknown = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (unknown >= 0) return site.Invalid("reshape2 takes at most one -1 in shape", x);
      unknown = static_cast<int>(i);
      out.push_back(-1);
    } else if (shape[i] == 0) {
      if (i >= tx.dims.size()) {
        return site.Invalid(fmt::format("shape[{}] is 0 but '{}' has rank {}", i, x, tx.rank()), x);
      }
      out.push_back(tx.dims[i]);
    } else if (shape[i] > 0) {
      out.push_back(shape[i]);
    } else {
      return site.Invalid(fmt::format("shape[{}] is {}", i, shape[i]), x);
    }
  }
  int64_t known = 1;  // the product of the output dims but the -1; -1 when one is unknown
  for (size_t i = 0; i < out.size(); ++i) {
    if (static_cast<int>(i) != unknown) known = (known < 0 || out[i] < 0) ? -1 : known * out[i];
  }
  const int64_t in_size = Product(tx.dims.begin(), tx.dims.end());
  if (in_size > 0 && known > 0) {
    if (unknown >= 0 ? in_size % known != 0 : in_size != known) {
      return site.Invalid(
          fmt::format("{} cannot take shape [{}]", Describe(tx), fmt::join(shape, ", ")), x);
    }
    if (unknown >= 0) out[static_cast<size_t>(unknown)] = in_size / known;
  }
  const ShapeOpOutputs outs = DeclareShapeOp(block, "reshape2", tx, out);
  block.AppendOp("reshape2", {{"X", {x}}, {"Shape", {}}, {"ShapeTensor", {}}},
                 {{"Out", {outs.out}}, {"XShape", {outs.xshape}}},
                 Join({{{"shape", shape}, {"use_quantizer", false}}, MkldnnExtras()}));
  return outs;
}

StatusOr<ShapeOpOutputs> Transpose(BlockBuilder& block, const std::string& x,
                                   const std::vector<int32_t>& perm) {
  Site site(block, "transpose2");
  IRM_ASSIGN_OR_RETURN(Tensor tx, site.Input(x));
  std::vector<int32_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  bool valid = sorted.size() == tx.dims.size();
  for (size_t i = 0; valid && i < sorted.size(); ++i) valid = sorted[i] == static_cast<int32_t>(i);
  if (!valid) {
    return site.Invalid(fmt::format("[{}] is not a permutation of the {} axes of '{}'",
                                    fmt::join(perm, ", "), tx.rank(), x),
                        x);
  }
  Dims out;
  for (int32_t p : perm) out.push_back(tx.dims[static_cast<size_t>(p)]);
  const ShapeOpOutputs outs = DeclareShapeOp(block, "transpose", tx, out);
  block.AppendOp("transpose2", {{"X", {x}}}, {{"Out", {outs.out}}, {"XShape", {outs.xshape}}},
                 {{"axis", perm},
                  {"use_mkldnn", false},
                  {"data_format", std::string("AnyLayout")},
                  {"mkldnn_data_type", std::string("float32")}});
  return outs;
}

StatusOr<std::string> Scale(BlockBuilder& block, const std::string& x, float scale, float bias,
                            bool bias_after_scale) {
  return SameShape(block, "scale", "scale", x,
                   {{"scale", scale},
                    {"bias", bias},
                    {"bias_after_scale", bias_after_scale},
                    {"use_mkldnn", false}},
                   {{"ScaleTensor", {}}});
}

StatusOr<std::string> Cast(BlockBuilder& block, const std::string& x, proto::VarType::Type dtype) {
  Site site(block, "cast");
  IRM_ASSIGN_OR_RETURN(Tensor tx, site.Input(x));
  const std::string out =
      Declare(block, Helper(block, "cast").Next(), dtype, tx.dims, tx.stop_gradient);
  block.AppendOp("cast", {{"X", {x}}}, {{"Out", {out}}},
                 {{"in_dtype", static_cast<int32_t>(tx.dtype)},
                  {"out_dtype", static_cast<int32_t>(dtype)},
                  {"use_mkldnn", false}});
  return out;
}

StatusOr<std::string> ReduceMean(BlockBuilder& block, const std::string& x,
                                 const std::vector<int32_t>& dims, bool keep_dim) {
  return Reduce(block, "mean", "reduce_mean", x, dims, keep_dim);
}
StatusOr<std::string> ReduceSum(BlockBuilder& block, const std::string& x,
                                const std::vector<int32_t>& dims, bool keep_dim) {
  return Reduce(block, "sum", "reduce_sum", x, dims, keep_dim);
}

StatusOr<std::string> Mean(BlockBuilder& block, const std::string& x) {
  Site site(block, "mean");
  IRM_ASSIGN_OR_RETURN(Tensor tx, site.Input(x));
  const std::string out =
      Declare(block, Helper(block, "mean").Next(), tx.dtype, {}, AllStopGradient({&tx}));
  block.AppendOp("mean", {{"X", {x}}}, {{"Out", {out}}});
  return out;
}

StatusOr<SoftmaxWithCrossEntropyOutputs> SoftmaxWithCrossEntropy(BlockBuilder& block,
                                                                 const std::string& logits,
                                                                 const std::string& label) {
  Site site(block, "softmax_with_cross_entropy");
  IRM_ASSIGN_OR_RETURN(Tensor tl, site.Input(logits));
  IRM_ASSIGN_OR_RETURN(Tensor tlabel, site.Input(label));
  if (tl.rank() < 1) return site.Invalid(fmt::format("logits '{}' are 0-D", logits), logits);
  Dims loss_dims = tl.dims;
  loss_dims.back() = 1;
  if (tlabel.dtype != proto::VarType::INT64 || tlabel.rank() != tl.rank() ||
      tlabel.dims.back() != 1) {
    return site.Invalid(
        fmt::format("label '{}' must be int64 of dims [{}]", label, fmt::join(loss_dims, ", ")),
        label);
  }
  Helper helper(block, "softmax_with_cross_entropy");
  SoftmaxWithCrossEntropyOutputs outs;
  const bool stop = AllStopGradient({&tl, &tlabel});
  outs.softmax = Declare(block, helper.Next(), tl.dtype, tl.dims, stop);
  outs.loss = Declare(block, helper.Next(), tl.dtype, loss_dims, stop);
  block.AppendOp("softmax_with_cross_entropy", {{"Logits", {logits}}, {"Label", {label}}},
                 {{"Softmax", {outs.softmax}}, {"Loss", {outs.loss}}},
                 {{"soft_label", false},
                  {"use_softmax", true},
                  {"numeric_stable_mode", true},
                  {"ignore_index", -100},
                  {"axis", -1}});
  return outs;
}

StatusOr<std::string> Concat(BlockBuilder& block, const std::vector<std::string>& xs,
                             int32_t axis) {
  Site site(block, "concat");
  IRM_ASSIGN_OR_RETURN(std::vector<Tensor> ts, site.Inputs(xs));
  IRM_ASSIGN_OR_RETURN(int64_t a, site.Axis(axis, ts[0]));
  Dims out = ts[0].dims;
  std::vector<const Tensor*> inputs;
  for (const Tensor& t : ts) {
    inputs.push_back(&t);
    bool fits = t.dims.size() == out.size();
    for (size_t i = 0; fits && i < out.size(); ++i) {
      if (static_cast<int64_t>(i) == a) continue;
      fits = t.dims[i] == out[i] || t.dims[i] < 0 || out[i] < 0;
    }
    if (!fits) {
      return site.Invalid(fmt::format("{} does not concatenate with {} on axis {}", Describe(t),
                                      Describe(ts[0]), a),
                          t.name);
    }
    if (&t != &ts[0]) {
      auto& d = out[static_cast<size_t>(a)];
      d = (d < 0 || t.dims[static_cast<size_t>(a)] < 0) ? -1 : d + t.dims[static_cast<size_t>(a)];
    }
  }
  const std::string name =
      Declare(block, Helper(block, "concat").Next(), ts[0].dtype, out, AllStopGradient(inputs));
  block.AppendOp("concat", {{"X", xs}, {"AxisTensor", {}}}, {{"Out", {name}}},
                 Join({{{"axis", axis}, {"use_quantizer", false}}, MkldnnExtras()}));
  return name;
}

StatusOr<std::vector<std::string>> Split(BlockBuilder& block, const std::string& x, int32_t num,
                                         int32_t axis) {
  if (num <= 0) return Site(block, "split").Invalid(fmt::format("num {} must be >= 2", num), x);
  return SplitImpl(block, x, num, {}, axis);
}

StatusOr<std::vector<std::string>> SplitSections(BlockBuilder& block, const std::string& x,
                                                 const std::vector<int32_t>& sections,
                                                 int32_t axis) {
  return SplitImpl(block, x, 0, sections, axis);
}

StatusOr<std::string> Slice(BlockBuilder& block, const std::string& x,
                            const std::vector<int32_t>& axes, const std::vector<int32_t>& starts,
                            const std::vector<int32_t>& ends,
                            const std::vector<int32_t>& decrease_axis) {
  Site site(block, "slice");
  IRM_ASSIGN_OR_RETURN(Tensor tx, site.Input(x));
  if (axes.empty() || starts.size() != axes.size() || ends.size() != axes.size()) {
    return site.Invalid("slice needs as many starts and ends as axes (at least one)", x);
  }
  Dims out = tx.dims;
  for (size_t i = 0; i < axes.size(); ++i) {
    IRM_ASSIGN_OR_RETURN(int64_t a, site.Axis(axes[i], tx));
    const int64_t size = tx.dims[static_cast<size_t>(a)];
    if (size < 0) continue;  // unknown stays unknown
    auto clamp = [size](int64_t v) { return std::clamp(v < 0 ? v + size : v, int64_t{0}, size); };
    out[static_cast<size_t>(a)] = std::max<int64_t>(clamp(ends[i]) - clamp(starts[i]), 0);
  }
  std::vector<bool> drop(out.size(), false);
  for (int32_t d : decrease_axis) {
    IRM_ASSIGN_OR_RETURN(int64_t a, site.Axis(d, tx));
    if (out[static_cast<size_t>(a)] != 1) {
      return site.Invalid(
          fmt::format("decrease_axis {} has size {}, not 1", a, out[static_cast<size_t>(a)]), x);
    }
    drop[static_cast<size_t>(a)] = true;
  }
  Dims kept;
  for (size_t i = 0; i < out.size(); ++i) {
    if (!drop[i]) kept.push_back(out[i]);
  }
  const std::string name =
      Declare(block, Helper(block, "slice").Next(), tx.dtype, kept, AllStopGradient({&tx}));
  block.AppendOp("slice",
                 {{"Input", {x}},
                  {"StartsTensor", {}},
                  {"EndsTensor", {}},
                  {"StartsTensorList", {}},
                  {"EndsTensorList", {}}},
                 {{"Out", {name}}},
                 Join({{{"axes", axes},
                        {"starts", starts},
                        {"ends", ends},
                        {"infer_flags", std::vector<int32_t>(axes.size(), 1)},
                        {"decrease_axis", decrease_axis}},
                       MkldnnExtras()}));
  return name;
}

StatusOr<std::string> FillConstant(BlockBuilder& block, proto::VarType::Type dtype,
                                   const std::vector<int64_t>& shape, double value) {
  Site site(block, "fill_constant");
  for (int64_t d : shape) {
    if (d < 0)
      return site.Invalid(fmt::format("shape [{}] has a negative dim", fmt::join(shape, ", ")));
  }
  // paddle.full writes str(int(value)) for these dtypes and str(float(value)) for the others.
  const bool integral = dtype == proto::VarType::UINT8 || dtype == proto::VarType::INT16 ||
                        dtype == proto::VarType::INT32 || dtype == proto::VarType::INT64;
  const std::string str_value =
      integral ? fmt::format("{}", static_cast<int64_t>(value)) : PythonFloat(value);
  const std::string out = Declare(block, Helper(block, "fill_constant").Next(), dtype, shape, true);
  block.AppendOp("fill_constant",
                 {{"ValueTensor", {}}, {"ShapeTensor", {}}, {"ShapeTensorList", {}}},
                 {{"Out", {out}}},
                 {{"dtype", static_cast<int32_t>(dtype)},
                  {"shape", shape},
                  {"value", static_cast<float>(integral ? std::trunc(value) : value)},
                  {"str_value", str_value},
                  {"force_cpu", false},
                  {"place_type", -1},
                  {"use_mkldnn", false}});
  return out;
}

StatusOr<std::string> Assign(BlockBuilder& block, const std::string& x) {
  return SameShape(block, "assign", "assign", x, {});
}

StatusOr<std::string> AssignValue(BlockBuilder& block, const std::vector<int32_t>& shape,
                                  const AssignValues& values) {
  Site site(block, "assign_value");
  const Dims dims(shape.begin(), shape.end());
  const int64_t count = Product(dims.begin(), dims.end());
  const size_t size = std::visit([](const auto& v) { return v.size(); }, values);
  if (count < 0 || static_cast<size_t>(count) != size) {
    return site.Invalid(
        fmt::format("shape [{}] does not hold {} values", fmt::join(shape, ", "), size));
  }
  std::vector<int32_t> bools, int32s;
  std::vector<float> fp32s;
  std::vector<int64_t> int64s;
  proto::VarType::Type dtype = proto::VarType::FP32;
  if (const auto* v = std::get_if<std::vector<bool>>(&values)) {
    dtype = proto::VarType::BOOL;
    bools.assign(v->begin(), v->end());
  } else if (const auto* v = std::get_if<std::vector<int32_t>>(&values)) {
    dtype = proto::VarType::INT32;
    int32s = *v;
  } else if (const auto* v = std::get_if<std::vector<int64_t>>(&values)) {
    dtype = proto::VarType::INT64;
    int64s = *v;
  } else {
    fp32s = std::get<std::vector<float>>(values);
  }
  const std::string out = Declare(block, Helper(block, "assign").Next(), dtype, dims, true);
  block.AppendOp("assign_value", {}, {{"Out", {out}}},
                 {{"shape", shape},
                  {"dtype", static_cast<int32_t>(dtype)},
                  {"bool_values", bools},
                  {"fp32_values", fp32s},
                  {"int32_values", int32s},
                  {"int64_values", int64s}});
  return out;
}

StatusOr<std::string> AddN(BlockBuilder& block, const std::vector<std::string>& xs) {
  Site site(block, "sum");
  IRM_ASSIGN_OR_RETURN(std::vector<Tensor> ts, site.Inputs(xs));
  std::vector<const Tensor*> inputs;
  for (const Tensor& t : ts) {
    if (t.dims != ts[0].dims || t.dtype != ts[0].dtype) {
      return site.Invalid(fmt::format("'{}' and '{}' differ in dims or dtype", ts[0].name, t.name),
                          t.name);
    }
    inputs.push_back(&t);
  }
  const std::string out = Declare(block, Helper(block, "add_n").Next(), ts[0].dtype, ts[0].dims,
                                  AllStopGradient(inputs));
  block.AppendOp("sum", {{"X", xs}}, {{"Out", {out}}}, MkldnnExtras());
  return out;
}

StatusOr<std::string> Triu(BlockBuilder& block, const std::string& x, int32_t diagonal) {
  return TrilTriu(block, "triu", x, diagonal, /*lower=*/false);
}
StatusOr<std::string> Tril(BlockBuilder& block, const std::string& x, int32_t diagonal) {
  return TrilTriu(block, "tril", x, diagonal, /*lower=*/true);
}

}  // namespace irm::oldir::layers
