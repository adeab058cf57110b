// The ResNet builder: the static.nn layers it needs (conv2d, batch_norm, pool2d, fc, accuracy),
// each with the op maker's attributes and Paddle's defaults for the ones the layer does not pass
// (Operator.__init__ fills them from the op proto), then the network stage by stage.
#include "oldir/models/resnet.h"

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "oldir/initializer.h"
#include "oldir/layers.h"

namespace irm::oldir::models {
namespace {

using Dims = std::vector<int64_t>;

Status Invalid(std::string message) {
  return Status(StatusCode::kInvalidArgument, Location{}, "ResnetConfig: " + std::move(message));
}

// A var the builder declared: its name and NCHW dims (-1 for the batch).
struct Var {
  std::string name;
  Dims dims;
};

// One LayerHelper: "<key>_N", parameters "<key>_N.w_K" / ".b_K", outputs "<key>_N.tmp_K".
class Helper {
 public:
  Helper(ModelPrograms* programs, std::string_view key)
      : programs_(programs), name_(programs->main.names().Generate(key)) {}

  const std::string& name() const { return name_; }
  BlockBuilder& block() { return programs_->main.root(); }

  std::string Output(proto::VarType::Type dtype, const Dims& dims, bool stop_gradient = false) {
    const std::string out = programs_->main.names().Generate(name_ + ".tmp");
    VarOptions options;
    options.stop_gradient = stop_gradient;
    block().CreateVar(out, dtype, dims, options);
    return out;
  }

  // A parameter in both programs, its initialiser in startup (LayerHelperBase.create_parameter).
  // `trainable` false: batch_norm's moving statistics (trainable=False, stop_gradient).
  std::string Parameter(std::string_view suffix, const Dims& dims, const Initializer& init,
                        bool trainable = true) {
    const std::string param = programs_->main.names().Generate(name_ + "." + std::string(suffix));
    VarOptions options;
    options.persistable = true;
    options.is_parameter = true;
    options.stop_gradient = !trainable;
    programs_->startup.root().CreateVar(param, proto::VarType::FP32, dims, options);
    AppendInitializer(programs_->startup, param, proto::VarType::FP32, dims, init, programs_->seed);
    programs_->main.root().CreateVar(param, proto::VarType::FP32, dims, options);
    return param;
  }

 private:
  ModelPrograms* programs_;
  std::string name_;
};

AttrList MkldnnExtras() {
  return {{"use_mkldnn", false}, {"mkldnn_data_type", std::string("float32")}};
}
AttrList Join(std::vector<AttrList> parts) {
  AttrList out;
  for (AttrList& part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

// The op's `act`: LayerHelper.append_activation writes the activation into "<key>_N.tmp_K".
Var Relu(Helper& helper, const Var& x) {
  Var out{helper.Output(proto::VarType::FP32, x.dims), x.dims};
  helper.block().AppendOp("relu", {{"X", {x.name}}}, {{"Out", {out.name}}},
                          {{"use_mkldnn", false}, {"use_cudnn", false}});
  return out;
}

int64_t ConvOutSize(int64_t in, int64_t kernel, int64_t stride, int64_t padding) {
  return (in + 2 * padding - kernel) / stride + 1;
}

// static.nn.conv2d(x, filters, k, stride, padding=(k - 1) // 2, bias_attr=False): filter
// [filters, C, k, k] Normal(0, sqrt(2 / (k * k * C))) (_get_default_param_initializer), the
// conv2d maker's attributes plus op_compat.yaml's extras at their defaults (use_cudnn true:
// static.nn.conv2d's default; workspace_size_MB 512: GetDefaultConvWorkspaceSizeLimitMB).
Var Conv2d(ModelPrograms* programs, const Var& x, int64_t filters, int64_t k, int64_t stride) {
  Helper helper(programs, "conv2d");
  const int64_t c = x.dims[1];
  const double stddev = std::sqrt(2.0 / static_cast<double>(k * k * c));
  const std::string filter = helper.Parameter(
      "w", {filters, c, k, k}, Initializer::Normal(0.0f, static_cast<float>(stddev)));
  const int64_t padding = (k - 1) / 2;
  const Dims dims = {x.dims[0], filters, ConvOutSize(x.dims[2], k, stride, padding),
                     ConvOutSize(x.dims[3], k, stride, padding)};
  Var out{helper.Output(proto::VarType::FP32, dims), dims};
  const auto s = static_cast<int32_t>(stride);
  const auto p = static_cast<int32_t>(padding);
  helper.block().AppendOp(
      "conv2d", {{"Input", {x.name}}, {"Filter", {filter}}, {"Bias", {}}, {"ResidualData", {}}},
      {{"Output", {out.name}}},
      Join({{{"strides", std::vector<int32_t>{s, s}},
             {"paddings", std::vector<int32_t>{p, p}},
             {"padding_algorithm", std::string("EXPLICIT")},
             {"groups", int32_t{1}},
             {"dilations", std::vector<int32_t>{1, 1}},
             {"data_format", std::string("NCHW")},
             {"is_test", false},
             {"use_cudnn", true},
             {"fuse_relu_before_depthwise_conv", false},
             {"use_quantizer", false},
             {"fuse_relu", false},
             {"fuse_activation", std::string("")},
             {"fuse_alpha", 0.0f},
             {"fuse_beta", 0.0f},
             {"use_addto", false},
             {"fuse_residual_connection", false},
             {"Scale_in", 1.0f},
             {"Scale_out", 1.0f},
             {"Scale_in_eltwise", 1.0f},
             {"Scale_weights", std::vector<float>{1.0f}},
             {"force_fp32_output", false},
             {"workspace_size_MB", int32_t{512}},
             {"exhaustive_search", false}},
            MkldnnExtras()}));
  return out;
}

// static.nn.batch_norm(x, act) in training (is_test false, momentum 0.9, epsilon 1e-5): the
// moving statistics are both input and output (MeanOut is Mean, VarianceOut is Variance).
Var BatchNorm(ModelPrograms* programs, const Var& x, bool relu) {
  Helper helper(programs, "batch_norm");
  const Dims channel = {x.dims[1]};
  const std::string scale = helper.Parameter("w", channel, Initializer::Constant(1.0f));
  const std::string bias = helper.Parameter("b", channel, Initializer::Constant(0.0f));
  const std::string mean =
      helper.Parameter("w", channel, Initializer::Constant(0.0f), /*trainable=*/false);
  const std::string variance =
      helper.Parameter("w", channel, Initializer::Constant(1.0f), /*trainable=*/false);
  const std::string saved_mean = helper.Output(proto::VarType::FP32, channel, true);
  const std::string saved_variance = helper.Output(proto::VarType::FP32, channel, true);
  const std::string reserve_space = helper.Output(proto::VarType::FP32, {-1}, true);
  Var y{helper.Output(proto::VarType::FP32, x.dims), x.dims};
  helper.block().AppendOp("batch_norm",
                          {{"X", {x.name}},
                           {"Scale", {scale}},
                           {"Bias", {bias}},
                           {"Mean", {mean}},
                           {"Variance", {variance}},
                           {"MomentumTensor", {}}},
                          {{"Y", {y.name}},
                           {"MeanOut", {mean}},
                           {"VarianceOut", {variance}},
                           {"SavedMean", {saved_mean}},
                           {"SavedVariance", {saved_variance}},
                           {"ReserveSpace", {reserve_space}}},
                          Join({{{"momentum", 0.9f},
                                 {"epsilon", 1e-5f},
                                 {"is_test", false},
                                 {"data_layout", std::string("NCHW")},
                                 {"fuse_with_relu", false},
                                 {"use_global_stats", false},
                                 {"trainable_statistics", false}},
                                MkldnnExtras()}));
  return relu ? Relu(helper, y) : y;
}

Var ConvBn(ModelPrograms* programs, const Var& x, int64_t filters, int64_t k, int64_t stride,
           bool relu) {
  return BatchNorm(programs, Conv2d(programs, x, filters, k, stride), relu);
}

// pool2d with the maker's attributes (F.max_pool2d / F.adaptive_avg_pool2d pass the first ones;
// Operator fills exclusive, ceil_mode, ... from the op proto).
Var Pool2d(ModelPrograms* programs, const Var& x, const std::string& type, int32_t k,
           int32_t stride, int32_t padding, bool adaptive) {
  Helper helper(programs, "pool2d");
  const Dims dims = adaptive
                        ? Dims{x.dims[0], x.dims[1], k, k}
                        : Dims{x.dims[0], x.dims[1], ConvOutSize(x.dims[2], k, stride, padding),
                               ConvOutSize(x.dims[3], k, stride, padding)};
  Var out{helper.Output(proto::VarType::FP32, dims), dims};
  helper.block().AppendOp("pool2d", {{"X", {x.name}}}, {{"Out", {out.name}}},
                          Join({{{"pooling_type", type},
                                 {"ksize", std::vector<int32_t>{k, k}},
                                 {"global_pooling", false},
                                 {"strides", std::vector<int32_t>{stride, stride}},
                                 {"paddings", std::vector<int32_t>{padding, padding}},
                                 {"exclusive", true},
                                 {"adaptive", adaptive},
                                 {"padding_algorithm", std::string("EXPLICIT")},
                                 {"data_format", std::string("NCHW")},
                                 {"ceil_mode", false},
                                 {"use_cudnn", true},
                                 {"use_quantizer", false},
                                 {"is_test", false}},
                                MkldnnExtras()}));
  return out;
}

// fluid's elementwise_add(short, residual, act='relu').
Var ResidualAdd(ModelPrograms* programs, const Var& shortcut, const Var& residual) {
  Helper helper(programs, "elementwise_add");
  Var sum{helper.Output(proto::VarType::FP32, residual.dims), residual.dims};
  helper.block().AppendOp("elementwise_add", {{"X", {shortcut.name}}, {"Y", {residual.name}}},
                          {{"Out", {sum.name}}},
                          Join({{{"axis", int32_t{-1}},
                                 {"use_quantizer", false},
                                 {"Scale_x", 1.0f},
                                 {"Scale_y", 1.0f},
                                 {"Scale_out", 1.0f}},
                                MkldnnExtras()}));
  return Relu(helper, sum);
}

Var Block(ModelPrograms* programs, const ResnetConfig& config, const Var& x, int64_t width,
          int64_t stride) {
  Var residual;
  int64_t out_channels = width;
  if (config.block == ResnetBlock::kBottleneck) {
    out_channels = 4 * width;
    const Var a = ConvBn(programs, x, width, 1, 1, true);
    const Var b = ConvBn(programs, a, width, 3, stride, true);
    residual = ConvBn(programs, b, out_channels, 1, 1, false);
  } else {
    const Var a = ConvBn(programs, x, width, 3, stride, true);
    residual = ConvBn(programs, a, width, 3, 1, false);
  }
  const Var shortcut = x.dims[1] != out_channels || stride != 1
                           ? ConvBn(programs, x, out_channels, 1, stride, false)
                           : x;
  return ResidualAdd(programs, shortcut, residual);
}

// static.nn.fc(x, classes, num_flatten_dims=1): mul (x_num_col_dims 1, y_num_col_dims 1) with a
// [C * H * W, classes] weight, then append_bias_op's elementwise_add with axis 1.
StatusOr<std::string> Fc(ModelPrograms* programs, const Var& x, int64_t classes) {
  Helper helper(programs, "fc");
  const int64_t in = x.dims[1] * x.dims[2] * x.dims[3];
  // The scripts' ParamAttr(initializer=Uniform(-stdv, stdv)), stdv = 1 / sqrt(C).
  const auto stdv = static_cast<float>(1.0 / std::sqrt(static_cast<double>(x.dims[1])));
  const std::string weight =
      helper.Parameter("w", {in, classes}, Initializer::Uniform(-stdv, stdv));
  const Dims dims = {x.dims[0], classes};
  const std::string product = helper.Output(proto::VarType::FP32, dims);
  helper.block().AppendOp("mul", {{"X", {x.name}}, {"Y", {weight}}}, {{"Out", {product}}},
                          {{"x_num_col_dims", int32_t{1}},
                           {"y_num_col_dims", int32_t{1}},
                           {"use_mkldnn", false},
                           {"scale_x", 1.0f},
                           {"scale_y", std::vector<float>{1.0f}},
                           {"scale_out", 1.0f},
                           {"force_fp32_output", false}});
  const std::string bias = helper.Parameter("b", {classes}, Initializer::Constant(0.0f));
  const std::string out = helper.Output(proto::VarType::FP32, dims);
  helper.block().AppendOp("elementwise_add", {{"X", {product}}, {"Y", {bias}}}, {{"Out", {out}}},
                          Join({{{"axis", int32_t{1}},
                                 {"use_quantizer", false},
                                 {"Scale_x", 1.0f},
                                 {"Scale_y", 1.0f},
                                 {"Scale_out", 1.0f}},
                                MkldnnExtras()}));
  return out;
}

// paddle.static.accuracy(input, label, k) before Paddle 2.5: top_k, then accuracy.
std::string Accuracy(ModelPrograms* programs, const std::string& input, const std::string& label,
                     int k) {
  Helper helper(programs, "accuracy");
  const Dims topk_dims = {-1, k};
  const std::string values = helper.Output(proto::VarType::FP32, topk_dims, true);
  const std::string indices = helper.Output(proto::VarType::INT64, topk_dims, true);
  helper.block().AppendOp("top_k", {{"X", {input}}, {"K", {}}},
                          {{"Out", {values}}, {"Indices", {indices}}},
                          {{"k", static_cast<int32_t>(k)}});
  const std::string accuracy = helper.Output(proto::VarType::FP32, {1}, true);
  const std::string correct = helper.Output(proto::VarType::INT32, {1}, true);
  const std::string total = helper.Output(proto::VarType::INT32, {1}, true);
  helper.block().AppendOp("accuracy",
                          {{"Out", {values}}, {"Indices", {indices}}, {"Label", {label}}},
                          {{"Accuracy", {accuracy}}, {"Correct", {correct}}, {"Total", {total}}});
  return accuracy;
}

Status CheckConfig(const ResnetConfig& config) {
  if (config.depth.empty()) return Invalid("depth lists no stage");
  for (int blocks : config.depth) {
    if (blocks < 1) return Invalid(fmt::format("every stage needs a block, got {}", blocks));
  }
  if (config.width < 1 || config.channels < 1 || config.image_size < 1 || config.classes < 2) {
    return Invalid(fmt::format(
        "width {}, channels {} and image_size {} must be positive and classes {} at least 2",
        config.width, config.channels, config.image_size, config.classes));
  }
  if (config.top_k < 1 || config.top_k > config.classes) {
    return Invalid(fmt::format("top_k {} is not in [1, classes {}]", config.top_k, config.classes));
  }
  // The stem (7x7 stride 2, then a 3x3 stride-2 max pool) and every later stage's stride 2.
  int64_t size = ConvOutSize(config.image_size, 7, 2, 3);
  size = ConvOutSize(size, 3, 2, 1);
  for (size_t s = 1; s < config.depth.size(); ++s) size = ConvOutSize(size, 3, 2, 1);
  if (size < 1) {
    return Invalid(fmt::format("image_size {} shrinks below one pixel over {} stages",
                               config.image_size, config.depth.size()));
  }
  return Status::Ok();
}

}  // namespace

const char* ResnetBlockName(ResnetBlock block) {
  return block == ResnetBlock::kBottleneck ? "bottleneck" : "basic";
}

Status BuildResnet(const ResnetConfig& config, ModelPrograms* programs, ResnetMetrics* metrics) {
  IRM_RETURN_IF_ERROR(CheckConfig(config));
  programs->seed = config.seed;
  const int64_t size = config.image_size;
  IRM_ASSIGN_OR_RETURN(
      std::string image,
      layers::Data(programs, {"image", proto::VarType::FP32, {-1, config.channels, size, size}}));
  IRM_ASSIGN_OR_RETURN(std::string label,
                       layers::Data(programs, {"label", proto::VarType::INT64, {-1, 1}}));

  Var x = ConvBn(programs, {image, {-1, config.channels, size, size}}, config.width, 7, 2, true);
  x = Pool2d(programs, x, "max", 3, 2, 1, /*adaptive=*/false);
  int64_t width = config.width;
  for (size_t stage = 0; stage < config.depth.size(); ++stage) {
    for (int i = 0; i < config.depth[stage]; ++i) {
      const int64_t stride = i == 0 && stage > 0 ? 2 : 1;
      x = Block(programs, config, x, width, stride);
    }
    width *= 2;
  }
  x = Pool2d(programs, x, "avg", 1, 1, 0, /*adaptive=*/true);
  IRM_ASSIGN_OR_RETURN(std::string logits, Fc(programs, x, config.classes));

  BlockBuilder& block = programs->main.root();
  IRM_ASSIGN_OR_RETURN(layers::SoftmaxWithCrossEntropyOutputs ce,
                       layers::SoftmaxWithCrossEntropy(block, logits, label));
  IRM_ASSIGN_OR_RETURN(programs->loss, layers::Mean(block, ce.loss));
  const std::string top1 = Accuracy(programs, ce.softmax, label, 1);
  const std::string topk = Accuracy(programs, ce.softmax, label, config.top_k);
  if (metrics != nullptr) *metrics = {top1, topk};
  return layers::PrependFeedOps(programs);
}

}  // namespace irm::oldir::models
