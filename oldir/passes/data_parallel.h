// Data parallelism as Paddle's legacy static auto-parallel applied it: a serial training program
// (startup + main, with op_role attributes, as oldir/models/training.h builds it) becomes the
// programs of dp_degree identical replicas. After the backward op that finishes each parameter's
// gradient, the gradient is summed over the data-parallel ring (`c_allreduce_sum`) and scaled by
// 1/dp_degree; with the strategy's fused all-reduce (dp_optimization), the gradients are grouped
// into buckets by size and each bucket of two or more is synchronised once through a
// `coalesce_tensor` buffer. Each replica reads its own 1/dp_degree of the global batch (the
// bundle's feeds split by rank), so the replicas together compute the serial step.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "oldir/backward.h"
#include "oldir/bundle.h"
#include "oldir/passes/distributed_programs.h"
#include "oldir/passes/strategy.h"
#include "oldir/program.h"

namespace irm::oldir::passes {

// The ring of the data-parallel group (every rank when data parallelism is the only axis).
inline constexpr int kDataParallelRing = 0;
// The op_namescope Paddle gives the data-parallel sync ops (ParallelMode.DataParallel), by which
// its later passes recognise them.
inline constexpr const char* kDataParallelNamescope = "/data_parallel";
// The prefix of a bucket's fused buffer (Paddle's coalesce_prefix).
inline constexpr const char* kCoalescePrefix = "coalesce_grad";

// One bucket of the fused all-reduce: gradients in program order and their total size.
struct GradientBucket {
  std::vector<std::string> grads;
  int64_t bytes = 0;
};

// The (parameter, gradient) pairs the optimizer ops of main's root block update (ops with the
// Optimize role and `Param`/`Grad` inputs), in op order. kInvalidArgument when there are none.
StatusOr<std::vector<ParamGrad>> OptimizerParamGrads(const Program& main);

// The root block of `main` with every gradient of `grads` synchronised right after the backward
// op that last writes it: `c_allreduce_sum` (X = Out = grad, use_calc_stream) on `ring_id`, the
// data-parallel group of the rank, then `scale` (1/dp_degree), both Backward role in the
// data-parallel namescope. kInvalidArgument when a gradient has no backward writer in the root
// block.
StatusOr<Program> InsertGradientSync(const Program& main, const std::vector<ParamGrad>& grads,
                                     int dp_degree, int ring_id = kDataParallelRing);

// Paddle's grouping of the synchronised gradients of a program InsertGradientSync made: in the
// order of their all-reduces, a gradient joins the open bucket while the bucket's size stays
// within `max_bytes`, the dtype agrees and no op between them touches the bucket's gradients.
StatusOr<std::vector<GradientBucket>> GroupGradients(const Program& synced, int64_t max_bytes);

// Rewrites a program InsertGradientSync made so that each bucket of two or more gradients is
// synchronised once (on the ring of its gradients' all-reduces): `coalesce_tensor` (Input = Output
// = the bucket's gradients, FusedOutput = `coalesce_grad_<i>_0`, copy_data), one `c_allreduce_sum`
// and one `scale` of the fused buffer, where the bucket's last all-reduce was. A bucket of one
// keeps its own all-reduce. As in Paddle, the gradients are views of the fused buffer after
// coalesce_tensor: an executor must alias them for the reduced values to reach the gradients.
StatusOr<Program> FuseGradientSync(const Program& synced,
                                   const std::vector<GradientBucket>& buckets);

// The gradient synchronisation of one rank's main program on its data-parallel ring: every
// optimizer gradient all-reduced and scaled (InsertGradientSync), in buckets when the strategy
// fuses the all-reduce (GroupGradients by dp_optimization.fuse_grad_size_in_MB, then
// FuseGradientSync).
StatusOr<Program> SynchronizeGradients(const Program& main, const Strategy& strategy, int ring_id);

// The whole pass: dp_degree ranks, each with the serial startup program (the same seed gives
// every replica the same initial parameters) and the synchronised main program (fused when the
// strategy asks for it). kInvalidArgument for a strategy with another parallel axis (mp, pp) or
// a program without optimizer ops; dp_degree 1 returns the serial programs unchanged.
StatusOr<DistributedPrograms> ApplyDataParallel(const Program& startup, const Program& main,
                                                const Strategy& strategy);

}  // namespace irm::oldir::passes
