// Block argument and op-list maintenance; region block lists.
#include "newir/block.h"

#include <fmt/format.h>

namespace irm::newir {

Block::~Block() {
  // Back to front, so that each op's uses are gone before its results die (any order would be
  // safe: see ~Operation) and each dying slot is usually the head of its value's use list.
  // Freeing a program is a walk over memory long out of cache, so it is a pipeline: the op three
  // places ahead is prefetched, the one two ahead (fetched a round earlier) has its attribute
  // array prefetched, and the one ahead (whose array is on its way) its attribute storages and
  // the values its operands use (unlinking a use writes the value's use list), so that the
  // misses of three ops overlap the work on this one.
  Operation* op = last_;
  while (op != nullptr) {
    Operation* ahead = op->prev_;
    if (ahead != nullptr) {
      if (Operation* two_ahead = ahead->prev_) {
        __builtin_prefetch(two_ahead->prev_);
        __builtin_prefetch(two_ahead->attributes_.begin().base());
      }
      for (const auto& [name, value] : ahead->attributes_) value.Prefetch();
      for (uint32_t i = 0; i < ahead->num_operands_; ++i) {
        __builtin_prefetch(ahead->operands_[i].get());
      }
    }
    delete op;
    op = ahead;
  }
}

Operation* Block::parent_op() const { return parent_ != nullptr ? parent_->parent_op() : nullptr; }

Value* Block::AddArgument(Type type) {
  auto* value =
      new Value(Value::Kind::kBlockArgument, std::move(type), static_cast<uint32_t>(args_.size()));
  value->block_ = this;
  args_.emplace_back(value);
  return value;
}

Status Block::EraseArgument(size_t i) {
  if (i >= args_.size()) {
    return Status(StatusCode::kInvalidArgument, Location{},
                  fmt::format("block has no argument {} (it has {})", i, args_.size()));
  }
  if (!args_[i]->use_empty()) {
    return Status(StatusCode::kInvalid, Location{},
                  fmt::format("block argument {} still has {} uses", i, args_[i]->use_count()));
  }
  args_.erase(args_.begin() + static_cast<std::ptrdiff_t>(i));
  for (size_t j = i; j < args_.size(); ++j) args_[j]->index_ = static_cast<uint32_t>(j);
  return Status::Ok();
}

Value* Block::FindKwarg(std::string_view name) const {
  for (const auto& kw : kwargs_) {
    if (kw->kwarg_name() == name) return kw.get();
  }
  return nullptr;
}

StatusOr<Value*> Block::AddKwarg(std::string name, Type type) {
  if (FindKwarg(name) != nullptr) {
    return Status(StatusCode::kInvalid, Location{},
                  fmt::format("block already has a keyword argument '{}'", name));
  }
  auto* value =
      new Value(Value::Kind::kBlockKwarg, std::move(type), static_cast<uint32_t>(kwargs_.size()));
  value->block_ = this;
  value->MutableExtras().kwarg_name = std::move(name);
  kwargs_.emplace_back(value);
  return value;
}

std::vector<Operation*> Block::ops() const {
  std::vector<Operation*> out;
  out.reserve(size_);
  for (Operation* op = first_; op != nullptr; op = op->next_) out.push_back(op);
  return out;
}

Operation* Block::Insert(Operation* before, std::unique_ptr<Operation> owned) {
  Operation* op = owned.release();
  op->parent_ = this;
  op->next_ = before;
  op->prev_ = before != nullptr ? before->prev_ : last_;
  if (op->prev_ != nullptr) {
    op->prev_->next_ = op;
  } else {
    first_ = op;
  }
  if (before != nullptr) {
    before->prev_ = op;
  } else {
    last_ = op;
  }
  ++size_;
  return op;
}

std::unique_ptr<Operation> Block::Remove(Operation* op) {
  if (op->prev_ != nullptr) {
    op->prev_->next_ = op->next_;
  } else {
    first_ = op->next_;
  }
  if (op->next_ != nullptr) {
    op->next_->prev_ = op->prev_;
  } else {
    last_ = op->prev_;
  }
  op->parent_ = nullptr;
  op->prev_ = op->next_ = nullptr;
  --size_;
  return std::unique_ptr<Operation>(op);
}

Region::~Region() = default;

Block& Region::AddBlock() {
  blocks_.push_back(std::make_unique<Block>());
  blocks_.back()->parent_ = this;
  return *blocks_.back();
}

}  // namespace irm::newir
