// Parsing of the value-level pieces of the PIR text form — types and attribute values — at a
// TextCursor, in every style Paddle has printed them: the typed 3.0-beta style this project prints
// (`builtin.tensor<2x3xf32>`, `(Int32)0`), the untyped 3.0+ style (`tensor<2x3xf32>`, `0`,
// `float32`), the 2023 style (`pd_op.tensor<…>`, `(Array)[…]`) and the pd_dist forms of every
// era. The program-level parser (parser.cc) drives these.
#pragma once

#include <optional>
#include <string>

#include "common/status.h"
#include "newir/attributes.h"
#include "newir/dist_attr.h"
#include "newir/text_cursor.h"
#include "newir/types.h"

namespace irm::newir {

// What the op table says an attribute value must be, for values printed without a kind prefix.
struct AttrExpectation {
  AttrKind kind = AttrKind::kNull;     // kNull: nothing known, use the fallback (parser.h)
  AttrKind element = AttrKind::kNull;  // for kArray: the elements' kind, when known
  std::string what = {};               // "attribute 'col' of 'pd_op.fetch'", for diagnostics
};

StatusOr<Type> ParseTypeAt(TextCursor& c);
StatusOr<Attribute> ParseAttributeAt(TextCursor& c, const AttrExpectation& expect = {});

// The pd_dist pieces, shared by the dist type (parse_type.cc) and the dist attributes
// (parse_attribute.cc).
//
// `mesh_shape:[2],process_ids:[0,1]` with our `,dim_names:["x"]`; process_ids may be missing (the
// early-2024 type form), leaving them empty.
StatusOr<ProcessMesh> ParseMeshBody(TextCursor& c);
// `["x","y"]`: a mesh's dim names (our extension; Paddle does not print them).
StatusOr<std::vector<std::string>> ParseDimNameList(TextCursor& c);
// After the mesh: `,dims_mappings:[…]` (or the 2024 `dims_maping` spelling), then optional
// `, partial(0,SUM),partial(1,AVG)` and `, placements:[Shard(dim=0), Replicate()]`.
Status ParseTensorDistTail(TextCursor& c, TensorDistAttr& dist);
// Whether the cursor is at `dims_mappings:` or `dims_maping:` (the mesh-less entry of a 2024
// op_dist_attr, or the key after a mesh), without its leading comma.
bool AtDimsMappingKey(const TextCursor& c);

}  // namespace irm::newir
