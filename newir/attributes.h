// Attributes of the new IR (Paddle PIR): builtin values (bool, i32, i64, f32, f64, string, array,
// type), the pd_op value attributes (IntArray, DataType, Place, DataLayout, Scalar) and the
// pd_dist ones (ProcessMesh, TensorDist, OperationDist). An Attribute is an immutable value object
// like Type: a handle to shared storage, compared structurally with a cached hash. Floats compare
// by bit pattern, so NaN == NaN (the same NaN) and -0.0 != 0.0: the IR must keep what the file
// said, not do arithmetic.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "newir/dist_attr.h"
#include "newir/types.h"

namespace irm::newir {

// phi::DataType, printed lower-case ("float32", "bfloat16", "Undefined").
enum class DataType {
  kUndefined,
  kBool,
  kUInt8,
  kInt8,
  kUInt16,
  kInt16,
  kUInt32,
  kInt32,
  kUInt64,
  kInt64,
  kFloat32,
  kFloat64,
  kComplex64,
  kComplex128,
  kPstring,
  kFloat16,
  kBFloat16,
  kFloat8E4M3FN,
  kFloat8E5M2,
};
const char* DataTypeName(DataType type);
std::optional<DataType> DataTypeFromName(std::string_view name);
// The DataType of a tensor's element type (f32 -> kFloat32, …); nullopt for a type that is not a
// scalar element type.
std::optional<DataType> DataTypeOfElement(const Type& element);

// phi::AllocationType; the numbers are what JSON files store.
enum class AllocationType : int32_t {
  kUndefined = 0,
  kCpu = 1,
  kGpu = 2,
  kGpuPinned = 3,
  kXpu = 4,
  kXpuPinned = 5,
  kIpu = 7,
  kCustom = 9,
};

struct Place {
  AllocationType type = AllocationType::kUndefined;
  int32_t device = 0;
  std::string device_type;  // custom devices only

  static Place Of(AllocationType type, int32_t device = 0) { return {type, device, {}}; }
  bool operator==(const Place&) const = default;
  // "Place(cpu)", "Place(gpu:0)", "Place(undefined:0)", "Place(gpu_pinned)".
  std::string ToString() const;
};

struct IntArray {
  std::vector<int64_t> values;
  bool operator==(const IntArray&) const = default;
};

// paddle::experimental::Scalar: a dtype plus a bool, integer or floating value. Equality compares
// doubles by bits.
struct ScalarValue {
  DataType dtype = DataType::kFloat32;
  std::variant<bool, int64_t, double> value = 0.0;
  bool operator==(const ScalarValue& other) const;
};

class Attribute;

// OperationDistAttribute: one entry per operand and per result, each a TensorDist attribute, an
// Array of them (vector values) or null (absent optional operand).
struct OperationDistAttr {
  ProcessMesh mesh;
  std::vector<Attribute> operands;
  std::vector<Attribute> results;
  int64_t chunk_id = -1;
  bool operator==(const OperationDistAttr& other) const;
};

// The order matches the alternatives of Attribute's variant (static_asserts in attributes.cc).
enum class AttrKind {
  kNull,
  kBool,
  kInt32,
  kInt64,
  kFloat,
  kDouble,
  kString,
  kArray,
  kType,
  kIntArray,
  kDataType,
  kPlace,
  kDataLayout,
  kScalar,
  kProcessMesh,
  kTensorDist,
  kOperationDist,
};
// "bool", "int32", ..., "operation_dist": names for diagnostics.
const char* AttrKindName(AttrKind kind);

namespace detail {
// The head of every attribute's storage (attributes.cc has the rest): a reference count that
// interned storages, which live as long as the process, neither read nor write, so the values
// every op carries (bools, small ints, dtypes) cost no atomic operation to copy or drop.
struct AttrHeader {
  mutable std::atomic<uint32_t> refs{1};
  bool immortal = false;
};
// Destroys and frees a storage whose last reference went.
void DestroyAttr(const AttrHeader* storage) noexcept;
// Drops one reference to `storage` (null and interned storages are left alone).
inline void Unref(const AttrHeader* storage) noexcept {
  if (storage != nullptr && !storage->immortal &&
      storage->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    DestroyAttr(storage);
  }
}
struct InternedAttrs;
}  // namespace detail

// An Array attribute's elements, viewed in its storage.
using AttributeSpan = std::span<const Attribute>;

class Attribute {
 public:
  Attribute() = default;  // null
  Attribute(const Attribute& other) noexcept : storage_(other.storage_) { Retain(); }
  Attribute(Attribute&& other) noexcept : storage_(std::exchange(other.storage_, nullptr)) {}
  Attribute& operator=(const Attribute& other) noexcept {
    Attribute copy(other);
    std::swap(storage_, copy.storage_);
    return *this;
  }
  Attribute& operator=(Attribute&& other) noexcept {
    Attribute moved(std::move(other));
    std::swap(storage_, moved.storage_);
    return *this;
  }
  ~Attribute() { Release(); }

  static Attribute Bool(bool v);
  static Attribute Int32(int32_t v);
  static Attribute Int64(int64_t v);
  static Attribute Float(float v);
  static Attribute Double(double v);
  static Attribute String(std::string_view v);
  static Attribute Array(std::vector<Attribute> v);
  // The same from elements held elsewhere: an interned array (see attributes.cc) is found without
  // making a vector.
  static Attribute ArrayFrom(std::span<const Attribute> v);
  static Attribute TypeAttr(Type v);
  static Attribute IntArrayAttr(std::vector<int64_t> v);
  static Attribute IntArrayFrom(std::span<const int64_t> v);
  static Attribute DataTypeAttr(DataType v);
  static Attribute PlaceAttr(Place v);
  static Attribute DataLayoutAttr(DataLayout v);
  static Attribute Scalar(ScalarValue v);
  static Attribute ProcessMeshAttr(ProcessMesh v);
  static Attribute TensorDist(TensorDistAttr v);
  static Attribute OperationDist(OperationDistAttr v);

  AttrKind kind() const;
  bool IsNull() const { return storage_ == nullptr; }
  explicit operator bool() const { return storage_ != nullptr; }

  // Typed access; null when the kind differs. A string's characters and an array's elements live
  // in the attribute's own storage (one allocation from the IR's pools), hence the views.
  const bool* AsBool() const;
  const int32_t* AsInt32() const;
  const int64_t* AsInt64() const;
  const float* AsFloat() const;
  const double* AsDouble() const;
  const std::string_view* AsString() const;
  const AttributeSpan* AsArray() const;
  const Type* AsType() const;
  const IntArray* AsIntArray() const;
  const DataType* AsDataType() const;
  const Place* AsPlace() const;
  const DataLayout* AsDataLayout() const;
  const ScalarValue* AsScalar() const;
  const ProcessMesh* AsProcessMesh() const;
  const TensorDistAttr* AsTensorDist() const;
  const OperationDistAttr* AsOperationDist() const;

  size_t Hash() const;
  bool operator==(const Attribute& other) const;
  // Starts bringing the storage into the cache (freeing a program drops millions of attributes
  // whose storages are long out of it).
  void Prefetch() const { __builtin_prefetch(storage_); }
  bool operator!=(const Attribute& other) const { return !(*this == other); }

  // The canonical (typed) text form, printer.h's PrintAttribute: `true`, `(Int32)0`, `(Int64)0`,
  // `(Float)0.5`, `(Double)1`, `"s"`, `[a,b]`, a type, `(pd_op.IntArray)[1,2]`,
  // `(pd_op.DataType)float32`, `(pd_op.Place)Place(cpu)`, `(pd_op.DataLayout)NCHW`,
  // `(pd_op.Scalar:int64)3`, dist attributes as dist_dialect.cc prints them, `<#AttrNull>` for
  // null.
  std::string ToString() const;

 private:
  friend struct detail::InternedAttrs;
  // Takes over one reference of `storage`.
  explicit Attribute(const detail::AttrHeader* storage) noexcept : storage_(storage) {}
  // Shares a storage held elsewhere (the cache of recent floats): one more reference.
  static Attribute Share(const detail::AttrHeader* storage) noexcept {
    Attribute a(storage);
    a.Retain();
    return a;
  }
  void Retain() const noexcept {
    if (storage_ != nullptr && !storage_->immortal) {
      storage_->refs.fetch_add(1, std::memory_order_relaxed);
    }
  }
  void Release() noexcept { detail::Unref(storage_); }
  const detail::AttrHeader* storage_ = nullptr;
};

}  // namespace irm::newir

template <>
struct std::hash<irm::newir::Attribute> {
  size_t operator()(const irm::newir::Attribute& a) const { return a.Hash(); }
};
