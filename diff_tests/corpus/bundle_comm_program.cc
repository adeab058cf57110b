// BundleCommProgram (bundle_comm_program.h): each job program is read once and reduced to its
// point-to-point ops in order; each rank's plan then lays those out job by job.
#include "diff_tests/corpus/bundle_comm_program.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/file_io.h"
#include "newir/program.h"
#include "newir/program_io.h"
#include "oldir/program.h"
#include "oldir/program_io.h"

namespace irm::corpus {
namespace {

using schedules::Channel;
using schedules::CommProgram;
using schedules::Step;
using schedules::StepKind;

// One op of a job program as the check sees it: a send, a receive, or compute.
struct P2pOp {
  StepKind kind = StepKind::kCompute;
  std::string type;  // "send_v2", "pd_op.p_recv"
  int index = 0;     // in the program's top block
  int ring = 0;
  int peer = 0;
};

bool IsSend(std::string_view name) { return name == "send_v2" || name == "p_send"; }
bool IsRecv(std::string_view name) { return name == "recv_v2" || name == "p_recv"; }

Status InControlFlow(const std::string& file, int index, const std::string& type,
                     const std::string& inner) {
  return Status(StatusCode::kUnimplemented, Location::File(file).InBlock(0).AtOp(index, type),
                fmt::format("holds a {} in a control-flow block: how often it runs depends on "
                            "the data, so its order cannot be checked before running",
                            inner));
}

// Whether a legacy block (or one nested in it) sends or receives: the first such op's type.
std::optional<std::string> LegacyP2pInside(const oldir::Program& program, int block) {
  std::vector<int> pending = {block};
  std::vector<bool> seen(static_cast<size_t>(program.num_blocks()), false);
  while (!pending.empty()) {
    const int b = pending.back();
    pending.pop_back();
    if (b < 0 || b >= program.num_blocks() || seen[static_cast<size_t>(b)]) continue;
    seen[static_cast<size_t>(b)] = true;
    const oldir::Block blk = program.block(b);
    for (int i = 0; i < blk.num_ops(); ++i) {
      const oldir::Op op = blk.op(i);
      if (IsSend(op.type()) || IsRecv(op.type())) return op.type();
      for (int32_t sub : op.SubBlocks()) pending.push_back(sub);
    }
  }
  return std::nullopt;
}

StatusOr<std::vector<P2pOp>> LegacyP2pOps(const std::string& path) {
  IRM_ASSIGN_OR_RETURN(const oldir::Program program, oldir::LoadProgram(path));
  std::vector<P2pOp> ops;
  if (program.num_blocks() == 0) return ops;
  const oldir::Block root = program.root();
  for (int i = 0; i < root.num_ops(); ++i) {
    const oldir::Op op = root.op(i);
    P2pOp p2p{.type = op.type(), .index = i};
    if (IsSend(op.type()) || IsRecv(op.type())) {
      p2p.kind = IsSend(op.type()) ? StepKind::kSend : StepKind::kRecv;
      p2p.ring = op.AttrOr<int32_t>("ring_id", 0);
      p2p.peer = op.AttrOr<int32_t>("peer", 0);
    } else {
      for (int32_t sub : op.SubBlocks()) {
        if (std::optional<std::string> inner = LegacyP2pInside(program, sub)) {
          return InControlFlow(path, i, op.type(), *inner);
        }
      }
    }
    ops.push_back(std::move(p2p));
  }
  return ops;
}

int IntAttribute(const newir::Operation& op, std::string_view name) {
  auto it = op.attributes().find(name);
  if (it == op.attributes().end()) return 0;
  if (const int32_t* v = it->second.AsInt32()) return *v;
  if (const int64_t* v = it->second.AsInt64()) return static_cast<int>(*v);
  return 0;
}

// Whether an op's regions (at any depth) send or receive: the first such op's name.
std::optional<std::string> PirP2pInside(const newir::Operation& op) {
  std::vector<const newir::Operation*> pending = {&op};
  while (!pending.empty()) {
    const newir::Operation* current = pending.back();
    pending.pop_back();
    for (size_t r = 0; r < current->num_regions(); ++r) {
      const newir::Region& region = current->region(r);
      for (size_t b = 0; b < region.num_blocks(); ++b) {
        for (const newir::Operation& inner : region.block(b)) {
          if (IsSend(inner.op_name()) || IsRecv(inner.op_name())) return inner.name();
          pending.push_back(&inner);
        }
      }
    }
  }
  return std::nullopt;
}

StatusOr<std::vector<P2pOp>> PirP2pOps(const std::string& path) {
  IRM_ASSIGN_OR_RETURN(const newir::Program program, newir::LoadProgramFile(path));
  std::vector<P2pOp> ops;
  int index = 0;
  for (const newir::Operation& op : program.block()) {
    P2pOp p2p{.type = op.name(), .index = index};
    if (op.dialect() == "pd_op" && (IsSend(op.op_name()) || IsRecv(op.op_name()))) {
      p2p.kind = IsSend(op.op_name()) ? StepKind::kSend : StepKind::kRecv;
      p2p.ring = IntAttribute(op, "ring_id");
      p2p.peer = IntAttribute(op, "peer");
    } else if (std::optional<std::string> inner = PirP2pInside(op)) {
      return InControlFlow(path, index, op.name(), *inner);
    }
    ops.push_back(std::move(p2p));
    ++index;
  }
  return ops;
}

// The ranks of ring `ring`: the bundle's group, or every rank for an undeclared ring 0.
std::optional<std::vector<int>> GroupRanks(const oldir::Bundle& bundle, int ring) {
  for (const oldir::ProcessGroup& group : bundle.process_groups) {
    if (group.ring_id == ring) return group.ranks;
  }
  if (ring != 0) return std::nullopt;
  std::vector<int> all;
  for (int r = 0; r < bundle.world_size; ++r) all.push_back(r);
  return all;
}

StatusOr<Channel> ChannelOf(const oldir::Bundle& bundle, int rank, const P2pOp& op,
                            const std::string& file) {
  const auto invalid = [&](std::string message) {
    return Status(StatusCode::kInvalid, Location::File(file).InBlock(0).AtOp(op.index, op.type),
                  std::move(message));
  };
  std::optional<std::vector<int>> ranks = GroupRanks(bundle, op.ring);
  if (!ranks.has_value()) {
    return invalid(fmt::format("ring_id {} names no process group of the bundle", op.ring));
  }
  if (std::find(ranks->begin(), ranks->end(), rank) == ranks->end()) {
    return invalid(fmt::format("process group {} (ranks [{}]) does not hold rank {}", op.ring,
                               fmt::join(*ranks, ", "), rank));
  }
  if (op.peer < 0 || op.peer >= static_cast<int>(ranks->size())) {
    return invalid(fmt::format("peer {} is outside process group {} (ranks [{}])", op.peer, op.ring,
                               fmt::join(*ranks, ", ")));
  }
  const int other = (*ranks)[static_cast<size_t>(op.peer)];
  if (op.kind == StepKind::kSend) return Channel{rank, other, op.ring};
  return Channel{other, rank, op.ring};
}

}  // namespace

StatusOr<CommProgram> BundleCommProgram(const oldir::Bundle& bundle, const std::string& dir) {
  CommProgram program;
  program.ranks.resize(static_cast<size_t>(std::max(bundle.world_size, 0)));
  for (const oldir::BundleRank& rank : bundle.ranks) {
    if (rank.rank < 0 || rank.rank >= bundle.world_size) {
      return Status(
          StatusCode::kInvalid, Location::File(oldir::RankDir(dir, rank.rank)),
          fmt::format("rank {} is outside the world of {}", rank.rank, bundle.world_size));
    }
    const std::vector<oldir::PlanJob> jobs =
        rank.plan.value_or(std::vector<oldir::PlanJob>{{"main", 0}});
    std::map<std::string, std::vector<P2pOp>, std::less<>> by_type;
    std::vector<Step>& steps = program.ranks[static_cast<size_t>(rank.rank)];
    for (const oldir::PlanJob& job : jobs) {
      auto file_name = rank.programs.find(job.type);
      if (file_name == rank.programs.end()) {
        return Status(StatusCode::kNotFound, Location::File(oldir::RankDir(dir, rank.rank)),
                      fmt::format("the plan runs job type '{}', which has no program", job.type));
      }
      const std::string file = oldir::RankFile(dir, rank.rank, file_name->second);
      auto ops = by_type.find(job.type);
      if (ops == by_type.end()) {
        StatusOr<std::vector<P2pOp>> read =
            bundle.ir == oldir::BundleIr::kPir ? PirP2pOps(file) : LegacyP2pOps(file);
        if (!read.ok()) return read.status();
        ops = by_type.emplace(job.type, std::move(read).value()).first;
      }
      const auto step = [&](StepKind kind, std::string label) {
        Step s;
        s.kind = kind;
        s.label = kind == StepKind::kCompute ? fmt::format("{}({})", label, job.micro_batch)
                                             : std::move(label);
        s.job = job.type;
        s.micro_batch = job.micro_batch;
        return s;
      };
      // Ops between two communications are one compute step; a job with none still shows.
      bool computing = false;
      bool any = false;
      for (const P2pOp& op : ops->second) {
        if (op.kind == StepKind::kCompute) {
          if (!computing) steps.push_back(step(StepKind::kCompute, job.type));
          computing = true;
          any = true;
          continue;
        }
        computing = false;
        any = true;
        IRM_ASSIGN_OR_RETURN(const Channel channel, ChannelOf(bundle, rank.rank, op, file));
        const bool send = op.kind == StepKind::kSend;
        Step s = step(op.kind, fmt::format("{} {} {}", op.type, send ? "to" : "from",
                                           send ? channel.receiver : channel.sender));
        s.channel = channel;
        s.message = fmt::format("micro-batch {}", job.micro_batch);
        s.op = fmt::format("{}, op {}", op.type, op.index);
        steps.push_back(std::move(s));
      }
      if (!any) steps.push_back(step(StepKind::kCompute, job.type));
    }
  }
  return program;
}

}  // namespace irm::corpus
