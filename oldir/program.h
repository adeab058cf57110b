// The legacy program model: read-only typed views (Program, Block, Var, Op) over the ProgramDesc
// protobuf messages, plus an index of variable names per block so that lookups — including through
// the parent-block chain — are O(1). The messages stay the single store of truth: a view adds no
// state, and what is not modelled (unknown fields, future attrs) is never lost.
//
// Editing goes through the protobuf messages (Program::mutable_desc, or OpEditor / VarEditor in
// oldir/editor.h); call Program::Reindex() after adding or renaming vars or blocks.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "oldir/attribute.h"
#include "oldir/op_role.h"
#include "oldir/proto/framework.pb.h"

namespace irm::oldir {

class Program;

// A variable declaration (VarDesc).
class Var {
 public:
  explicit Var(const proto::VarDesc* desc) : desc_(desc) {}

  const std::string& name() const { return desc_->name(); }
  proto::VarType::Type type() const { return desc_->type().type(); }
  bool persistable() const { return desc_->persistable(); }
  bool stop_gradient() const { return desc_->stop_gradient(); }
  bool is_parameter() const { return desc_->is_parameter(); }
  bool need_check_feed() const { return desc_->need_check_feed(); }

  // The TensorDesc of a DENSE_TENSOR, SELECTED_ROWS or DENSE_TENSOR_ARRAY var, else null.
  const proto::VarType::TensorDesc* tensor_desc() const;
  // Element type and dims of a tensor-like var; nullopt / empty for other var types.
  std::optional<proto::VarType::Type> dtype() const;
  std::vector<int64_t> dims() const;
  int32_t lod_level() const;

  const proto::VarDesc& desc() const { return *desc_; }

 private:
  const proto::VarDesc* desc_;
};

// An operator instance (OpDesc).
class Op {
 public:
  using Names = google::protobuf::RepeatedPtrField<std::string>;

  explicit Op(const proto::OpDesc* desc) : desc_(desc) {}

  const std::string& type() const { return desc_->type(); }
  const proto::OpDesc& desc() const { return *desc_; }

  // Argument names bound to an input/output slot; null when the op has no such slot.
  const Names* Input(std::string_view slot) const;
  const Names* Output(std::string_view slot) const;
  // The single argument of a slot, or nullopt when the slot is missing or holds != 1 names.
  std::optional<std::string> SingleInput(std::string_view slot) const;
  std::optional<std::string> SingleOutput(std::string_view slot) const;

  const proto::OpDesc::Attr* FindAttr(std::string_view name) const;
  bool HasAttr(std::string_view name) const { return FindAttr(name) != nullptr; }
  StatusOr<AttrValue> GetAttr(std::string_view name) const;

  // The attribute as T (one of AttrValue's alternatives): kNotFound when absent, kInvalid when it
  // has another AttrType or no value.
  template <typename T>
  StatusOr<T> Attr(std::string_view name) const {
    IRM_ASSIGN_OR_RETURN(AttrValue value, GetAttr(name));
    if (T* typed = std::get_if<T>(&value)) return std::move(*typed);
    return WrongAttrType(name, value);
  }
  // The attribute as T, or `fallback` when it is absent or of another type.
  template <typename T>
  T AttrOr(std::string_view name, T fallback) const {
    StatusOr<T> value = Attr<T>(name);
    return value.ok() ? std::move(value).value() : std::move(fallback);
  }

  // op_role (kNotSpecified when absent, as Paddle's default).
  int role() const;
  // Indices of the sub-blocks the op refers to through BLOCK and BLOCKS attributes.
  std::vector<int32_t> SubBlocks() const;

 private:
  Status WrongAttrType(std::string_view name, const AttrValue& value) const;

  const proto::OpDesc* desc_;
};

// A block (BlockDesc) with its variable index.
class Block {
 public:
  // Position in ProgramDesc.blocks; idx() is what the block claims (equal in a valid program).
  int position() const { return position_; }
  int index() const { return desc_->idx(); }
  int parent_index() const { return desc_->parent_idx(); }
  int forward_block_index() const { return desc_->forward_block_idx(); }
  // The parent block; nullopt for the root block or a parent index out of range.
  std::optional<Block> parent() const;

  int num_vars() const { return desc_->vars_size(); }
  Var var(int i) const { return Var(&desc_->vars(i)); }
  int num_ops() const { return desc_->ops_size(); }
  Op op(int i) const { return Op(&desc_->ops(i)); }

  // The var declared in this block under `name`.
  std::optional<Var> FindVar(std::string_view name) const;
  // The var visible from this block: declared here or in an ancestor, the nearest first.
  std::optional<Var> FindVarRecursive(std::string_view name) const;

  const proto::BlockDesc& desc() const { return *desc_; }

 private:
  friend class Program;
  Block(const Program* program, const proto::BlockDesc* desc, int position)
      : program_(program), desc_(desc), position_(position) {}

  const Program* program_;
  const proto::BlockDesc* desc_;
  int position_;  // position in ProgramDesc.blocks (equals idx in a valid program)
};

// A whole program. Owns its ProgramDesc, which lives on a protobuf arena of the program's own:
// parsing into an arena is ~3x faster than into the heap, and the messages end up contiguous, which
// makes every later walk (index, validator, dump) faster too. A moved-from Program may only be
// destroyed or assigned to.
class Program {
 public:
  Program();                                         // an empty ProgramDesc
  explicit Program(const proto::ProgramDesc& desc);  // copies desc onto the arena
  Program(const Program& other);
  Program& operator=(const Program& other);
  Program(Program&&) noexcept = default;
  Program& operator=(Program&&) noexcept = default;

  int num_blocks() const { return desc_->blocks_size(); }
  // The block at position i of ProgramDesc.blocks.
  Block block(int i) const { return Block(this, &desc_->blocks(i), i); }
  Block root() const { return block(0); }  // requires num_blocks() > 0
  int64_t num_ops() const;

  // Paddle's version number (2002002 = 2.2.2; 0 for dev builds); nullopt when unset.
  std::optional<int64_t> version() const;

  const proto::ProgramDesc& desc() const { return *desc_; }
  // For edits and for parsing in place; call Reindex() afterwards when vars or blocks were added,
  // removed or renamed. Memory of replaced sub-messages is kept until the Program is destroyed.
  proto::ProgramDesc* mutable_desc() { return desc_; }
  void Reindex();

 private:
  friend class Block;
  // Var name -> position in vars, by open addressing over a power-of-two table at most half
  // full (program.cc): a look-up is one short probe run, with no nodes to chase.
  struct VarSlot {
    size_t hash = 0;
    int position = -1;  // -1: empty
  };
  using VarIndex = std::vector<VarSlot>;

  std::unique_ptr<google::protobuf::Arena> arena_;
  proto::ProgramDesc* desc_ = nullptr;  // owned by arena_
  std::vector<VarIndex> var_index_;     // per block position
};

// Location of an op or var for diagnostics.
Location OpLocation(const std::string& file, const Block& block, int op_index);
Location VarLocation(const std::string& file, const Block& block, std::string_view var_name);

// The names of the sub-block an op runs: the "sub_block" attr of conditional_block and while.
inline constexpr const char* kSubBlockAttr = "sub_block";
inline constexpr const char* kEmptyVarName = "@EMPTY@";
inline constexpr const char* kGradSuffix = "@GRAD";

}  // namespace irm::oldir
