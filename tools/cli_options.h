// The option helpers the subcommands of ir-migrate share when they register themselves with
// CLI11 (command_*.cc): program formats, the new-IR read and print flags, options naming one of a
// fixed set of values, and integer bounds that say what is wanted.
#pragma once

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "oldir/optimizer.h"
#include "reference_runtime/comm/rank_world.h"
#include "reference_runtime/kernel.h"
#include "tools/ir_format.h"

namespace irm::tools {

// Adds --from/--to style format options: binary|text (legacy), pir|json (new IR).
CLI::Option* AddFormatOption(CLI::App* app, const std::string& name,
                             std::optional<IrFormat>* target, const std::string& help);

void AddAllowUnregistered(CLI::App* app, bool* target);

// How new-IR programs are read and printed.
void AddNewIrOptions(CLI::App* app, NewIrOptions* o);

// Adds an option whose value is one of `names` and is turned into T by `parse`.
template <typename T, typename Parse>
void AddNamedOption(CLI::App* app, const std::string& name, T* target,
                    std::vector<std::string> names, Parse parse, const std::string& help) {
  app->add_option_function<std::string>(
         name, [target, parse](const std::string& value) { *target = *parse(value); }, help)
      ->check(CLI::IsMember(names))
      ->type_name(fmt::format("{}", fmt::join(names, "|")));
}

// The optimizer of a model-zoo program: --optimizer, --lr, --clip-norm (build, engine).
void AddOptimizerOptions(CLI::App* app, oldir::OptimizerOptions* o);

// Integer options with a lower bound: CLI11's PositiveNumber and NonNegativeNumber would say
// "Value 0 not in range 2.225074e-308 to 1.797693e+308"; this one says what is wanted. Shown in
// --help as INT:POSITIVE (min 1) or INT:NONNEGATIVE (min 0).
CLI::Validator AtLeast(int min);

// Where the kernels of a run execute (run, parity): the executors and their binding tables are the
// same either way; only the kernel registry changes.
enum class RunDevice { kCpu, kGpu };

// --device cpu|gpu (default cpu).
void AddDeviceOption(CLI::App* app, RunDevice* target);

// The kernels of `device` for ExecutorOptions::kernels: null for the CPU (the executors' default);
// for the GPU the host-staged GPU registry (reference_runtime/cuda/gpu_kernel_registry.h), owned
// by `holder`. kInternal (exit 3) where no GPU can be used or the build has no CUDA backend.
StatusOr<const rt::KernelRegistry*> KernelsFor(RunDevice device,
                                               std::unique_ptr<rt::KernelRegistry>* holder);

// The world of a --ranks run whose communication is on the GPU: `backend` "device" (N ranks
// sharing one GPU, reductions in rank order by a kernel: reference_runtime/cuda/device_world.h) or
// "nccl" (one rank per GPU, in NCCL's deterministic settings: cuda/nccl_communicator.h), a call
// waiting longer than `timeout` failing. kInvalidArgument (exit 2) for either without --device
// gpu; kInternal (exit 3) where the build has no CUDA backend. `trace`: record every rank's calls
// (for --trace).
StatusOr<rt::RankWorldFactory> GpuWorldFactory(const std::string& backend, RunDevice device,
                                               std::chrono::milliseconds timeout, bool trace);

}  // namespace irm::tools
