// Types of the new IR (Paddle PIR): builtin scalar element types, dense tensors, vectors, tensor
// arrays, selected rows, distributed dense tensors and sparse (COO, CSR) tensors. A Type is an
// immutable value object: a cheap handle to shared storage, compared structurally (==) with a
// cached hash, so two Types built from the same parts are equal wherever they were made. The
// default-constructed Type is null.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "newir/dist_attr.h"

namespace irm::newir {

enum class TypeKind {
  kNull,
  // Builtin scalar element types.
  kBF16,
  kF16,
  kF32,
  kF64,
  kBool,
  kI8,
  kU8,
  kI16,
  kI32,
  kI64,
  kIndex,
  kC64,
  kC128,
  kF8E4M3FN,
  kF8E5M2,
  kUndefined,
  // Composite types.
  kDenseTensor,
  kVector,
  kDenseTensorArray,
  kSelectedRows,
  kDistDenseTensor,
  kSparseCooTensor,
  kSparseCsrTensor,
};

// phi::DataLayout; the names are how Paddle prints them ("Undefined(AnyLayout)" for kUndefined).
enum class DataLayout {
  kUndefined,
  kNHWC,
  kNCHW,
  kNCDHW,
  kNDHWC,
  kOneDNN,
  kSparseCoo,
  kSparseCsr,
  kPstringUnion,
  kStrided,
};
const char* DataLayoutName(DataLayout layout);
std::optional<DataLayout> DataLayoutFromName(std::string_view name);

using LoD = std::vector<std::vector<size_t>>;

// How a type is spelled. kTyped is the 3.0-beta form (`builtin.tensor<2x3xf32>`), kCurrent the
// 3.0+ form (`tensor<2x3xf32>`); other types print the same in both.
enum class TypeStyle { kTyped, kCurrent };

namespace detail {
struct TypeStorage;
}

class Type {
 public:
  Type() = default;  // null

  // Builtin scalars.
  static Type BF16() { return Scalar(TypeKind::kBF16); }
  static Type F16() { return Scalar(TypeKind::kF16); }
  static Type F32() { return Scalar(TypeKind::kF32); }
  static Type F64() { return Scalar(TypeKind::kF64); }
  static Type Bool() { return Scalar(TypeKind::kBool); }
  static Type I8() { return Scalar(TypeKind::kI8); }
  static Type U8() { return Scalar(TypeKind::kU8); }
  static Type I16() { return Scalar(TypeKind::kI16); }
  static Type I32() { return Scalar(TypeKind::kI32); }
  static Type I64() { return Scalar(TypeKind::kI64); }
  static Type Index() { return Scalar(TypeKind::kIndex); }
  static Type C64() { return Scalar(TypeKind::kC64); }
  static Type C128() { return Scalar(TypeKind::kC128); }
  static Type F8E4M3FN() { return Scalar(TypeKind::kF8E4M3FN); }
  static Type F8E5M2() { return Scalar(TypeKind::kF8E5M2); }
  static Type Undefined() { return Scalar(TypeKind::kUndefined); }
  // The scalar of `kind`; a null Type when kind is not a scalar kind.
  static Type Scalar(TypeKind kind);
  // "f32" -> F32; also "b" for bool as Paddle prints it, and "bool".
  static std::optional<Type> ScalarFromName(std::string_view name);

  // `dtype` must be a scalar type; dims use -1 for a dynamic dim and are empty for 0-D.
  static Type DenseTensor(Type dtype, std::vector<int64_t> dims,
                          DataLayout layout = DataLayout::kNCHW, LoD lod = {}, size_t offset = 0);
  // The same without LoD and offset, from dims held elsewhere (a legacy var's): it allocates
  // nothing when an equal type was made lately.
  static Type DenseTensorOfDims(Type dtype, std::span<const int64_t> dims,
                                DataLayout layout = DataLayout::kNCHW);
  static Type Vector(std::vector<Type> elements);
  static Type DenseTensorArray(Type dtype, std::vector<int64_t> dims,
                               DataLayout layout = DataLayout::kNCHW);
  static Type SelectedRows(Type dtype, std::vector<int64_t> dims,
                           DataLayout layout = DataLayout::kNCHW, LoD lod = {}, size_t offset = 0);
  // A dense tensor with global dims laid out over a mesh. Local dims are computed: a dim sharded
  // over mesh dim m of size s is dim/s; a dynamic dim stays -1. A sharded dim that s does not
  // divide needs `local_dims` given explicitly (Paddle records them then); they must have the
  // tensor's rank. Fails when `dense` is not a dense tensor, dims_mapping's length is not the
  // rank, a mesh dim index is out of range, or a partial mesh dim is also sharded.
  static StatusOr<Type> DistDenseTensor(Type dense, TensorDistAttr dist,
                                        std::optional<std::vector<int64_t>> local_dims = {});

  // Paddle's sparse tensor types (paddle/fluid/pir/dialect/operator/ir/op_type.h): a COO tensor
  // is dtype, dims, non_zero_dims, layout, the dense types of its indices and elements, and
  // `coalesced`; a CSR tensor is dtype, dims, layout and the dense types of its crows, cols and
  // elements. Fails when dtype is not a scalar or a part is not a dense tensor.
  static StatusOr<Type> SparseCooTensor(Type dtype, std::vector<int64_t> dims,
                                        std::vector<int64_t> non_zero_dims, DataLayout layout,
                                        Type non_zero_indices, Type non_zero_elements,
                                        bool coalesced = false);
  static StatusOr<Type> SparseCsrTensor(Type dtype, std::vector<int64_t> dims, DataLayout layout,
                                        Type non_zero_crows, Type non_zero_cols,
                                        Type non_zero_elements);

  TypeKind kind() const;
  bool IsNull() const { return storage_ == nullptr; }
  explicit operator bool() const { return storage_ != nullptr; }
  bool IsScalar() const;
  bool IsFloat() const;    // bf16 f16 f32 f64 f8*
  bool IsInteger() const;  // i8 u8 i16 i32 i64 index
  bool IsSparse() const;   // sparse COO or CSR tensor

  // Dense tensor, tensor array, selected rows and dist tensor (global dims) accessors; a dist
  // tensor answers for its dense type. Empty/default for other kinds.
  Type dtype() const;
  const std::vector<int64_t>& dims() const;
  DataLayout layout() const;
  const LoD& lod() const;
  size_t offset() const;
  // Vector elements.
  const std::vector<Type>& elements() const;
  // Dist dense tensor parts.
  Type dense() const;
  const TensorDistAttr* dist_attr() const;  // null for other kinds
  const std::vector<int64_t>& local_dims() const;
  // Sparse tensor parts (dtype, dims and layout come from the accessors above); null/empty/false
  // for other kinds and for the parts the other sparse kind does not have.
  const std::vector<int64_t>& non_zero_dims() const;  // COO
  Type non_zero_indices() const;                      // COO
  bool coalesced() const;                             // COO
  Type non_zero_crows() const;                        // CSR
  Type non_zero_cols() const;                         // CSR
  Type non_zero_elements() const;                     // COO and CSR

  size_t Hash() const;
  bool operator==(const Type& other) const;
  bool operator!=(const Type& other) const { return !(*this == other); }

  // The text form, printer.h's PrintType: `builtin.tensor<2x3xf32>`, `vec[f32,i64]`,
  // `pd_op.tensor_array<f32>`, `pd_op.selectedrows<10x20xf32>`,
  // `pd_dist.tensor<8x8xf32, mesh_shape:[2],...>`, `pd_op.sparsecootensor<4x4xf32>`,
  // `pd_op.sparsecsrtensor<4x4xf32>`, `<<NULL TYPE>>` for null.
  std::string ToString(TypeStyle style = TypeStyle::kTyped) const;

 private:
  explicit Type(std::shared_ptr<const detail::TypeStorage> storage)
      : storage_(std::move(storage)) {}
  std::shared_ptr<const detail::TypeStorage> storage_;
};

// "f32", "bf16", "b" (bool), ... the element-type spelling used inside tensor types.
const char* ScalarTypeName(TypeKind kind);

}  // namespace irm::newir

template <>
struct std::hash<irm::newir::Type> {
  size_t operator()(const irm::newir::Type& t) const { return t.Hash(); }
};
