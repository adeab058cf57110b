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

static_assert(sizeof(Operation) % alignof(Value) == 0 && sizeof(Value) % alignof(OpOperand) == 0,
              "an op's results and operand slots follow it in its block, each aligned");

// Interned rather than the table entry's: a registry may die before the ops it described.
Operation::Operation(std::string_view name, const OpInfo* info, uint32_t num_results,
                     uint32_t inline_operands)
    : name_(&InternName(name)),
      info_(info),
      id_(next_op_id.fetch_add(1)),
      inline_capacity_(inline_operands),
      num_results_(num_results) {}

size_t Operation::BlockBytes(uint32_t num_results, uint32_t inline_operands) {
  return sizeof(Operation) + num_results * sizeof(Value) + inline_operands * sizeof(OpOperand);
}

std::unique_ptr<Operation> Operation::Create(std::string_view name,
                                             const std::vector<Value*>& operands,
                                             const std::vector<Type>& result_types,
                                             AttributeMap attributes, size_t num_regions,
                                             const OpInfo* info) {
  const auto num_results = static_cast<uint32_t>(result_types.size());
  const auto num_operands = static_cast<uint32_t>(operands.size());
  void* block = detail::PoolAllocate(BlockBytes(num_results, num_operands));
  std::unique_ptr<Operation> op(::new (block) Operation(name, info, num_results, num_operands));
  Value* results = op->result_storage();
  for (uint32_t i = 0; i < num_results; ++i) {
    ::new (static_cast<void*>(results + i)) Value(Value::Kind::kOpResult, result_types[i], i);
    results[i].op_ = op.get();
  }
  op->SetOperands(operands);
  op->attributes_ = std::move(attributes);
  for (size_t i = 0; i < num_regions; ++i) {
    op->regions_.push_back(std::make_unique<Region>(op.get()));
  }
  return op;
}

// No DropAllReferences here: a dying value empties the slots that still read it and a dying slot
// unlinks itself from its (then necessarily live) value, so ops and values may die in any order.
// Dropping first would walk every op of a program twice more while it is freed.
Operation::~Operation() {
  regions_.clear();
  DestroyOperands();
  Value* results = result_storage();
  for (uint32_t i = 0; i < num_results_; ++i) results[i].~Value();
}

void Operation::operator delete(Operation* op, std::destroying_delete_t) {
  const size_t bytes = BlockBytes(op->num_results_, op->inline_capacity_);
  op->~Operation();
  detail::PoolFree(op, bytes);
}

void Operation::DestroyOperands() {
  if (operands_ == inline_operands()) {
    for (uint32_t i = 0; i < num_operands_; ++i) operands_[i].~OpOperand();
  } else {
    delete[] operands_;
  }
  operands_ = nullptr;
  num_operands_ = 0;
}

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
  // A slot never moves while linked. The old slots unlink before the new ones link, which leaves
  // every use list in the order a fresh array built before the old one died would.
  const auto n = static_cast<uint32_t>(operands.size());
  DestroyOperands();
  if (n <= inline_capacity_) {
    operands_ = inline_operands();
    for (uint32_t i = 0; i < n; ++i) ::new (static_cast<void*>(operands_ + i)) OpOperand();
  } else {
    operands_ = new OpOperand[n];
  }
  num_operands_ = n;
  for (uint32_t i = 0; i < n; ++i) {
    operands_[i].owner_ = this;
    operands_[i].index_ = i;
    operands_[i].Set(operands[i]);
  }
}

std::vector<Value*> Operation::results() const {
  std::vector<Value*> out;
  out.reserve(num_results_);
  for (uint32_t i = 0; i < num_results_; ++i) out.push_back(result(i));
  return out;
}

bool Operation::HasUsedResults() const {
  for (uint32_t i = 0; i < num_results_; ++i) {
    if (!result(i)->use_empty()) return true;
  }
  // Values defined inside the regions that something outside reads (invalid IR, but erasing the op
  // would still leave those readers with empty slots).
  bool used_outside = false;
  const_cast<Operation*>(this)->Walk([&](Operation* inner) {
    if (inner == this || used_outside) return;
    for (uint32_t i = 0; i < inner->num_results_; ++i) {
      for (OpOperand* u = inner->result(i)->first_use(); u != nullptr; u = u->next_use()) {
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
  result_types.reserve(num_results_);
  for (uint32_t i = 0; i < num_results_; ++i) result_types.push_back(result(i)->type());
  std::unique_ptr<Operation> copy =
      Create(*name_, operands, result_types, attributes_, regions_.size(), info_);
  for (uint32_t i = 0; i < num_results_; ++i) {
    copy->result(i)->CopyAttributesFrom(*result(i));
    mapping.Map(result(i), copy->result(i));
  }
  for (size_t r = 0; r < regions_.size(); ++r) {
    const Region& from = *regions_[r];
    Region& to = *copy->regions_[r];
    for (size_t b = 0; b < from.num_blocks(); ++b) {
      const Block& src = from.block(b);
      Block& dst = to.AddBlock();
      for (size_t a = 0; a < src.num_arguments(); ++a) {
        Value* arg = dst.AddArgument(src.argument(a)->type());
        arg->CopyAttributesFrom(*src.argument(a));
        mapping.Map(src.argument(a), arg);
      }
      for (size_t k = 0; k < src.num_kwargs(); ++k) {
        const Value* kw = src.kwarg(k);
        // Names are unique in the source block, so this cannot fail.
        StatusOr<Value*> added = dst.AddKwarg(kw->kwarg_name(), kw->type());
        (*added)->CopyAttributesFrom(*kw);
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
