// Block edits of the corpus builders (program_surgery.h).
#include "diff_tests/corpus/program_surgery.h"

#include <fmt/format.h>

namespace irm::corpus {

namespace proto = oldir::proto;

proto::OpDesc* InsertOp(oldir::BlockBuilder& block, int index, const std::string& type,
                        oldir::SlotArgs inputs, oldir::SlotArgs outputs, oldir::AttrList attrs) {
  block.AppendOp(type, std::move(inputs), std::move(outputs), std::move(attrs));
  auto* ops = block.desc()->mutable_ops();
  for (int i = ops->size() - 1; i > index; --i) ops->SwapElements(i, i - 1);
  return ops->Mutable(index);
}

StatusOr<int> FindWriter(const oldir::BlockBuilder& block, std::string_view var, int from) {
  const auto& ops = block.desc().ops();
  for (int i = from; i < ops.size(); ++i) {
    for (const proto::OpDesc::Var& slot : ops.Get(i).outputs()) {
      for (const std::string& arg : slot.arguments()) {
        if (arg == var) return i;
      }
    }
  }
  return Status(
      StatusCode::kNotFound, Location{},
      fmt::format("no op of block {} from op {} on writes '{}'", block.index(), from, var));
}

int RenameInputs(oldir::BlockBuilder& block, int first, const std::string& from,
                 const std::string& to) {
  int renamed = 0;
  auto* ops = block.desc()->mutable_ops();
  for (int i = first; i < ops->size(); ++i) {
    for (proto::OpDesc::Var& slot : *ops->Mutable(i)->mutable_inputs()) {
      for (std::string& arg : *slot.mutable_arguments()) {
        if (arg == from) {
          arg = to;
          ++renamed;
        }
      }
    }
  }
  return renamed;
}

Status DeclareLike(oldir::BlockBuilder& block, const std::string& name, std::string_view like) {
  const proto::VarDesc* var = block.FindVar(like);
  if (var == nullptr) {
    return Status(StatusCode::kNotFound, Location{},
                  fmt::format("var '{}' is not declared in block {}", like, block.index()));
  }
  const proto::VarType::TensorDesc& tensor = var->type().dense_tensor().tensor();
  block.CreateVar(name, tensor.data_type(), {tensor.dims().begin(), tensor.dims().end()});
  return Status::Ok();
}

}  // namespace irm::corpus
