// Blocks and regions of the new IR. A Block holds positional arguments, keyword arguments and an
// intrusive doubly linked list of the operations it owns; a Region is an ordered list of blocks
// owned by an operation (Paddle's regions hold one block each in practice).
#pragma once

#include <cstddef>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "newir/operation.h"

namespace irm::newir {

class Block {
 public:
  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Operation;
    using difference_type = std::ptrdiff_t;
    using pointer = Operation*;
    using reference = Operation&;
    iterator() = default;
    explicit iterator(Operation* op) : op_(op) {}
    Operation& operator*() const { return *op_; }
    Operation* operator->() const { return op_; }
    iterator& operator++() {
      op_ = op_->next();
      return *this;
    }
    iterator operator++(int) {
      iterator old = *this;
      ++*this;
      return old;
    }
    bool operator==(const iterator&) const = default;

   private:
    Operation* op_ = nullptr;
  };

  Block() = default;
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;
  ~Block();

  Region* parent_region() const { return parent_; }
  Operation* parent_op() const;

  // Positional arguments.
  size_t num_arguments() const { return args_.size(); }
  Value* argument(size_t i) const { return args_[i].get(); }
  Value* AddArgument(Type type);
  // Fails (leaving the block unchanged) when the argument is still read.
  Status EraseArgument(size_t i);

  // Keyword arguments, in the order they were added.
  size_t num_kwargs() const { return kwargs_.size(); }
  Value* kwarg(size_t i) const { return kwargs_[i].get(); }
  // Null when there is none by that name.
  Value* FindKwarg(std::string_view name) const;
  // Fails when a keyword argument of that name exists.
  StatusOr<Value*> AddKwarg(std::string name, Type type);

  // Operations.
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  Operation* front() const { return first_; }
  Operation* back() const { return last_; }
  iterator begin() const { return iterator(first_); }
  iterator end() const { return iterator(); }
  std::vector<Operation*> ops() const;  // a snapshot, safe to edit the block while walking it

  // Takes ownership of a detached op and links it before `before` (a member of this block), or
  // at the end when `before` is null. Returns the op.
  Operation* Insert(Operation* before, std::unique_ptr<Operation> op);
  Operation* PushBack(std::unique_ptr<Operation> op) { return Insert(nullptr, std::move(op)); }
  // Unlinks `op` (a member of this block) and hands it back, detached.
  std::unique_ptr<Operation> Remove(Operation* op);

 private:
  friend class Region;
  Region* parent_ = nullptr;
  std::vector<std::unique_ptr<Value>> args_;
  std::vector<std::unique_ptr<Value>> kwargs_;
  Operation* first_ = nullptr;
  Operation* last_ = nullptr;
  size_t size_ = 0;
};

class Region {
 public:
  explicit Region(Operation* parent) : parent_(parent) {}
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;
  ~Region();

  Operation* parent_op() const { return parent_; }
  bool empty() const { return blocks_.empty(); }
  size_t num_blocks() const { return blocks_.size(); }
  Block& block(size_t i) const { return *blocks_[i]; }
  Block& front() const { return *blocks_.front(); }
  Block& AddBlock();

 private:
  Operation* parent_;
  std::vector<std::unique_ptr<Block>> blocks_;
};

}  // namespace irm::newir
