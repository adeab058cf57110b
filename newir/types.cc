// Storage, construction, comparison and printing of new-IR types.
#include "newir/types.h"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "newir/hash.h"
#include "newir/printer.h"

namespace irm::newir {
namespace detail {

// One struct for every kind: the fields a kind does not use stay empty. Simpler than a class
// hierarchy, and types are few and small.
struct TypeStorage {
  TypeKind kind = TypeKind::kNull;
  Type dtype;  // element type, or the dense type of a dist tensor
  std::vector<int64_t> dims;
  DataLayout layout = DataLayout::kNCHW;
  LoD lod;
  size_t offset = 0;
  std::vector<Type> elements;
  std::optional<TensorDistAttr> dist;
  std::vector<int64_t> local_dims;
  // Sparse tensors: COO non_zero_dims, indices, elements, coalesced; CSR crows, cols, elements.
  std::vector<int64_t> non_zero_dims;
  Type part0, part1, part2;
  bool coalesced = false;
  size_t hash = 0;
};

}  // namespace detail

namespace {

using detail::TypeStorage;

constexpr std::array<const char*, 16> kScalarNames = {
    "bf16", "f16", "f32",   "f64", "b",    "i8",       "u8",     "i16",
    "i32",  "i64", "index", "c64", "c128", "f8e4m3fn", "f8e5m2", "undefined"};

bool IsScalarKind(TypeKind kind) { return kind >= TypeKind::kBF16 && kind <= TypeKind::kUndefined; }

// The hash of a storage's kind, dtype, dims and layout, the fields a plain dense tensor sets;
// ComputeHash goes on from it, and DenseTensorOfDims hashes its probe with it and FinishHash.
size_t HashHead(TypeKind kind, const Type& dtype, std::span<const int64_t> dims,
                DataLayout layout) {
  size_t h = HashCombine(0, static_cast<size_t>(kind));
  h = HashCombine(h, dtype.Hash());
  h = HashRange(h, dims);
  return HashCombine(h, static_cast<size_t>(layout));
}

size_t FinishHash(size_t h, const TypeStorage& s) {
  for (const auto& level : s.lod) h = HashRange(h, level);
  h = HashCombine(h, s.offset);
  for (const Type& e : s.elements) h = HashCombine(h, e.Hash());
  h = HashCombine(h, s.elements.size());
  if (s.dist) h = HashCombine(h, s.dist->Hash());
  h = HashRange(h, s.local_dims);
  h = HashRange(h, s.non_zero_dims);
  h = HashCombine(h, s.part0.Hash());
  h = HashCombine(h, s.part1.Hash());
  h = HashCombine(h, s.part2.Hash());
  return HashCombine(h, static_cast<size_t>(s.coalesced));
}

size_t ComputeHash(const TypeStorage& s) {
  return FinishHash(HashHead(s.kind, s.dtype, s.dims, s.layout), s);
}

const std::vector<int64_t> kNoDims;
const LoD kNoLoD;
const std::vector<Type> kNoTypes;

}  // namespace

const char* DataLayoutName(DataLayout layout) {
  switch (layout) {
    case DataLayout::kUndefined:
      return "Undefined(AnyLayout)";
    case DataLayout::kNHWC:
      return "NHWC";
    case DataLayout::kNCHW:
      return "NCHW";
    case DataLayout::kNCDHW:
      return "NCDHW";
    case DataLayout::kNDHWC:
      return "NDHWC";
    case DataLayout::kOneDNN:
      return "ONEDNN";
    case DataLayout::kSparseCoo:
      return "SPARSE_COO";
    case DataLayout::kSparseCsr:
      return "SPARSE_CSR";
    case DataLayout::kPstringUnion:
      return "PSTRING_UNION";
    case DataLayout::kStrided:
      return "STRIDED";
  }
  return "?";
}

std::optional<DataLayout> DataLayoutFromName(std::string_view name) {
  for (int i = 0; i <= static_cast<int>(DataLayout::kStrided); ++i) {
    auto layout = static_cast<DataLayout>(i);
    if (name == DataLayoutName(layout)) return layout;
  }
  if (name == "Undefined" || name == "ANY" || name == "AnyLayout") return DataLayout::kUndefined;
  return std::nullopt;
}

const char* ScalarTypeName(TypeKind kind) {
  if (!IsScalarKind(kind)) return "?";
  return kScalarNames[static_cast<int>(kind) - static_cast<int>(TypeKind::kBF16)];
}

Type Type::Scalar(TypeKind kind) {
  if (!IsScalarKind(kind)) return Type();
  // One shared storage per scalar kind: scalars are by far the most common types.
  static const auto* const kScalars = [] {
    auto* scalars = new std::array<std::shared_ptr<const TypeStorage>, kScalarNames.size()>();
    for (size_t i = 0; i < kScalarNames.size(); ++i) {
      auto s = std::make_shared<TypeStorage>();
      s->kind = static_cast<TypeKind>(static_cast<int>(TypeKind::kBF16) + i);
      s->hash = ComputeHash(*s);
      (*scalars)[i] = std::move(s);
    }
    return scalars;
  }();
  return Type((*kScalars)[static_cast<int>(kind) - static_cast<int>(TypeKind::kBF16)]);
}

std::optional<Type> Type::ScalarFromName(std::string_view name) {
  if (name == "bool") return Bool();
  for (size_t i = 0; i < kScalarNames.size(); ++i) {
    if (name == kScalarNames[i]) {
      return Scalar(static_cast<TypeKind>(static_cast<int>(TypeKind::kBF16) + i));
    }
  }
  return std::nullopt;
}

namespace {

// Dense tensors and selected rows share one storage layout; only the kind tells them apart.
std::shared_ptr<TypeStorage> TensorStorage(TypeKind kind, Type dtype, std::vector<int64_t> dims,
                                           DataLayout layout, LoD lod, size_t offset) {
  auto s = std::make_shared<TypeStorage>();
  s->kind = kind;
  s->dtype = std::move(dtype);
  s->dims = std::move(dims);
  s->layout = layout;
  s->lod = std::move(lod);
  s->offset = offset;
  s->hash = ComputeHash(*s);
  return s;
}

}  // namespace

Type Type::DenseTensor(Type dtype, std::vector<int64_t> dims, DataLayout layout, LoD lod,
                       size_t offset) {
  if (!lod.empty() || offset != 0) {
    return Type(TensorStorage(TypeKind::kDenseTensor, std::move(dtype), std::move(dims), layout,
                              std::move(lod), offset));
  }
  return DenseTensorOfDims(std::move(dtype), dims, layout);
}

Type Type::DenseTensorOfDims(Type dtype, std::span<const int64_t> dims, DataLayout layout) {
  // A program's tensors have few distinct types: one storage serves every equal one, from a
  // per-thread direct-mapped cache of recent ones. A hit allocates nothing; the cache's size
  // bounds what it keeps alive. Sharing is invisible: types compare and hash by content.
  struct Cache {
    std::array<std::shared_ptr<const TypeStorage>, 1024> slots;
  };
  thread_local Cache cache;
  // ComputeHash's, without copying the dims into a storage first.
  static const TypeStorage kPlain;  // every field past the head empty
  const size_t hash = FinishHash(HashHead(TypeKind::kDenseTensor, dtype, dims, layout), kPlain);
  std::shared_ptr<const TypeStorage>& slot = cache.slots[hash % cache.slots.size()];
  if (slot != nullptr && slot->hash == hash && slot->kind == TypeKind::kDenseTensor &&
      slot->dtype == dtype &&
      std::equal(slot->dims.begin(), slot->dims.end(), dims.begin(), dims.end()) &&
      slot->layout == layout && slot->lod.empty() && slot->offset == 0) {
    return Type(slot);
  }
  auto storage = std::make_shared<TypeStorage>();
  storage->kind = TypeKind::kDenseTensor;
  storage->dtype = std::move(dtype);
  storage->dims.assign(dims.begin(), dims.end());
  storage->layout = layout;
  storage->hash = ComputeHash(*storage);
  slot = std::move(storage);
  return Type(slot);
}

Type Type::Vector(std::vector<Type> elements) {
  auto s = std::make_shared<TypeStorage>();
  s->kind = TypeKind::kVector;
  s->elements = std::move(elements);
  s->hash = ComputeHash(*s);
  return Type(std::move(s));
}

Type Type::DenseTensorArray(Type dtype, std::vector<int64_t> dims, DataLayout layout) {
  auto s = std::make_shared<TypeStorage>();
  s->kind = TypeKind::kDenseTensorArray;
  s->dtype = std::move(dtype);
  s->dims = std::move(dims);
  s->layout = layout;
  s->hash = ComputeHash(*s);
  return Type(std::move(s));
}

Type Type::SelectedRows(Type dtype, std::vector<int64_t> dims, DataLayout layout, LoD lod,
                        size_t offset) {
  return Type(TensorStorage(TypeKind::kSelectedRows, std::move(dtype), std::move(dims), layout,
                            std::move(lod), offset));
}

StatusOr<Type> Type::DistDenseTensor(Type dense, TensorDistAttr dist,
                                     std::optional<std::vector<int64_t>> local_dims) {
  auto fail = [](std::string message) {
    return Status(StatusCode::kInvalid, Location{}, std::move(message));
  };
  if (dense.kind() != TypeKind::kDenseTensor) {
    return fail(fmt::format("dist tensor type wraps '{}', not a dense tensor", dense.ToString()));
  }
  const std::vector<int64_t>& dims = dense.dims();
  const auto rank = static_cast<int64_t>(dims.size());
  const auto mesh_rank = static_cast<int64_t>(dist.mesh.shape.size());
  if (static_cast<int64_t>(dist.dims_mapping.size()) != rank) {
    return fail(fmt::format("dims_mapping has {} entries but the tensor has rank {}",
                            dist.dims_mapping.size(), rank));
  }
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t m = dist.dims_mapping[i];
    if (m < -1 || m >= mesh_rank) {
      return fail(
          fmt::format("dims_mapping[{}] = {} is not a mesh dim (mesh rank {})", i, m, mesh_rank));
    }
    if (m >= 0 && dist.partial_status.contains(m)) {
      return fail(fmt::format("mesh dim {} is both partial and sharding tensor dim {}", m, i));
    }
  }
  for (const auto& [m, reduce] : dist.partial_status) {
    if (m < 0 || m >= mesh_rank) {
      return fail(fmt::format("partial mesh dim {} is out of range (mesh rank {})", m, mesh_rank));
    }
  }
  std::vector<int64_t> local(dims);
  if (local_dims) {
    if (static_cast<int64_t>(local_dims->size()) != rank) {
      return fail(fmt::format("local dims have {} entries but the tensor has rank {}",
                              local_dims->size(), rank));
    }
    local = std::move(*local_dims);
  } else {
    for (int64_t i = 0; i < rank; ++i) {
      const int64_t m = dist.dims_mapping[i];
      if (m < 0 || dims[i] < 0) continue;
      const int64_t s = dist.mesh.shape[m];
      if (s <= 0 || dims[i] % s != 0) {
        return fail(fmt::format(
            "dim {} (size {}) is not divisible by mesh dim {} (size {}); give the local dims", i,
            dims[i], m, s));
      }
      local[i] = dims[i] / s;
    }
  }
  auto s = std::make_shared<TypeStorage>();
  s->kind = TypeKind::kDistDenseTensor;
  s->dtype = std::move(dense);
  s->dist = std::move(dist);
  s->local_dims = std::move(local);
  s->hash = ComputeHash(*s);
  return Type(std::move(s));
}

namespace {

// Why a sparse tensor type cannot be made from these parts, or empty when it can.
std::string SparsePartsProblem(const Type& dtype,
                               std::initializer_list<std::pair<const char*, const Type*>> parts) {
  if (!dtype.IsScalar()) {
    return fmt::format("sparse tensor element type '{}' is not a scalar type", dtype.ToString());
  }
  for (const auto& part : parts) {
    if (part.second->kind() != TypeKind::kDenseTensor) {
      return fmt::format("sparse tensor {} type '{}' is not a dense tensor", part.first,
                         part.second->ToString());
    }
  }
  return {};
}

}  // namespace

StatusOr<Type> Type::SparseCooTensor(Type dtype, std::vector<int64_t> dims,
                                     std::vector<int64_t> non_zero_dims, DataLayout layout,
                                     Type non_zero_indices, Type non_zero_elements,
                                     bool coalesced) {
  std::string problem = SparsePartsProblem(
      dtype, {{"non_zero_indices", &non_zero_indices}, {"non_zero_elements", &non_zero_elements}});
  if (!problem.empty()) return Status(StatusCode::kInvalid, Location{}, std::move(problem));
  auto s = std::make_shared<TypeStorage>();
  s->kind = TypeKind::kSparseCooTensor;
  s->dtype = std::move(dtype);
  s->dims = std::move(dims);
  s->non_zero_dims = std::move(non_zero_dims);
  s->layout = layout;
  s->part0 = std::move(non_zero_indices);
  s->part2 = std::move(non_zero_elements);
  s->coalesced = coalesced;
  s->hash = ComputeHash(*s);
  return Type(std::move(s));
}

StatusOr<Type> Type::SparseCsrTensor(Type dtype, std::vector<int64_t> dims, DataLayout layout,
                                     Type non_zero_crows, Type non_zero_cols,
                                     Type non_zero_elements) {
  std::string problem = SparsePartsProblem(dtype, {{"non_zero_crows", &non_zero_crows},
                                                   {"non_zero_cols", &non_zero_cols},
                                                   {"non_zero_elements", &non_zero_elements}});
  if (!problem.empty()) return Status(StatusCode::kInvalid, Location{}, std::move(problem));
  auto s = std::make_shared<TypeStorage>();
  s->kind = TypeKind::kSparseCsrTensor;
  s->dtype = std::move(dtype);
  s->dims = std::move(dims);
  s->layout = layout;
  s->part0 = std::move(non_zero_crows);
  s->part1 = std::move(non_zero_cols);
  s->part2 = std::move(non_zero_elements);
  s->hash = ComputeHash(*s);
  return Type(std::move(s));
}

TypeKind Type::kind() const { return storage_ ? storage_->kind : TypeKind::kNull; }
bool Type::IsScalar() const { return IsScalarKind(kind()); }
bool Type::IsSparse() const {
  return kind() == TypeKind::kSparseCooTensor || kind() == TypeKind::kSparseCsrTensor;
}
bool Type::IsFloat() const {
  switch (kind()) {
    case TypeKind::kBF16:
    case TypeKind::kF16:
    case TypeKind::kF32:
    case TypeKind::kF64:
    case TypeKind::kF8E4M3FN:
    case TypeKind::kF8E5M2:
      return true;
    default:
      return false;
  }
}
bool Type::IsInteger() const {
  switch (kind()) {
    case TypeKind::kI8:
    case TypeKind::kU8:
    case TypeKind::kI16:
    case TypeKind::kI32:
    case TypeKind::kI64:
    case TypeKind::kIndex:
      return true;
    default:
      return false;
  }
}

Type Type::dtype() const {
  if (kind() == TypeKind::kDistDenseTensor) return storage_->dtype.dtype();
  return storage_ ? storage_->dtype : Type();
}
const std::vector<int64_t>& Type::dims() const {
  if (kind() == TypeKind::kDistDenseTensor) return storage_->dtype.dims();
  return storage_ ? storage_->dims : kNoDims;
}
DataLayout Type::layout() const {
  if (kind() == TypeKind::kDistDenseTensor) return storage_->dtype.layout();
  return storage_ ? storage_->layout : DataLayout::kNCHW;
}
const LoD& Type::lod() const {
  if (kind() == TypeKind::kDistDenseTensor) return storage_->dtype.lod();
  return storage_ ? storage_->lod : kNoLoD;
}
size_t Type::offset() const {
  if (kind() == TypeKind::kDistDenseTensor) return storage_->dtype.offset();
  return storage_ ? storage_->offset : 0;
}
const std::vector<Type>& Type::elements() const { return storage_ ? storage_->elements : kNoTypes; }
Type Type::dense() const { return kind() == TypeKind::kDistDenseTensor ? storage_->dtype : Type(); }
const TensorDistAttr* Type::dist_attr() const {
  return storage_ && storage_->dist ? &*storage_->dist : nullptr;
}
const std::vector<int64_t>& Type::local_dims() const {
  return storage_ ? storage_->local_dims : kNoDims;
}

const std::vector<int64_t>& Type::non_zero_dims() const {
  return storage_ ? storage_->non_zero_dims : kNoDims;
}
Type Type::non_zero_indices() const {
  return kind() == TypeKind::kSparseCooTensor ? storage_->part0 : Type();
}
bool Type::coalesced() const { return storage_ && storage_->coalesced; }
Type Type::non_zero_crows() const {
  return kind() == TypeKind::kSparseCsrTensor ? storage_->part0 : Type();
}
Type Type::non_zero_cols() const {
  return kind() == TypeKind::kSparseCsrTensor ? storage_->part1 : Type();
}
Type Type::non_zero_elements() const { return storage_ ? storage_->part2 : Type(); }

size_t Type::Hash() const { return storage_ ? storage_->hash : 0; }

bool Type::operator==(const Type& other) const {
  if (storage_ == other.storage_) return true;
  if (!storage_ || !other.storage_) return false;
  const TypeStorage& a = *storage_;
  const TypeStorage& b = *other.storage_;
  return a.hash == b.hash && a.kind == b.kind && a.dtype == b.dtype && a.dims == b.dims &&
         a.layout == b.layout && a.lod == b.lod && a.offset == b.offset &&
         a.elements == b.elements && a.dist == b.dist && a.local_dims == b.local_dims &&
         a.non_zero_dims == b.non_zero_dims && a.part0 == b.part0 && a.part1 == b.part1 &&
         a.part2 == b.part2 && a.coalesced == b.coalesced;
}

std::string Type::ToString(TypeStyle style) const { return PrintType(*this, style); }

}  // namespace irm::newir
