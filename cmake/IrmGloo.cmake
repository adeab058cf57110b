# IRM_WITH_GLOO=AUTO|ON|OFF: find Gloo (Debian libgloo-dev, CMake config with the imported target
# `gloo`). IRM_HAVE_GLOO tells reference_runtime/, diff_tests/ and bench/ whether to build the Gloo
# backend (irm_runtime_gloo), its tests and its benchmark; nothing else depends on Gloo.
set(IRM_WITH_GLOO AUTO CACHE STRING "Build the Gloo communication backend: AUTO, ON or OFF")
set_property(CACHE IRM_WITH_GLOO PROPERTY STRINGS AUTO ON OFF)

set(IRM_HAVE_GLOO OFF)
if(NOT IRM_WITH_GLOO MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "IRM_WITH_GLOO must be AUTO, ON or OFF, not '${IRM_WITH_GLOO}'")
endif()
if(NOT IRM_WITH_GLOO STREQUAL "OFF")
  find_package(Gloo CONFIG QUIET)
  if(TARGET gloo)
    set(IRM_HAVE_GLOO ON)
    # Debian's package exports only the RelWithDebInfo configuration: use it for every build type.
    set_target_properties(gloo PROPERTIES MAP_IMPORTED_CONFIG_DEBUG RelWithDebInfo
                                          MAP_IMPORTED_CONFIG_RELEASE RelWithDebInfo
                                          MAP_IMPORTED_CONFIG_MINSIZEREL RelWithDebInfo)
  elseif(IRM_WITH_GLOO STREQUAL "ON")
    message(FATAL_ERROR "IRM_WITH_GLOO=ON but find_package(Gloo CONFIG) found no target gloo "
                        "(install libgloo-dev: scripts/setup)")
  endif()
endif()
message(STATUS "ir-migrate: Gloo backend ${IRM_HAVE_GLOO} (IRM_WITH_GLOO=${IRM_WITH_GLOO})")
