// The block walk: every op of a legacy block through its handler (or the general one, or an
// opaque op), each translation checked against its tables, coverage counted (op_context.h).
#include <fmt/format.h>

#include "newir/verifier.h"
#include "translator/op_context.h"
#include "translator/opaque_op.h"

namespace irm::translator {

namespace {

// Checks the ops a handler emitted after `last_before` against their tables and verifier hooks.
// The legacy validator does not infer shapes, so a legacy op whose vars disagree (operands that
// do not broadcast, a matmul's inner dims) only shows here; it is the legacy program's error,
// reported at its op, never a translation the verifier would reject.
Status CheckEmitted(OpContext& ctx, const newir::Operation* last_before) {
  const newir::Program& program = ctx.state().program;
  const newir::VerifyOptions options{.allow_unregistered = ctx.options().allow_unregistered};
  for (const newir::Operation* op = last_before != nullptr ? last_before->next()
                                                           : ctx.target().front();
       op != nullptr; op = op->next()) {
    Diagnostics found = newir::VerifyOp(program, *op, options);
    if (found.empty()) continue;
    return ctx.Error(fmt::format("its translation {} is not well formed: {}", op->name(),
                                 found.items().front().message));
  }
  return Status::Ok();
}

}  // namespace

Status TranslateOps(ProgramState& state, const oldir::Block& block, newir::Block& target,
                    Scope& scope) {
  for (int i = 0; i < block.num_ops(); ++i) {
    const oldir::Op op = block.op(i);
    const OpCompat* row = FindOpCompat(op.type());
    OpContext ctx(state, block, i, row, target, scope);
    OpTypeCoverage& coverage = state.coverage.Count(op.type(), block.index(), i);
    if (!IsTranslatable(row)) {
      // Without opaque ops the program fails: TranslateProgram lists every unsupported op.
      if (!state.options.allow_unregistered) {
        return Status(StatusCode::kUnimplemented, ctx.location(), "no translation");
      }
      IRM_RETURN_IF_ERROR(TranslateOpaque(ctx));
      ++coverage.opaque;
      if (row != nullptr) coverage.note = std::string(row->note);
      continue;
    }
    const size_t before = target.size();
    newir::Operation* last_before = target.back();
    IRM_RETURN_IF_ERROR(row->handler != nullptr ? row->handler(ctx) : TranslateByTable(ctx));
    IRM_RETURN_IF_ERROR(CheckEmitted(ctx, last_before));
    if (target.size() == before && !row->note.empty()) {
      ++coverage.dropped;
      coverage.note = std::string(row->note);
    } else {
      ++coverage.translated;
    }
  }
  state.checked_blocks[static_cast<size_t>(block.index())] = true;
  return Status::Ok();
}

}  // namespace irm::translator
