// The convolution-net rows of the `pd_op` dialect, written from Paddle's
// paddle/phi/ops/yaml/ops.yaml (conv2d) and backward.yaml (conv2d_grad) as PIR generates them:
// operands and results in yaml order, `int[]` attributes as int32 arrays with the yaml defaults.
#include "newir/pd_op_dialect_conv.h"

#include <string>
#include <utility>
#include <vector>

namespace irm::newir {

using namespace pd_op_table;  // NOLINT(build/namespaces): the row builders, read as a table

namespace {

// conv2d's attributes, shared by its grad (backward.yaml repeats them).
std::vector<AttrSpec> Conv2dAttrs() {
  return {Ints("strides", {1, 1}),   Ints("paddings", {0, 0}), Str("padding_algorithm", "EXPLICIT"),
          Ints("dilations", {1, 1}), I32("groups", 1),         Str("data_format", "NCHW")};
}

}  // namespace

void AddConvolution(Table& t) {
  t.Add(Op("conv2d", "2-D convolution (NCHW or NHWC input, OIHW filter)",
           {In("input"), In("filter")}, {Out("out")}, Conv2dAttrs()));
  // A grad nobody asked for (the input of a conv fed by data) is an absent result, as the legacy
  // grad maker leaves its slot empty.
  t.Add(Op("conv2d_grad", "gradient of conv2d", {In("input"), In("filter"), In("out_grad")},
           {OptOut("input_grad"), OptOut("filter_grad")}, Conv2dAttrs()));
}

}  // namespace irm::newir
