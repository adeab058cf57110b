// Implementation of the program builder.
#include "oldir/builder.h"

#include <algorithm>

#include <fmt/format.h>

#include "oldir/editor.h"

namespace irm::oldir {

std::string UniqueNameGenerator::Generate(std::string_view key) {
  int& counter = counters_[std::string(key)];
  return fmt::format("{}_{}", key, counter++);
}

proto::VarDesc* BlockBuilder::CreateVar(const std::string& name, proto::VarType::Type dtype,
                                        const std::vector<int64_t>& dims,
                                        const VarOptions& options) {
  if (proto::VarDesc* existing = FindLocalVar(name)) return existing;
  proto::VarDesc* var = desc_->add_vars();
  var->set_name(name);
  VarEditor(var)
      .SetDenseTensor(dtype, dims, options.lod_level)
      .SetPersistable(options.persistable)
      .SetStopGradient(options.stop_gradient)
      .SetIsParameter(options.is_parameter)
      .SetNeedCheckFeed(options.need_check_feed);
  vars_.emplace(name, var);
  return var;
}

proto::VarDesc* BlockBuilder::CreateTypedVar(const std::string& name, proto::VarType::Type type,
                                             bool persistable) {
  if (proto::VarDesc* existing = FindLocalVar(name)) return existing;
  proto::VarDesc* var = desc_->add_vars();
  var->set_name(name);
  VarEditor(var).SetType(type).SetPersistable(persistable);
  vars_.emplace(name, var);
  return var;
}

proto::VarDesc* BlockBuilder::FindLocalVar(std::string_view name) {
  auto it = vars_.find(std::string(name));
  return it == vars_.end() ? nullptr : it->second;
}

proto::VarDesc* BlockBuilder::FindVar(std::string_view name) {
  BlockBuilder* block = this;
  while (true) {
    if (proto::VarDesc* var = block->FindLocalVar(name)) return var;
    if (block->parent_index() < 0) return nullptr;
    block = &program_->block(block->parent_index());
  }
}

proto::OpDesc* BlockBuilder::AppendOp(const std::string& type, SlotArgs inputs, SlotArgs outputs,
                                      AttrList attrs) {
  auto by_name = [](const auto& a, const auto& b) { return a.first < b.first; };
  auto has = [&attrs](std::string_view name) {
    return std::any_of(attrs.begin(), attrs.end(), [&](const auto& a) { return a.first == name; });
  };
  // The attributes Paddle's OpProtoAndCheckerMaker gives every op, unless the caller set them.
  if (!has(kOpRoleAttr)) attrs.emplace_back(kOpRoleAttr, program_->role());
  if (!has(kOpRoleVarAttr)) attrs.emplace_back(kOpRoleVarAttr, std::vector<std::string>{});
  if (!has(kOpNamescopeAttr)) attrs.emplace_back(kOpNamescopeAttr, program_->namescope());
  if (!has(kOpCallstackAttr)) attrs.emplace_back(kOpCallstackAttr, std::vector<std::string>{});
  if (!has(kOpDeviceAttr)) attrs.emplace_back(kOpDeviceAttr, program_->device());
  if (!has("with_quant_attr")) attrs.emplace_back("with_quant_attr", false);
  std::stable_sort(inputs.begin(), inputs.end(), by_name);
  std::stable_sort(outputs.begin(), outputs.end(), by_name);
  std::stable_sort(attrs.begin(), attrs.end(), by_name);

  proto::OpDesc* op = desc_->add_ops();
  OpEditor editor(op);
  editor.SetType(type);
  for (auto& [slot, names] : inputs) editor.SetInput(slot, std::move(names));
  for (auto& [slot, names] : outputs) editor.SetOutput(slot, std::move(names));
  for (const auto& [name, value] : attrs) {
    proto::OpDesc::Attr* attr = op->add_attrs();
    attr->set_name(name);
    WriteAttrValue(value, attr);
  }
  return op;
}

ProgramBuilder::ProgramBuilder() { CreateBlock(-1); }

BlockBuilder& ProgramBuilder::CreateBlock(int parent, int forward_block) {
  proto::BlockDesc* desc = desc_.add_blocks();
  const int index = desc_.blocks_size() - 1;
  desc->set_idx(index);
  desc->set_parent_idx(parent);
  if (forward_block >= 0) desc->set_forward_block_idx(forward_block);
  blocks_.push_back(BlockBuilder(this, desc, index));
  return blocks_.back();
}

}  // namespace irm::oldir
