// The kernel families and the helper that registers a kernel template for a list of dtypes.
// RegisterAllKernels (kernel_registry.cc's caller) calls every family; a family lives in its own
// file under kernels/ with its tests beside it.
#pragma once

#include <string>

#include "common/status.h"
#include "reference_runtime/kernel.h"

namespace irm::rt {

Status RegisterAllKernels(KernelRegistry& registry);

// Families (one file each); RegisterAllKernels (kernels/register.cc) calls each that exists.
Status RegisterElementwiseKernels(KernelRegistry& registry);    // kernels/elementwise.cc
Status RegisterActivationKernels(KernelRegistry& registry);     // kernels/activation.cc
Status RegisterMatmulKernels(KernelRegistry& registry);         // kernels/matmul.cc
Status RegisterReductionKernels(KernelRegistry& registry);      // kernels/reduction.cc
Status RegisterNormalizationKernels(KernelRegistry& registry);  // kernels/normalization.cc
Status RegisterSoftmaxKernels(KernelRegistry& registry);        // kernels/softmax.cc
Status RegisterManipulationKernels(KernelRegistry& registry);   // kernels/manipulation.cc
Status RegisterCreationKernels(KernelRegistry& registry);       // kernels/creation.cc
Status RegisterIndexingKernels(KernelRegistry& registry);       // kernels/indexing.cc
Status RegisterSetValueKernels(KernelRegistry& registry);       // kernels/set_value.cc
Status RegisterCastKernels(KernelRegistry& registry);           // kernels/cast.cc
Status RegisterRandomKernels(KernelRegistry& registry);         // kernels/random.cc
Status RegisterOptimizerKernels(KernelRegistry& registry);      // kernels/optimizer.cc
Status RegisterCoalesceKernels(KernelRegistry& registry);       // kernels/coalesce.cc
Status RegisterConvKernels(KernelRegistry& registry);           // kernels/conv.cc
Status RegisterPoolKernels(KernelRegistry& registry);           // kernels/pool.cc
Status RegisterBatchNormKernels(KernelRegistry& registry);      // kernels/batch_norm.cc
Status RegisterMetricsKernels(KernelRegistry& registry);        // kernels/metrics.cc
Status RegisterDetectionKernels(KernelRegistry& registry);      // kernels/detection.cc
Status RegisterMatmulWithFlattenKernels(
    KernelRegistry& registry);  // kernels/matmul_with_flatten.cc

// Registers Kernel<T>::Run for every T (CPU). Kernel is a class template with a static
// `Status Run(KernelCall&)`.
template <template <typename> class Kernel, typename... Ts>
Status RegisterForTypes(KernelRegistry& registry, const std::string& name,
                        KernelSignature signature) {
  Status status;
  ((status.ok() ? (void)(status = registry.Register(name, DTypeOf<Ts>(), Device::kCpu,
                                                    {&Kernel<Ts>::Run, signature}))
                : (void)0),
   ...);
  return status;
}

}  // namespace irm::rt
