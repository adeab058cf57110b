// The text printer of the new IR: renders a Program, an Operation, a Type or an Attribute in
// Paddle PIR's text form (paddle/pir/src/core/ir_printer.cc and the dialects' printers). The
// default, typed style is the canonical form: lossless, so that parse ∘ print is the identity on
// programs and print ∘ parse the identity on canonical text. The current style is what Paddle 3.0+
// prints; it drops attribute kinds and is for reading, not for round trips. The printer never
// fails: invalid IR (empty operand slots, null types or attributes) prints with Paddle's
// placeholders (`<<NULL VALUE>>`, `<<NULL TYPE>>`, `<#AttrNull>`).
//
// Paddle's spellings, kept exactly:
//  * `{` … `}` blocks with four spaces of indentation per level; op lines
//    `(%0, %1) = "dialect.op" (%a, %b) {k:v,…} : (ta, tb) -> t0, t1` with attributes sorted by name
//    and `op_callstack` and `sym_shape_str` left out (Paddle never prints them, so they are the
//    one thing a printed program loses); `[id:N]` after the name with debug_info.
//  * A generic op's regions follow its line, each block as `{` … `}` at the op's indentation, and
//    — as Paddle's printer does — an empty line after them.
//  * Results are %0, %1, … and positional block arguments %arg_0, %arg_1, … in print order over the
//    whole program; keyword arguments are %kwarg_<name>. A block argument's first appearance
//    carries its attributes (` {stop_gradient:[true]}`, ` {}` when none); a block with keyword
//    arguments opens with `^kw:` and one keyword argument per line.
//  * pd_op.if: `(%r) = "pd_op.if" (%c) {attrs} -> ty {` true ops `} else {` false ops `}`.
//    pd_op.while: `(%r) = "pd_op.while" (cond=%c, inputs=%a, %b) { ` (with Paddle's trailing
//    space), the body arguments `^%arg_0 {…}, %arg_1 {…}` at the op's own indentation, the body
//    ops one level deeper, `}`.
//  * Types: `f32` … `b` (bool), `vec[t1,t2]`, `builtin.tensor<2x3xf32>` (typed) /
//    `tensor<2x3xf32>` (current), `pd_op.tensor_array<f32>`, `pd_op.selectedrows<10x20xf32>`,
//    `pd_dist.tensor<8x8xf32, mesh_shape:[2],process_ids:[0,1],dims_mappings:[0,-1]>` followed by
//    `, partial(0,SUM),partial(1,AVG)` and `, placements:[Shard(dim=0), Replicate()]` when set
//    (paddle/fluid/pir/dialect/distributed/ir/dist_dialect.cc, phi's placement_types.h);
//    `pd_op.sparsecootensor<4x4xf32>` as Paddle prints it and `pd_op.sparsecsrtensor<4x4xf32>`,
//    each followed by the parts that differ from text_print.h's SparsePartDefault.
//  * Attributes, typed: `true`, `(Int32)0`, `(Int64)0`, `(Float)0.5`, `(Double)1`, `"s"`
//    (escaping `"` and `\`), `[a,b]`, a type, `(pd_op.IntArray)[1,2]`,
//    `(pd_op.DataType)float32`, `(pd_op.Place)Place(cpu)`, `(pd_op.DataLayout)NCHW`; current:
//    the same without the prefixes. Dist attributes print as dist_dialect.cc does:
//    `mesh_shape:[..],process_ids:[..]`, the tensor dist form above, and
//    `{mesh:{shape:[..],process_ids:[..]},operand(0):{…},result(0):{…},chunk_id:-1}`. Floats
//    print the shortest text that reads back to the same value (Paddle's ostream keeps 6 digits).
//
// Our extensions, where Paddle's text loses information. Each appears only when the value is
// not the default, so ordinary programs print exactly as Paddle prints them, and each is
// unambiguous (no Paddle text contains it):
//  * Block arguments: a block whose positional arguments would not come back from their first
//    uses — one is never read, they are first read out of order, first read inside a nested
//    region, or first read where no type list follows (the operands of the custom if/while
//    forms) — opens with a header line `^%arg_0 {attrs} : type, %arg_1 {attrs} : type` (the
//    pd_op.while form, with types). In the pd_op.while form, a body argument whose type differs
//    from its loop input's gets ` : type`. A keyword argument whose type would not come back
//    from a typed first use gets ` : type` after its attributes.
//  * Regions: an op whose regions do not each hold exactly one block (an empty region, a
//    region of two blocks) ends its line with `[regions:0,2]`, one block count per region.
//  * pd_op.while attributes (Paddle's custom form drops them): ` {attrs}` after the operand list,
//    when there are any. pd_op.while whose results do not have its inputs' types, and pd_op.if
//    whose regions are not two argument-less single blocks, print in the generic form.
//  * Dense tensor, selected rows and dist tensor types: a layout other than NCHW after the dtype,
//    as one 2024 Paddle version printed it (`builtin.tensor<2x3xf32 NHWC>`), then `, lod:[[0,2]]`
//    and `, offset:4` when set; tensor arrays show their dims (`pd_op.tensor_array<2xf32>`) and
//    layout when set; dist tensors end with `, local_dims:[4,8]` when the local dims are not those
//    the dims mapping computes.
//  * Process meshes: `,dim_names:["dp","mp"]` after process_ids when the mesh has dim names. A
//    process-mesh attribute directly followed by an attribute named dim_names, dims_mappings or
//    dims_maping prints delimited, `(pd_dist.ProcessMesh){mesh_shape:…}`, since Paddle's bare form
//    would run into the next attribute.
//  * Scalars (Paddle stores them as the concrete Int32/Float/… attribute and has no spelling):
//    `(pd_op.Scalar:int64)3`, `(pd_op.Scalar:float32)2.0` — a double value always shows a dot or
//    an exponent, since the text of the value tells the parser its alternative.
#pragma once

#include <string>

#include "newir/attributes.h"
#include "newir/operation.h"
#include "newir/program.h"
#include "newir/types.h"

namespace irm::newir {

struct PrintOptions {
  // kTyped: the canonical, lossless form (attribute kind prefixes, `builtin.` on dense tensors);
  // kCurrent: the untyped 3.0+ form.
  TypeStyle style = TypeStyle::kTyped;
  // Print every op in the generic form, ignoring the custom forms of pd_op.if and pd_op.while.
  bool generic = false;
  // Print `[id:N]` after each op name (Operation::id()).
  bool debug_info = false;
};

// The program's top module region as `{` … `}`, ending with a newline.
// Whether the printer leaves out an attribute of this name: Paddle never prints op_callstack (long
// and machine-specific) or sym_shape_str (derived data), so the text form does not carry them.
bool IsHiddenAttribute(std::string_view name);

std::string PrintProgram(const Program& program, const PrintOptions& options = {});

// One op (with its nested regions, at indentation level 0, no trailing newline). Value numbering
// starts afresh, so values defined outside the op are numbered where they are first read.
std::string PrintOperation(const Operation& op, const PrintOptions& options = {});

// A type as it appears in an op's type lists.
std::string PrintType(const Type& type, TypeStyle style = TypeStyle::kTyped);

// An attribute value as it appears after `name:` in an attribute map.
std::string PrintAttribute(const Attribute& attr, TypeStyle style = TypeStyle::kTyped);

}  // namespace irm::newir
