// ThreadWorld (thread_world.h): rendezvous collectives and point-to-point messages on host tensors,
// under the lock of the world's RankMatcher (rank_matcher.h: groups, rounds, channels, aborts and
// hang checks). Only the element work of a reducing collective runs outside it, each rank computing
// its share once every rank has joined.
#include "reference_runtime/comm/thread_world.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "reference_runtime/comm/reduce.h"

namespace irm::rt {

struct ThreadWorld::Round : RankMatcher::Round {
  explicit Round(size_t n) : RankMatcher::Round(n), parts(n) {}
  std::vector<Contribution> parts;  // by group rank
  // Every rank has joined and the calls agree: each rank computes its share (ComputeShare).
  bool split = false;
  size_t shares_done = 0;
  // reduce_scatter and all_gather: each group rank's result, stored into its `out` once every
  // share is done (an out may be another rank's in).
  std::vector<Tensor> results;
};

struct ThreadWorld::Message : RankMatcher::Message {
  // What the receiver copies: the sender's tensor (rendezvous: valid while the sender waits for
  // the message to be taken) or `copy`.
  const Tensor* tensor = nullptr;
  Tensor copy;  // buffered: the message as sent, so that the sender may reuse its tensor
};

namespace {

// From this many elements on, a reducing collective is computed in shares by every rank of the
// round (ComputeShare); below, by the last rank to join.
constexpr int64_t kSplitMinElements = int64_t{1} << 14;

}  // namespace

class ThreadWorld::GroupComm final : public RankMatcher::GroupCommunicator {
 public:
  GroupComm(ThreadWorld* world, int group, int group_rank)
      : GroupCommunicator(world->matcher_, group, group_rank), world_(world) {}

 protected:
  Status DoAllReduce(Tensor& inout, ReduceOp op, const CallSite& site) override {
    return world_->Collective(
        group(), group_rank(),
        {.kind = CommKind::kAllReduce, .reduce = op, .inout = &inout, .site = site});
  }
  Status DoBroadcast(Tensor& inout, int root, const CallSite& site) override {
    return world_->Collective(
        group(), group_rank(),
        {.kind = CommKind::kBroadcast, .root = root, .inout = &inout, .site = site});
  }
  Status DoAllGather(const Tensor& in, Tensor* out, const CallSite& site) override {
    return world_->Collective(group(), group_rank(),
                              {.kind = CommKind::kAllGather, .in = &in, .out = out, .site = site});
  }
  Status DoReduceScatter(const Tensor& in, Tensor* out, ReduceOp op,
                         const CallSite& site) override {
    return world_->Collective(
        group(), group_rank(),
        {.kind = CommKind::kReduceScatter, .reduce = op, .in = &in, .out = out, .site = site});
  }
  Status DoAllToAll(const Tensor& in, Tensor* out, const CallSite& site) override {
    return world_->Collective(group(), group_rank(),
                              {.kind = CommKind::kAllToAll, .in = &in, .out = out, .site = site});
  }
  Status DoSend(const Tensor& in, int peer, const CallSite& site) override {
    return world_->Send(group(), group_rank(), in, peer, site);
  }
  Status DoRecv(Tensor* out, int peer, const CallSite& site) override {
    return world_->Recv(group(), group_rank(), out, peer, site);
  }
  Status DoBarrier(const CallSite& site) override {
    return world_->Collective(group(), group_rank(), {.kind = CommKind::kBarrier, .site = site});
  }

 private:
  ThreadWorld* world_;
};

StatusOr<std::unique_ptr<ThreadWorld>> ThreadWorld::Create(int world_size,
                                                           std::vector<CommGroup> groups,
                                                           ThreadWorldOptions options) {
  IRM_ASSIGN_OR_RETURN(groups, CheckCommGroups(world_size, std::move(groups)));
  return std::unique_ptr<ThreadWorld>(
      new ThreadWorld(world_size, std::move(groups), std::move(options)));
}

ThreadWorld::ThreadWorld(int world_size, std::vector<CommGroup> groups, ThreadWorldOptions options)
    : matcher_(world_size, std::move(groups), {options.timeout, options.trace, options.p2p},
               [this](int group, int group_rank) -> std::unique_ptr<Communicator> {
                 return std::make_unique<GroupComm>(this, group, group_rank);
               }) {}

ThreadWorld::~ThreadWorld() = default;

// ---- collectives
// ---------------------------------------------------------------------------------

Status ThreadWorld::Collective(int group_index, int group_rank, Contribution contribution) {
  std::unique_lock<std::mutex> lock(matcher_.mutex());
  const RankMatcher::Call call{contribution.kind, contribution.reduce, contribution.root,
                               contribution.in != nullptr ? contribution.in : contribution.inout,
                               contribution.site};
  bool last = false;
  IRM_ASSIGN_OR_RETURN(std::shared_ptr<Round> round,
                       matcher_.Join<Round>(group_index, group_rank, call, &last));
  const CommKind kind = contribution.kind;
  round->parts[static_cast<size_t>(group_rank)] = std::move(contribution);
  const size_t n = round->parts.size();
  if (last) {
    Status agree = matcher_.CheckCallsAgree(group_index, *round);
    // Small rounds are computed by the last arriver: waking every rank for its share costs more
    // than the elements.
    // Sized only once the calls agree: a rank of a mismatched round may bring no tensor at all
    // (a barrier).
    const Tensor* sized = round->calls[0].tensor;
    const bool splits = agree.ok() && n > 1 &&
                        (kind == CommKind::kAllReduce || kind == CommKind::kReduceScatter ||
                         kind == CommKind::kAllGather) &&
                        sized->numel() >= kSplitMinElements;
    if (!splits) {
      round->status = agree.ok() ? Complete(*round) : std::move(agree);
      round->done = true;
      matcher_.cv().notify_all();
      return round->status;
    }
    round->split = true;
    round->results.resize(n);
    matcher_.cv().notify_all();
  } else {
    IRM_RETURN_IF_ERROR(matcher_.WaitForRound(lock, group_index, group_rank, round,
                                              [round] { return round->done || round->split; }));
    if (!round->split) return round->status;
  }
  // Every rank of the round computes its share, even when the world aborts meanwhile: a rank
  // returning early would leave its peers writing into its tensors after it moved on. A share
  // always ends, so this wait needs no watchdog (the rank counts as busy).
  const size_t group_rank_index = static_cast<size_t>(group_rank);
  ComputeShare(lock, *round, group_rank_index);
  matcher_.cv().wait(lock, [&] { return round->done; });
  if (!round->status.ok()) return round->status;
  if (kind == CommKind::kReduceScatter || kind == CommKind::kAllGather) {
    *round->parts[group_rank_index].out = std::move(round->results[group_rank_index]);
  }
  return Status::Ok();
}

namespace {

// Copies `count` elements of `src` from element `src_begin` into `dst` from `dst_begin`.
void CopyElements(const Tensor& src, int64_t src_begin, Tensor& dst, int64_t dst_begin,
                  int64_t count) {
  const size_t size = DTypeSize(src.dtype());
  if (count == 0) return;
  std::memmove(static_cast<char*>(dst.raw()) + static_cast<size_t>(dst_begin) * size,
               static_cast<const char*>(src.raw()) + static_cast<size_t>(src_begin) * size,
               static_cast<size_t>(count) * size);
}

// Each rank's `in` of a round's contributions, in group order.
template <typename Contributions>
std::vector<const Tensor*> Inputs(const Contributions& parts) {
  std::vector<const Tensor*> ins;
  for (const auto& c : parts) ins.push_back(c.in);
  return ins;
}

// Every rank's `in` concatenated along dim 0 in group order (all-gather).
Tensor GatherInRankOrder(const std::vector<const Tensor*>& ins) {
  std::vector<int64_t> shape = ins[0]->shape();
  shape[0] *= static_cast<int64_t>(ins.size());
  Tensor gathered = Tensor::ZerosUnchecked(ins[0]->dtype(), shape);
  const int64_t part = ins[0]->numel();
  for (size_t i = 0; i < ins.size(); ++i) {
    CopyElements(*ins[i], 0, gathered, static_cast<int64_t>(i) * part, part);
  }
  return gathered;
}

// Part `index` of the reduce-scatter of `ins`: the reduction in rank order of every rank's part.
StatusOr<Tensor> ReduceScatterPart(const std::vector<const Tensor*>& ins, ReduceOp op,
                                   size_t index) {
  const int64_t n = static_cast<int64_t>(ins.size());
  std::vector<int64_t> shape = ins[0]->shape();
  shape[0] /= n;
  const int64_t part = ins[0]->numel() / n;
  Tensor out = Tensor::ZerosUnchecked(ins[0]->dtype(), shape);
  IRM_RETURN_IF_ERROR(ReduceInRankOrder(ins, op, static_cast<int64_t>(index) * part, part, out, 0));
  return out;
}

}  // namespace

Status ThreadWorld::Complete(Round& round) {
  const size_t n = round.parts.size();
  const Contribution& first = round.parts[0];
  switch (first.kind) {
    case CommKind::kBarrier:
      return Status::Ok();
    case CommKind::kAllReduce: {
      std::vector<const Tensor*> inputs;
      for (const Contribution& c : round.parts) inputs.push_back(c.inout);
      const Tensor& shape = *first.inout;
      Tensor reduced = Tensor::ZerosUnchecked(shape.dtype(), {shape.numel()});
      IRM_RETURN_IF_ERROR(ReduceInRankOrder(inputs, first.reduce, 0, shape.numel(), reduced, 0));
      for (const Contribution& c : round.parts)
        CopyElements(reduced, 0, *c.inout, 0, c.inout->numel());
      return Status::Ok();
    }
    case CommKind::kBroadcast: {
      const Tensor& src = *round.parts[static_cast<size_t>(first.root)].inout;
      for (size_t i = 0; i < n; ++i) {
        if (static_cast<int>(i) != first.root) {
          CopyElements(src, 0, *round.parts[i].inout, 0, src.numel());
        }
      }
      return Status::Ok();
    }
    case CommKind::kAllGather: {
      Tensor gathered = GatherInRankOrder(Inputs(round.parts));
      for (size_t i = 0; i < n; ++i) {
        *round.parts[i].out = i + 1 == n ? std::move(gathered) : gathered.Clone();
      }
      return Status::Ok();
    }
    case CommKind::kReduceScatter: {
      const std::vector<const Tensor*> inputs = Inputs(round.parts);
      std::vector<Tensor> results;
      for (size_t i = 0; i < n; ++i) {
        IRM_ASSIGN_OR_RETURN(Tensor out, ReduceScatterPart(inputs, first.reduce, i));
        results.push_back(std::move(out));
      }
      // Assigned only once every result is computed: an out may be another rank's in.
      for (size_t i = 0; i < n; ++i) *round.parts[i].out = std::move(results[i]);
      return Status::Ok();
    }
    case CommKind::kAllToAll: {
      const int64_t part = first.in->numel() / static_cast<int64_t>(n);
      std::vector<Tensor> results;
      for (size_t j = 0; j < n; ++j) {
        Tensor out = Tensor::ZerosUnchecked(first.in->dtype(), first.in->shape());
        for (size_t i = 0; i < n; ++i) {
          CopyElements(*round.parts[i].in, static_cast<int64_t>(j) * part, out,
                       static_cast<int64_t>(i) * part, part);
        }
        results.push_back(std::move(out));
      }
      for (size_t j = 0; j < n; ++j) *round.parts[j].out = std::move(results[j]);
      return Status::Ok();
    }
    case CommKind::kSend:
    case CommKind::kRecv:
      break;
  }
  return Status(StatusCode::kInternal, Location{}, "a point-to-point call in a collective round");
}

namespace {

// The elements a share works on at a time: every rank's block stays in the core's cache between
// reducing it and copying the result out.
constexpr int64_t kShareBlock = 8192;

// The first element of share `g` of `n` over `count` elements.
int64_t ShareBegin(int64_t count, size_t g, size_t n) {
  return count * static_cast<int64_t>(g) / static_cast<int64_t>(n);
}

}  // namespace

void ThreadWorld::ComputeShare(std::unique_lock<std::mutex>& lock, Round& round,
                               size_t group_rank) {
  lock.unlock();
  const size_t n = round.parts.size();
  const Contribution& first = round.parts[0];
  Status status;
  switch (first.kind) {
    case CommKind::kAllReduce: {
      // Elements [begin, end) of every rank's inout: reduced in rank order into rank 0's (which
      // ReduceInRankOrder allows: each element is read everywhere before it is written), then
      // copied to the others while the block is in cache. The shares are disjoint.
      std::vector<const Tensor*> inputs;
      for (const Contribution& c : round.parts) inputs.push_back(c.inout);
      Tensor& target = *first.inout;
      const int64_t begin = ShareBegin(target.numel(), group_rank, n);
      const int64_t end = ShareBegin(target.numel(), group_rank + 1, n);
      for (int64_t b = begin; b < end && status.ok(); b += kShareBlock) {
        const int64_t count = std::min(kShareBlock, end - b);
        status = ReduceInRankOrder(inputs, first.reduce, b, count, target, b);
        for (size_t r = 1; r < n && status.ok(); ++r) {
          CopyElements(target, b, *round.parts[r].inout, b, count);
        }
      }
      break;
    }
    case CommKind::kReduceScatter: {
      StatusOr<Tensor> out = ReduceScatterPart(Inputs(round.parts), first.reduce, group_rank);
      status = out.status();
      if (out.ok()) round.results[group_rank] = std::move(out).value();
      break;
    }
    case CommKind::kAllGather:
      round.results[group_rank] = GatherInRankOrder(Inputs(round.parts));
      break;
    default:
      status = Status(StatusCode::kInternal, Location{},
                      fmt::format("{} is not computed in shares", CommKindName(first.kind)));
  }
  lock.lock();
  if (!status.ok() && round.status.ok()) round.status = std::move(status);
  if (++round.shares_done == n) {
    round.done = true;
    matcher_.cv().notify_all();
  }
}

// ---- point to point
// ------------------------------------------------------------------------------

Status ThreadWorld::Send(int group_index, int group_rank, const Tensor& in, int peer,
                         const CallSite& site) {
  auto message = std::make_shared<Message>();
  if (matcher_.options().p2p.mode == schedules::P2pMode::kBuffered) {
    message->copy = in.Clone();  // outside the lock: the sender's own tensor
    message->tensor = &message->copy;
  } else {
    message->tensor = &in;
  }
  return matcher_.Send(group_index, group_rank, peer, std::move(message), site);
}

Status ThreadWorld::Recv(int group_index, int group_rank, Tensor* out, int peer,
                         const CallSite& site) {
  std::unique_lock<std::mutex> lock(matcher_.mutex());
  IRM_ASSIGN_OR_RETURN(std::shared_ptr<RankMatcher::Message> taken,
                       matcher_.Take(lock, group_index, group_rank, peer, site));
  Message& message = static_cast<Message&>(*taken);
  const Tensor& sent = *message.tensor;
  Status status;
  if (out->defined() && (out->dtype() != sent.dtype() || out->shape() != sent.shape())) {
    status = matcher_.MismatchedMessage(group_index, group_rank, peer, *out, site, message,
                                        sent.Describe());
  } else if (out->defined()) {
    CopyElements(sent, 0, *out, 0, sent.numel());
  } else {
    *out = sent.Clone();
  }
  matcher_.Release(message, status);
  return status;
}

}  // namespace irm::rt
