// The device-independent half of the random kernels (uniform, gaussian, dropout, dropout_grad):
// the stream's seed, the output shape of an initialiser, where a sharded initialiser's elements
// sit in the serial tensor, and dropout's attributes and operand checks. The CPU kernels
// (random.cc, which says where each follows Paddle) and the CUDA kernels
// (cuda/random_kernels.cc) both plan with these and draw from the same counter-based stream, so
// that they check the same things with the same words and draw the same numbers.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "reference_runtime/kernel.h"
#include "reference_runtime/kernels/plan_operand.h"

namespace irm::rt::plan {

// The stream's key: the op's own seed when non-zero, else the program's.
uint64_t StreamSeed(int64_t op_seed, const KernelContext& context);

// An initialiser's output shape (its `shape` attribute): no negative dim.
StatusOr<std::vector<int64_t>> RandomOutputShape(const char* kernel, const KernelAttrs& attrs);

// Where an initialiser's output of `shape` sits in the serial tensor it is a shard of
// (KernelContext::shard): element (i_0, ..., i_{r-1}) draws at serial index
//   base + sum over d of i_d * strides[d].
// Not sharded: the element's own index (base 0, C-order strides of `shape` are not needed).
struct SerialIndexPlan {
  bool sharded = false;
  int64_t base = 0;
  std::vector<int64_t> strides;  // the serial tensor's, in elements (sharded only)
};
// kInvalid naming the kernel and the var when the output does not fit where the shard says it
// lies: another number of dims, an offset or a serial dim out of range, the box reaching past the
// serial tensor, or a serial tensor larger than the streams can index.
StatusOr<SerialIndexPlan> PlanSerialIndex(const char* kernel, const std::vector<int64_t>& shape,
                                          const KernelContext& context);
// The error PlanSerialIndex words, for a device's own limit on a shard: "<kernel>: output '<var>'
// <shape> is a shard of the serial tensor <global> at offsets <offsets>, but <why>".
Status ShardError(const char* kernel, const std::vector<int64_t>& shape,
                  const KernelContext& context, const std::string& why);

struct DropoutAttrs {
  float p = 0.5f;  // Paddle reads p as float (p.to<float>()); so do we, for the same bits
  bool is_test = false;
  bool upscale_in_train = true;
};
StatusOr<DropoutAttrs> ReadDropoutAttrs(const char* kernel, const KernelAttrs& attrs);

// dropout's seed: the seed_tensor's value when given (it must hold one int32 or int64), else
// `seed` when fix_seed is set, else 0 (the program's). `host_seed_tensor` gives a host copy of
// the seed_tensor; it is only called when the seed_tensor is given and checked.
StatusOr<int64_t> DropoutSeed(const Operand& seed_tensor, const KernelAttrs& attrs,
                              const std::function<StatusOr<Tensor>()>& host_seed_tensor);

// dropout_grad's mask (uint8, out_grad's shape) when training; at test it is not read.
Status CheckDropoutGradOperands(const DropoutAttrs& attrs, const Operand& mask,
                                const Operand& out_grad);

}  // namespace irm::rt::plan
