# IRM_WITH_CUDA=AUTO|ON|OFF: detect the CUDA toolkit (with cuBLAS and NCCL) at /usr/local/cuda.
# Only detection for now: IRM_HAVE_CUDA tells later modules whether to build the CUDA backend.
set(IRM_WITH_CUDA AUTO CACHE STRING "Build the CUDA backend: AUTO, ON or OFF")
set_property(CACHE IRM_WITH_CUDA PROPERTY STRINGS AUTO ON OFF)
set(IRM_CUDA_ROOT /usr/local/cuda CACHE PATH "Where the CUDA toolkit is installed")

set(IRM_HAVE_CUDA OFF)
if(NOT IRM_WITH_CUDA STREQUAL "OFF")
  set(_irm_nvcc "${IRM_CUDA_ROOT}/bin/nvcc")
  set(_irm_nccl "${IRM_CUDA_ROOT}/include/nccl.h")
  if(EXISTS "${_irm_nvcc}" AND EXISTS "${_irm_nccl}")
    set(IRM_HAVE_CUDA ON)
  elseif(IRM_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "IRM_WITH_CUDA=ON but no nvcc and nccl.h under ${IRM_CUDA_ROOT}")
  elseif(NOT IRM_WITH_CUDA STREQUAL "AUTO")
    message(FATAL_ERROR "IRM_WITH_CUDA must be AUTO, ON or OFF, not '${IRM_WITH_CUDA}'")
  endif()
endif()
message(STATUS "ir-migrate: CUDA backend ${IRM_HAVE_CUDA} (IRM_WITH_CUDA=${IRM_WITH_CUDA}, root ${IRM_CUDA_ROOT})")
