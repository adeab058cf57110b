// Storage, construction, comparison and printing of new-IR attributes.
//
// Each attribute is one block from the IR's pools (ir_pool.h) with an intrusive reference count:
// a String's characters and an Array's elements follow the storage in the same block, so making
// or dropping one is a single pool operation (as std::string/std::vector payloads they were two
// to three heap operations, and freeing a translated program spent a sixth of its time in the
// heap's coalescing). Storage is sized for the common attributes: the dist alternatives
// (ProcessMesh, TensorDist, OperationDist: ~130-180 bytes each) are boxed, so a bool or a DataType
// does not carry a dist attribute's size. The most frequent small values (bools, small ints,
// DataTypes, layouts, the cpu and undefined places, the empty string, arrays of up to 4 bools —
// every op's stop_gradient and persistable — or of up to 4 empty strings — the legacy names of
// results made from attributes —, IntArrays of no or one small int — the shape of every scalar
// full) are interned: one immortal storage each, built once, so making them allocates nothing and a
// program full of them frees nothing for them.
#include "newir/attributes.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "newir/hash.h"
#include "newir/ir_pool.h"
#include "newir/printer.h"

namespace irm::newir {
namespace detail {

// An out-of-line value: compared, hashed and copied by content.
template <typename T>
struct Boxed {
  std::unique_ptr<const T> ptr;
  bool operator==(const Boxed& other) const { return *ptr == *other.ptr; }
};

// An Array's elements, placed after the storage that views them.
struct ArrayItems {
  AttributeSpan items;
  bool operator==(const ArrayItems& other) const { return std::ranges::equal(items, other.items); }
};

// A String's characters live after the storage too: the alternative is a view of them.
using AttrValue =
    std::variant<std::monostate, bool, int32_t, int64_t, float, double, std::string_view,
                 ArrayItems, Type, IntArray, DataType, Place, DataLayout, ScalarValue,
                 Boxed<ProcessMesh>, Boxed<TensorDistAttr>, Boxed<OperationDistAttr>>;

// One pooled block: this, then a String's characters or an Array's elements (`trailing_bytes`).
struct AttrStorage : AttrHeader {
  uint32_t trailing_bytes = 0;
  size_t hash = 0;
  AttrValue value;
};

}  // namespace detail

namespace {

using detail::ArrayItems;
using detail::AttrHeader;
using detail::AttrStorage;
using detail::AttrValue;
using detail::Boxed;

template <AttrKind kKind, typename T>
constexpr bool kAt =
    std::is_same_v<std::variant_alternative_t<static_cast<size_t>(kKind), AttrValue>, T>;
static_assert(kAt<AttrKind::kBool, bool> && kAt<AttrKind::kInt32, int32_t> &&
              kAt<AttrKind::kInt64, int64_t> && kAt<AttrKind::kFloat, float> &&
              kAt<AttrKind::kDouble, double> && kAt<AttrKind::kString, std::string_view> &&
              kAt<AttrKind::kArray, ArrayItems> && kAt<AttrKind::kType, Type> &&
              kAt<AttrKind::kIntArray, IntArray> && kAt<AttrKind::kDataType, DataType> &&
              kAt<AttrKind::kPlace, Place> && kAt<AttrKind::kDataLayout, DataLayout> &&
              kAt<AttrKind::kScalar, ScalarValue> &&
              kAt<AttrKind::kProcessMesh, detail::Boxed<ProcessMesh>> &&
              kAt<AttrKind::kTensorDist, detail::Boxed<TensorDistAttr>> &&
              kAt<AttrKind::kOperationDist, detail::Boxed<OperationDistAttr>>);
static_assert(std::variant_size_v<AttrValue> == static_cast<size_t>(AttrKind::kOperationDist) + 1);

constexpr const char* kDataTypeNames[] = {
    "Undefined", "bool",    "uint8",    "int8",          "uint16",     "int16",     "uint32",
    "int32",     "uint64",  "int64",    "float32",       "float64",    "complex64", "complex128",
    "pstring",   "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2"};
static_assert(std::size(kDataTypeNames) == static_cast<size_t>(DataType::kFloat8E5M2) + 1);

size_t HashValue(const AttrValue& value) {
  size_t h = HashCombine(0, value.index());
  return std::visit(
      [h](const auto& v) -> size_t {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return h;
        } else if constexpr (std::is_same_v<T, float>) {
          return HashCombine(h, std::bit_cast<uint32_t>(v));
        } else if constexpr (std::is_same_v<T, double>) {
          return HashCombine(h, std::bit_cast<uint64_t>(v));
        } else if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, int32_t> ||
                             std::is_same_v<T, int64_t> || std::is_same_v<T, std::string_view>) {
          return HashCombine(h, HashOf(v));
        } else if constexpr (std::is_same_v<T, ArrayItems>) {
          return HashRange(h, v.items);
        } else if constexpr (std::is_same_v<T, Type>) {
          return HashCombine(h, v.Hash());
        } else if constexpr (std::is_same_v<T, IntArray>) {
          return HashRange(h, v.values);
        } else if constexpr (std::is_same_v<T, DataType> || std::is_same_v<T, DataLayout>) {
          return HashCombine(h, static_cast<size_t>(v));
        } else if constexpr (std::is_same_v<T, Place>) {
          return HashCombine(HashCombine(h, static_cast<size_t>(v.type)), HashOf(v.device));
        } else if constexpr (std::is_same_v<T, ScalarValue>) {
          size_t s = HashCombine(h, static_cast<size_t>(v.dtype));
          if (const double* d = std::get_if<double>(&v.value)) {
            return HashCombine(s, std::bit_cast<uint64_t>(*d));
          }
          if (const int64_t* i = std::get_if<int64_t>(&v.value)) return HashCombine(s, HashOf(*i));
          return HashCombine(s, std::get<bool>(v.value) ? 2 : 1);
        } else if constexpr (std::is_same_v<T, Boxed<ProcessMesh>> ||
                             std::is_same_v<T, Boxed<TensorDistAttr>>) {
          return HashCombine(h, v.ptr->Hash());
        } else {
          static_assert(std::is_same_v<T, Boxed<OperationDistAttr>>);
          const OperationDistAttr& d = *v.ptr;
          size_t s = HashCombine(HashCombine(h, d.mesh.Hash()), HashOf(d.chunk_id));
          return HashRange(HashRange(s, d.operands), d.results);
        }
      },
      value);
}

}  // namespace

const char* DataTypeName(DataType type) {
  const auto i = static_cast<size_t>(type);
  return i < std::size(kDataTypeNames) ? kDataTypeNames[i] : "?";
}

std::optional<DataType> DataTypeFromName(std::string_view name) {
  for (size_t i = 0; i < std::size(kDataTypeNames); ++i) {
    if (name == kDataTypeNames[i]) return static_cast<DataType>(i);
  }
  return std::nullopt;
}

std::optional<DataType> DataTypeOfElement(const Type& element) {
  switch (element.kind()) {
    case TypeKind::kBF16:
      return DataType::kBFloat16;
    case TypeKind::kF16:
      return DataType::kFloat16;
    case TypeKind::kF32:
      return DataType::kFloat32;
    case TypeKind::kF64:
      return DataType::kFloat64;
    case TypeKind::kBool:
      return DataType::kBool;
    case TypeKind::kI8:
      return DataType::kInt8;
    case TypeKind::kU8:
      return DataType::kUInt8;
    case TypeKind::kI16:
      return DataType::kInt16;
    case TypeKind::kI32:
      return DataType::kInt32;
    case TypeKind::kI64:
      return DataType::kInt64;
    case TypeKind::kC64:
      return DataType::kComplex64;
    case TypeKind::kC128:
      return DataType::kComplex128;
    default:
      return std::nullopt;
  }
}

std::string Place::ToString() const {
  switch (type) {
    case AllocationType::kCpu:
      return "Place(cpu)";
    case AllocationType::kGpuPinned:
      return "Place(gpu_pinned)";
    case AllocationType::kXpuPinned:
      return "Place(xpu_pinned)";
    case AllocationType::kGpu:
      return fmt::format("Place(gpu:{})", device);
    case AllocationType::kXpu:
      return fmt::format("Place({}:{})", "xpu", device);
    case AllocationType::kIpu:
      return fmt::format("Place(ipu:{})", device);
    case AllocationType::kCustom:
      return fmt::format("Place({}:{})", device_type, device);
    case AllocationType::kUndefined:
      return fmt::format("Place(undefined:{})", device);
  }
  return "Place(?)";
}

bool ScalarValue::operator==(const ScalarValue& other) const {
  if (dtype != other.dtype || value.index() != other.value.index()) return false;
  if (const double* d = std::get_if<double>(&value)) {
    return std::bit_cast<uint64_t>(*d) == std::bit_cast<uint64_t>(std::get<double>(other.value));
  }
  return value == other.value;
}

bool OperationDistAttr::operator==(const OperationDistAttr& other) const {
  return mesh == other.mesh && operands == other.operands && results == other.results &&
         chunk_id == other.chunk_id;
}

const char* AttrKindName(AttrKind kind) {
  switch (kind) {
    case AttrKind::kNull:
      return "null";
    case AttrKind::kBool:
      return "bool";
    case AttrKind::kInt32:
      return "int32";
    case AttrKind::kInt64:
      return "int64";
    case AttrKind::kFloat:
      return "float";
    case AttrKind::kDouble:
      return "double";
    case AttrKind::kString:
      return "string";
    case AttrKind::kArray:
      return "array";
    case AttrKind::kType:
      return "type";
    case AttrKind::kIntArray:
      return "int_array";
    case AttrKind::kDataType:
      return "data_type";
    case AttrKind::kPlace:
      return "place";
    case AttrKind::kDataLayout:
      return "data_layout";
    case AttrKind::kScalar:
      return "scalar";
    case AttrKind::kProcessMesh:
      return "process_mesh";
    case AttrKind::kTensorDist:
      return "tensor_dist";
    case AttrKind::kOperationDist:
      return "operation_dist";
  }
  return "?";
}

namespace {

// A storage with `trailing_bytes` of room after it, its value still empty.
AttrStorage* AllocateStorage(size_t trailing_bytes) {
  void* block = detail::PoolAllocate(sizeof(AttrStorage) + trailing_bytes);
  auto* s = new (block) AttrStorage;
  s->trailing_bytes = static_cast<uint32_t>(trailing_bytes);
  return s;
}

void* TrailingBytes(AttrStorage* s) { return reinterpret_cast<char*>(s) + sizeof(AttrStorage); }

const AttrStorage* StorageOf(const AttrHeader* header) {
  return static_cast<const AttrStorage*>(header);
}

const AttrHeader* Seal(AttrStorage* s) {
  s->hash = HashValue(s->value);
  return s;
}

template <typename T>
const AttrHeader* NewStorage(T value) {
  AttrStorage* s = AllocateStorage(0);
  s->value.emplace<T>(std::move(value));
  return Seal(s);
}

const AttrHeader* NewString(std::string_view v) {
  AttrStorage* s = AllocateStorage(v.size());
  char* chars = static_cast<char*>(TrailingBytes(s));
  std::copy(v.begin(), v.end(), chars);
  s->value.emplace<std::string_view>(chars, v.size());
  return Seal(s);
}

// The elements are copied, or moved out of a vector given as an rvalue.
template <typename Items>
const AttrHeader* NewArray(Items&& items) {
  static_assert(sizeof(AttrStorage) % alignof(Attribute) == 0);
  constexpr bool kMove = std::is_same_v<Items, std::vector<Attribute>>;
  const size_t n = std::size(items);
  AttrStorage* s = AllocateStorage(n * sizeof(Attribute));
  auto* elements = static_cast<Attribute*>(TrailingBytes(s));
  size_t i = 0;
  for (auto& item : items) {
    if constexpr (kMove) {
      new (elements + i++) Attribute(std::move(item));
    } else {
      new (elements + i++) Attribute(item);
    }
  }
  s->value.emplace<ArrayItems>(ArrayItems{AttributeSpan(elements, n)});
  return Seal(s);
}

}  // namespace

namespace detail {

void DestroyAttr(const AttrHeader* header) noexcept {
  auto* s = const_cast<AttrStorage*>(static_cast<const AttrStorage*>(header));
  if (const ArrayItems* array = std::get_if<ArrayItems>(&s->value)) {
    std::destroy(array->items.begin(), array->items.end());
  }
  const size_t bytes = sizeof(AttrStorage) + s->trailing_bytes;
  s->~AttrStorage();
  PoolFree(s, bytes);
}

// Immortal storages of the interned values (see the file comment): built on first use, never
// freed, never counted.
struct InternedAttrs {
  static constexpr int32_t kMinInt = -8;
  static constexpr int32_t kMaxInt = 1024;  // op_role values (0x100 | 0x1 ...) fit
  static constexpr size_t kMaxBoolArray = 4;
  using Storages = std::vector<const AttrHeader*>;
  std::array<const AttrHeader*, 2> bools;
  // The arrays of n bools at [2^n - 2 + bits], bit i the i-th element.
  Storages bool_arrays;
  Storages int32s, int64s, int_arrays_of_one;
  const AttrHeader* empty_int_array;
  Storages data_types, layouts;
  const AttrHeader *empty_string, *undefined_place, *cpu_place;
  // The arrays of 1 to kMaxBoolArray empty strings at [n - 1]: the legacy names of results that
  // have none (operands made from attributes).
  Storages empty_string_arrays;

  static const AttrHeader* Immortal(const AttrHeader* s) {
    const_cast<AttrHeader*>(s)->immortal = true;
    return s;
  }

  InternedAttrs() {
    bools = {Immortal(NewStorage(false)), Immortal(NewStorage(true))};
    for (size_t n = 1; n <= kMaxBoolArray; ++n) {
      for (size_t bits = 0; bits < (size_t{1} << n); ++bits) {
        std::vector<Attribute> items;
        for (size_t i = 0; i < n; ++i) items.push_back(Attribute(bools[(bits >> i) & 1]));
        bool_arrays.push_back(Immortal(NewArray(std::move(items))));
      }
    }
    for (int32_t i = kMinInt; i <= kMaxInt; ++i) {
      int32s.push_back(Immortal(NewStorage(i)));
      int64s.push_back(Immortal(NewStorage(static_cast<int64_t>(i))));
      int_arrays_of_one.push_back(Immortal(NewStorage(IntArray{{i}})));
    }
    for (size_t i = 0; i < std::size(kDataTypeNames); ++i) {
      data_types.push_back(Immortal(NewStorage(static_cast<DataType>(i))));
    }
    for (int i = 0; i <= static_cast<int>(DataLayout::kStrided); ++i) {
      layouts.push_back(Immortal(NewStorage(static_cast<DataLayout>(i))));
    }
    empty_string = Immortal(NewString(""));
    for (size_t n = 1; n <= kMaxBoolArray; ++n) {
      empty_string_arrays.push_back(
          Immortal(NewArray(std::vector<Attribute>(n, Attribute(empty_string)))));
    }
    empty_int_array = Immortal(NewStorage(IntArray{}));
    undefined_place = Immortal(NewStorage(Place{}));
    cpu_place = Immortal(NewStorage(Place::Of(AllocationType::kCpu)));
  }

  static const InternedAttrs& Get() {
    static const InternedAttrs* interned =
        new InternedAttrs;  // immortal: no exit-time destruction order
    return *interned;
  }
  static bool InRange(int64_t v) { return v >= kMinInt && v <= kMaxInt; }

  // The interned storage equal to the array `v`, or null.
  const AttrHeader* FindArray(AttributeSpan v) const {
    if (v.empty() || v.size() > kMaxBoolArray) return nullptr;
    size_t bits = 0;
    bool all_bools = true, all_empty_strings = true;
    for (size_t i = 0; i < v.size() && (all_bools || all_empty_strings); ++i) {
      const AttrHeader* item = v[i].storage_;
      if (item == bools[1]) bits |= size_t{1} << i;
      all_bools = all_bools && (item == bools[0] || item == bools[1]);
      all_empty_strings = all_empty_strings && item == empty_string;
    }
    if (all_bools) return bool_arrays[(size_t{1} << v.size()) - 2 + bits];
    if (all_empty_strings) return empty_string_arrays[v.size() - 1];
    return nullptr;
  }
};

}  // namespace detail

using detail::InternedAttrs;

// Interned storages are immortal, so adopting one takes no reference.
Attribute Attribute::Bool(bool v) { return Attribute(InternedAttrs::Get().bools[v ? 1 : 0]); }

Attribute Attribute::Int32(int32_t v) {
  if (InternedAttrs::InRange(v))
    return Attribute(InternedAttrs::Get().int32s[v - InternedAttrs::kMinInt]);
  return Attribute(NewStorage(v));
}

Attribute Attribute::Int64(int64_t v) {
  if (InternedAttrs::InRange(v))
    return Attribute(InternedAttrs::Get().int64s[v - InternedAttrs::kMinInt]);
  return Attribute(NewStorage(v));
}

Attribute Attribute::String(std::string_view v) {
  if (v.empty()) return Attribute(InternedAttrs::Get().empty_string);
  return Attribute(NewString(v));
}

Attribute Attribute::DataTypeAttr(DataType v) {
  const auto i = static_cast<size_t>(v);
  if (i < InternedAttrs::Get().data_types.size())
    return Attribute(InternedAttrs::Get().data_types[i]);
  return Attribute(NewStorage(v));
}

Attribute Attribute::DataLayoutAttr(DataLayout v) {
  const auto i = static_cast<size_t>(v);
  if (i < InternedAttrs::Get().layouts.size()) return Attribute(InternedAttrs::Get().layouts[i]);
  return Attribute(NewStorage(v));
}

Attribute Attribute::PlaceAttr(Place v) {
  if (v.device == 0 && v.device_type.empty()) {
    if (v.type == AllocationType::kUndefined)
      return Attribute(InternedAttrs::Get().undefined_place);
    if (v.type == AllocationType::kCpu) return Attribute(InternedAttrs::Get().cpu_place);
  }
  return Attribute(NewStorage(std::move(v)));
}

namespace {

// Floats and doubles repeat by the thousand in a program (every AdamW update carries the same
// beta1, beta2 and epsilon; fills the same constants) but are too many kinds to intern: the last
// values each thread made are kept, by bit pattern, and made again share the storage.
struct RecentSlots {
  std::array<const AttrHeader*, 64> slots{};  // each holds one reference
  ~RecentSlots() {
    for (const AttrHeader* s : slots) detail::Unref(s);
  }
};

template <typename T>
const AttrHeader* RecentStorage(T v) {
  using Bits = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
  thread_local RecentSlots recent;
  const auto bits = std::bit_cast<Bits>(v);
  const AttrHeader*& slot = recent.slots[(uint64_t{bits} * 0x9E3779B97F4A7C15ull) >> 58];
  if (slot == nullptr || std::bit_cast<Bits>(std::get<T>(StorageOf(slot)->value)) != bits) {
    detail::Unref(slot);
    slot = NewStorage(v);
  }
  return slot;
}

}  // namespace

Attribute Attribute::Float(float v) { return Share(RecentStorage(v)); }
Attribute Attribute::Double(double v) { return Share(RecentStorage(v)); }
Attribute Attribute::Array(std::vector<Attribute> v) {
  if (const AttrHeader* interned = InternedAttrs::Get().FindArray(v)) return Attribute(interned);
  return Attribute(NewArray(std::move(v)));
}
Attribute Attribute::ArrayFrom(std::span<const Attribute> v) {
  if (const AttrHeader* interned = InternedAttrs::Get().FindArray(v)) return Attribute(interned);
  return Attribute(NewArray(v));
}
Attribute Attribute::TypeAttr(Type v) { return Attribute(NewStorage(std::move(v))); }
Attribute Attribute::Scalar(ScalarValue v) { return Attribute(NewStorage(std::move(v))); }

Attribute Attribute::IntArrayAttr(std::vector<int64_t> v) {
  if (v.size() <= 1) return IntArrayFrom(v);
  return Attribute(NewStorage(IntArray{std::move(v)}));
}
Attribute Attribute::IntArrayFrom(std::span<const int64_t> v) {
  if (v.empty()) return Attribute(InternedAttrs::Get().empty_int_array);
  if (v.size() == 1 && InternedAttrs::InRange(v[0])) {
    return Attribute(InternedAttrs::Get().int_arrays_of_one[v[0] - InternedAttrs::kMinInt]);
  }
  return Attribute(NewStorage(IntArray{std::vector<int64_t>(v.begin(), v.end())}));
}

Attribute Attribute::ProcessMeshAttr(ProcessMesh v) {
  return Attribute(NewStorage(Boxed<ProcessMesh>{std::make_unique<ProcessMesh>(std::move(v))}));
}

Attribute Attribute::TensorDist(TensorDistAttr v) {
  return Attribute(
      NewStorage(Boxed<TensorDistAttr>{std::make_unique<TensorDistAttr>(std::move(v))}));
}

Attribute Attribute::OperationDist(OperationDistAttr v) {
  return Attribute(
      NewStorage(Boxed<OperationDistAttr>{std::make_unique<OperationDistAttr>(std::move(v))}));
}

AttrKind Attribute::kind() const {
  return storage_ ? static_cast<AttrKind>(StorageOf(storage_)->value.index()) : AttrKind::kNull;
}

#define IRM_ATTR_ACCESSOR(Name, T)                                           \
  const T* Attribute::Name() const {                                         \
    return storage_ ? std::get_if<T>(&StorageOf(storage_)->value) : nullptr; \
  }
IRM_ATTR_ACCESSOR(AsBool, bool)
IRM_ATTR_ACCESSOR(AsInt32, int32_t)
IRM_ATTR_ACCESSOR(AsInt64, int64_t)
IRM_ATTR_ACCESSOR(AsFloat, float)
IRM_ATTR_ACCESSOR(AsDouble, double)
IRM_ATTR_ACCESSOR(AsString, std::string_view)
IRM_ATTR_ACCESSOR(AsType, Type)
IRM_ATTR_ACCESSOR(AsIntArray, IntArray)
IRM_ATTR_ACCESSOR(AsDataType, DataType)
IRM_ATTR_ACCESSOR(AsPlace, Place)
IRM_ATTR_ACCESSOR(AsDataLayout, DataLayout)
IRM_ATTR_ACCESSOR(AsScalar, ScalarValue)
#undef IRM_ATTR_ACCESSOR

const AttributeSpan* Attribute::AsArray() const {
  const auto* array = storage_ ? std::get_if<ArrayItems>(&StorageOf(storage_)->value) : nullptr;
  return array != nullptr ? &array->items : nullptr;
}

#define IRM_BOXED_ACCESSOR(Name, T)                                                              \
  const T* Attribute::Name() const {                                                             \
    const auto* boxed = storage_ ? std::get_if<Boxed<T>>(&StorageOf(storage_)->value) : nullptr; \
    return boxed != nullptr ? boxed->ptr.get() : nullptr;                                        \
  }
IRM_BOXED_ACCESSOR(AsProcessMesh, ProcessMesh)
IRM_BOXED_ACCESSOR(AsTensorDist, TensorDistAttr)
IRM_BOXED_ACCESSOR(AsOperationDist, OperationDistAttr)
#undef IRM_BOXED_ACCESSOR

size_t Attribute::Hash() const { return storage_ ? StorageOf(storage_)->hash : 0; }

bool Attribute::operator==(const Attribute& other) const {
  if (storage_ == other.storage_) return true;
  if (!storage_ || !other.storage_) return false;
  const AttrStorage& x = *StorageOf(storage_);
  const AttrStorage& y = *StorageOf(other.storage_);
  if (x.hash != y.hash) return false;
  const AttrValue& a = x.value;
  const AttrValue& b = y.value;
  if (a.index() != b.index()) return false;
  // Floats by bits: NaN equals the same NaN, -0.0 differs from 0.0.
  if (const float* f = std::get_if<float>(&a)) {
    return std::bit_cast<uint32_t>(*f) == std::bit_cast<uint32_t>(std::get<float>(b));
  }
  if (const double* d = std::get_if<double>(&a)) {
    return std::bit_cast<uint64_t>(*d) == std::bit_cast<uint64_t>(std::get<double>(b));
  }
  return a == b;
}

std::string Attribute::ToString() const { return PrintAttribute(*this); }

}  // namespace irm::newir
