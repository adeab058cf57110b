# tree-sitter for the Python front end of ir-deadcode: Debian's library (libtree-sitter-dev,
# 0.20.7) and the pinned tree-sitter-python grammar (0.23.x) that scripts/setup unpacks under
# third_party/. Defines the static library irm_tree_sitter_python (the grammar's parser.c and
# scanner.c) that links the library, or stops with what to run when either is missing.
if(TARGET irm_tree_sitter_python)
  return()
endif()

find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(IRM_TREE_SITTER QUIET IMPORTED_TARGET GLOBAL tree-sitter)
endif()
if(IRM_TREE_SITTER_FOUND)
  set(_irm_ts_lib PkgConfig::IRM_TREE_SITTER)
else()
  find_library(IRM_TREE_SITTER_LIBRARY NAMES tree-sitter)
  find_path(IRM_TREE_SITTER_INCLUDE tree_sitter/api.h)
  if(NOT IRM_TREE_SITTER_LIBRARY OR NOT IRM_TREE_SITTER_INCLUDE)
    message(FATAL_ERROR "tree-sitter library not found (libtree-sitter-dev): run scripts/setup")
  endif()
  add_library(irm_tree_sitter_lib INTERFACE)
  target_link_libraries(irm_tree_sitter_lib INTERFACE ${IRM_TREE_SITTER_LIBRARY})
  target_include_directories(irm_tree_sitter_lib INTERFACE ${IRM_TREE_SITTER_INCLUDE})
  set(_irm_ts_lib irm_tree_sitter_lib)
endif()

set(IRM_TREE_SITTER_PYTHON_DIR ${PROJECT_SOURCE_DIR}/third_party/tree-sitter-python/src)
if(NOT EXISTS ${IRM_TREE_SITTER_PYTHON_DIR}/parser.c OR
   NOT EXISTS ${IRM_TREE_SITTER_PYTHON_DIR}/scanner.c)
  message(FATAL_ERROR "tree-sitter-python grammar not found in ${IRM_TREE_SITTER_PYTHON_DIR}: "
                      "run scripts/setup (it unpacks tree-sitter-python 0.23.6 there)")
endif()

# Generated and vendored C: no warnings, always optimized (the parse tables dominate run time).
add_library(irm_tree_sitter_python STATIC
  ${IRM_TREE_SITTER_PYTHON_DIR}/parser.c
  ${IRM_TREE_SITTER_PYTHON_DIR}/scanner.c
)
set_target_properties(irm_tree_sitter_python PROPERTIES C_STANDARD 11 POSITION_INDEPENDENT_CODE ON)
target_include_directories(irm_tree_sitter_python PRIVATE ${IRM_TREE_SITTER_PYTHON_DIR})
target_compile_options(irm_tree_sitter_python PRIVATE -w -O2)
target_link_libraries(irm_tree_sitter_python PUBLIC ${_irm_ts_lib})
