// IRM_HOST_DEVICE marks the inline functions that the CPU kernels and the CUDA device code share
// (pool_window.h, detection_math.h, conv_net_geometry.h): `__host__ __device__` where nvcc compiles
// them, nothing for the host compiler, so one definition serves both and the two sides cannot
// drift.
#pragma once

#if defined(__CUDACC__)
#define IRM_HOST_DEVICE __host__ __device__
#else
#define IRM_HOST_DEVICE
#endif
