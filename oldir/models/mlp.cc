// The MLP builder: nn.Linear layers, their calls with activations between them, and the loss.
#include "oldir/models/mlp.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "oldir/layers.h"

namespace irm::oldir::models {
namespace {

Status Invalid(std::string message) {
  return Status(StatusCode::kInvalidArgument, Location{}, "MlpConfig: " + std::move(message));
}

StatusOr<std::string> Activate(BlockBuilder& block, MlpActivation activation,
                               const std::string& x) {
  switch (activation) {
    case MlpActivation::kRelu:
      return layers::Relu(block, x);
    case MlpActivation::kGelu:
      return layers::Gelu(block, x);
    case MlpActivation::kTanh:
      return layers::Tanh(block, x);
    case MlpActivation::kSigmoid:
      return layers::Sigmoid(block, x);
  }
  return Invalid(fmt::format("unknown activation {}", static_cast<int>(activation)));
}

}  // namespace

const char* MlpActivationName(MlpActivation activation) {
  switch (activation) {
    case MlpActivation::kRelu:
      return "relu";
    case MlpActivation::kGelu:
      return "gelu";
    case MlpActivation::kTanh:
      return "tanh";
    case MlpActivation::kSigmoid:
      return "sigmoid";
  }
  return "unknown";
}

std::optional<MlpActivation> MlpActivationFromName(std::string_view name) {
  for (MlpActivation a : {MlpActivation::kRelu, MlpActivation::kGelu, MlpActivation::kTanh,
                          MlpActivation::kSigmoid}) {
    if (name == MlpActivationName(a)) return a;
  }
  return std::nullopt;
}

const char* MlpLossName(MlpLoss loss) {
  switch (loss) {
    case MlpLoss::kSoftmaxCrossEntropy:
      return "softmax_cross_entropy";
    case MlpLoss::kMse:
      return "mse";
  }
  return "unknown";
}

std::optional<MlpLoss> MlpLossFromName(std::string_view name) {
  for (MlpLoss l : {MlpLoss::kSoftmaxCrossEntropy, MlpLoss::kMse}) {
    if (name == MlpLossName(l)) return l;
  }
  return std::nullopt;
}

Status BuildMlp(const MlpConfig& config, ModelPrograms* programs) {
  if (config.depth < 1) return Invalid(fmt::format("depth {} must be at least 1", config.depth));
  if (config.in_features < 1 || config.width < 1 || config.classes < 1) {
    return Invalid(fmt::format("in_features {}, width {} and classes {} must be positive",
                               config.in_features, config.width, config.classes));
  }
  if (config.loss == MlpLoss::kSoftmaxCrossEntropy && config.classes < 2) {
    return Invalid("softmax_cross_entropy needs at least 2 classes");
  }
  programs->seed = config.seed;
  BlockBuilder& block = programs->main.root();

  IRM_ASSIGN_OR_RETURN(
      std::string x, layers::Data(programs, {"x", proto::VarType::FP32, {-1, config.in_features}}));
  const FeedSpec label_spec = config.loss == MlpLoss::kMse
                                  ? FeedSpec{"label", proto::VarType::FP32, {-1, config.classes}}
                                  : FeedSpec{"label", proto::VarType::INT64, {-1, 1}};
  IRM_ASSIGN_OR_RETURN(std::string label, layers::Data(programs, label_spec));

  // The layers are constructed (parameters and initialisers) before any of them is called.
  std::vector<layers::LinearLayer> linears;
  for (int i = 0; i < config.depth; ++i) {
    const int64_t in = i == 0 ? config.in_features : config.width;
    const int64_t out = i + 1 == config.depth ? config.classes : config.width;
    IRM_ASSIGN_OR_RETURN(layers::LinearLayer layer, layers::CreateLinear(programs, in, out));
    linears.push_back(std::move(layer));
  }

  std::string h = x;
  for (size_t i = 0; i < linears.size(); ++i) {
    IRM_ASSIGN_OR_RETURN(h, layers::Linear(block, linears[i], h));
    if (i + 1 < linears.size()) {
      IRM_ASSIGN_OR_RETURN(h, Activate(block, config.activation, h));
    }
  }

  std::string per_example;
  if (config.loss == MlpLoss::kMse) {
    IRM_ASSIGN_OR_RETURN(std::string diff, layers::Subtract(block, h, label));
    IRM_ASSIGN_OR_RETURN(per_example, layers::Multiply(block, diff, diff));
  } else {
    IRM_ASSIGN_OR_RETURN(layers::SoftmaxWithCrossEntropyOutputs ce,
                         layers::SoftmaxWithCrossEntropy(block, h, label));
    per_example = ce.loss;
  }
  IRM_ASSIGN_OR_RETURN(programs->loss, layers::Mean(block, per_example));
  return layers::PrependFeedOps(programs);
}

}  // namespace irm::oldir::models
