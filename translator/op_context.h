// What a handler sees while it translates one legacy op: the op, its table row, its inputs as
// new-IR values (resolved through the name bindings of the enclosing blocks; a var read before any
// write becomes a builtin.parameter or pd_op.data in the program's prologue), the types of its
// outputs, and the means to emit new ops and bind output names to their results. Binding is how
// the translator gets SSA: each write re-binds the name; it also records the legacy name on the
// value and whether the value still is a parameter's own storage (in-place updates keep it).
#pragma once

#include <cstdint>
#include <deque>
#include <memory_resource>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "newir/builder.h"
#include "newir/program.h"
#include "oldir/program.h"
#include "translator/coverage.h"
#include "translator/op_compat.h"
#include "translator/translate.h"

namespace irm::translator {

// The value a legacy name stands for in a block, the parameter whose storage it is (the
// builtin.parameter's value of that parameter, or null when the value is one of its own), and
// whether the name's var is persistable (known when bound, so that storing parameters after the
// translation need not look every name up again).
struct Binding {
  newir::Value* value = nullptr;
  newir::Value* storage = nullptr;
  bool persistable = false;
};

// Name bindings of one block being translated, over those of the enclosing blocks. A program of
// 50k ops binds ~100k names, looked up several times per op: an open-addressing table of
// (hash, entry) slots over stable entries keeps a lookup to about two cache misses, and the
// scope keeps its names in one growing buffer rather than a heap string each.
class Scope {
 public:
  explicit Scope(const Scope* parent = nullptr) : parent_(parent) {}
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
  const Binding* Find(std::string_view name) const;
  const Binding* FindLocal(std::string_view name) const;
  void Bind(std::string_view name, Binding binding);
  // Room for `names` bindings without growing (a block binds about as many names as it has vars).
  void Reserve(size_t names);
  // The names bound in this block with their bindings, in the order of their first binding here.
  std::vector<std::pair<std::string_view, const Binding*>> local_bindings() const;

 private:
  struct Entry {
    std::string_view name;  // in names_
    Binding binding;
  };
  struct Slot {
    size_t hash = 0;
    uint32_t entry = 0;  // 1 + index into entries_; 0 for an empty slot
  };
  // The slot holding `name`, or the empty slot where it would go.
  Slot& SlotOf(std::string_view name, size_t hash) const;
  // Rehashes into `slots` slots (a power of two).
  void Rehash(size_t slots);

  const Scope* parent_;
  std::pmr::monotonic_buffer_resource names_;
  std::deque<Entry> entries_;  // in order of first binding; never moves
  mutable std::vector<Slot> slots_;
};

// What the whole translation of one program shares.
struct ProgramState {
  const oldir::Program& legacy;
  const TranslateOptions& options;
  newir::Program& program;
  Coverage& coverage;
  Diagnostics& notes;
  // The last builtin.parameter / pd_op.data of the prologue; new ones go after it.
  newir::Operation* prologue_end = nullptr;
  // Values created for external inputs, by name (parameters and data live in the top block).
  Scope externals = Scope();
  // The legacy blocks whose every op was checked translatable on the way (see TranslateProgram).
  std::vector<bool> checked_blocks = std::vector<bool>(legacy.num_blocks(), false);
};

class OpContext {
 public:
  OpContext(ProgramState& state, const oldir::Block& block, int op_index, const OpCompat* row,
            newir::Block& target, Scope& scope);

  const oldir::Op& op() const { return op_; }
  const OpCompat& row() const { return *row_; }
  const TranslateOptions& options() const { return state_.options; }
  ProgramState& state() { return state_; }
  const oldir::Block& block() const { return block_; }
  Scope& scope() { return scope_; }
  newir::Block& target() { return target_; }
  Location location() const;
  // kInvalid at the op's location.
  Status Error(std::string message) const;

  // ---- inputs --------------------------------------------------------------------------------
  // The argument names of a slot, without empty and @EMPTY@ ones.
  std::vector<std::string> InputNames(std::string_view slot) const;
  std::vector<std::string> OutputNames(std::string_view slot) const;
  bool HasInput(std::string_view slot) const;
  // The value of a name as this op sees it.
  StatusOr<newir::Value*> ValueOf(std::string_view name);
  // The single argument of a slot (error when the slot holds none or several).
  StatusOr<newir::Value*> Input(std::string_view slot);
  // Null when the slot is absent or empty.
  StatusOr<newir::Value*> OptionalInput(std::string_view slot);
  StatusOr<std::vector<newir::Value*>> Inputs(std::string_view slot);
  // The declared type of a var visible from this block.
  StatusOr<newir::Type> TypeOfName(std::string_view name) const;
  StatusOr<const oldir::Var> VarOf(std::string_view name) const;

  // ---- attributes ----------------------------------------------------------------------------
  bool HasAttr(std::string_view name) const { return op_.HasAttr(name); }
  template <typename T>
  T AttrOr(std::string_view name, T fallback) const {
    return op_.AttrOr<T>(name, std::move(fallback));
  }
  // Every attribute of the new op `info`, from the legacy attributes (renamed by the row),
  // the row's defaults and the new op's defaults.
  StatusOr<newir::AttributeMap> AttributesFor(const newir::OpInfo& info);

  // ---- emitting ------------------------------------------------------------------------------
  // Creates an op at the end of the target block, carrying this op's op_role and chunk_id and an
  // empty legacy name per result (Bind fills them in).
  newir::Operation* Emit(std::string name, const std::vector<newir::Value*>& operands,
                         const std::vector<newir::Type>& result_types,
                         newir::AttributeMap attributes = {}, size_t num_regions = 0);
  // The same for a registered op whose table entry is at hand (no look-up by name).
  newir::Operation* Emit(const newir::OpInfo& info, const std::vector<newir::Value*>& operands,
                         const std::vector<newir::Type>& result_types,
                         newir::AttributeMap attributes = {});
  // The same at the end of another block (a region of an op this one emitted).
  newir::Operation* EmitInto(newir::Block& block, std::string name,
                             const std::vector<newir::Value*>& operands,
                             const std::vector<newir::Type>& result_types = {},
                             newir::AttributeMap attributes = {});
  // The registered op `pd_op.<name>`, or `pd_op.<name>_` when `inplace` and that exists.
  StatusOr<const newir::OpInfo*> LookUp(std::string_view name, bool inplace) const;
  // Constants for mutable operands: pd_op.full of shape [1] and pd_op.full_int_array.
  newir::Value* FullScalar(double value, newir::DataType dtype);
  newir::Value* FullIntArray(const std::vector<int64_t>& values);
  // builtin.combine of the values (a vector value).
  newir::Value* Combine(const std::vector<newir::Value*>& values);
  // builtin.split of a vector value into its elements.
  std::vector<newir::Value*> Split(newir::Value* vector);

  // ---- outputs -------------------------------------------------------------------------------
  // Binds `name` to `value` in this block, records the name on the value, and keeps the binding's
  // parameter storage when the value comes from an in-place op that read the name's old value.
  void Bind(std::string_view name, newir::Value* value);
  // Bind's name binding alone, for a value whose op already records the name; `persistable`:
  // whether the name's var is.
  void BindName(std::string_view name, newir::Value* value, bool persistable);
  // Whether the op writes one of the vars it reads (Paddle's in-place rule).
  bool WritesAnInput() const;

  // ---- control flow --------------------------------------------------------------------------
  // Translates the ops of legacy block `block_index` into `target` under `scope`.
  Status TranslateBlock(int block_index, newir::Block& target, Scope& scope);

 private:
  ProgramState& state_;
  const oldir::Block& block_;
  int op_index_;
  oldir::Op op_;
  const OpCompat* row_;
  newir::Block& target_;
  Scope& scope_;
  newir::Builder builder_;
  // The op's op_role and chunk_id as new-IR attributes (null when absent), read once: every op
  // emitted for it carries them.
  newir::Attribute op_role_;
  newir::Attribute chunk_id_;
  // Adds op_role, chunk_id and an empty legacy name per result to `attributes`.
  void AddCommonAttributes(newir::AttributeMap& attributes, size_t num_results) const;
};

// The attributes of the pd_op.data that stands for program input `var` (a tensor-like var).
newir::AttributeMap DataAttributes(const oldir::Var& var);
// The attributes of a pd_op.full.
newir::AttributeMap FullAttributes(std::span<const int64_t> shape, double value,
                                   newir::DataType dtype, newir::Place place = {});

// Translates every op of `block` into `target` under `scope` (op by op, in order).
Status TranslateOps(ProgramState& state, const oldir::Block& block, newir::Block& target,
                    Scope& scope);

// The general handler: the table row alone says how to translate the op.
Status TranslateByTable(OpContext& ctx);

// What a special handler decides instead of the row, by new operand / result / attribute name.
struct TableOverrides {
  std::vector<std::pair<std::string_view, newir::Value*>> operands = {};
  std::vector<std::pair<std::string_view, newir::Type>> result_types = {};
  std::vector<std::pair<std::string_view, newir::Attribute>> attrs = {};
};
// Emits the new op `info` with operands, results and attributes from the row (or `overrides`),
// binding the outputs. Handlers that only adjust a few things call it after their preparation.
StatusOr<newir::Operation*> EmitByTable(OpContext& ctx, const newir::OpInfo& info,
                                        const TableOverrides& overrides = {});

}  // namespace irm::translator
