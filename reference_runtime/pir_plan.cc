// PirInterpreter::PreparePlan (pir_interpreter.h): a new-IR program prepared once per executor, so
// that a step looks no op up by name and converts no attribute. Every op gets its handler (the
// interpreted-op table) or its binding; a kernel op whose operands and results match its binding
// also gets its kernel bound for every dtype, its table attributes converted and its outputs laid
// out. Every value gets a slot. Nothing here fails: whatever cannot be prepared (an op without a
// binding, a signature that disagrees, an attribute that does not convert) is left for the op's
// run to report, located as it always was, when and if the op runs.
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "newir/block.h"
#include "reference_runtime/philox.h"
#include "reference_runtime/pir_interpreter.h"

namespace irm::rt {
namespace {

// A block argument's logical name: its legacy_var_name when it has a non-empty one, else
// "%arg<index>".
std::string ArgumentName(const newir::Value& value) {
  auto attr = value.attributes().find("legacy_var_name");
  if (attr != value.attributes().end()) {
    const std::string_view* name = attr->second.AsString();
    if (name != nullptr && !name->empty()) return std::string(*name);
  }
  return fmt::format("%arg{}", value.index());
}

class Preparer {
 public:
  Preparer(const KernelRegistry& kernels, const PirBindings& bindings, PirProgramPlan& plan)
      : kernels_(kernels), bindings_(bindings), plan_(plan) {}

  void PrepareBlock(const newir::Block& block) {
    open_.push_back({&block, 0});
    for (size_t k = 0; k < block.num_arguments(); ++k) Define(block.argument(k), block, -1);
    std::vector<PirOpPlan> ops;
    int index = 0;
    for (const newir::Operation& op : block) {
      open_.back().position = static_cast<int>(ops.size());
      ops.push_back(PrepareOp(op, index));
      for (size_t r = 0; r < op.num_results(); ++r) {
        Define(op.result(r), block, open_.back().position);
      }
      // RunBlock's numbering: a block's cf.yield ends it and takes no index.
      if (!ops.back().ends_block) ++index;
      for (size_t r = 0; r < op.num_regions(); ++r) {
        const newir::Region& region = op.region(r);
        for (size_t b = 0; b < region.num_blocks(); ++b) PrepareBlock(region.block(b));
      }
    }
    plan_.blocks[&block] = std::move(ops);
    open_.pop_back();
  }

  // PirProgramPlan::names: what the observer used to be told as each value was computed.
  void NameValues() {
    plan_.names.assign(plan_.num_slots, std::string());
    for (const auto& [value, slot] : plan_.slots) {
      plan_.names[slot] =
          value->IsBlockArgument()
              ? ArgumentName(*value)
              : PirLogicalName(*value->defining_op(), value->index(), def_index_[slot]);
    }
  }

  // Hands each value's slot to the op of its block that uses it last (PirOpPlan::last_use_of).
  void MarkLastUses() {
    for (uint32_t slot = 0; slot < last_use_.size(); ++slot) {
      const LastUse& use = last_use_[slot];
      if (use.block == nullptr || use.position < 0) continue;  // an unused block argument
      auto ops = plan_.blocks.find(use.block);
      if (ops == plan_.blocks.end()) continue;
      PirOpPlan& op = ops->second[static_cast<size_t>(use.position)];
      // RunBlock returns at cf.yield: what it passes on is not dropped there.
      if (!op.ends_block) op.last_use_of.push_back(slot);
    }
  }

 private:
  // Where a value's last use is: its block and the position there of the op that (itself or by
  // an op nested in its regions) reads it last; at first, where it is defined.
  struct LastUse {
    const newir::Block* block = nullptr;
    int position = -1;
  };
  // A block being prepared, and the position of its op being prepared.
  struct OpenBlock {
    const newir::Block* block;
    int position;
  };

  uint32_t SlotFor(const newir::Value* value) {
    auto [it, inserted] = plan_.slots.try_emplace(value, plan_.num_slots);
    if (inserted) {
      ++plan_.num_slots;
      last_use_.emplace_back();
      def_index_.push_back(-1);
    }
    return it->second;
  }

  void Define(const newir::Value* value, const newir::Block& block, int position) {
    LastUse& use = last_use_[SlotFor(value)];
    use.block = &block;
    use.position = position;
  }

  // A read of `slot` by the op being prepared: the op of the value's block that contains it.
  void Use(uint32_t slot) {
    LastUse& use = last_use_[slot];
    for (auto open = open_.rbegin(); open != open_.rend(); ++open) {
      if (open->block == use.block) {
        use.position = std::max(use.position, open->position);
        return;
      }
    }
    // Defined in no enclosing block (a program the verifier would reject): never dropped.
    use.block = nullptr;
  }

  PirOpPlan PrepareOp(const newir::Operation& op, int index) {
    PirOpPlan p;
    p.op = &op;
    p.index = index;
    p.handler = PirInterpreter::InterpretedHandler(op.name());
    p.ends_block = p.handler != nullptr && PirInterpreter::EndsBlock(p.handler);
    if (p.handler == nullptr) p.binding = bindings_.Find(op.name());
    p.operands.reserve(op.num_operands());
    for (size_t i = 0; i < op.num_operands(); ++i) {
      const newir::Value* value = op.operand(i);
      p.operands.push_back(value == nullptr ? PirOpPlan::kAbsent : SlotFor(value));
      if (value != nullptr) Use(p.operands.back());
    }
    p.results.reserve(op.num_results());
    for (size_t r = 0; r < op.num_results(); ++r) {
      p.results.push_back(SlotFor(op.result(r)));
      def_index_[p.results.back()] = index;
    }
    if (p.binding != nullptr && p.binding->kind == BindingKind::kKernel &&
        op.num_operands() == p.binding->roles.size() &&
        op.num_results() == p.binding->inplace_operand.size()) {
      p.kernel = PrepareKernel(op, *p.binding, index);
    }
    return p;
  }

  std::unique_ptr<PirKernelPlan> PrepareKernel(const newir::Operation& op, const OpBinding& binding,
                                               int index) {
    auto k = std::make_unique<PirKernelPlan>();
    k->kernel = BoundKernel(kernels_, binding.kernel);
    k->attrs_status = ConvertAttributes(op, binding, k->attrs);
    for (size_t r = 0; r < op.num_results(); ++r) {
      const newir::Type& type = op.result(r)->type();
      const bool is_vector = type.kind() == newir::TypeKind::kVector;
      k->first_output.push_back(k->num_outputs);
      k->output_count.push_back(is_vector ? type.elements().size() : 1);
      k->absent.push_back(type.IsNull());
      k->is_vector.push_back(is_vector);
      k->num_outputs += k->output_count.back();
    }
    if (binding.random) {
      // A random op's stream and shard follow its first result's logical name: the legacy var
      // name the translator recorded, so both executors draw the same numbers for the same var.
      k->random_name = PirLogicalName(op, 0, index);
      k->op_identity = OpIdentity(k->random_name);
    }
    return k;
  }

  const KernelRegistry& kernels_;
  const PirBindings& bindings_;
  PirProgramPlan& plan_;
  std::vector<LastUse> last_use_;  // by slot
  std::vector<int> def_index_;     // by slot: the index of a result's op in its block, or -1
  std::vector<OpenBlock> open_;
};

}  // namespace

PirProgramPlan PirInterpreter::PreparePlan(const newir::Program& program,
                                           const KernelRegistry& kernels,
                                           const PirBindings& bindings, bool with_names) {
  PirProgramPlan plan;
  Preparer preparer(kernels, bindings, plan);
  preparer.PrepareBlock(program.block());
  preparer.MarkLastUses();
  if (with_names) preparer.NameValues();
  return plan;
}

}  // namespace irm::rt
