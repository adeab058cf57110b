// The option helpers shared by the subcommands' registrations.
#include "tools/cli_options.h"

#include <cstdint>

#ifdef IRM_HAVE_CUDA
#include "reference_runtime/cuda/device_world.h"
#include "reference_runtime/cuda/gpu_kernel_registry.h"
#include "reference_runtime/cuda/nccl_communicator.h"
#endif

namespace irm::tools {

CLI::Option* AddFormatOption(CLI::App* app, const std::string& name,
                             std::optional<IrFormat>* target, const std::string& help) {
  return app
      ->add_option_function<std::string>(
          name, [target](const std::string& value) { *target = IrFormatFromName(value); }, help)
      ->check(CLI::IsMember(IrFormatNames()))
      ->type_name("binary|text|pir|json");
}

void AddAllowUnregistered(CLI::App* app, bool* target) {
  app->add_flag("--allow-unregistered", *target,
                "New IR: keep ops no dialect registers (opaquely) instead of rejecting them");
}

void AddNewIrOptions(CLI::App* app, NewIrOptions* o) {
  AddAllowUnregistered(app, &o->allow_unregistered);
  app->add_flag("--print-generic", o->print_generic,
                "New IR: print every op in the generic form (no custom pd_op.if/while forms)");
  app->add_flag("--print-debuginfo", o->print_debuginfo,
                "New IR: print each op's id ([id:N]) after its name");
}

CLI::Validator AtLeast(int min) {
  return CLI::Validator(
      [min](std::string& input) -> std::string {
        int64_t value = 0;
        if (CLI::detail::lexical_cast(input, value) && value >= min) return {};
        return fmt::format("must be an integer of at least {}, got '{}'", min, input);
      },
      min > 0 ? "POSITIVE" : "NONNEGATIVE");
}

void AddOptimizerOptions(CLI::App* app, oldir::OptimizerOptions* o) {
  AddNamedOption(app, "--optimizer", &o->kind, {"sgd", "momentum", "adam", "adamw"},
                 oldir::OptimizerKindFromName, "Optimizer (default sgd)");
  app->add_option("--lr", o->learning_rate, "Learning rate")->capture_default_str();
  app->add_option_function<float>(
      "--clip-norm", [o](float norm) { o->clip_global_norm = norm; },
      "Clip gradients by their global norm (ClipGradByGlobalNorm)");
}

void AddDeviceOption(CLI::App* app, RunDevice* target) {
  AddNamedOption(
      app, "--device", target, {"cpu", "gpu"},
      [](std::string_view name) -> std::optional<RunDevice> {
        if (name == "cpu") return RunDevice::kCpu;
        if (name == "gpu") return RunDevice::kGpu;
        return std::nullopt;
      },
      "Where the kernels run: cpu (default) or gpu (CUDA; each op's tensors are copied to the "
      "device and back; an op without a GPU kernel is an error naming it)");
}

StatusOr<const rt::KernelRegistry*> KernelsFor(RunDevice device,
                                               std::unique_ptr<rt::KernelRegistry>* holder) {
  if (device == RunDevice::kCpu) return nullptr;
#ifdef IRM_HAVE_CUDA
  StatusOr<std::unique_ptr<rt::KernelRegistry>> gpu = rt::cuda::MakeGpuKernelRegistry();
  if (!gpu.ok()) {
    return Status(gpu.status().code(), Location{},
                  fmt::format("--device gpu: {}", gpu.status().message()));
  }
  *holder = std::move(gpu).value();
  return holder->get();
#else
  (void)holder;
  return Status(StatusCode::kInternal, Location{},
                "--device gpu: no GPU can be used: this build has no CUDA backend (configure "
                "with IRM_WITH_CUDA=ON where the CUDA toolkit is installed)");
#endif
}

StatusOr<rt::RankWorldFactory> GpuWorldFactory(const std::string& backend, RunDevice device,
                                               std::chrono::milliseconds timeout, bool trace) {
  if (device != RunDevice::kGpu) {
    return Status(
        StatusCode::kInvalidArgument, Location{},
        fmt::format("--backend {} communicates on the GPU: use it with --device gpu", backend));
  }
#ifdef IRM_HAVE_CUDA
  if (backend == "nccl") {
    rt::cuda::NcclWorldOptions options;
    options.timeout = timeout;
    options.trace = trace;
    return rt::cuda::NcclWorld::Factory(options);
  }
  rt::cuda::DeviceWorldOptions options;
  options.timeout = timeout;
  options.trace = trace;
  return rt::cuda::DeviceWorld::Factory(options);
#else
  (void)timeout;
  (void)trace;
  return Status(StatusCode::kInternal, Location{},
                fmt::format("--backend {}: this build has no CUDA backend (configure with "
                            "IRM_WITH_CUDA=ON where the CUDA toolkit is installed)",
                            backend));
#endif
}

}  // namespace irm::tools
