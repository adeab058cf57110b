// Reading and writing Paddle's combined parameter files (.pdiparams). The layout follows
// SerializeToStream / DeserializeFromStream in Paddle's dense_tensor_serialize.cc field by field.
// The reader treats the file as untrusted: every count and size read from it is checked against
// the bytes that remain before anything is allocated, and each failure names the tensor (index,
// and name when known) and the byte offset of the field that is wrong.
#include "oldir/params_io.h"

#include <fmt/format.h>
#include <google/protobuf/unknown_field_set.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <utility>

#include "common/file_io.h"

namespace irm::oldir {
namespace {

// Integers and data are copied as they are: the format is little-endian, and so is the host.
static_assert(std::endian::native == std::endian::little,
              "the .pdiparams code assumes a little-endian host");

bool IsKnownDType(DType dtype) { return dtype <= DType::kComplex128; }

std::string DimsText(const std::vector<int64_t>& dims) {
  return fmt::format("[{}]", fmt::join(dims, ", "));
}

// "tensor 3 ('fc_0.w_0')" or "tensor 3".
std::string TensorText(size_t index, const std::string& name) {
  return name.empty() ? fmt::format("tensor {}", index)
                      : fmt::format("tensor {} ('{}')", index, name);
}

class ParamsReader {
 public:
  ParamsReader(std::string_view bytes, const std::string& file,
               const std::vector<std::string>* names)
      : bytes_(bytes), file_(file), names_(names) {}

  StatusOr<std::vector<ParamTensor>> ReadAll() {
    std::vector<ParamTensor> params;
    while (pos_ < bytes_.size()) {
      index_ = params.size();
      name_ = names_ != nullptr && index_ < names_->size() ? (*names_)[index_] : std::string();
      ParamTensor param;
      IRM_RETURN_IF_ERROR(ReadTensor(&param));
      param.name = name_;
      params.push_back(std::move(param));
    }
    if (names_ != nullptr && names_->size() != params.size()) {
      return Status(StatusCode::kParseError, Location::File(file_),
                    fmt::format("the file holds {} tensor{} but {} name{} given", params.size(),
                                params.size() == 1 ? "" : "s", names_->size(),
                                names_->size() == 1 ? " was" : "s were"));
    }
    return params;
  }

 private:
  size_t left() const { return bytes_.size() - pos_; }

  Status Error(size_t at, std::string message) const {
    return Status(
        StatusCode::kParseError,
        Location::File(file_).With(fmt::format("{}, byte {}", TensorText(index_, name_), at)),
        std::move(message));
  }

  template <typename T>
  Status Read(T* value, const char* what) {
    if (left() < sizeof(T)) {
      return Error(pos_, fmt::format("truncated: the file ends inside the {} ({} bytes needed, {} "
                                     "left)",
                                     what, sizeof(T), left()));
    }
    std::memcpy(value, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return Status::Ok();
  }

  Status ReadTensor(ParamTensor* param) {
    // DenseTensor header: version, then the legacy LoD.
    size_t at = pos_;
    uint32_t version = 0;
    IRM_RETURN_IF_ERROR(Read(&version, "DenseTensor version"));
    if (version != 0) {
      return Error(at, fmt::format("unsupported DenseTensor version {} (only 0 exists)", version));
    }
    at = pos_;
    uint64_t lod_level = 0;
    IRM_RETURN_IF_ERROR(Read(&lod_level, "lod_level"));
    if (lod_level > left() / sizeof(uint64_t)) {  // each level takes at least its 8-byte size
      return Error(at, fmt::format("lod_level {} is beyond the file: {} bytes left cannot hold "
                                   "that many levels",
                                   lod_level, left()));
    }
    for (uint64_t level = 0; level < lod_level; ++level) {
      at = pos_;
      uint64_t nbytes = 0;
      IRM_RETURN_IF_ERROR(Read(&nbytes, "size of a LoD level"));
      if (nbytes % sizeof(uint64_t) != 0) {
        return Error(at,
                     fmt::format("LoD level {} has {} bytes, not a multiple of 8", level, nbytes));
      }
      if (nbytes > left()) {
        return Error(at, fmt::format("LoD level {} has {} bytes, beyond the file ({} bytes left)",
                                     level, nbytes, left()));
      }
      std::vector<uint64_t> offsets(nbytes / sizeof(uint64_t));
      if (nbytes > 0) std::memcpy(offsets.data(), bytes_.data() + pos_, nbytes);
      pos_ += nbytes;
      param->lod.push_back(std::move(offsets));
    }

    // Tensor: version, TensorDesc, data.
    at = pos_;
    uint32_t tensor_version = 0;
    IRM_RETURN_IF_ERROR(Read(&tensor_version, "tensor version"));
    if (tensor_version != 0) {
      return Error(at,
                   fmt::format("unsupported tensor version {} (only 0 exists)", tensor_version));
    }
    at = pos_;
    int32_t desc_size = 0;
    IRM_RETURN_IF_ERROR(Read(&desc_size, "TensorDesc size"));
    if (desc_size < 0) return Error(at, fmt::format("desc_size {} is negative", desc_size));
    if (static_cast<uint64_t>(desc_size) > left()) {
      return Error(
          at, fmt::format("desc_size {} is beyond the file ({} bytes left)", desc_size, left()));
    }
    at = pos_;
    proto::VarType::TensorDesc desc;
    // Partial: a missing data_type gets its own message below.
    if (!desc.ParsePartialFromArray(bytes_.data() + pos_, desc_size)) {
      return Error(at, fmt::format("the TensorDesc ({} bytes) does not parse", desc_size));
    }
    pos_ += static_cast<size_t>(desc_size);
    if (!desc.has_data_type()) {
      // proto2 keeps an enum value it does not know among the unknown fields.
      const google::protobuf::UnknownFieldSet& unknown =
          desc.GetReflection()->GetUnknownFields(desc);
      for (int i = 0; i < unknown.field_count(); ++i) {
        const google::protobuf::UnknownField& field = unknown.field(i);
        if (field.number() == 1 && field.type() == google::protobuf::UnknownField::TYPE_VARINT) {
          return Error(at, fmt::format("the TensorDesc has the unknown data type code {}",
                                       static_cast<int64_t>(field.varint())));
        }
      }
      return Error(at, "the TensorDesc has no data_type");
    }
    std::optional<DType> dtype = DTypeFromVarType(desc.data_type());
    if (!dtype) {
      return Error(at, fmt::format("data type {} ({}) is not supported",
                                   proto::VarType::Type_Name(desc.data_type()),
                                   static_cast<int>(desc.data_type())));
    }
    std::vector<int64_t> dims(desc.dims().begin(), desc.dims().end());
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] < 0) {
        return Error(at, fmt::format("dims {}: dimension {} is negative", DimsText(dims), i));
      }
    }
    std::optional<uint64_t> nbytes = CheckedByteSize(dims, DTypeSize(*dtype));
    if (!nbytes) {
      return Error(at, fmt::format("dims {} of {} are too large: the size overflows 64 bits",
                                   DimsText(dims), DTypeName(*dtype)));
    }
    if (*nbytes > left()) {
      return Error(pos_, fmt::format("the data is truncated: dims {} of {} need {} bytes, {} left",
                                     DimsText(dims), DTypeName(*dtype), *nbytes, left()));
    }
    param->tensor.dtype = *dtype;
    param->tensor.shape = std::move(dims);
    param->tensor.bytes.assign(bytes_.substr(pos_, *nbytes));
    pos_ += *nbytes;
    return Status::Ok();
  }

  std::string_view bytes_;
  const std::string& file_;
  const std::vector<std::string>* names_;
  size_t pos_ = 0;
  size_t index_ = 0;  // the tensor being read
  std::string name_;  // its name, or empty
};

template <typename T>
void Append(std::string* out, T value) {
  char raw[sizeof(T)];
  std::memcpy(raw, &value, sizeof(T));
  out->append(raw, sizeof(T));
}

}  // namespace

std::optional<DType> DTypeFromVarType(proto::VarType::Type type) {
  switch (type) {
    case proto::VarType::BOOL:
      return DType::kBool;
    case proto::VarType::INT8:
      return DType::kInt8;
    case proto::VarType::UINT8:
      return DType::kUInt8;
    case proto::VarType::INT16:
      return DType::kInt16;
    case proto::VarType::INT32:
      return DType::kInt32;
    case proto::VarType::INT64:
      return DType::kInt64;
    case proto::VarType::FP16:
      return DType::kFloat16;
    case proto::VarType::BF16:
      return DType::kBFloat16;
    case proto::VarType::FP32:
      return DType::kFloat32;
    case proto::VarType::FP64:
      return DType::kFloat64;
    case proto::VarType::COMPLEX64:
      return DType::kComplex64;
    case proto::VarType::COMPLEX128:
      return DType::kComplex128;
    default:
      return std::nullopt;  // FP8, unsigned 32/64-bit, SIZE_T and the non-POD var types
  }
}

proto::VarType::Type VarTypeFromDType(DType dtype) {
  switch (dtype) {
    case DType::kBool:
      return proto::VarType::BOOL;
    case DType::kInt8:
      return proto::VarType::INT8;
    case DType::kUInt8:
      return proto::VarType::UINT8;
    case DType::kInt16:
      return proto::VarType::INT16;
    case DType::kInt32:
      return proto::VarType::INT32;
    case DType::kInt64:
      return proto::VarType::INT64;
    case DType::kFloat16:
      return proto::VarType::FP16;
    case DType::kBFloat16:
      return proto::VarType::BF16;
    case DType::kFloat32:
      return proto::VarType::FP32;
    case DType::kFloat64:
      return proto::VarType::FP64;
    case DType::kComplex64:
      return proto::VarType::COMPLEX64;
    case DType::kComplex128:
      return proto::VarType::COMPLEX128;
  }
  return proto::VarType::FP32;  // not a DType; SerializeParams rejects such tensors first
}

StatusOr<std::vector<ParamTensor>> ParseParams(std::string_view bytes, const std::string& file,
                                               const std::vector<std::string>* names) {
  return ParamsReader(bytes, file, names).ReadAll();
}

StatusOr<std::string> SerializeParams(const std::vector<ParamTensor>& params) {
  std::string out;
  for (size_t i = 0; i < params.size(); ++i) {
    const ParamTensor& param = params[i];
    const HostTensor& tensor = param.tensor;
    auto error = [&](std::string message) {
      return Status(StatusCode::kInvalidArgument, Location{}.With(TensorText(i, param.name)),
                    "cannot write .pdiparams: " + std::move(message));
    };
    if (!IsKnownDType(tensor.dtype)) {
      return error(fmt::format("unknown dtype code {}", static_cast<int>(tensor.dtype)));
    }
    std::optional<uint64_t> nbytes = CheckedByteSize(tensor.shape, DTypeSize(tensor.dtype));
    if (!nbytes) {
      return error(fmt::format("the dims {} are negative or too large", DimsText(tensor.shape)));
    }
    if (*nbytes != tensor.bytes.size()) {
      return error(fmt::format("the dims {} of {} need {} bytes, the tensor has {}",
                               DimsText(tensor.shape), DTypeName(tensor.dtype), *nbytes,
                               tensor.bytes.size()));
    }

    Append<uint32_t>(&out, 0);  // DenseTensor version
    Append<uint64_t>(&out, param.lod.size());
    for (const std::vector<uint64_t>& level : param.lod) {
      Append<uint64_t>(&out, level.size() * sizeof(uint64_t));
      for (uint64_t offset : level) Append<uint64_t>(&out, offset);
    }
    Append<uint32_t>(&out, 0);  // tensor version
    proto::VarType::TensorDesc desc;
    desc.set_data_type(VarTypeFromDType(tensor.dtype));
    for (int64_t d : tensor.shape) desc.add_dims(d);
    std::string desc_bytes = desc.SerializeAsString();
    Append<int32_t>(&out, static_cast<int32_t>(desc_bytes.size()));
    out += desc_bytes;
    out += tensor.bytes;
  }
  return out;
}

StatusOr<std::vector<ParamTensor>> LoadParams(const std::string& path,
                                              const std::vector<std::string>* names) {
  IRM_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  return ParseParams(bytes, path == "-" ? "<stdin>" : path, names);
}

Status SaveParams(const std::vector<ParamTensor>& params, const std::string& path) {
  StatusOr<std::string> bytes = SerializeParams(params);
  if (!bytes.ok()) return Status(bytes.status()).InFile(path);
  return WriteFileAtomically(path, *bytes);
}

std::vector<std::string> ParamNamesForProgram(const Program& program) {
  std::vector<std::string> names;
  if (program.num_blocks() == 0) return names;
  Block root = program.root();
  for (int i = 0; i < root.num_vars(); ++i) {
    Var var = root.var(i);
    // Paddle's is_persistable also drops FEED_MINIBATCH and FETCH_LIST vars, which are
    // persistable; only dense tensors have bytes in the file.
    if (var.persistable() && var.type() == proto::VarType::DENSE_TENSOR) {
      names.push_back(var.name());
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

}  // namespace irm::oldir
