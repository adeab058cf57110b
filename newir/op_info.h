// The op table: one OpInfo per op is the single source of truth for its signature (operands with
// optional/variadic flags, results, attributes with kinds and defaults), its in-place and
// side-effect flags, its region count, its verifier hook and its fold hook. Printer, parser, JSON,
// verifier and passes all read it; an OpRegistry maps names to entries.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "newir/attributes.h"

namespace irm::newir {

class Operation;
class Value;

// How many values a slot takes and of what shape, as far as the table can say:
// - a plain slot (neither flag) takes one value that is not a vector (a tensor, tensor array,
//   selected rows or dist tensor);
// - variadic takes one vector value (PIR's Tensor[]: built by builtin.combine, taken apart by
//   builtin.split or builtin.slice);
// - variadic with any_count takes any number of separate values of any type (cf.yield's inputs,
//   builtin.combine's inputs, builtin.split's and pd_op.if's results, pd_op.while's loop values).
//   Only the last slot of an op's operand (or result) list may be any_count.
// An operand marked int_array is a mutable IntArray attribute turned operand (ops.yaml): one
// tensor, or a vector of scalar tensors (builtin.combine of the list's items).
struct OperandSpec {
  std::string name = {};
  bool optional = false;  // the slot may hold no value
  bool variadic = false;
  bool any_count = false;
  bool int_array = false;
};

struct ResultSpec {
  std::string name = {};
  bool optional = false;  // the result may have a null type (Paddle's absent optional output)
  bool variadic = false;
  bool any_count = false;
};

struct AttrSpec {
  std::string name = {};
  AttrKind kind = AttrKind::kNull;  // kNull: any kind is accepted
  bool required = false;
  Attribute default_value = {};  // null when there is none
  // What the current, untyped text style cannot say and the table must: the kind an untyped
  // value reads as when `kind` accepts any (pd_op.full's value: `1` is a Double), and the kind of
  // an array's elements (`[0,1]` as Int64 for slice's axes). kNull: the parser's fallback.
  AttrKind untyped_kind = AttrKind::kNull;
  AttrKind element_kind = AttrKind::kNull;
};

// Checks what the table cannot say (type relations, value ranges). Runs after the generic checks
// against the table, but must not assume they passed: it sees the op as it is.
using OpVerifyFn = Status (*)(const Operation& op);

// What an op's fold hook found (MLIR's OpFoldResult, in the two forms this project's folds take);
// both fields null: nothing. The hook only describes: the pass that applies a fold
// (newir/transforms/canonicalize_pass.cc) first checks what the hook cannot see from the op
// alone — persistable or fetched results, readers that write in place, dist attrs — and may
// refuse it.
struct OpFoldResult {
  // An existing value that result 0 always equals: the result's readers may read it instead and
  // the op can go (MLIR's fold returning a value). The op's other results must be unused.
  Value* result = nullptr;
  // Or the op stays, reading `operand_value` at operand `operand_index` instead of what it reads
  // now: both hold the same numbers (MLIR's in-place fold: assign(assign(x)) -> assign(x)). The
  // pass applies this first, then asks the hook again.
  size_t operand_index = 0;
  Value* operand_value = nullptr;
};

// Folds the op, as MLIR's `fold` of an op with `hasFolder`: sees the op (its operands' producers
// included, which is where constant operands come from) and changes nothing.
using OpFoldFn = OpFoldResult (*)(const Operation& op);

struct OpInfo {
  std::string name = {};  // "dialect.op"
  std::string summary = {};
  std::vector<OperandSpec> operands = {};
  std::vector<ResultSpec> results = {};
  std::vector<AttrSpec> attributes = {};
  size_t num_regions = 0;
  bool inplace = false;      // writes (some of) its inputs
  bool side_effect = false;  // must survive dead-code elimination
  bool terminator = false;   // ends a block (cf.yield)
  OpVerifyFn verify = nullptr;
  OpFoldFn fold = nullptr;  // null: the op never folds

  std::string_view dialect() const;
  const AttrSpec* FindAttribute(std::string_view attr_name) const;
};

class OpRegistry {
 public:
  OpRegistry() = default;
  // Not copyable: the name index views the keys of this registry's own table.
  OpRegistry(const OpRegistry&) = delete;
  OpRegistry& operator=(const OpRegistry&) = delete;
  OpRegistry(OpRegistry&&) = default;
  OpRegistry& operator=(OpRegistry&&) = default;

  // Every dialect this project knows, registered once (thread-safe on first use).
  static const OpRegistry& Global();

  // Fails when an op of that name is already registered.
  Status Register(OpInfo info);
  // Null for an unregistered name.
  const OpInfo* Lookup(std::string_view name) const;
  std::vector<const OpInfo*> OpsOfDialect(std::string_view dialect) const;
  size_t size() const { return ops_.size(); }

 private:
  // unique_ptr: entries are referenced by pointer from operations and must not move.
  std::map<std::string, std::unique_ptr<OpInfo>, std::less<>> ops_;
  // The same entries by name, hashed: every op built by name is looked up here (a map search
  // compared ~10 names).
  std::unordered_map<std::string_view, const OpInfo*> by_name_;
};

}  // namespace irm::newir
