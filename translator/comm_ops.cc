// Communication ops (comm_ops.h).
#include "translator/comm_ops.h"

#include <algorithm>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "newir/dist_attr.h"
#include "translator/op_context.h"

namespace irm::translator {
namespace {

bool Legacy(const OpContext& ctx) { return ctx.options().comm_ops == CommOpStyle::kLegacy; }

// The ring must be one of the bundle's process groups and hold this rank.
Status CheckRing(OpContext& ctx) {
  const std::vector<oldir::ProcessGroup>* groups = ctx.options().process_groups;
  if (groups == nullptr) return Status::Ok();
  const int32_t ring = ctx.AttrOr<int32_t>("ring_id", 0);
  auto group = std::find_if(groups->begin(), groups->end(),
                            [&](const oldir::ProcessGroup& g) { return g.ring_id == ring; });
  if (group == groups->end()) {
    return ctx.Error(fmt::format("ring_id {} names no process group of the bundle", ring));
  }
  const int rank = ctx.options().rank;
  if (std::find(group->ranks.begin(), group->ranks.end(), rank) == group->ranks.end()) {
    return ctx.Error(fmt::format("process group {} (ranks [{}]) does not hold rank {}", ring,
                                 fmt::join(group->ranks, ", "), rank));
  }
  return Status::Ok();
}

// The legacy type as a new op name (c_allreduce_sum) or the row's new op (all_reduce).
std::string_view NameInStyle(const OpContext& ctx) {
  return Legacy(ctx) ? std::string_view(ctx.op().type()) : ctx.row().new_op;
}

Status EmitInStyle(OpContext& ctx, const TableOverrides& overrides = {}) {
  IRM_RETURN_IF_ERROR(CheckRing(ctx));
  IRM_ASSIGN_OR_RETURN(const newir::OpInfo* info,
                       ctx.LookUp(NameInStyle(ctx), ctx.WritesAnInput()));
  return EmitByTable(ctx, *info, overrides).status();
}

}  // namespace

Status TranslateAllReduce(OpContext& ctx) {
  if (Legacy(ctx)) return EmitInStyle(ctx);
  const std::string& type = ctx.op().type();
  newir::ReduceType reduce = newir::ReduceType::kSum;
  if (type.ends_with("_max")) reduce = newir::ReduceType::kMax;
  if (type.ends_with("_min")) reduce = newir::ReduceType::kMin;
  if (type.ends_with("_prod")) reduce = newir::ReduceType::kProd;
  return EmitInStyle(
      ctx, {.attrs = {{"reduce_type", newir::Attribute::Int32(static_cast<int32_t>(reduce))}}});
}

Status TranslateCollective(OpContext& ctx) { return EmitInStyle(ctx); }

Status TranslateSyncStream(OpContext& ctx) {
  if (Legacy(ctx)) {
    // Paddle's names for them drop the c_ and are always in place: pd_op.sync_calc_stream_.
    IRM_ASSIGN_OR_RETURN(const newir::OpInfo* info, ctx.LookUp(ctx.row().new_op, true));
    return EmitByTable(ctx, *info).status();
  }
  // Dropped: each Out is the X it orders.
  const std::vector<std::string> ins = ctx.InputNames("X");
  const std::vector<std::string> outs = ctx.OutputNames("Out");
  if (ins.size() != outs.size()) {
    return ctx.Error(fmt::format("X holds {} vars but Out {}", ins.size(), outs.size()));
  }
  for (size_t i = 0; i < ins.size(); ++i) {
    if (ins[i] == outs[i]) continue;
    IRM_ASSIGN_OR_RETURN(newir::Value * value, ctx.ValueOf(ins[i]));
    ctx.Bind(outs[i], value);
  }
  return Status::Ok();
}

}  // namespace irm::translator
