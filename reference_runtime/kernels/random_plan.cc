// The random kernels' plans (random_plan.h): seeds, shapes, shard placement, dropout's checks.
#include "reference_runtime/kernels/random_plan.h"

#include <fmt/format.h>

namespace irm::rt::plan {
namespace {

// The serial tensor's elements the streams can tell apart, conservatively: Normal(i) reads the
// double stream's words up to about 2^62 + 2i + 3 (philox.h), which must not wrap around 2^64, and
// UniformFloat(i) the words below 2^62, where the double stream starts.
constexpr int64_t kMaxSerialElements = int64_t{1} << 60;

}  // namespace

uint64_t StreamSeed(int64_t op_seed, const KernelContext& context) {
  return op_seed != 0 ? static_cast<uint64_t>(op_seed) : context.program_seed;
}

StatusOr<std::vector<int64_t>> RandomOutputShape(const char* kernel, const KernelAttrs& attrs) {
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> shape, attrs.Get<std::vector<int64_t>>("shape"));
  for (int64_t d : shape) {
    if (d < 0) {
      return KernelError(
          fmt::format("{}: shape {} has a negative dim", kernel, ShapeToString(shape)));
    }
  }
  return shape;
}

Status ShardError(const char* kernel, const std::vector<int64_t>& shape,
                  const KernelContext& context, const std::string& why) {
  const OutputShard& shard = *context.shard;
  return KernelError(
      fmt::format("{}: output '{}' {} is a shard of the serial tensor {} at offsets {}, but {}",
                  kernel, context.shard_var, ShapeToString(shape),
                  ShapeToString(shard.global_shape), ShapeToString(shard.offsets), why));
}

StatusOr<SerialIndexPlan> PlanSerialIndex(const char* kernel, const std::vector<int64_t>& shape,
                                          const KernelContext& context) {
  SerialIndexPlan plan;
  const OutputShard* shard = context.shard;
  if (shard == nullptr) return plan;
  auto error = [&](const std::string& why) { return ShardError(kernel, shape, context, why); };
  const size_t rank = shape.size();
  if (shard->global_shape.size() != rank || shard->offsets.size() != rank) {
    return error(fmt::format("it has {} dims, the serial tensor {} and the offsets {}", rank,
                             shard->global_shape.size(), shard->offsets.size()));
  }
  int64_t serial_numel = 1;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t global = shard->global_shape[d];
    const int64_t offset = shard->offsets[d];
    if (global < 1) return error(fmt::format("serial dim {} is {}, not positive", d, global));
    if (__builtin_mul_overflow(serial_numel, global, &serial_numel) ||
        serial_numel > kMaxSerialElements) {
      return error(
          "the serial tensor has more than 2^60 elements, more than the random streams "
          "tell apart");
    }
    if (offset < 0 || offset >= global) {
      return error(fmt::format("offset {} of dim {} is outside [0, {})", offset, d, global));
    }
    if (shape[d] > global - offset) {
      return error(fmt::format("dim {} reaches {} + {} = {}, past the serial dim {}", d, offset,
                               shape[d], offset + shape[d], global));
    }
  }
  plan.sharded = true;
  plan.strides.assign(rank, 1);
  for (size_t d = rank; d-- > 1;) plan.strides[d - 1] = plan.strides[d] * shard->global_shape[d];
  for (size_t d = 0; d < rank; ++d) plan.base += shard->offsets[d] * plan.strides[d];
  return plan;
}

StatusOr<DropoutAttrs> ReadDropoutAttrs(const char* kernel, const KernelAttrs& attrs) {
  DropoutAttrs out;
  IRM_ASSIGN_OR_RETURN(const double p, attrs.GetOr<double>("p", 0.5));
  if (!(p >= 0.0 && p <= 1.0)) {  // also rejects NaN
    return KernelError(fmt::format("{}: p is {}, not in [0, 1]", kernel, p));
  }
  out.p = static_cast<float>(p);
  IRM_ASSIGN_OR_RETURN(out.is_test, attrs.GetOr<bool>("is_test", false));
  IRM_ASSIGN_OR_RETURN(const std::string mode,
                       attrs.GetOr<std::string>("mode", "upscale_in_train"));
  // "downgrade_in_infer" is how legacy programs and Paddle's Python spell the downscale mode;
  // phi treats every mode but upscale_in_train alike, this kernel only the two known spellings.
  if (mode != "upscale_in_train" && mode != "downscale_in_infer" && mode != "downgrade_in_infer") {
    return KernelError(
        fmt::format("{}: mode is '{}', not 'upscale_in_train' or 'downscale_in_infer' (also "
                    "spelt 'downgrade_in_infer')",
                    kernel, mode));
  }
  out.upscale_in_train = mode == "upscale_in_train";
  return out;
}

StatusOr<int64_t> DropoutSeed(const Operand& seed_tensor, const KernelAttrs& attrs,
                              const std::function<StatusOr<Tensor>()>& host_seed_tensor) {
  if (seed_tensor.present()) {
    const DType dtype = seed_tensor.dtype();
    if (seed_tensor.numel() != 1 || (dtype != DType::kInt32 && dtype != DType::kInt64)) {
      return KernelError(fmt::format("dropout: seed_tensor is {}, expected one int32 or int64",
                                     seed_tensor.Describe()));
    }
    IRM_ASSIGN_OR_RETURN(const Tensor host, host_seed_tensor());
    return dtype == DType::kInt32 ? int64_t{host.data<int32_t>()[0]} : host.data<int64_t>()[0];
  }
  IRM_ASSIGN_OR_RETURN(const bool fix_seed, attrs.GetOr<bool>("fix_seed", false));
  if (!fix_seed) return int64_t{0};
  return attrs.GetOr<int64_t>("seed", 0);
}

Status CheckDropoutGradOperands(const DropoutAttrs& attrs, const Operand& mask,
                                const Operand& out_grad) {
  if (attrs.is_test) return Status::Ok();
  if (mask.dtype() != DType::kUInt8) {
    return KernelError(fmt::format("dropout_grad: mask is {}, expected uint8", mask.Describe()));
  }
  if (mask.shape() != out_grad.shape()) {
    return KernelError(fmt::format("dropout_grad: mask {} and out_grad {} differ in shape",
                                   mask.Describe(), out_grad.Describe()));
  }
  return Status::Ok();
}

}  // namespace irm::rt::plan
