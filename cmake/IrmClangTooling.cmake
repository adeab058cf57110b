# Clang LibTooling from Debian's LLVM 14 for ir-deadcode's C++ front end: the interface target
# irm_clang_tooling links the shared clang-cpp and LLVM libraries and compiles in the resource
# directory where Clang keeps its builtin headers (stddef.h, ...), which a tool does not find by
# itself because it does not live beside the clang binary.
# Debian's LLVM is built without RTTI: sources that derive from Clang classes must be compiled with
# -fno-rtti (irm_clang_tooling_sources below), the rest of the project keeps RTTI.
if(TARGET irm_clang_tooling)
  return()
endif()

set(_irm_clang_hints /usr/lib/llvm-14/lib/cmake/clang)
find_program(IRM_LLVM_CONFIG NAMES llvm-config-14)
if(IRM_LLVM_CONFIG)
  execute_process(COMMAND ${IRM_LLVM_CONFIG} --cmakedir OUTPUT_VARIABLE _irm_llvm_cmakedir
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(_irm_llvm_cmakedir)
    list(PREPEND _irm_clang_hints ${_irm_llvm_cmakedir}/../clang)
  endif()
endif()
# Debian ships no version file for Clang's package configuration: check the version ourselves.
find_package(Clang CONFIG QUIET HINTS ${_irm_clang_hints})
if(NOT Clang_FOUND OR NOT TARGET clang-cpp OR NOT TARGET LLVM OR NOT LLVM_VERSION_MAJOR EQUAL 14)
  message(FATAL_ERROR "Clang 14 LibTooling (libclang-14-dev, llvm-14-dev) not found: run scripts/setup")
endif()

# The resource directory of the clang 14 that matches the libraries.
find_program(IRM_CLANG14 NAMES clang-14 HINTS ${LLVM_TOOLS_BINARY_DIR})
set(IRM_CLANG_RESOURCE_DIR "")
if(IRM_CLANG14)
  execute_process(COMMAND ${IRM_CLANG14} -print-resource-dir OUTPUT_VARIABLE IRM_CLANG_RESOURCE_DIR
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
endif()
if(NOT IRM_CLANG_RESOURCE_DIR OR NOT EXISTS ${IRM_CLANG_RESOURCE_DIR}/include/stddef.h)
  set(IRM_CLANG_RESOURCE_DIR ${LLVM_LIBRARY_DIR}/clang/${LLVM_PACKAGE_VERSION})
endif()
if(NOT EXISTS ${IRM_CLANG_RESOURCE_DIR}/include/stddef.h)
  message(FATAL_ERROR "Clang 14's builtin headers (stddef.h) not found: run scripts/setup")
endif()
message(STATUS "Clang ${LLVM_PACKAGE_VERSION} LibTooling, resource dir ${IRM_CLANG_RESOURCE_DIR}")

add_library(irm_clang_tooling INTERFACE)
# SYSTEM: LLVM's headers are not held to our -Werror (C++20 deprecations in them).
target_include_directories(irm_clang_tooling SYSTEM INTERFACE ${CLANG_INCLUDE_DIRS}
                           ${LLVM_INCLUDE_DIRS})
target_compile_definitions(irm_clang_tooling INTERFACE
                           IRM_CLANG_RESOURCE_DIR="${IRM_CLANG_RESOURCE_DIR}")
target_link_libraries(irm_clang_tooling INTERFACE clang-cpp LLVM)

# irm_clang_tooling_sources(files...): sources that derive from Clang classes, compiled as LLVM is.
# g++ 12 warns (-Wnonnull) inside Clang's inlined ExternalASTSource.h, where SYSTEM does not reach.
function(irm_clang_tooling_sources)
  set_source_files_properties(${ARGN} DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
                              PROPERTIES COMPILE_OPTIONS "-fno-rtti;-Wno-nonnull")
endfunction()
