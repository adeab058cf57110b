// Paddle's combined parameter file (.pdiparams; also what save_combine writes): the tensors of a
// program's persistable vars, concatenated in var-name order. Each tensor is
//   uint32 version (= 0), uint64 lod_level, lod_level x (uint64 nbytes + that many bytes of
//   size_t offsets), uint32 tensor_version (= 0), int32 desc_size, desc_size bytes of a serialized
//   VarType.TensorDesc, then the raw little-endian data (numel x element size).
// (paddle/phi/core/framework/dense_tensor_serialize.cc). The file names no tensor: the names come
// from the program (ParamNamesForProgram).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/host_tensor.h"
#include "common/status.h"
#include "oldir/program.h"

namespace irm::oldir {

struct ParamTensor {
  std::string name;  // empty when read without names
  HostTensor tensor;
  std::vector<std::vector<uint64_t>> lod;  // legacy LoD offsets, usually empty
  bool operator==(const ParamTensor&) const = default;
};

// Paddle dtype code (VarType.Type POD value) <-> DType; nullopt for codes without a DType.
std::optional<DType> DTypeFromVarType(proto::VarType::Type type);
proto::VarType::Type VarTypeFromDType(DType dtype);

// Every tensor in the file, in order. When `names` is given, its size must equal the number of
// tensors and they are named in that order. `file` only names the input in diagnostics; each
// error says which tensor (index, name) and byte offset.
StatusOr<std::vector<ParamTensor>> ParseParams(std::string_view bytes, const std::string& file,
                                               const std::vector<std::string>* names = nullptr);
StatusOr<std::string> SerializeParams(const std::vector<ParamTensor>& params);

StatusOr<std::vector<ParamTensor>> LoadParams(const std::string& path,
                                              const std::vector<std::string>* names = nullptr);
Status SaveParams(const std::vector<ParamTensor>& params, const std::string& path);  // atomic

// The names Paddle's save_inference_model stores, in file order: the persistable vars of the root
// block other than feed/fetch (types FEED_MINIBATCH, FETCH_LIST) and non-tensors, sorted by name.
std::vector<std::string> ParamNamesForProgram(const Program& program);

}  // namespace irm::oldir
