// Kernels and their registry. A kernel is one computation (matmul, add_grad, adamw, ...) for one
// dtype on one device, shared by both executors as Paddle's phi kernels are. Its contract is the
// phi signature as the new IR spells it (newir/pd_op_dialect.cc): kernel name = the pd_op name
// without prefix or in-place suffix; inputs in operand order; outputs in result order; attributes
// by their pd_op names — except that mutable IntArray/Scalar operands (reshape's shape, scale's
// scale, ...) arrive as attributes: each executor reads them from its own IR. The two executors
// map their ops onto this contract through their own tables (docs/architecture.md, invariant 1).
//
// Kernels allocate their outputs (fresh storage; in-place IR ops are the executors' business),
// never throw, and report bad input (shapes that disagree, an index out of range) as a Status
// whose message names the operand; the executor adds where in the program the op is.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/status.h"
#include "reference_runtime/tensor.h"

namespace irm::rt {

// kInvalid, unlocated: what kernels return for bad input.
Status KernelError(std::string message);

using AttrValue = std::variant<bool, int64_t, double, std::string, std::vector<int64_t>,
                               std::vector<double>, DType>;

// A kernel's attributes by name. Integers are int64, floats double, whatever width the IR used.
// A value type whose copies share one table until one of them is changed (copy-on-write): the
// executors bind an op's attributes once per program and hand every run of the op a copy, which
// must cost a reference count, not a map.
class KernelAttrs {
 public:
  using Map = std::map<std::string, AttrValue, std::less<>>;

  void Set(std::string name, AttrValue value) { Own()[std::move(name)] = std::move(value); }
  bool Has(std::string_view name) const {
    return values_ != nullptr && values_->find(name) != values_->end();
  }
  // The value, or an error naming the attribute when it is missing or of another kind.
  template <typename T>
  StatusOr<T> Get(std::string_view name) const;
  // The value, or `fallback` when missing (still an error when of another kind).
  template <typename T>
  StatusOr<T> GetOr(std::string_view name, T fallback) const;
  const Map& values() const { return values_ != nullptr ? *values_ : EmptyMap(); }

 private:
  static const Map& EmptyMap();
  // The table, made this object's own first when another copy shares it.
  Map& Own();

  std::shared_ptr<Map> values_;  // null: no attributes
};

enum class GemmMode : uint8_t {
  kBlas,       // OpenBLAS in fixed row blocks: fast; bits independent of the thread count but
               // dependent on the CPU (OpenBLAS picks its kernel by CPU model)
  kReference,  // fixed-order loops: the same bits on every machine
};
const char* GemmModeName(GemmMode mode);

// Where an output that is a shard of a serial tensor lies in it (a bundle's rank<N>/shards.json):
// the box [offsets, offsets + the output's dims) of a tensor of `global_shape`. The runtime's own
// type, filled from the bundle by whoever runs one, so that kernels and executors need no bundle.
struct OutputShard {
  std::vector<int64_t> global_shape;
  std::vector<int64_t> offsets;  // one per dim
  bool operator==(const OutputShard&) const = default;
};

// What a kernel may know about where it runs; set by the executor per op.
struct KernelContext {
  GemmMode gemm = GemmMode::kBlas;
  // Random ops: the seed to use when the op's own seed attribute is 0 (the program's seed), and
  // the op's stable identity (philox.h), the same for a legacy op and its translated twin.
  uint64_t program_seed = 0;
  uint64_t op_identity = 0;
  // Random initialisers (uniform, gaussian): when the output is a shard, where it lies in the
  // serial tensor and the var's name (for errors), both valid during the call; null: the output
  // is the whole tensor. Element i is drawn at its index in the serial tensor, so that a shard
  // holds exactly the numbers the serial initialiser draws for its elements.
  const OutputShard* shard = nullptr;
  std::string_view shard_var = {};
};

struct KernelCall {
  std::vector<const Tensor*> inputs;  // null: an absent optional input
  std::vector<Tensor*> outputs;       // null: an output nobody reads (may be skipped)
  KernelAttrs attrs;
  KernelContext context;

  size_t num_inputs() const { return inputs.size(); }
  bool has_input(size_t i) const { return i < inputs.size() && inputs[i] != nullptr; }
  const Tensor& input(size_t i) const { return *inputs[i]; }
  bool wants_output(size_t i) const { return i < outputs.size() && outputs[i] != nullptr; }
  // Sets output i when it is wanted.
  void SetOutput(size_t i, Tensor t) {
    if (wants_output(i)) *outputs[i] = std::move(t);
  }
};

using KernelFn = Status (*)(KernelCall& call);

// How many inputs and outputs a kernel takes; checked before it runs so that kernels can index
// their inputs freely.
struct KernelSignature {
  static constexpr size_t kVariadic = SIZE_MAX;
  size_t min_inputs = 0;
  size_t max_inputs = 0;   // kVariadic: any number from min_inputs (add_n, concat)
  size_t num_outputs = 0;  // kVariadic: as many as the caller gives (split, concat_grad)
};

struct KernelEntry {
  KernelFn fn = nullptr;
  KernelSignature signature;
};

class KernelRegistry {
 public:
  // Every kernel of the runtime (built once, on first use).
  static const KernelRegistry& Global();

  // An error when (name, dtype, device) is registered already.
  Status Register(const std::string& name, DType dtype, Device device, KernelEntry entry);
  const KernelEntry* Find(std::string_view name, DType dtype, Device device) const;
  // Find, or an error saying which dtypes the kernel has (or that no such kernel exists).
  StatusOr<const KernelEntry*> Lookup(std::string_view name, DType dtype, Device device) const;
  // Checks the call against the signature, then runs the kernel.
  Status Run(std::string_view name, DType dtype, KernelCall& call,
             Device device = Device::kCpu) const;
  // Run for an entry found already: the signature check and the run, without the look-up.
  static Status RunEntry(std::string_view name, const KernelEntry& entry, KernelCall& call);

  std::vector<std::string> Names() const;
  std::vector<DType> DTypesOf(std::string_view name, Device device) const;

 private:
  struct Key {
    std::string name;
    DType dtype;
    Device device;
    auto operator<=>(const Key&) const = default;
  };
  std::map<Key, KernelEntry> kernels_;
};

// A kernel name resolved once against a registry for every dtype, so that running it costs no
// look-up by name: the executors bind each op's kernel once per program, not once per step.
// A dtype the registry had no kernel for goes through KernelRegistry::Run, so the error (or a
// kernel registered since) is exactly what an unbound call meets.
class BoundKernel {
 public:
  BoundKernel() = default;
  BoundKernel(const KernelRegistry& registry, std::string name, Device device = Device::kCpu);

  bool bound() const { return registry_ != nullptr; }
  const std::string& name() const { return name_; }
  // As registry.Run(name, dtype, call, device).
  Status Run(DType dtype, KernelCall& call) const;

 private:
  static constexpr size_t kDTypes = static_cast<size_t>(DType::kComplex128) + 1;
  const KernelRegistry* registry_ = nullptr;
  std::string name_;
  Device device_ = Device::kCpu;
  std::array<const KernelEntry*, kDTypes> entries_{};
};

// ---- implementation ----------------------------------------------------------------------------

const char* AttrKindName(const AttrValue& value);

template <typename T>
StatusOr<T> KernelAttrs::Get(std::string_view name) const {
  const Map& values = this->values();
  auto it = values.find(name);
  if (it == values.end()) return KernelError("attribute '" + std::string(name) + "' is missing");
  if (const T* v = std::get_if<T>(&it->second)) return *v;
  return KernelError("attribute '" + std::string(name) + "' is " + AttrKindName(it->second) +
                     ", not " + AttrKindName(AttrValue(T{})));
}

template <typename T>
StatusOr<T> KernelAttrs::GetOr(std::string_view name, T fallback) const {
  if (!Has(name)) return fallback;
  return Get<T>(name);
}

}  // namespace irm::rt
