// The text parser of the new IR. It reads what the printer (printer.h) writes — the typed,
// lossless canonical form — and every other form Paddle has printed programs in:
//
//  * the typed 3.0-beta style: `builtin.tensor<2x3xf32>`, `(Int32)0`, `(Float)0.5`,
//    `(pd_op.IntArray)[1,2]`, `(pd_op.DataType)float32`, `(pd_op.Place)Place(cpu)`,
//    `(pd_op.DataLayout)NCHW`, and one 2024 version's `builtin.tensor<2x3xf32 NCHW>`;
//  * the untyped 3.0+ style Paddle prints today (paddle/pir/src/core/ir_printer.cc):
//    `tensor<2x3xf32>`, `tensor<f32>`, and attribute values without a kind prefix (`0`, `1.5`,
//    `float32`, `[1,2]`, `Place(cpu)`, `NCHW`, `"s"`, `true`);
//  * the 2023 style: `pd_op.tensor<1xf32>`, `(Array)[…]`;
//  * the pd_dist forms of every era: `pd_dist.tensor<8x8xf32, mesh_shape:[2],process_ids:[0,1],
//    dims_mappings:[0,-1]>` with optional `, partial(0,SUM),partial(1,AVG)` and
//    `, placements:[Shard(dim=0), Replicate(), Partial(reduce_type=SUM)]`; op_dist_attr
//    `{mesh:{shape:[..],process_ids:[..]},operand(0):{…},result(0):{…},chunk_id:-1}`; the early
//    2024 forms — types without process_ids (the mesh's ids are then left empty: they are
//    unknown), op_dist_attr without chunk_id (then -1) whose entries are the mesh-less
//    `{dims_maping:[…]}` (sic; the entry's mesh is the op's), and the March 2024 brace-less
//    `mesh_shape:[2],process_ids:[0,1],result(0):{…}`;
//  * the custom forms of pd_op.if (`(%c) {attrs} -> ty { … } else { … }`) and pd_op.while
//    (`(cond=%c, inputs=%a, %b) { ^%arg_0 {…}, … }`, and late 2023's attribute-less
//    `^%arg_0, %arg_1`);
//  * 2023's `builtin.get_parameter`, read as `builtin.parameter` (its name since Paddle PR #59239);
//  * early 2024's CINN ops with a bare name, no attribute map and a region after the types
//    (`cinn_op.fusion () -> ty { … }`).
//
// Untyped attribute values take their kind from the op table: the op's OpInfo::FindAttribute
// spec says it (kIntArray turns `[1,2]` into an IntArray, kDataType turns `float32` into a
// DataType, kInt64 turns `3` into an Int64, kFloat turns `2` into a Float); an array spec whose
// default holds elements gives its elements' kind. A value that cannot be read as the spec's kind
// is an error (`attribute 'col' of 'pd_op.fetch' takes an int32, found '1.5'`). A value with a
// kind prefix keeps that kind whatever the table says (the verifier judges it).
//
// Fallback, where the op is unregistered, has no spec for the attribute, or its spec accepts any
// kind (kNull) — and for block-argument attributes and array elements of unknown kind. It is what
// Paddle's printer most likely printed for that text:
//   `true`/`false` -> Bool;  `"…"` -> String;  `[…]` -> Array of fallback elements (so
//   `stop_gradient:[false]` and `persistable:[true]` are arrays of Bool);
//   an integer -> Int32, or Int64 when it does not fit in 32 bits (Paddle's int attributes are
//   mostly Int32: `col`, `axis`, `op_role`, `ring_id`);
//   a decimal (a dot, an exponent, nan, inf) -> Float, or Double when it does not fit in a float
//   (op attributes of floating kind are mostly float in Paddle's yaml: epsilon, scale, bias, p);
//   a DataType name (`float32`, `int64`, `bool`, `Undefined`) -> DataType; a layout name (`NCHW`,
//   `Undefined(AnyLayout)`) -> DataLayout; `Place(…)` -> Place; `mesh_shape:…` -> ProcessMesh,
//   TensorDist or (March 2024 form) OperationDist; `{mesh:…}` -> OperationDist; anything else
//   must be a type -> Type.
// A kScalar spec (none in our tables) reads `true`/`3`/`0.5` as a bool/int64/float64 Scalar. Note
// that Paddle's untyped form is lossy: `value:1` of pd_op.full was a Float or a Double.
//
// What the text form cannot say is filled in as follows: a block argument belongs to the
// innermost block being parsed where it first appears (`%arg_N {attrs}`), arguments are added in
// order of first appearance, and they take the type of the first operand slot with a type list
// that reads them — unless the block opens with an argument header (`^%arg_0 {…} : type, …`,
// printer.h), which declares them in order with their types; keyword arguments likewise take the
// type of their first typed use unless their line gives one; each `{ … }` after an op line is one
// region of one block unless the op line ends with `[regions:…]`; pd_op.while results and body
// arguments take the types of its loop inputs unless the header gives another.
//
// `//` starts a comment that runs to the end of its line (text_cursor.h); the printer writes none.
//
// In strings, `\"` and `\\` are escapes and any other backslash is kept as written (Paddle escapes
// only quotes, so its `"C:\dir"` reads as it was).
//
// Values must be defined before they are read; op names must be in the op registry unless
// allow_unregistered is set. Every failure is a Status at `file:line:col` with a precise message;
// no input makes it crash, and nesting deeper than kMaxParseDepth is rejected.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>

#include "common/status.h"
#include "newir/op_info.h"
#include "newir/program.h"
#include "newir/text_cursor.h"

namespace irm::newir {

struct ParseOptions {
  // Keep ops the registry does not know, opaquely (info() null), instead of rejecting them.
  bool allow_unregistered = false;
  const OpRegistry* registry = &OpRegistry::Global();
};

// The text of a whole program (`{` ops `}`). `file` only names the input in diagnostics.
StatusOr<Program> ParseProgram(std::string_view text, const std::string& file = "<text>",
                               const ParseOptions& options = {});

// The 1-based line where each op of a parsed program starts (its result list), the module at the
// line of the top block's `{`: for tools that point findings about ops back at the text (opt
// --verify-diagnostics).
using OpLines = std::unordered_map<const Operation*, int>;

// As above, filling `op_lines` (when not null) as the ops are read.
StatusOr<Program> ParseProgram(std::string_view text, const std::string& file,
                               const ParseOptions& options, OpLines* op_lines);

// One attribute value in any of the forms above. An untyped value takes `expected` as its kind
// (kNull: the fallback).
StatusOr<Attribute> ParseAttribute(std::string_view text, const std::string& file = "<text>",
                                   AttrKind expected = AttrKind::kNull);

// One type in any of the forms above (`builtin.tensor<2x3xf32>`, `tensor<f32>`, `vec[…]`, …).
StatusOr<Type> ParseType(std::string_view text, const std::string& file = "<text>");

}  // namespace irm::newir
