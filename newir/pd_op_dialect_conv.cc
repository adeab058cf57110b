// The convolution-net rows of the `pd_op` dialect, written from Paddle's
// paddle/phi/ops/yaml/ops.yaml (conv2d) and backward.yaml (conv2d_grad) as PIR generates them:
// operands and results in yaml order, `int[]` attributes as int32 arrays with the yaml defaults.
#include "newir/pd_op_dialect_conv.h"

#include <string>
#include <utility>
#include <vector>

#include "newir/op_info.h"

namespace irm::newir {
namespace {

OperandSpec In(std::string name) { return {.name = std::move(name)}; }
ResultSpec Out(std::string name) { return {.name = std::move(name)}; }
// A grad nobody asked for (the input of a conv fed by data) is an absent result, as the legacy
// grad maker leaves its slot empty.
ResultSpec OptOut(std::string name) { return {.name = std::move(name), .optional = true}; }

AttrSpec Def(std::string name, Attribute value) {
  const AttrKind kind = value.kind();
  return {std::move(name), kind, false, std::move(value)};
}
AttrSpec I32(std::string name, int32_t v) { return Def(std::move(name), Attribute::Int32(v)); }
AttrSpec Str(std::string name, std::string v) {
  return Def(std::move(name), Attribute::String(std::move(v)));
}
AttrSpec Ints(std::string name, std::vector<int32_t> v) {
  std::vector<Attribute> items;
  for (int32_t i : v) items.push_back(Attribute::Int32(i));
  AttrSpec spec = Def(std::move(name), Attribute::Array(std::move(items)));
  spec.element_kind = AttrKind::kInt32;
  return spec;
}

OpInfo Op(std::string name, std::string summary, std::vector<OperandSpec> operands,
          std::vector<ResultSpec> results, std::vector<AttrSpec> attributes) {
  return {.name = "pd_op." + std::move(name),
          .summary = std::move(summary),
          .operands = std::move(operands),
          .results = std::move(results),
          .attributes = std::move(attributes)};
}

// conv2d's attributes, shared by its grad (backward.yaml repeats them).
std::vector<AttrSpec> Conv2dAttrs() {
  return {Ints("strides", {1, 1}),   Ints("paddings", {0, 0}), Str("padding_algorithm", "EXPLICIT"),
          Ints("dilations", {1, 1}), I32("groups", 1),         Str("data_format", "NCHW")};
}

}  // namespace

Status RegisterPdOpConvolutionOps(OpRegistry& registry) {
  std::vector<OpInfo> ops;
  ops.push_back(Op("conv2d", "2-D convolution (NCHW or NHWC input, OIHW filter)",
                   {In("input"), In("filter")}, {Out("out")}, Conv2dAttrs()));
  ops.push_back(Op("conv2d_grad", "gradient of conv2d", {In("input"), In("filter"), In("out_grad")},
                   {OptOut("input_grad"), OptOut("filter_grad")}, Conv2dAttrs()));
  for (OpInfo& op : ops) IRM_RETURN_IF_ERROR(registry.Register(std::move(op)));
  return Status::Ok();
}

}  // namespace irm::newir
