// Building legacy programs the way Paddle's static graph does: vars with dtype/shape/flags, ops
// whose slots and attributes are stored sorted by name (Paddle's OpDesc::Flush writes its std::map
// order), every op stamped with the attributes Paddle's OpProtoAndCheckerMaker adds to all ops
// (op_role, op_role_var, op_namescope, op_callstack, op_device, with_quant_attr), sub-blocks, and
// unique names in Paddle's style (linear_0, tmp_3, fc_0.tmp_1).
//
// The builder owns a plain ProgramDesc; Build() hands out a Program (oldir/program.h). Pointers to
// vars and ops it returns stay valid while the builder lives.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "oldir/attribute.h"
#include "oldir/op_role.h"
#include "oldir/program.h"
#include "oldir/proto/framework.pb.h"

namespace irm::oldir {

// Paddle's unique_name.generate: "linear" -> "linear_0", then "linear_1", ... per key.
class UniqueNameGenerator {
 public:
  std::string Generate(std::string_view key);
  // "tmp_N": the name of an op output no layer names (Paddle's
  // unique_name.generate_with_ignorable_key("tmp")).
  std::string Temp() { return Generate("tmp"); }

 private:
  std::unordered_map<std::string, int> counters_;
};

struct VarOptions {
  bool persistable = false;
  bool stop_gradient = false;
  bool is_parameter = false;
  bool need_check_feed = false;
  int32_t lod_level = 0;
};

// Slot name -> argument names, and attribute name -> value, in any order (stored sorted).
using SlotArgs = std::vector<std::pair<std::string, std::vector<std::string>>>;
using AttrList = std::vector<std::pair<std::string, AttrValue>>;

class ProgramBuilder;

class BlockBuilder {
 public:
  int index() const { return index_; }
  int parent_index() const { return desc_->parent_idx(); }
  proto::BlockDesc* desc() { return desc_; }
  const proto::BlockDesc& desc() const { return *desc_; }
  ProgramBuilder& program() { return *program_; }

  // A DENSE_TENSOR var. Redeclaring an existing name in this block returns the existing var.
  proto::VarDesc* CreateVar(const std::string& name, proto::VarType::Type dtype,
                            const std::vector<int64_t>& dims, const VarOptions& options = {});
  // A var of a non-tensor type (FEED_MINIBATCH, FETCH_LIST, STEP_SCOPES, ...).
  proto::VarDesc* CreateTypedVar(const std::string& name, proto::VarType::Type type,
                                 bool persistable = false);
  // The var named `name` in this block or an ancestor, the nearest first; null when none.
  proto::VarDesc* FindVar(std::string_view name);
  proto::VarDesc* FindLocalVar(std::string_view name);

  // Appends an op. Slots and attributes are sorted by name; the common attributes come from the
  // program's current role, namescope and device unless `attrs` sets them.
  proto::OpDesc* AppendOp(const std::string& type, SlotArgs inputs, SlotArgs outputs,
                          AttrList attrs = {});
  int num_ops() const { return desc_->ops_size(); }

 private:
  friend class ProgramBuilder;
  BlockBuilder(ProgramBuilder* program, proto::BlockDesc* desc, int index)
      : program_(program), desc_(desc), index_(index) {}

  ProgramBuilder* program_;
  proto::BlockDesc* desc_;
  int index_;
  std::unordered_map<std::string, proto::VarDesc*> vars_;
};

class ProgramBuilder {
 public:
  ProgramBuilder();  // with the root block
  ProgramBuilder(const ProgramBuilder&) = delete;
  ProgramBuilder& operator=(const ProgramBuilder&) = delete;

  BlockBuilder& root() { return blocks_.front(); }
  BlockBuilder& block(int index) { return blocks_.at(static_cast<size_t>(index)); }
  int num_blocks() const { return static_cast<int>(blocks_.size()); }
  // A new block whose parent is `parent` (for conditional_block / while sub-blocks and grad
  // blocks).
  BlockBuilder& CreateBlock(int parent, int forward_block = -1);

  UniqueNameGenerator& names() { return names_; }

  // What AppendOp stamps on new ops.
  int role() const { return role_; }
  void set_role(int role) { role_ = role; }
  const std::string& namescope() const { return namescope_; }
  void set_namescope(std::string namescope) { namescope_ = std::move(namescope); }
  const std::string& device() const { return device_; }
  void set_device(std::string device) { device_ = std::move(device); }

  // Paddle's version number (2006000 = 2.6.0); ProgramDesc.version is written only when set.
  void set_version(int64_t version) { desc_.mutable_version()->set_version(version); }

  const proto::ProgramDesc& desc() const { return desc_; }
  Program Build() const { return Program(desc_); }

 private:
  proto::ProgramDesc desc_;
  std::deque<BlockBuilder> blocks_;  // deque: references stay valid as blocks are added
  UniqueNameGenerator names_;
  int role_ = kForward;
  std::string namescope_ = "/";
  std::string device_;
};

// Sets the builder's op role for a scope (Paddle's `with program._optimized_guard(...)` and
// `_backward_role_guard`), restoring the previous one on exit.
class ScopedOpRole {
 public:
  ScopedOpRole(ProgramBuilder& builder, int role) : builder_(builder), saved_(builder.role()) {
    builder_.set_role(role);
  }
  ~ScopedOpRole() { builder_.set_role(saved_); }
  ScopedOpRole(const ScopedOpRole&) = delete;
  ScopedOpRole& operator=(const ScopedOpRole&) = delete;

 private:
  ProgramBuilder& builder_;
  int saved_;
};

// Sets the namescope for a scope (paddle.static.name_scope): "/" then "/name/" nested.
class ScopedNamescope {
 public:
  ScopedNamescope(ProgramBuilder& builder, std::string_view name)
      : builder_(builder), saved_(builder.namescope()) {
    builder_.set_namescope(saved_ + std::string(name) + "/");
  }
  ~ScopedNamescope() { builder_.set_namescope(saved_); }
  ScopedNamescope(const ScopedNamescope&) = delete;
  ScopedNamescope& operator=(const ScopedNamescope&) = delete;

 private:
  ProgramBuilder& builder_;
  std::string saved_;
};

}  // namespace irm::oldir
