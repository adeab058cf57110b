// assign_value and full_int_array on the GPU: constants from attributes, no inputs. The CPU kernel
// (kernels/creation.cc) builds the tensor on the host — its checks, errors and conversions — and
// the result is copied to the device: the CPU's bits by construction, one small copy per run.
#include <fmt/format.h>

#include <vector>

#include "reference_runtime/cuda/cuda_kernel.h"

namespace irm::rt::cuda {
namespace {

// The registry key of both kernels is the output dtype, so each key has its own function.
template <DType kDType>
struct HostBuilt {
  static Status Run(CudaKernelCall& call, const char* name) {
    KernelCall host;
    host.attrs = call.attrs;
    host.context = call.context;
    Tensor out;
    host.outputs = {&out};
    IRM_RETURN_IF_ERROR(KernelRegistry::Global().Run(name, kDType, host, Device::kCpu));
    IRM_ASSIGN_OR_RETURN(DeviceTensor device, DeviceTensor::FromHost(out, name));
    call.SetOutput(0, std::move(device));
    return Status::Ok();
  }
  static Status AssignValue(CudaKernelCall& call) { return Run(call, "assign_value"); }
  static Status FullIntArray(CudaKernelCall& call) { return Run(call, "full_int_array"); }
};

template <DType kDType>
Status RegisterOne(CudaKernelRegistry& registry) {
  const KernelRegistry& cpu = KernelRegistry::Global();
  const struct {
    const char* name;
    CudaKernelFn fn;
  } kernels[] = {{"assign_value", &HostBuilt<kDType>::AssignValue},
                 {"full_int_array", &HostBuilt<kDType>::FullIntArray}};
  for (const auto& k : kernels) {
    const KernelEntry* entry = cpu.Find(k.name, kDType, Device::kCpu);
    if (entry == nullptr) continue;  // the CPU has no such dtype: neither has the GPU
    IRM_RETURN_IF_ERROR(registry.Register(k.name, kDType, {k.fn, entry->signature}));
  }
  return Status::Ok();
}

}  // namespace

Status RegisterCudaCreationKernels(CudaKernelRegistry& registry) {
  IRM_RETURN_IF_ERROR(RegisterOne<DType::kBool>(registry));
  IRM_RETURN_IF_ERROR(RegisterOne<DType::kInt8>(registry));
  IRM_RETURN_IF_ERROR(RegisterOne<DType::kUInt8>(registry));
  IRM_RETURN_IF_ERROR(RegisterOne<DType::kInt16>(registry));
  IRM_RETURN_IF_ERROR(RegisterOne<DType::kInt32>(registry));
  IRM_RETURN_IF_ERROR(RegisterOne<DType::kInt64>(registry));
  IRM_RETURN_IF_ERROR(RegisterOne<DType::kFloat16>(registry));
  IRM_RETURN_IF_ERROR(RegisterOne<DType::kBFloat16>(registry));
  IRM_RETURN_IF_ERROR(RegisterOne<DType::kFloat32>(registry));
  return RegisterOne<DType::kFloat64>(registry);
}

}  // namespace irm::rt::cuda
