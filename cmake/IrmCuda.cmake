# IRM_WITH_CUDA=AUTO|ON|OFF: detect the CUDA toolkit (with cuBLAS and NCCL) at /usr/local/cuda and,
# when found, enable the CUDA language for the CUDA backend (reference_runtime/cuda/).
#
# What the backend is built for (docs/runtime.md, "GPU"): machine code for sm_90 only (H100/H200;
# one target keeps nvcc's compile time down), the CUDA runtime linked statically (-cudart static),
# cuBLAS and NCCL linked dynamically so that a GPU machine's own copies are used. The sanitizer and
# fuzz builds (clang) leave the backend out: nvcc takes none of their flags and device code has no
# ASan.
set(IRM_WITH_CUDA AUTO CACHE STRING "Build the CUDA backend: AUTO, ON or OFF")
set_property(CACHE IRM_WITH_CUDA PROPERTY STRINGS AUTO ON OFF)
set(IRM_CUDA_ROOT /usr/local/cuda CACHE PATH "Where the CUDA toolkit is installed")

set(IRM_HAVE_CUDA OFF)
if(NOT IRM_WITH_CUDA MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "IRM_WITH_CUDA must be AUTO, ON or OFF, not '${IRM_WITH_CUDA}'")
endif()
if(NOT IRM_WITH_CUDA STREQUAL "OFF")
  set(_irm_nvcc "${IRM_CUDA_ROOT}/bin/nvcc")
  set(_irm_nccl "${IRM_CUDA_ROOT}/include/nccl.h")
  if(IRM_FUZZ OR IRM_SANITIZE)
    if(IRM_WITH_CUDA STREQUAL "ON")
      message(FATAL_ERROR "IRM_WITH_CUDA=ON cannot be combined with IRM_FUZZ or IRM_SANITIZE")
    endif()
  elseif(EXISTS "${_irm_nvcc}" AND EXISTS "${_irm_nccl}")
    set(IRM_HAVE_CUDA ON)
  elseif(IRM_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "IRM_WITH_CUDA=ON but no nvcc and nccl.h under ${IRM_CUDA_ROOT}")
  endif()
endif()

if(IRM_HAVE_CUDA)
  if(NOT CMAKE_CUDA_COMPILER)
    set(CMAKE_CUDA_COMPILER "${_irm_nvcc}")
  endif()
  if(NOT CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90)
  endif()
  set(CMAKE_CUDA_RUNTIME_LIBRARY Static)
  set(CMAKE_CUDA_STANDARD 17)  # what CMake 3.25 knows of nvcc 13; the .cu files need no more
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  # NCCL has no CMake target: its header and library sit in the toolkit's own folders.
  find_library(IRM_NCCL_LIBRARY nccl HINTS "${IRM_CUDA_ROOT}/lib64" "${IRM_CUDA_ROOT}/lib"
               REQUIRED)
  if(NOT TARGET irm_nccl)
    add_library(irm_nccl SHARED IMPORTED GLOBAL)
    set_target_properties(irm_nccl PROPERTIES
      IMPORTED_LOCATION "${IRM_NCCL_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${IRM_CUDA_ROOT}/include")
  endif()
endif()
message(STATUS "ir-migrate: CUDA backend ${IRM_HAVE_CUDA} (IRM_WITH_CUDA=${IRM_WITH_CUDA}, root ${IRM_CUDA_ROOT})")
