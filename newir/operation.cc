// Creation, editing, walking and cloning of operations.
#include "newir/operation.h"

#include <atomic>

#include "newir/block.h"
#include "newir/interned_name.h"

namespace irm::newir {
namespace {

std::atomic<uint64_t> next_op_id{0};

// Whether `op` is `ancestor` or nested somewhere inside it.
bool IsInside(const Operation* op, const Operation* ancestor) {
  for (; op != nullptr; op = op->parent_op()) {
    if (op == ancestor) return true;
  }
  return false;
}

}  // namespace

// Interned rather than the table entry's: a registry may die before the ops it described.
Operation::Operation(std::string_view name, const OpInfo* info)
    : name_(&InternName(name)), info_(info), id_(next_op_id.fetch_add(1)) {}

std::unique_ptr<Operation> Operation::Create(std::string_view name,
                                             const std::vector<Value*>& operands,
                                             const std::vector<Type>& result_types,
                                             AttributeMap attributes, size_t num_regions,
                                             const OpInfo* info) {
  std::unique_ptr<Operation> op(new Operation(name, info));
  op->SetOperands(operands);
  op->results_.reserve(result_types.size());
  for (size_t i = 0; i < result_types.size(); ++i) {
    auto* value = new Value(Value::Kind::kOpResult, result_types[i], static_cast<uint32_t>(i));
    value->op_ = op.get();
    op->results_.emplace_back(value);
  }
  op->attributes_ = std::move(attributes);
  for (size_t i = 0; i < num_regions; ++i) {
    op->regions_.push_back(std::make_unique<Region>(op.get()));
  }
  return op;
}

// No DropAllReferences here: a dying value empties the slots that still read it and a dying slot
// unlinks itself from its (then necessarily live) value, so ops and values may die in any order.
// Dropping first would walk every op of a program twice more while it is freed.
Operation::~Operation() { regions_.clear(); }

std::string_view Operation::dialect() const {
  const size_t dot = name_->find('.');
  return dot == std::string::npos ? std::string_view() : std::string_view(*name_).substr(0, dot);
}

std::string_view Operation::op_name() const {
  const size_t dot = name_->find('.');
  return dot == std::string::npos ? std::string_view(*name_)
                                  : std::string_view(*name_).substr(dot + 1);
}

std::vector<Value*> Operation::operands() const {
  std::vector<Value*> out;
  out.reserve(num_operands_);
  for (uint32_t i = 0; i < num_operands_; ++i) out.push_back(operands_[i].get());
  return out;
}

void Operation::SetOperands(const std::vector<Value*>& operands) {
  // Slots never move once linked: build a fresh array and let the old one unlink as it dies.
  auto slots = std::make_unique<OpOperand[]>(operands.size());
  for (size_t i = 0; i < operands.size(); ++i) {
    slots[i].owner_ = this;
    slots[i].index_ = static_cast<uint32_t>(i);
    slots[i].Set(operands[i]);
  }
  operands_ = std::move(slots);
  num_operands_ = static_cast<uint32_t>(operands.size());
}

std::vector<Value*> Operation::results() const {
  std::vector<Value*> out;
  out.reserve(results_.size());
  for (const auto& r : results_) out.push_back(r.get());
  return out;
}

bool Operation::HasUsedResults() const {
  for (const auto& r : results_) {
    if (!r->use_empty()) return true;
  }
  // Values defined inside the regions that something outside reads (invalid IR, but erasing the op
  // would still leave those readers with empty slots).
  bool used_outside = false;
  const_cast<Operation*>(this)->Walk([&](Operation* inner) {
    if (inner == this || used_outside) return;
    for (const auto& r : inner->results_) {
      for (OpOperand* u = r->first_use(); u != nullptr; u = u->next_use()) {
        if (!IsInside(u->owner(), this)) used_outside = true;
      }
    }
  });
  return used_outside;
}

Attribute Operation::attribute(std::string_view name) const {
  auto it = attributes_.find(name);
  return it == attributes_.end() ? Attribute() : it->second;
}

void Operation::SetAttribute(std::string_view name, Attribute value) {
  attributes_.insert_or_assign(name, std::move(value));
}

bool Operation::RemoveAttribute(std::string_view name) { return attributes_.erase(name) != 0; }

Region* Operation::parent_region() const {
  return parent_ != nullptr ? parent_->parent_region() : nullptr;
}

Operation* Operation::parent_op() const {
  return parent_ != nullptr ? parent_->parent_op() : nullptr;
}

void Operation::Walk(const std::function<void(Operation*)>& fn) {
  std::vector<Operation*> worklist = {this};
  while (!worklist.empty()) {
    Operation* op = worklist.back();
    worklist.pop_back();
    fn(op);
    // Push children in reverse so they pop in program order.
    for (size_t r = op->regions_.size(); r-- > 0;) {
      Region& region = *op->regions_[r];
      for (size_t b = region.num_blocks(); b-- > 0;) {
        for (Operation* child = region.block(b).back(); child != nullptr; child = child->prev_) {
          worklist.push_back(child);
        }
      }
    }
  }
}

void Operation::DropAllReferences() {
  auto drop = [](Operation* op) {
    for (uint32_t i = 0; i < op->num_operands_; ++i) op->operands_[i].Set(nullptr);
  };
  if (regions_.empty()) {
    drop(this);  // the common case, without Walk's worklist
    return;
  }
  Walk(drop);
}

std::unique_ptr<Operation> Operation::Clone(IrMapping& mapping) const {
  std::vector<Value*> operands;
  operands.reserve(num_operands_);
  for (uint32_t i = 0; i < num_operands_; ++i) {
    Value* v = operands_[i].get();
    operands.push_back(v == nullptr ? nullptr : mapping.Lookup(v));
  }
  std::vector<Type> result_types;
  for (const auto& r : results_) result_types.push_back(r->type());
  std::unique_ptr<Operation> copy =
      Create(*name_, operands, result_types, attributes_, regions_.size(), info_);
  for (size_t i = 0; i < results_.size(); ++i) {
    copy->results_[i]->attributes_ = results_[i]->attributes_;
    mapping.Map(results_[i].get(), copy->results_[i].get());
  }
  for (size_t r = 0; r < regions_.size(); ++r) {
    const Region& from = *regions_[r];
    Region& to = *copy->regions_[r];
    for (size_t b = 0; b < from.num_blocks(); ++b) {
      const Block& src = from.block(b);
      Block& dst = to.AddBlock();
      for (size_t a = 0; a < src.num_arguments(); ++a) {
        Value* arg = dst.AddArgument(src.argument(a)->type());
        arg->attributes_ = src.argument(a)->attributes();
        mapping.Map(src.argument(a), arg);
      }
      for (size_t k = 0; k < src.num_kwargs(); ++k) {
        const Value* kw = src.kwarg(k);
        // Names are unique in the source block, so this cannot fail.
        StatusOr<Value*> added = dst.AddKwarg(kw->kwarg_name(), kw->type());
        (*added)->attributes_ = kw->attributes();
        mapping.Map(kw, *added);
      }
      for (const Operation& op : src) dst.PushBack(op.Clone(mapping));
    }
  }
  return copy;
}

Location LocationOf(const Operation& op) {
  Location loc;
  int index = 0;
  for (const Operation* p = op.prev(); p != nullptr; p = p->prev()) ++index;
  loc.AtOp(op.parent_block() != nullptr ? index : 0, op.name());
  return loc;
}

}  // namespace irm::newir
