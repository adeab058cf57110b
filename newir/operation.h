// Operations of the new IR: a name "dialect.op", operand slots, owned results, attributes sorted by
// name, owned regions, and a place in its parent block's intrusive op list (so insert and erase
// are O(1)). An Operation is created detached (owned by a unique_ptr) and owned by its block once
// inserted; the Program owns everything transitively.
//
// Memory layout (as MLIR's): one pooled block holds the op, then its results, then its operand
// slots, so making or freeing an op is one allocation whatever its arity — a translated program
// has ~140k ops, and freeing it was a third of translating it. The slots stay in the block while
// an edit keeps their number within the op's first count; more move to an array of their own.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "newir/value.h"

namespace irm::newir {

class Block;
class Region;
struct OpInfo;

class Operation {
 public:
  // `info` is the op's table entry, or null for an op kept opaquely (unregistered).
  static std::unique_ptr<Operation> Create(std::string_view name,
                                           const std::vector<Value*>& operands,
                                           const std::vector<Type>& result_types,
                                           AttributeMap attributes = {}, size_t num_regions = 0,
                                           const OpInfo* info = nullptr);
  Operation(const Operation&) = delete;
  Operation& operator=(const Operation&) = delete;
  ~Operation();
  // `delete op` (and unique_ptr's) destroys the op and frees its whole block, whose size only the
  // op knows.
  static void operator delete(Operation* op, std::destroying_delete_t);

  const std::string& name() const { return *name_; }
  // "pd_op" and "matmul" for "pd_op.matmul" (an op name without a dot has an empty dialect).
  std::string_view dialect() const;
  std::string_view op_name() const;
  const OpInfo* info() const { return info_; }
  void set_info(const OpInfo* info) { info_ = info; }
  // Unique per process, in creation order: the `[id:N]` of Paddle's debug print.
  uint64_t id() const { return id_; }

  size_t num_operands() const { return num_operands_; }
  Value* operand(size_t i) const { return operands_[i].get(); }
  OpOperand& op_operand(size_t i) { return operands_[i]; }
  std::vector<Value*> operands() const;
  void SetOperand(size_t i, Value* value) { operands_[i].Set(value); }
  // Replaces the whole operand list (its length may change).
  void SetOperands(const std::vector<Value*>& operands);

  size_t num_results() const { return num_results_; }
  Value* result(size_t i) const { return result_storage() + i; }
  std::vector<Value*> results() const;
  // Whether any result (or a value defined inside a nested region) is read by some op.
  bool HasUsedResults() const;

  const AttributeMap& attributes() const { return attributes_; }
  // The attribute called `name`, or a null Attribute.
  Attribute attribute(std::string_view name) const;
  bool HasAttribute(std::string_view name) const { return attributes_.contains(name); }
  void SetAttribute(std::string_view name, Attribute value);
  bool RemoveAttribute(std::string_view name);

  size_t num_regions() const { return regions_.size(); }
  Region& region(size_t i) const { return *regions_[i]; }

  Block* parent_block() const { return parent_; }
  Region* parent_region() const;
  Operation* parent_op() const;
  Operation* prev() const { return prev_; }
  Operation* next() const { return next_; }

  // Visits this op and every op nested in its regions, parents before children, with an explicit
  // worklist (deep nesting cannot overflow the stack).
  void Walk(const std::function<void(Operation*)>& fn);

  // Empties every operand slot here and in nested regions, so the op can be destroyed in any
  // order relative to the values it reads.
  void DropAllReferences();

  // A detached deep copy: operands go through `mapping` (unmapped values are kept as they are),
  // regions are cloned with their blocks and arguments, and every result and block argument of the
  // copy is recorded in `mapping`. To clone into another program, map (or clone first) the values
  // the op reads.
  std::unique_ptr<Operation> Clone(IrMapping& mapping) const;

 private:
  friend class Block;
  Operation(std::string_view name, const OpInfo* info, uint32_t num_results,
            uint32_t inline_operands);
  // The bytes of an op's block: the op, its results, its in-block operand slots.
  static size_t BlockBytes(uint32_t num_results, uint32_t inline_operands);
  Value* result_storage() const {
    return reinterpret_cast<Value*>(const_cast<Operation*>(this) + 1);
  }
  OpOperand* inline_operands() const {
    return reinterpret_cast<OpOperand*>(result_storage() + num_results_);
  }
  // Ends the lives of the current operand slots (unlinking them from their values).
  void DestroyOperands();

  const std::string* name_;  // interned (interned_name.h): lives as long as the process
  const OpInfo* info_;
  uint64_t id_;
  // The live slots: the first num_operands_ of inline_operands(), or an array of their own.
  OpOperand* operands_ = nullptr;
  uint32_t num_operands_ = 0;
  const uint32_t inline_capacity_;  // operand slots in the op's block
  const uint32_t num_results_;
  AttributeMap attributes_;
  std::vector<std::unique_ptr<Region>> regions_;
  // Intrusive list links, owned by the parent block.
  Block* parent_ = nullptr;
  Operation* prev_ = nullptr;
  Operation* next_ = nullptr;
};

// Where `op` is, for diagnostics: its index in its block and its name ("op 3 (pd_op.relu)").
Location LocationOf(const Operation& op);

}  // namespace irm::newir
