// Use-list maintenance for values and operand slots.
#include "newir/value.h"

#include "newir/operation.h"

namespace irm::newir {

void OpOperand::Link() {
  if (value_ == nullptr) return;
  prev_use_ = nullptr;
  next_use_ = value_->first_use_;
  if (next_use_ != nullptr) next_use_->prev_use_ = this;
  value_->first_use_ = this;
}

void OpOperand::Unlink() {
  if (value_ == nullptr) return;
  if (prev_use_ != nullptr) {
    prev_use_->next_use_ = next_use_;
  } else {
    value_->first_use_ = next_use_;
  }
  if (next_use_ != nullptr) next_use_->prev_use_ = prev_use_;
  prev_use_ = next_use_ = nullptr;
}

void OpOperand::Set(Value* value) {
  if (value == value_) return;
  Unlink();
  value_ = value;
  Link();
}

Value::~Value() {
  while (first_use_ != nullptr) first_use_->Set(nullptr);
}

const std::string& Value::kwarg_name() const {
  static const std::string* const none = new std::string;
  return extras_ != nullptr ? extras_->kwarg_name : *none;
}

const AttributeMap& Value::attributes() const {
  static const AttributeMap* const none = new AttributeMap;
  return extras_ != nullptr ? extras_->attributes : *none;
}

void Value::CopyAttributesFrom(const Value& other) {
  if (extras_ == nullptr && other.extras_ == nullptr) return;
  MutableExtras().attributes = other.attributes();
}

Value::Extras& Value::MutableExtras() {
  if (extras_ == nullptr) extras_ = std::make_unique<Extras>();
  return *extras_;
}

Block* Value::parent_block() const {
  if (block_ != nullptr) return block_;
  return op_ != nullptr ? op_->parent_block() : nullptr;
}

size_t Value::use_count() const {
  size_t n = 0;
  for (OpOperand* u = first_use_; u != nullptr; u = u->next_use_) ++n;
  return n;
}

std::vector<OpOperand*> Value::uses() const {
  std::vector<OpOperand*> out;
  for (OpOperand* u = first_use_; u != nullptr; u = u->next_use_) out.push_back(u);
  return out;
}

void Value::ReplaceAllUsesWith(Value* other) {
  if (other == this) return;
  while (first_use_ != nullptr) first_use_->Set(other);
}

void Value::ReplaceUsesWithIf(Value* other, const std::function<bool(const OpOperand&)>& pred) {
  if (other == this) return;
  for (OpOperand* use : uses()) {
    if (pred(*use)) use->Set(other);
  }
}

Value* IrMapping::Lookup(Value* value) const {
  auto it = map_.find(value);
  return it == map_.end() ? value : it->second;
}

}  // namespace irm::newir
