// Views over ProgramDesc messages and the per-block variable index.
#include "oldir/program.h"

#include <bit>
#include <functional>

#include <fmt/format.h>

namespace irm::oldir {

// ---- Var ------------------------------------------------------------------------------------

const proto::VarType::TensorDesc* Var::tensor_desc() const {
  const proto::VarType& t = desc_->type();
  switch (t.type()) {
    case proto::VarType::DENSE_TENSOR:
      return t.has_dense_tensor() ? &t.dense_tensor().tensor() : nullptr;
    case proto::VarType::SELECTED_ROWS:
      return t.has_selected_rows() ? &t.selected_rows() : nullptr;
    case proto::VarType::DENSE_TENSOR_ARRAY:
      return t.has_tensor_array() ? &t.tensor_array().tensor() : nullptr;
    default:
      return nullptr;
  }
}

std::optional<proto::VarType::Type> Var::dtype() const {
  const proto::VarType::TensorDesc* tensor = tensor_desc();
  if (tensor == nullptr) return std::nullopt;
  return tensor->data_type();
}

std::vector<int64_t> Var::dims() const {
  const proto::VarType::TensorDesc* tensor = tensor_desc();
  if (tensor == nullptr) return {};
  return std::vector<int64_t>(tensor->dims().begin(), tensor->dims().end());
}

int32_t Var::lod_level() const {
  const proto::VarType& t = desc_->type();
  if (t.type() == proto::VarType::DENSE_TENSOR) return t.dense_tensor().legacy_lod_level();
  if (t.type() == proto::VarType::DENSE_TENSOR_ARRAY) return t.tensor_array().legacy_lod_level();
  return 0;
}

// ---- Op -------------------------------------------------------------------------------------

namespace {

const Op::Names* FindSlot(const google::protobuf::RepeatedPtrField<proto::OpDesc::Var>& slots,
                          std::string_view slot) {
  for (const proto::OpDesc::Var& v : slots) {
    if (v.parameter() == slot) return &v.arguments();
  }
  return nullptr;
}

std::optional<std::string> Single(const Op::Names* names) {
  if (names == nullptr || names->size() != 1) return std::nullopt;
  return names->Get(0);
}

}  // namespace

const Op::Names* Op::Input(std::string_view slot) const { return FindSlot(desc_->inputs(), slot); }

const Op::Names* Op::Output(std::string_view slot) const {
  return FindSlot(desc_->outputs(), slot);
}

std::optional<std::string> Op::SingleInput(std::string_view slot) const {
  return Single(Input(slot));
}

std::optional<std::string> Op::SingleOutput(std::string_view slot) const {
  return Single(Output(slot));
}

const proto::OpDesc::Attr* Op::FindAttr(std::string_view name) const {
  for (const proto::OpDesc::Attr& attr : desc_->attrs()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

StatusOr<AttrValue> Op::GetAttr(std::string_view name) const {
  const proto::OpDesc::Attr* attr = FindAttr(name);
  if (attr == nullptr) {
    return Status(StatusCode::kNotFound, Location{}.AtAttr(std::string(name)),
                  fmt::format("op '{}' has no attribute '{}'", type(), name));
  }
  return ReadAttrValue(*attr);
}

Status Op::WrongAttrType(std::string_view name, const AttrValue& value) const {
  return Status(StatusCode::kInvalid, Location{}.AtAttr(std::string(name)),
                fmt::format("attribute '{}' of op '{}' has type {}, not the one asked for", name,
                            type(), AttrTypeName(AttrTypeOf(value))));
}

int Op::role() const {
  const proto::OpDesc::Attr* attr = FindAttr(kOpRoleAttr);
  // An INT attr without its value is as good as absent (ReadAttrValue calls it invalid).
  if (attr == nullptr || attr->type() != proto::INT || !attr->has_i()) return kNotSpecified;
  return attr->i();
}

std::vector<int32_t> Op::SubBlocks() const {
  std::vector<int32_t> blocks;
  for (const proto::OpDesc::Attr& attr : desc_->attrs()) {
    if (attr.type() == proto::BLOCK && attr.has_block_idx()) blocks.push_back(attr.block_idx());
    if (attr.type() == proto::BLOCKS) {
      blocks.insert(blocks.end(), attr.blocks_idx().begin(), attr.blocks_idx().end());
    }
  }
  return blocks;
}

// ---- Block ----------------------------------------------------------------------------------

std::optional<Block> Block::parent() const {
  int p = desc_->parent_idx();
  if (p < 0 || p >= program_->num_blocks() || p == position_) return std::nullopt;
  return program_->block(p);
}

std::optional<Var> Block::FindVar(std::string_view name) const {
  // A block added through mutable_desc() without a Reindex() has no index yet: scan it rather
  // than read past the index.
  if (static_cast<size_t>(position_) >= program_->var_index_.size()) {
    for (const proto::VarDesc& var : desc_->vars()) {
      if (var.name() == name) return Var(&var);
    }
    return std::nullopt;
  }
  const Program::VarIndex& index = program_->var_index_[position_];
  const size_t hash = std::hash<std::string_view>{}(name);
  const size_t mask = index.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const Program::VarSlot& slot = index[i];
    if (slot.position < 0) return std::nullopt;
    // A position past the vars (some were removed without a Reindex) matches nothing.
    if (slot.hash == hash && slot.position < desc_->vars_size() &&
        desc_->vars(slot.position).name() == name) {
      return Var(&desc_->vars(slot.position));
    }
  }
}

std::optional<Var> Block::FindVarRecursive(std::string_view name) const {
  // Bounded by the number of blocks, so a malformed parent cycle cannot loop forever.
  std::optional<Block> current = *this;
  for (int steps = 0; current && steps <= program_->num_blocks(); ++steps) {
    if (std::optional<Var> var = current->FindVar(name)) return var;
    current = current->parent();
  }
  return std::nullopt;
}

// ---- Program --------------------------------------------------------------------------------

namespace {

std::unique_ptr<google::protobuf::Arena> NewArena() {
  google::protobuf::ArenaOptions options;
  options.start_block_size = 4 << 10;
  options.max_block_size = 1 << 20;  // few, large blocks for programs of tens of MB
  return std::make_unique<google::protobuf::Arena>(options);
}

}  // namespace

Program::Program()
    : arena_(NewArena()),
      desc_(google::protobuf::Arena::CreateMessage<proto::ProgramDesc>(arena_.get())) {}

Program::Program(const proto::ProgramDesc& desc) : Program() {
  *desc_ = desc;
  Reindex();
}

Program::Program(const Program& other) : Program(other.desc()) {}

Program& Program::operator=(const Program& other) {
  if (this != &other) *this = Program(other);
  return *this;
}

void Program::Reindex() {
  var_index_.assign(desc_->blocks_size(), {});
  for (int b = 0; b < desc_->blocks_size(); ++b) {
    const proto::BlockDesc& block = desc_->blocks(b);
    VarIndex& index = var_index_[b];
    index.assign(std::bit_ceil(2 * static_cast<size_t>(block.vars_size()) + 2), VarSlot{});
    const size_t mask = index.size() - 1;
    for (int v = 0; v < block.vars_size(); ++v) {
      const std::string& name = block.vars(v).name();
      const size_t hash = std::hash<std::string_view>{}(name);
      for (size_t i = hash & mask;; i = (i + 1) & mask) {
        VarSlot& slot = index[i];
        if (slot.position < 0) {
          slot = {hash, v};
          break;
        }
        // The first declaration wins; the validator reports duplicates.
        if (slot.hash == hash && block.vars(slot.position).name() == name) break;
      }
    }
  }
}

int64_t Program::num_ops() const {
  int64_t n = 0;
  for (const proto::BlockDesc& block : desc_->blocks()) n += block.ops_size();
  return n;
}

std::optional<int64_t> Program::version() const {
  if (!desc_->has_version()) return std::nullopt;
  return desc_->version().version();
}

Location OpLocation(const std::string& file, const Block& block, int op_index) {
  Location loc = Location::File(file);
  loc.InBlock(block.position()).AtOp(op_index, block.op(op_index).type());
  return loc;
}

Location VarLocation(const std::string& file, const Block& block, std::string_view var_name) {
  Location loc = Location::File(file);
  loc.InBlock(block.position()).AtVar(std::string(var_name));
  return loc;
}

}  // namespace irm::oldir
