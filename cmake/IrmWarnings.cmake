# Warnings are errors on our own code (docs/architecture.md). Generated protobuf code gets none of
# these. The gate is the g++ build; the clang fuzz build warns without failing.
function(irm_warnings target)
  if(IRM_FUZZ)
    target_compile_options(${target} PRIVATE -Wall -Wextra)
  else()
    target_compile_options(${target} PRIVATE -Wall -Wextra -Werror)
  endif()
endfunction()
