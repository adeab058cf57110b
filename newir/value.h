// SSA values of the new IR and their uses. A Value is an op result or a block (keyword) argument;
// every operand slot that reads it (OpOperand) sits on the value's intrusive doubly linked use
// list, so "who reads this value" and replace-all-uses cost O(uses), never a walk of the program.
// Values are owned by their defining Operation or Block and never move in memory. A program has
// ~200k of them, nearly all op results without attributes: a keyword name and attributes live in
// a side record that only the values that have them allocate.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "newir/attribute_map.h"
#include "newir/attributes.h"
#include "newir/ir_pool.h"
#include "newir/types.h"

namespace irm::newir {

class Block;
class Operation;
class Value;

// One operand slot of an operation. A slot may hold no value (an absent optional operand).
class OpOperand {
 public:
  IRM_POOLED_NEW_DELETE
  OpOperand() = default;
  OpOperand(const OpOperand&) = delete;
  OpOperand& operator=(const OpOperand&) = delete;
  ~OpOperand() { Unlink(); }

  Value* get() const { return value_; }
  Operation* owner() const { return owner_; }
  uint32_t index() const { return index_; }
  // Points the slot at `value` (may be null), moving it between use lists.
  void Set(Value* value);
  // The next use of the same value, for walking a use list.
  OpOperand* next_use() const { return next_use_; }

 private:
  friend class Operation;
  friend class Value;
  void Link();
  void Unlink();

  Value* value_ = nullptr;
  Operation* owner_ = nullptr;
  uint32_t index_ = 0;
  OpOperand* prev_use_ = nullptr;
  OpOperand* next_use_ = nullptr;
};

class Value {
 public:
  enum class Kind : uint8_t { kOpResult, kBlockArgument, kBlockKwarg };
  IRM_POOLED_NEW_DELETE

  Value(const Value&) = delete;
  Value& operator=(const Value&) = delete;
  // Slots that still read the value are left empty rather than dangling.
  ~Value();

  Kind kind() const { return kind_; }
  bool IsOpResult() const { return kind_ == Kind::kOpResult; }
  bool IsBlockArgument() const { return kind_ != Kind::kOpResult; }
  const Type& type() const { return type_; }
  void set_type(Type type) { type_ = std::move(type); }
  // The op whose result this is; null for block arguments.
  Operation* defining_op() const { return op_; }
  // The block this value is an argument of; for a result, the block of its defining op (or null
  // while that op is detached).
  Block* parent_block() const;
  // Result index, or argument index among the block's positional (or keyword) arguments.
  uint32_t index() const { return index_; }
  // Keyword arguments only.
  const std::string& kwarg_name() const;

  bool use_empty() const { return first_use_ == nullptr; }
  size_t use_count() const;
  OpOperand* first_use() const { return first_use_; }
  // A snapshot of the use list, most recently added first.
  std::vector<OpOperand*> uses() const;
  // Makes every reader of this value read `other` instead (a no-op when other is this).
  void ReplaceAllUsesWith(Value* other);
  // Replaces only the uses for which `pred` answers true.
  void ReplaceUsesWithIf(Value* other, const std::function<bool(const OpOperand&)>& pred);

  // Block arguments carry attributes (Paddle prints them after the argument on first use).
  const AttributeMap& attributes() const;
  void SetAttribute(std::string_view name, Attribute value) {
    MutableExtras().attributes.insert_or_assign(name, std::move(value));
  }
  // Replaces this value's attributes with `other`'s.
  void CopyAttributesFrom(const Value& other);

 private:
  friend class Block;
  friend class OpOperand;
  friend class Operation;
  Value(Kind kind, Type type, uint32_t index)
      : kind_(kind), index_(index), type_(std::move(type)) {}

  struct Extras {
    std::string kwarg_name;
    AttributeMap attributes;
  };
  Extras& MutableExtras();

  Kind kind_;
  uint32_t index_;
  Type type_;
  Operation* op_ = nullptr;  // results
  Block* block_ = nullptr;   // block arguments
  OpOperand* first_use_ = nullptr;
  std::unique_ptr<Extras> extras_;  // null while the value has neither
};

// Old value -> new value, filled while cloning (results and block arguments of clones are mapped
// to their originals). Lookup of an unmapped value answers the value itself.
class IrMapping {
 public:
  void Map(const Value* from, Value* to) { map_[from] = to; }
  Value* Lookup(Value* value) const;
  bool Contains(const Value* value) const { return map_.contains(value); }

 private:
  std::unordered_map<const Value*, Value*> map_;
};

}  // namespace irm::newir
