// Every kernel family, registered once into the global registry (kernel.h).
#include "reference_runtime/kernels/register.h"

#include <vector>

namespace irm::rt {

Status RegisterAllKernels(KernelRegistry& registry) {
  using Family = Status (*)(KernelRegistry&);
  const std::vector<Family> families = {
      RegisterElementwiseKernels,
      RegisterActivationKernels,
      RegisterMatmulKernels,
      RegisterReductionKernels,
      RegisterSoftmaxKernels,
      RegisterNormalizationKernels,
      RegisterManipulationKernels,
      RegisterIndexingKernels,
      RegisterSetValueKernels,
      RegisterCastKernels,
      RegisterCreationKernels,
      RegisterRandomKernels,
      RegisterOptimizerKernels,
      RegisterCoalesceKernels,
      RegisterConvKernels,
      RegisterPoolKernels,
      RegisterBatchNormKernels,
      RegisterMetricsKernels,
      RegisterMatmulWithFlattenKernels,
      RegisterDetectionKernels,
  };
  for (Family family : families) IRM_RETURN_IF_ERROR(family(registry));
  return Status::Ok();
}

}  // namespace irm::rt
