// Gradient merge's buffers and update (gradient_merge_ops.h).
#include "diff_tests/corpus/gradient_merge_ops.h"

#include <fmt/format.h>

#include "oldir/op_role.h"
#include "oldir/optimizer.h"

namespace irm::corpus {

namespace proto = oldir::proto;

Status AddMergeBuffer(oldir::models::ModelPrograms& model, const std::string& param,
                      const std::string& merge) {
  const proto::VarDesc* var = model.main.root().FindVar(param);
  if (var == nullptr) {
    return Status(StatusCode::kNotFound, Location{},
                  fmt::format("parameter '{}' is not declared", param));
  }
  const proto::VarType::TensorDesc& tensor = var->type().dense_tensor().tensor();
  const std::vector<int64_t> dims(tensor.dims().begin(), tensor.dims().end());
  oldir::VarOptions persistable;
  persistable.persistable = true;
  persistable.stop_gradient = true;
  model.main.root().CreateVar(merge, tensor.data_type(), dims, persistable);
  model.startup.root().CreateVar(merge, tensor.data_type(), dims, persistable);
  model.startup.root().AppendOp("fill_constant",
                                {{"ValueTensor", {}}, {"ShapeTensor", {}}, {"ShapeTensorList", {}}},
                                {{"Out", {merge}}},
                                {{"dtype", static_cast<int32_t>(tensor.data_type())},
                                 {"shape", dims},
                                 {"value", 0.0f},
                                 {"str_value", std::string("0.0")},
                                 {"force_cpu", false},
                                 {"place_type", int32_t{-1}}});
  return Status::Ok();
}

Status AppendMergedUpdate(oldir::models::ModelPrograms& model,
                          const std::vector<oldir::ParamGrad>& merged, int k) {
  oldir::BlockBuilder& root = model.main.root();
  {
    oldir::ScopedOpRole role(model.main, oldir::kOptimize);
    for (const oldir::ParamGrad& pair : merged) {
      root.AppendOp(
          "scale", {{"X", {pair.grad}}}, {{"Out", {pair.grad}}},
          {{"scale", 1.0f / static_cast<float>(k)}, {"bias", 0.0f}, {"bias_after_scale", false}});
    }
  }
  IRM_RETURN_IF_ERROR(oldir::AppendOptimizer(model.main, model.startup, merged, {}));
  oldir::ScopedOpRole role(model.main, oldir::kOptimize);
  for (const oldir::ParamGrad& pair : merged) {
    const std::vector<int64_t> none;
    root.AppendOp("set_value",
                  {{"Input", {pair.grad}},
                   {"ValueTensor", {}},
                   {"StartsTensorList", {}},
                   {"EndsTensorList", {}},
                   {"StepsTensorList", {}}},
                  {{"Out", {pair.grad}}},
                  {{"axes", none},
                   {"starts", none},
                   {"ends", none},
                   {"steps", none},
                   {"decrease_axes", none},
                   {"none_axes", none},
                   {"shape", std::vector<int64_t>{1}},
                   {"dtype", static_cast<int32_t>(proto::VarType::FP32)},
                   {"fp32_values", std::vector<float>{0.0f}}});
  }
  return Status::Ok();
}

}  // namespace irm::corpus
