// Builder: creates operations at an insertion point (the end or start of a block, before or after
// an op), resolving each op name in an op registry so built ops carry their table entry. Names the
// registry does not know still build (kept opaque, info() null); rejecting them is the verifier's
// and the parser's job, under --allow-unregistered.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "newir/block.h"
#include "newir/op_info.h"

namespace irm::newir {

class Builder {
 public:
  explicit Builder(const OpRegistry& registry = OpRegistry::Global()) : registry_(&registry) {}
  explicit Builder(Block& block, const OpRegistry& registry = OpRegistry::Global())
      : registry_(&registry), block_(&block) {}

  // The next op goes at the end of `block`.
  void SetInsertionPointToEnd(Block& block) {
    block_ = &block;
    before_ = nullptr;
  }
  void SetInsertionPointToStart(Block& block) {
    block_ = &block;
    before_ = block.front();
  }
  // The next op goes right before `op` (so successive ops stay in creation order before it).
  void SetInsertionPoint(Operation& op) {
    block_ = op.parent_block();
    before_ = &op;
  }
  // The next op goes right after `op`; successive ops follow one another after it.
  void SetInsertionPointAfter(Operation& op) {
    block_ = op.parent_block();
    before_ = op.next();
  }
  Block* block() const { return block_; }
  const OpRegistry& registry() const { return *registry_; }

  // Creates the op and inserts it at the insertion point, which must be set (and, when it is
  // "before an op", that op must still exist).
  Operation* Create(std::string_view name, const std::vector<Value*>& operands,
                    const std::vector<Type>& result_types, AttributeMap attributes = {},
                    size_t num_regions = 0);
  // The same for a registered op whose table entry is at hand: no look-up by name.
  Operation* Create(const OpInfo& info, const std::vector<Value*>& operands,
                    const std::vector<Type>& result_types, AttributeMap attributes = {},
                    size_t num_regions = 0);
  // Inserts a detached op at the insertion point.
  Operation* Insert(std::unique_ptr<Operation> op) {
    return block_->Insert(before_, std::move(op));
  }
  // Clones `op` (see Operation::Clone) and inserts the copy at the insertion point.
  Operation* Clone(const Operation& op, IrMapping& mapping) { return Insert(op.Clone(mapping)); }

 private:
  const OpRegistry* registry_;
  Block* block_ = nullptr;
  Operation* before_ = nullptr;  // null: the end of block_
};

}  // namespace irm::newir
