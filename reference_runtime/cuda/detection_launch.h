// Launchers of detection.cu (the device side of detection_kernels.cc): the detection ops of
// kernels/detection.cc, float32 and float64 (`is_double`), each following the CPU kernel's
// arithmetic step for step. Plain descriptions only, as launch.h; null pointers are absent inputs.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace irm::rt::cuda {

// smooth_l1_loss over x viewed as [rows, cols]: diff = (x - y) * inside, out[r] = the sum over the
// row in order; one thread per row.
cudaError_t LaunchSmoothL1Loss(bool is_double, int64_t rows, int64_t cols, double sigma,
                               const void* x, const void* y, const void* inside,
                               const void* outside, void* diff, void* out, cudaStream_t stream);
// smooth_l1_loss_grad: one thread per element; inside and outside both given or both null.
cudaError_t LaunchSmoothL1LossGrad(bool is_double, int64_t n, int64_t cols, double sigma,
                                   const void* inside, const void* outside, const void* diff,
                                   const void* out_grad, void* x_grad, void* y_grad,
                                   cudaStream_t stream);

// sigmoid_cross_entropy_with_logits and its grad (out_grad null: the forward), one thread per
// element; with `normalize` each result is divided by the count of labels further than 1e-6 from
// ignore_index, which one thread counts first into `norm` (an int32 device scalar).
cudaError_t LaunchSigmoidCrossEntropy(bool is_double, int64_t n, bool normalize, int ignore_index,
                                      const void* x, const void* label, const void* pos_weight,
                                      const void* out_grad, int32_t* norm, void* out,
                                      cudaStream_t stream);

// affine_channel: out[i] = x[i] * scale[c] + bias[c]; channel c of element i is (i / inner) % c
// for NCHW, i % channels otherwise. One thread per element.
struct ChannelDesc {
  int64_t n = 0, channels = 0, inner = 0, numel = 0;
  bool nchw = false;
};
cudaError_t LaunchAffineChannel(bool is_double, const ChannelDesc& d, const void* x,
                                const void* scale, const void* bias, void* out,
                                cudaStream_t stream);
// affine_channel_grad: x_grad per element; scale_grad and bias_grad one thread per channel in the
// CPU's order (per sample partial sums added over the samples for NCHW). Null outputs are skipped.
cudaError_t LaunchAffineChannelGrad(bool is_double, const ChannelDesc& d, const void* x,
                                    const void* scale, const void* out_grad, void* x_grad,
                                    void* scale_grad, void* bias_grad, cudaStream_t stream);

// anchor_generator: anchors and variances [height, width, ratios x sizes, 4]; `sizes` and
// `ratios` are device arrays of floats (the attributes rounded to float32 as the CPU does). One
// thread per anchor.
struct AnchorDesc {
  int64_t height = 0, width = 0, num_sizes = 0, num_ratios = 0;
  float stride_w = 16, stride_h = 16, offset = 0.5f;
  float variances[4] = {};
};
cudaError_t LaunchAnchorGenerator(bool is_double, const AnchorDesc& d, const float* sizes,
                                  const float* ratios, void* anchors, void* variances,
                                  cudaStream_t stream);

// roi_align over x [N, C, H, W] and boxes [R, 4]; `image` (int64 [R]) is each box's image.
struct RoiAlignDesc {
  int64_t channels = 0, height = 0, width = 0, rois = 0;
  int64_t pooled_height = 1, pooled_width = 1, sampling_ratio = -1;
  float spatial_scale = 1.0f;
  bool aligned = false;
};
// One thread per output element (box, channel, bin), recomputing its bin's sampling points.
cudaError_t LaunchRoiAlign(bool is_double, const RoiAlignDesc& d, const void* x, const void* boxes,
                           const int64_t* image, void* out, cudaStream_t stream);
// x_grad (zeroed by the host) gets every sampling point's share added on ONE thread, in the CPU's
// loop order (box, channel, bin, point): the scatter's sums are the CPU's, no atomics.
cudaError_t LaunchRoiAlignGrad(bool is_double, const RoiAlignDesc& d, const void* boxes,
                               const int64_t* image, const void* out_grad, void* x_grad,
                               cudaStream_t stream);

// generate_proposals over scores [N, A, H, W], bbox_deltas [N, 4A, H, W], im_shape (height, width
// per image, `im_cols` values a row) and anchors, variances [H, W, A, 4]. `bbox_clip` is
// log(1000 / 16) as the host's C library computes it (the CPU kernel's constant, not the
// device's log).
struct ProposalDesc {
  int64_t images = 0, anchors = 0, height = 0, width = 0, im_cols = 2;
  int64_t pre_nms_top_n = 6000, post_nms_top_n = 1000;
  float nms_thresh = 0.5f, min_size = 0.1f, eta = 1.0f;
  bool pixel_offset = true;
  double bbox_clip = 0;
  // height x width x anchors; and the proposals one image can have: every anchor, or the one
  // zero box when none is left (max(rows, 1)). Set by the host.
  int64_t rows = 0, capacity = 1;
};
// Device scratch the host allocates, per image: `rows` decoded boxes (4 values), scores (the
// NHWC order) and keep flags, two index buffers of `rows` int64 for the sort; `capacity`
// proposal boxes (4 values) and scores; and the count of each image's proposals.
struct ProposalScratch {
  void* boxes = nullptr;
  void* scores = nullptr;
  uint8_t* keep = nullptr;
  int64_t* order = nullptr;
  int64_t* spare = nullptr;
  void* proposal_boxes = nullptr;
  void* proposal_scores = nullptr;
  int32_t* counts = nullptr;
};
// Decodes, clips and filters every anchor of every image (one thread per anchor), then sorts,
// cuts and suppresses on ONE thread per image in the CPU's order, leaving each image's proposals
// and their count in the scratch.
cudaError_t LaunchGenerateProposals(bool is_double, const ProposalDesc& d, const void* scores,
                                    const void* deltas, const void* im_shape, const void* anchors,
                                    const void* variances, const ProposalScratch& scratch,
                                    cudaStream_t stream);
// Packs the images' proposals one after the other into rois [R, 4] and probs [R, 1] (R = the sum
// of the counts); one thread per image.
cudaError_t LaunchPackProposals(bool is_double, const ProposalDesc& d,
                                const ProposalScratch& scratch, void* rois, void* probs,
                                cudaStream_t stream);

}  // namespace irm::rt::cuda
