# irm_protobuf_library(target protos...): C++ code generated from .proto files (paths relative to
# the current source dir), compiled into a static library. protoc sees the repository root as its
# import root, so generated headers are included as "<module>/proto/<name>.pb.h".
function(irm_protobuf_library target)
  set(_srcs)
  foreach(_proto ${ARGN})
    get_filename_component(_abs ${_proto} ABSOLUTE)
    file(RELATIVE_PATH _rel ${PROJECT_SOURCE_DIR} ${_abs})
    string(REGEX REPLACE "\\.proto$" "" _stem ${_rel})
    set(_cc ${PROJECT_BINARY_DIR}/${_stem}.pb.cc)
    set(_h ${PROJECT_BINARY_DIR}/${_stem}.pb.h)
    add_custom_command(
      OUTPUT ${_cc} ${_h}
      COMMAND protobuf::protoc --cpp_out=${PROJECT_BINARY_DIR} -I ${PROJECT_SOURCE_DIR} ${_abs}
      DEPENDS ${_abs} protobuf::protoc
      COMMENT "protoc ${_rel}"
      VERBATIM)
    list(APPEND _srcs ${_cc})
  endforeach()
  add_library(${target} ${_srcs})
  target_link_libraries(${target} PUBLIC protobuf::libprotobuf)
endfunction()
