// The kernel registry of `--device gpu`, resident or host-staged (gpu_kernel_registry.h).
//
// A KernelEntry holds a plain function pointer (KernelFn) and KernelCall does not say which kernel
// it is for, so each (name, dtype) gets a slot: a process-wide table built once from the CPU and
// CUDA registries, and one instantiated function per slot index and residency that runs its slot.
#include "reference_runtime/cuda/gpu_kernel_registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cstddef>
#include <memory>
#include <utility>

#include "reference_runtime/cuda/cuda_kernel.h"
#include "reference_runtime/cuda/cuda_status.h"
#include "reference_runtime/cuda/device_tensor.h"
#include "reference_runtime/device_fault.h"

namespace irm::rt::cuda {
namespace {

struct Slot {
  std::string name;
  DType dtype = DType::kFloat32;
  KernelSignature signature;  // the CPU kernel's
  bool staged = false;        // false: refused
  std::string refusal;        // why, for a refused slot
};

const std::vector<Slot>& Slots() {
  static const std::vector<Slot>* const slots = [] {
    auto* table = new std::vector<Slot>();
    const KernelRegistry& cpu = KernelRegistry::Global();
    const CudaKernelRegistry& gpu = CudaKernelRegistry::Global();
    for (const std::string& name : cpu.Names()) {
      for (DType dtype : cpu.DTypesOf(name, Device::kCpu)) {
        Slot slot;
        slot.name = name;
        slot.dtype = dtype;
        slot.signature = cpu.Find(name, dtype, Device::kCpu)->signature;
        slot.staged = gpu.Find(name, dtype) != nullptr;
        if (!slot.staged) {
          const std::vector<DType> dtypes = gpu.DTypesOf(name);
          if (dtypes.empty()) {
            slot.refusal = fmt::format("no GPU kernel for '{}' yet", name);
          } else {
            std::vector<std::string> names;
            for (DType d : dtypes) names.emplace_back(DTypeName(d));
            slot.refusal = fmt::format("no GPU kernel for '{}' on {} yet (the GPU has it for {})",
                                       name, DTypeName(dtype), fmt::join(names, ", "));
          }
        }
        table->push_back(std::move(slot));
      }
    }
    return table;
  }();
  return *slots;
}

// The twin on the device: each defined input made a DeviceTensor by `to_device(input, index)`,
// each wanted output handed back as a Tensor by `to_tensor(output)`. An undefined host input stays
// an undefined device tensor, so the twin reports it missing as the CPU kernel would.
template <typename ToDevice, typename ToTensor>
Status RunTwin(const Slot& slot, KernelCall& call, const ToDevice& to_device,
               const ToTensor& to_tensor) {
  std::vector<DeviceTensor> device_inputs(call.inputs.size());
  CudaKernelCall device_call;
  device_call.inputs.reserve(call.inputs.size());
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    if (call.inputs[i] == nullptr) {
      device_call.inputs.push_back(nullptr);
      continue;
    }
    if (call.inputs[i]->defined()) {
      IRM_ASSIGN_OR_RETURN(device_inputs[i], to_device(*call.inputs[i], i));
    }
    device_call.inputs.push_back(&device_inputs[i]);
  }
  std::vector<DeviceTensor> device_outputs(call.outputs.size());
  device_call.outputs.reserve(call.outputs.size());
  for (size_t i = 0; i < call.outputs.size(); ++i) {
    device_call.outputs.push_back(call.wants_output(i) ? &device_outputs[i] : nullptr);
  }
  device_call.attrs = call.attrs;
  device_call.context = call.context;
  IRM_RETURN_IF_ERROR(CudaKernelRegistry::Global().Run(slot.name, slot.dtype, device_call));
  for (size_t i = 0; i < call.outputs.size(); ++i) {
    if (!call.wants_output(i) || !device_outputs[i].defined()) continue;
    IRM_ASSIGN_OR_RETURN(Tensor output, to_tensor(std::move(device_outputs[i])));
    call.SetOutput(i, std::move(output));
  }
  return Status::Ok();
}

// Inputs to the device, the twin, outputs back to the host.
Status RunStaged(const Slot& slot, KernelCall& call) {
  return RunTwin(
      slot, call,
      [&slot](const Tensor& input, size_t) { return DeviceTensor::FromHost(input, slot.name); },
      [&slot](DeviceTensor output) { return output.ToHost(slot.name); });
}

// Inputs read where their device mirror is (uploaded once if they have none), the twin, outputs
// left on the device as Tensors holding the twin's buffers. A view keeps its input's mirror alive:
// a twin's output may share an input's device storage (reshape), and mirrors are never written
// after they are made (device_mirror.h), so such an output is as independent as a copy.
Status RunResident(const Slot& slot, KernelCall& call) {
  const DeviceMirrorMaker make = [&slot](size_t bytes) {
    return MakeDeviceMirror(bytes, slot.name);
  };
  const auto view = [&](const Tensor& input, size_t i) -> StatusOr<DeviceTensor> {
    IRM_RETURN_IF_ERROR(input.UploadToDevice(make));
    std::shared_ptr<const DeviceMirror> mirror = input.device_mirror();
    if (mirror == nullptr) {
      // Only a host write racing with this op (another thread) can drop it again.
      return Status(
          StatusCode::kInternal, Location{},
          fmt::format("gpu: {}: input {} lost its device copy while the op ran", slot.name, i));
    }
    const void* data = static_cast<const std::byte*>(mirror->data()) + input.byte_offset();
    return DeviceTensor::View(input.dtype(), input.shape(), data, std::move(mirror));
  };
  const auto on_device = [](DeviceTensor output) -> StatusOr<Tensor> {
    const DType dtype = output.dtype();
    std::vector<int64_t> shape = output.shape();
    return Tensor::OnDevice(dtype, std::move(shape),
                            std::make_unique<DeviceTensorMirror>(std::move(output)));
  };
  return RunTwin(slot, call, view, on_device);
}

template <GpuResidency kResidency>
Status RunSlot(size_t index, KernelCall& call) {
  const Slot& slot = Slots()[index];
  if (!slot.staged) return Status(StatusCode::kUnimplemented, Location{}, slot.refusal);
  // A device fault a host read met since the last op (device_fault.h) stops the run here.
  if (Status fault = TakeDeviceFault(); !fault.ok()) {
    return fault.AddNote(fmt::format("reported before '{}' ran", slot.name));
  }
  if constexpr (kResidency == GpuResidency::kResident) return RunResident(slot, call);
  return RunStaged(slot, call);
}

// Room for every (name, dtype) of the CPU registry (653 today); MakeGpuKernelRegistry fails
// rather than drop one when the CPU registry outgrows it.
constexpr size_t kMaxSlots = 1024;

template <GpuResidency kResidency, size_t I>
Status SlotKernel(KernelCall& call) {
  return RunSlot<kResidency>(I, call);
}

template <GpuResidency kResidency, size_t... I>
constexpr std::array<KernelFn, sizeof...(I)> SlotKernels(std::index_sequence<I...>) {
  return {&SlotKernel<kResidency, I>...};
}

constexpr std::array<KernelFn, kMaxSlots> kStagedSlotKernels =
    SlotKernels<GpuResidency::kStaged>(std::make_index_sequence<kMaxSlots>());
constexpr std::array<KernelFn, kMaxSlots> kResidentSlotKernels =
    SlotKernels<GpuResidency::kResident>(std::make_index_sequence<kMaxSlots>());

}  // namespace

const GpuKernelCoverage& GpuCoverage() {
  static const GpuKernelCoverage* const coverage = [] {
    auto* c = new GpuKernelCoverage();
    for (const Slot& slot : Slots()) {
      (slot.staged ? c->staged : c->refused).emplace_back(slot.name, slot.dtype);
    }
    return c;
  }();
  return *coverage;
}

StatusOr<std::unique_ptr<KernelRegistry>> MakeGpuKernelRegistryUnchecked(GpuResidency residency) {
  const std::vector<Slot>& slots = Slots();
  if (slots.size() > kMaxSlots) {
    return Status(StatusCode::kInternal, Location{},
                  fmt::format("the GPU kernel registry has room for {} kernels, the CPU has {}: "
                              "raise kMaxSlots in gpu_kernel_registry.cc",
                              kMaxSlots, slots.size()));
  }
  const std::array<KernelFn, kMaxSlots>& kernels =
      residency == GpuResidency::kResident ? kResidentSlotKernels : kStagedSlotKernels;
  auto registry = std::make_unique<KernelRegistry>();
  for (size_t i = 0; i < slots.size(); ++i) {
    // Under Device::kCpu: the executors look kernels up there, and they do not change.
    IRM_RETURN_IF_ERROR(registry->Register(slots[i].name, slots[i].dtype, Device::kCpu,
                                           {kernels[i], slots[i].signature}));
  }
  return registry;
}

StatusOr<std::unique_ptr<KernelRegistry>> MakeGpuKernelRegistry(GpuResidency residency) {
  if (VisibleGpuCount() == 0) {
    return Status(StatusCode::kInternal, Location{},
                  fmt::format("no GPU can be used: {}", NoGpuReason()));
  }
  return MakeGpuKernelRegistryUnchecked(residency);
}

}  // namespace irm::rt::cuda
