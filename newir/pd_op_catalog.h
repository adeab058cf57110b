// The pd_op catalog: the signature of every op Paddle's PIR op generator puts in the pd_op dialect
// (paddle/fluid/pir/dialect/op_generator/op_gen.py over paddle/phi/ops/yaml/ at the commit named
// in pd_op_catalog.inc), as data written by scripts/gen_pd_op_catalog.py. The pd_op dialect
// registers every catalog op its hand-written rows (pd_op_dialect.cc, pd_op_dialect_conv.cc) do
// not: those are the ops ir-migrate executes, with verifier and fold hooks; the catalog's are
// verified by signature alone (operand and result counts and shapes, attribute kinds).
//
// One line per op: `FLAGS NAME|OPERANDS|RESULTS|ATTRIBUTES[|KINDS]`.
//  * FLAGS: the category (F forward, B backward, U fused, S sparse, I in place), then E when
//    the op has Paddle's SideEffectTrait.
//  * NAME: without `pd_op.`; sparse ops end in `_sp` (`sp_` when in place), as op_gen.py names
//    them.
//  * OPERANDS, RESULTS: comma-separated names; `?` optional, `[]` a vector (Tensor[]); operands
//    may end in `#` (a mutable IntArray: a tensor or a vector of scalar tensors) or `$` (a mutable
//    Scalar: a tensor).
//  * ATTRIBUTES: `;`-separated `name:kind` (required) or `name:kind=value` (value in the untyped
//    text form, read with the kind) or `name:kind=?` (a default the text form cannot say). Kinds:
//    b i32 i64 f32 f64 str dt pl lo ia; sf32 sf64 si32 si64 (a Scalar: any kind, untyped values
//    read as the named one); ai32 ai64 af32 af64 ab astr asc (arrays of that element kind).
//  * KINDS (sparse ops only): the tensor kind of each tensor operand (not the `#`/`$` ones), `>`,
//    then each result's: `dense`, `coo` or `csr` (`add_coo_dense_sp` has `coo,dense>coo`), from
//    its kernel function's dispatch, which Paddle's generated VerifySig checks.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "newir/op_info.h"

namespace irm::newir {

enum class CatalogCategory { kForward, kBackward, kFused, kSparse, kInplace };
inline constexpr CatalogCategory kCatalogCategories[] = {
    CatalogCategory::kForward, CatalogCategory::kBackward, CatalogCategory::kFused,
    CatalogCategory::kSparse, CatalogCategory::kInplace};
// "forward", "backward", "fused", "sparse", "inplace": the manifest's words.
std::string_view CatalogCategoryName(CatalogCategory category);

// The tensor kind of a slot in a kernel dispatch: Paddle's dense, sparse_coo, sparse_csr.
enum class CatalogTensorKind { kDense, kSparseCoo, kSparseCsr };

struct CatalogOp {
  CatalogCategory category = CatalogCategory::kForward;
  OpInfo info = {};
  // KINDS; empty when the line has none (every op but the sparse ones).
  std::vector<CatalogTensorKind> operand_kinds = {};
  std::vector<CatalogTensorKind> result_kinds = {};
};

// The text of the catalog compiled in (pd_op_catalog.inc), and its header comment.
std::string_view PdOpCatalogText();
std::string_view PdOpCatalogHeader();

// Reads a catalog; an error names the line (`file:line:col`).
StatusOr<std::vector<CatalogOp>> ParsePdOpCatalog(std::string_view text,
                                                  const std::string& file = "pd_op_catalog.inc");

// The compiled-in catalog, read once.
const std::vector<CatalogOp>& PdOpCatalog();

// Registers every op of the compiled-in catalog whose name `registry` does not hold yet, whatever
// registered it; `skipped` (when not null) receives the names it left to the registry's rows.
Status RegisterPdOpCatalog(OpRegistry& registry, std::vector<std::string>* skipped = nullptr);

// The names (`pd_op.x`) of the pd_op dialect's hand-written rows (pd_op_dialect.cc).
const std::vector<std::string>& PdOpHandRowNames();

// The compiled-in catalog's entry for `op_name` (`pd_op.x`), or null.
const CatalogOp* FindPdOpCatalogOp(std::string_view op_name);

// Whether `op_name` is a catalog op that no hand-written row registers: an op ir-migrate reads,
// verifies and writes but does not execute (no kernel binding, no translator rule).
bool IsPdOpCatalogOnly(std::string_view op_name);

}  // namespace irm::newir
