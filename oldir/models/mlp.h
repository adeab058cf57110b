// The model zoo's MLP: the forward pass and parameter initialisers of a Paddle 2.6 static-graph
// script that stacks nn.Linear layers with a functional activation between them, as
//
//   x = paddle.static.data('x', [None, in_features], 'float32')
//   label = paddle.static.data('label', [None, 1], 'int64')  # mse: [None, classes] float32
//   layers = [nn.Linear(in_features, width), nn.Linear(width, width), ...,
//             nn.Linear(width, classes)]
//   h = x
//   for i, layer in enumerate(layers):
//       h = layer(h)
//       if i + 1 < len(layers):
//           h = F.relu(h)  # or F.gelu / F.tanh / F.sigmoid
//   loss = paddle.mean(F.softmax_with_cross_entropy(h, label))  # the `mean` op
//   # mse: d = h - label; loss = paddle.mean(d * d)
//
// with main.random_seed = startup.random_seed = seed, run through the executor with feed
// {'x': ..., 'label': ...} (hence the feed ops). Parameters are linear_0.w_0, linear_0.b_0, ...
// linear_{depth-1}.b_0; the forward calls take linear_{depth}, linear_{depth+1}, ... for their
// outputs.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/status.h"
#include "oldir/models/model.h"

namespace irm::oldir::models {

enum class MlpActivation { kRelu, kGelu, kTanh, kSigmoid };
enum class MlpLoss { kSoftmaxCrossEntropy, kMse };

const char* MlpActivationName(MlpActivation activation);  // "relu", "gelu", "tanh", "sigmoid"
std::optional<MlpActivation> MlpActivationFromName(std::string_view name);
const char* MlpLossName(MlpLoss loss);  // "softmax_cross_entropy", "mse"
std::optional<MlpLoss> MlpLossFromName(std::string_view name);

struct MlpConfig {
  int depth = 2;  // number of nn.Linear layers (>= 1)
  int64_t in_features = 4;
  int64_t width = 8;  // the hidden layers' width
  int64_t classes = 3;
  MlpActivation activation = MlpActivation::kRelu;
  MlpLoss loss = MlpLoss::kSoftmaxCrossEntropy;
  int32_t seed = 0;  // the programs' random_seed
};

// Writes the MLP into empty `programs` (main: feeds, forward, loss; startup: initialisers) and
// sets programs->seed, ->loss and ->feeds. kInvalidArgument for a config with a non-positive size.
Status BuildMlp(const MlpConfig& config, ModelPrograms* programs);

}  // namespace irm::oldir::models
