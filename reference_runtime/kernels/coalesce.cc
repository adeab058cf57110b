// The coalesce_tensor kernel (Paddle's paddle/phi/kernels/coalesce_tensor_kernel.cc, signature in
// paddle/phi/ops/yaml/ops.yaml): a vector of tensors laid out one after another in a fresh 1-D
// fused buffer, and the outputs handed back as views of their parts of that buffer. The views are
// the point: fuse-all-reduce all-reduces the fused buffer once and the optimizer reads the
// gradients through the views, so this is the one kernel whose outputs share storage with another
// of its outputs (kernel.h's "fresh storage" rule holds for the fused buffer; executors must bind
// the views, not copy them into the vars' old storage).
#include <cstring>

#include <fmt/format.h>

#include "reference_runtime/kernels/numeric.h"
#include "reference_runtime/kernels/register.h"

namespace irm::rt {
namespace {

// Paddle's CPU alignment of each part (phi::Alignment in device_memory_aligment.h with no
// align_size: CpuMinChunkSize(), paddle/phi/backends/cpu/cpu_info.cc, 4 KiB).
constexpr int64_t kCpuMinChunkBytes = int64_t{1} << 12;

// Bytes rounded up to the alignment, as phi::Alignment rounds.
int64_t Aligned(int64_t bytes, int64_t alignment) {
  const int64_t remaining = bytes % alignment;
  return remaining == 0 ? bytes : bytes + (alignment - remaining);
}

// coalesce_tensor(input...; dtype, copy_data, set_constant, persist_output, constant, use_align,
// align_size, size_of_dtype, concated_shapes, concated_ranks) -> output..., fused_output.
// Each input's part starts where the previous one's (aligned, with use_align, to align_size bytes
// or Paddle's CPU chunk size) ended; the padding between parts is zero (Paddle leaves it
// uninitialised: a fresh tensor here is zero-filled, so no byte of the buffer is undefined).
// copy_data copies the inputs into their parts; persist_output copies the outputs' previous
// values, which are the inputs (the kernel runs on initialised inputs only: Output and Input name
// the same vars wherever Paddle emits the op); set_constant fills the whole buffer with
// `constant`; none of them leaves it zero. concated_shapes/concated_ranks only give the shapes of
// uninitialised inputs in Paddle, so they are not consulted.
template <typename T>
struct CoalesceTensorKernel {
  static Status Run(KernelCall& call) {
    const size_t n = call.num_inputs();
    if (call.outputs.size() != n + 1) {
      return KernelError(fmt::format(
          "coalesce_tensor: {} inputs need {} outputs ({} views and the fused buffer), {} were "
          "given",
          n, n + 1, n, call.outputs.size()));
    }
    IRM_ASSIGN_OR_RETURN(const DType dtype, call.attrs.Get<DType>("dtype"));
    IRM_ASSIGN_OR_RETURN(const bool copy_data, call.attrs.GetOr<bool>("copy_data", false));
    IRM_ASSIGN_OR_RETURN(const bool set_constant, call.attrs.GetOr<bool>("set_constant", false));
    IRM_ASSIGN_OR_RETURN(const bool persist_output,
                         call.attrs.GetOr<bool>("persist_output", false));
    IRM_ASSIGN_OR_RETURN(const double constant, call.attrs.GetOr<double>("constant", 0.0));
    IRM_ASSIGN_OR_RETURN(const bool use_align, call.attrs.GetOr<bool>("use_align", true));
    IRM_ASSIGN_OR_RETURN(const int64_t align_size, call.attrs.GetOr<int64_t>("align_size", -1));
    IRM_ASSIGN_OR_RETURN(int64_t size_of_dtype, call.attrs.GetOr<int64_t>("size_of_dtype", -1));
    if (size_of_dtype <= 0) size_of_dtype = static_cast<int64_t>(DTypeSize(dtype));
    const int64_t alignment = align_size > 0 ? align_size : kCpuMinChunkBytes;

    // Where each part starts, in elements, and the buffer's length.
    std::vector<int64_t> starts(n);
    int64_t numel = 0;
    for (size_t i = 0; i < n; ++i) {
      const Tensor& in = call.input(i);
      if (in.dtype() != dtype) {
        return KernelError(fmt::format("coalesce_tensor: input[{}] is {}, but dtype is {}", i,
                                       in.Describe(), DTypeName(dtype)));
      }
      if (in.numel() <= 0) {
        return KernelError(
            fmt::format("coalesce_tensor: input[{}] {} has no elements", i, in.Describe()));
      }
      starts[i] = numel;
      numel +=
          use_align ? Aligned(in.numel() * size_of_dtype, alignment) / size_of_dtype : in.numel();
    }
    IRM_ASSIGN_OR_RETURN(Tensor fused, Tensor::Zeros(dtype, {numel}));
    T* buffer = fused.data<T>();
    if (copy_data || persist_output) {
      for (size_t i = 0; i < n; ++i) {
        std::memcpy(buffer + starts[i], call.input(i).raw(), call.input(i).nbytes());
      }
    } else if (set_constant) {
      T value;
      if constexpr (std::is_integral_v<T>) {
        value = static_cast<T>(constant);
      } else {
        value = Store<T>(static_cast<Compute<T>>(constant));
      }
      for (int64_t j = 0; j < numel; ++j) buffer[j] = value;
    }
    for (size_t i = 0; i < n; ++i) {
      IRM_ASSIGN_OR_RETURN(Tensor part, fused.Slice(starts[i], starts[i] + call.input(i).numel()));
      IRM_ASSIGN_OR_RETURN(Tensor view, part.Reshaped(call.input(i).shape()));
      call.SetOutput(i, std::move(view));
    }
    call.SetOutput(n, std::move(fused));
    return Status::Ok();
  }
};

}  // namespace

Status RegisterCoalesceKernels(KernelRegistry& registry) {
  // Paddle registers int, float and double on CPU and adds float16 on GPU.
  return RegisterForTypes<CoalesceTensorKernel, int32_t, Float16, float, double>(
      registry, "coalesce_tensor", {1, KernelSignature::kVariadic, KernelSignature::kVariadic});
}

}  // namespace irm::rt
