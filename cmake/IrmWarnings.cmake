# Warnings are errors on our own code (conventions.md). Generated protobuf code gets none of these.
function(irm_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror)
endfunction()
