# Test helpers: GoogleTest executables and FileCheck file tests, both registered with ctest.

# irm_gtest(name sources...): a GoogleTest binary whose tests ctest lists one by one.
function(irm_gtest name)
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE GTest::gtest GTest::gmock GTest::gtest_main)
  irm_warnings(${name})
  gtest_discover_tests(${name}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    PROPERTIES ENVIRONMENT "IRM_SOURCE_DIR=${PROJECT_SOURCE_DIR};IRM_BINARY_DIR=${PROJECT_BINARY_DIR}"
    DISCOVERY_TIMEOUT 60)
endfunction()

find_program(IRM_FILECHECK NAMES FileCheck-14 FileCheck PATHS /usr/lib/llvm-14/bin REQUIRED)

# irm_filecheck_tests(dir): one ctest test per file in dir holding "RUN:" lines (lit style:
# "# RUN: %irm dump %s | %FileCheck %s"), driven by scripts/run-filecheck-test.
function(irm_filecheck_tests dir)
  file(GLOB _files CONFIGURE_DEPENDS ${dir}/*)
  foreach(_file ${_files})
    file(STRINGS ${_file} _run LIMIT_COUNT 1 REGEX "RUN:")
    if(NOT _run)
      continue()
    endif()
    file(RELATIVE_PATH _rel ${PROJECT_SOURCE_DIR} ${_file})
    add_test(NAME filecheck/${_rel}
      COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/run-filecheck-test ${_file}
      WORKING_DIRECTORY ${PROJECT_BINARY_DIR})
    set_tests_properties(filecheck/${_rel} PROPERTIES ENVIRONMENT
      "IRM_BIN=$<TARGET_FILE:ir-migrate>;IRM_DEADCODE_BIN=$<TARGET_FILE:ir-deadcode>;FILECHECK=${IRM_FILECHECK};IRM_SOURCE_DIR=${PROJECT_SOURCE_DIR};IRM_TMP=${PROJECT_BINARY_DIR}/filecheck-tmp")
  endforeach()
endfunction()
