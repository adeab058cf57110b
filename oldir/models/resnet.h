// The model zoo's ResNet, written op for op as Paddle's static-graph image-classification scripts
// build it (PaddlePaddle/models PaddleCV/image_classification/models/resnet.py on
// paddle.static.nn; the block structure of python/paddle/vision/models/resnet.py):
//
//   image = paddle.static.data('image', [None, channels, size, size], 'float32')
//   label = paddle.static.data('label', [None, 1], 'int64')
//   def conv_bn(x, filters, k, stride, act):            # conv2d (no bias) -> batch_norm(act)
//       c = static.nn.conv2d(x, filters, k, stride, padding=(k - 1) // 2, bias_attr=False)
//       return static.nn.batch_norm(c, act=act)
//   x = conv_bn(image, width, 7, 2, 'relu')              # the stem
//   x = pool2d(x, 3, 'max', stride 2, padding 1)
//   for stage s, for block i (stride 2 for the first block of every stage but the first):
//       bottleneck: a = conv_bn(x, w, 1, 1, 'relu'); b = conv_bn(a, w, 3, stride, 'relu');
//                   c = conv_bn(b, 4w, 1, 1, None)       # w = width * 2**s
//       basic:      a = conv_bn(x, w, 3, stride, 'relu'); c = conv_bn(a, w, 3, 1, None)
//       short = conv_bn(x, out, 1, stride, None) if x's channels != out or stride != 1 else x
//       x = elementwise_add(short, c, act='relu')
//   x = F.adaptive_avg_pool2d(x, 1)                      # pool2d, adaptive, ksize [1, 1]
//   logits = static.nn.fc(x, classes, weight Uniform(-1/sqrt(C), 1/sqrt(C)))  # mul + add
//   loss, softmax = softmax_with_cross_entropy(logits, label, return_softmax=True)
//   loss = mean(loss)
//   acc_top1 = accuracy(softmax, label, k=1); acc_topk = accuracy(softmax, label, k=top_k)
//
// with main.random_seed = startup.random_seed = seed and the executor's feed ops for image (col 0)
// and label (col 1). Each static.nn call is one LayerHelper, so its parameters and outputs share a
// name: conv2d_N.w_0 (Normal(0, sqrt(2 / (k * k * C_in))), Paddle's conv default) and its output
// conv2d_N.tmp_0; batch_norm_N.w_0 (scale, Constant 1), .b_0 (bias, Constant 0), .w_1 (moving
// mean, Constant 0) and .w_2 (moving variance, Constant 1) — the two statistics persistable,
// stop_gradient, not trained — and its outputs tmp_0 (SavedMean), tmp_1 (SavedVariance), tmp_2
// (ReserveSpace), tmp_3 (Y), tmp_4 (relu); elementwise_add_N.tmp_0 and .tmp_1 (relu); pool2d_N;
// fc_N.w_0, fc_N.tmp_0 (mul), fc_N.b_0, fc_N.tmp_1; accuracy_N.tmp_0..4 (top_k Out and Indices,
// Accuracy, Correct, Total). The accuracy ops are those of paddle.static.accuracy before Paddle
// 2.5 (python/paddle/fluid/layers/metric_op.py: `top_k` with attribute k, then `accuracy`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "oldir/models/model.h"

namespace irm::oldir::models {

enum class ResnetBlock { kBottleneck, kBasic };

struct ResnetConfig {
  ResnetBlock block = ResnetBlock::kBottleneck;
  // Blocks per stage, one entry per stage (Paddle's ResNet-50: {3, 4, 6, 3}).
  std::vector<int> depth = {1, 1};
  int64_t width = 4;  // the stem's filters and stage 0's width (Paddle: 64), doubling per stage
  int64_t channels = 3;
  int64_t image_size = 16;  // height and width
  int64_t classes = 4;
  int top_k = 2;     // the second accuracy's k (Paddle's scripts: 5), in [1, classes]
  int32_t seed = 0;  // the programs' random_seed
};

// The metrics the scripts fetch besides the loss.
struct ResnetMetrics {
  std::string acc_top1, acc_topk;
};

const char* ResnetBlockName(ResnetBlock block);  // "bottleneck", "basic"

// Writes the ResNet into empty `programs` and sets programs->seed, ->loss and ->feeds; `metrics`
// (optional) receives the accuracy vars. kInvalidArgument for a config with no stage, a
// non-positive size, top_k outside [1, classes], or an image the stem and strides shrink below
// one pixel.
Status BuildResnet(const ResnetConfig& config, ModelPrograms* programs,
                   ResnetMetrics* metrics = nullptr);

}  // namespace irm::oldir::models
