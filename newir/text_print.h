// The text of the value-level pieces the printer writes (printer.h documents the forms): floats,
// quoted strings and the pd_dist metadata structs. Type::ToString, Attribute::ToString and the
// ToString methods of dist_attr.h all come here, so that the IR has one spelling of everything.
#pragma once

#include <string>
#include <string_view>

#include "newir/dist_attr.h"
#include "newir/types.h"

namespace irm::newir {

// The shortest text that reads back to the same value; `nan`, `-nan`, `inf`, `-inf`.
std::string FloatText(float v);
std::string FloatText(double v);
// `"…"` with `"` and `\` escaped by a backslash.
std::string QuotedText(std::string_view s);

// `mesh_shape:[2,2],process_ids:[0,1,2,3]`, then `,dim_names:["x","y"]` when there are names.
std::string ProcessMeshText(const ProcessMesh& mesh);
// `Shard(dim=0)`, `Replicate()`, `Partial(reduce_type=SUM)`.
std::string PlacementText(const Placement& placement);
// ProcessMeshText, `,dims_mappings:[0,-1]`, then `, partial(0,SUM),partial(1,AVG)` and
// `, placements:[Shard(dim=0), Replicate()]` when set.
std::string TensorDistText(const TensorDistAttr& dist);

// A sparse tensor type's part (indices, crows, cols, elements) that Paddle's text form leaves out,
// as Paddle's program translator fills it (paddle/fluid/ir_adaptor/translator/type_translator.cc,
// HandleSparseCooTensor): the NCHW dense tensor of the sparse tensor's dtype and dims. COO
// non_zero_dims default to the dims and coalesced to false, from the same place. The printer
// writes a part only when it differs, so Paddle's `pd_op.sparsecootensor<2x3xf32>` reads back to
// the type the translator makes, and every other sparse type round-trips.
Type SparsePartDefault(const Type& dtype, const std::vector<int64_t>& dims);

}  // namespace irm::newir
