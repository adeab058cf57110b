// ThreadWorld (thread_world.h): rendezvous collectives, point-to-point messages under the p2p
// model, the abort on failure and the hang checks, all under one lock (a handful of rank threads on
// few cores: simplicity and a global view beat finer locking here). Only the element work of a
// reducing collective runs outside it, each rank computing its share once every rank has joined.
#include "reference_runtime/comm/thread_world.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "reference_runtime/comm/reduce.h"

namespace irm::rt {

struct ThreadWorld::Round {
  explicit Round(size_t n) : parts(n), joined(n, false) {}
  std::vector<Contribution> parts;  // by group rank
  std::vector<bool> joined;
  size_t arrived = 0;
  // Every rank has joined and the calls agree: each rank computes its share (ComputeShare).
  bool split = false;
  size_t shares_done = 0;
  // reduce_scatter and all_gather: each group rank's result, stored into its `out` once every
  // share is done (an out may be another rank's in).
  std::vector<Tensor> results;
  bool done = false;
  Status status;
};

struct ThreadWorld::Message {
  // What the receiver copies: the sender's tensor (rendezvous: valid while the sender waits for
  // the message to be taken) or `copy`.
  const Tensor* tensor = nullptr;
  Tensor copy;           // buffered: the message as sent, so that the sender may reuse its tensor
  int sender = 0;        // global rank
  int64_t sequence = 0;  // in its channel
  CallSite site;
  bool taken = false;
  Status status;  // what the sender returns once taken
};

namespace {

// From this many elements on, a reducing collective is computed in shares by every rank of the
// round (ComputeShare); below, by the last rank to join.
constexpr int64_t kSplitMinElements = int64_t{1} << 14;

}  // namespace

class ThreadWorld::GroupComm final : public Communicator {
 public:
  GroupComm(ThreadWorld* world, int group, int group_rank)
      : world_(world), group_(group), group_rank_(group_rank) {}

  int rank() const override { return group_rank_; }
  int size() const override { return static_cast<int>(spec().ranks.size()); }
  int ring_id() const override { return spec().ring_id; }
  int GlobalRank(int group_rank) const override {
    return spec().ranks[static_cast<size_t>(group_rank)];
  }

 protected:
  Status DoAllReduce(Tensor& inout, ReduceOp op, const CallSite& site) override {
    return world_->Collective(
        group_, group_rank_,
        {.kind = CommKind::kAllReduce, .reduce = op, .inout = &inout, .site = site});
  }
  Status DoBroadcast(Tensor& inout, int root, const CallSite& site) override {
    return world_->Collective(
        group_, group_rank_,
        {.kind = CommKind::kBroadcast, .root = root, .inout = &inout, .site = site});
  }
  Status DoAllGather(const Tensor& in, Tensor* out, const CallSite& site) override {
    return world_->Collective(group_, group_rank_,
                              {.kind = CommKind::kAllGather, .in = &in, .out = out, .site = site});
  }
  Status DoReduceScatter(const Tensor& in, Tensor* out, ReduceOp op,
                         const CallSite& site) override {
    return world_->Collective(
        group_, group_rank_,
        {.kind = CommKind::kReduceScatter, .reduce = op, .in = &in, .out = out, .site = site});
  }
  Status DoAllToAll(const Tensor& in, Tensor* out, const CallSite& site) override {
    return world_->Collective(group_, group_rank_,
                              {.kind = CommKind::kAllToAll, .in = &in, .out = out, .site = site});
  }
  Status DoSend(const Tensor& in, int peer, const CallSite& site) override {
    return world_->Send(group_, group_rank_, in, peer, site);
  }
  Status DoRecv(Tensor* out, int peer, const CallSite& site) override {
    return world_->Recv(group_, group_rank_, out, peer, site);
  }
  Status DoBarrier(const CallSite& site) override {
    return world_->Collective(group_, group_rank_, {.kind = CommKind::kBarrier, .site = site});
  }

 private:
  const CommGroup& spec() const { return world_->groups_[static_cast<size_t>(group_)].spec; }

  ThreadWorld* world_;
  int group_;
  int group_rank_;
};

StatusOr<std::vector<CommGroup>> CheckCommGroups(int world_size, std::vector<CommGroup> groups) {
  const auto invalid = [](std::string message) {
    return Status(StatusCode::kInvalidArgument, Location{}, std::move(message));
  };
  if (world_size < 1) return invalid(fmt::format("world size {} is below 1", world_size));
  std::set<int> rings;
  for (const CommGroup& group : groups) {
    if (!rings.insert(group.ring_id).second) {
      return invalid(fmt::format("process group {} is declared twice", group.ring_id));
    }
    if (group.ranks.empty()) {
      return invalid(fmt::format("process group {} has no ranks", group.ring_id));
    }
    std::set<int> seen;
    for (int rank : group.ranks) {
      if (rank < 0 || rank >= world_size) {
        return invalid(fmt::format("process group {} names rank {}, outside the world of {}",
                                   group.ring_id, rank, world_size));
      }
      if (!seen.insert(rank).second) {
        return invalid(fmt::format("process group {} holds rank {} twice", group.ring_id, rank));
      }
    }
  }
  if (!rings.contains(0)) {
    CommGroup all{0, {}};
    for (int r = 0; r < world_size; ++r) all.ranks.push_back(r);
    groups.insert(groups.begin(), std::move(all));
  }
  return groups;
}

StatusOr<std::unique_ptr<ThreadWorld>> ThreadWorld::Create(int world_size,
                                                           std::vector<CommGroup> groups,
                                                           ThreadWorldOptions options) {
  IRM_ASSIGN_OR_RETURN(groups, CheckCommGroups(world_size, std::move(groups)));
  return std::unique_ptr<ThreadWorld>(
      new ThreadWorld(world_size, std::move(groups), std::move(options)));
}

ThreadWorld::ThreadWorld(int world_size, std::vector<CommGroup> groups, ThreadWorldOptions options)
    : world_size_(world_size),
      options_(std::move(options)),
      watchdog_(world_size),
      woken_(static_cast<size_t>(world_size), false),
      statuses_(static_cast<size_t>(world_size)) {
  if (options_.trace) {
    for (int r = 0; r < world_size; ++r) traces_.push_back(std::make_unique<CommTrace>());
  }
  for (CommGroup& spec : groups) {
    Group group;
    group.next_round.assign(spec.ranks.size(), 0);
    group.spec = std::move(spec);
    groups_.push_back(std::move(group));
  }
  for (size_t g = 0; g < groups_.size(); ++g) {
    const CommGroup& spec = groups_[g].spec;
    for (size_t i = 0; i < spec.ranks.size(); ++i) {
      comms_.push_back(std::make_unique<GroupComm>(this, static_cast<int>(g), static_cast<int>(i)));
      if (options_.trace)
        comms_.back()->set_trace(traces_[static_cast<size_t>(spec.ranks[i])].get());
      comm_index_[{spec.ranks[i], spec.ring_id}] = comms_.back().get();
    }
  }
}

ThreadWorld::~ThreadWorld() = default;

StatusOr<Communicator*> ThreadWorld::For(int rank, int ring_id) {
  auto it = comm_index_.find({rank, ring_id});
  if (it != comm_index_.end()) return static_cast<Communicator*>(it->second);
  auto group = std::find_if(groups_.begin(), groups_.end(),
                            [&](const Group& g) { return g.spec.ring_id == ring_id; });
  if (group == groups_.end()) {
    return Status(StatusCode::kNotFound, Location{},
                  fmt::format("ring_id {} names no process group", ring_id));
  }
  return Status(StatusCode::kInvalidArgument, Location{},
                fmt::format("process group {} (ranks [{}]) does not hold rank {}", ring_id,
                            fmt::join(group->spec.ranks, ", "), rank));
}

CommContext ThreadWorld::Context(int rank) {
  CommContext context;
  context.rank = rank;
  context.communicator = [this, rank](int ring_id) { return For(rank, ring_id); };
  return context;
}

const CommTrace* ThreadWorld::trace(int rank) const {
  if (!options_.trace || rank < 0 || rank >= world_size_) return nullptr;
  return traces_[static_cast<size_t>(rank)].get();
}

Status ThreadWorld::RunRanks(const std::function<Status(int rank)>& fn) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    abort_ = Status::Ok();
    watchdog_.Reset();
    mailboxes_.clear();
    for (Group& group : groups_) {
      group.rounds.clear();
      std::fill(group.next_round.begin(), group.next_round.end(), 0);
    }
    std::fill(woken_.begin(), woken_.end(), false);
    std::fill(statuses_.begin(), statuses_.end(), Status::Ok());
    for (std::unique_ptr<CommTrace>& trace : traces_) trace->Clear();
  }
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(world_size_));
  for (int rank = 0; rank < world_size_; ++rank) {
    threads.emplace_back([this, &fn, rank] {
      Status status = fn(rank);
      std::lock_guard<std::mutex> lock(mu_);
      const size_t r = static_cast<size_t>(rank);
      if (status.ok() && abort_.ok()) status = UnreceivedBy(rank);
      watchdog_.Finish(rank);
      if (!status.ok() && !woken_[r]) {
        Abort(Status(StatusCode::kInternal, Location{},
                     fmt::format("rank {} failed: {}", rank, status.message())));
      }
      statuses_[r] = std::move(status);
      CheckHang();
    });
  }
  for (std::thread& t : threads) t.join();
  for (size_t r = 0; r < statuses_.size(); ++r) {
    if (!statuses_[r].ok() && !woken_[r]) return statuses_[r];
  }
  for (const Status& status : statuses_) {
    if (!status.ok()) return status;
  }
  return Status::Ok();
}

void ThreadWorld::Abort(Status status) {
  if (!abort_.ok()) return;
  abort_ = std::move(status);
  cv_.notify_all();
}

void ThreadWorld::CheckHang() {
  if (!abort_.ok()) return;
  Status hang = watchdog_.Check();
  if (!hang.ok()) Abort(std::move(hang));
}

Status ThreadWorld::Aborted(int rank) {
  woken_[static_cast<size_t>(rank)] = true;
  return abort_;
}

Status ThreadWorld::Wait(std::unique_lock<std::mutex>& lock, int rank, PendingWait wait) {
  std::function<bool()> ready = wait.ready;
  watchdog_.Block(rank, std::move(wait));
  CheckHang();
  auto deadline = std::chrono::steady_clock::now() + options_.timeout;
  while (!ready() && abort_.ok()) {
    if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && !ready() && abort_.ok()) {
      Abort(watchdog_.TimedOut(rank, options_.timeout));
    }
  }
  watchdog_.Unblock(rank);
  if (ready()) return Status::Ok();
  return Aborted(rank);
}

// ---- collectives
// ---------------------------------------------------------------------------------

Status ThreadWorld::Collective(int group_index, int group_rank, Contribution contribution) {
  std::unique_lock<std::mutex> lock(mu_);
  Group& group = groups_[static_cast<size_t>(group_index)];
  const int rank = group.spec.ranks[static_cast<size_t>(group_rank)];
  if (!abort_.ok()) return Aborted(rank);
  const int64_t index = group.next_round[static_cast<size_t>(group_rank)]++;
  std::shared_ptr<Round>& slot = group.rounds[index];
  if (slot == nullptr) slot = std::make_shared<Round>(group.spec.ranks.size());
  std::shared_ptr<Round> round = slot;
  const CallSite site = contribution.site;
  const CommKind kind = contribution.kind;
  round->parts[static_cast<size_t>(group_rank)] = std::move(contribution);
  round->joined[static_cast<size_t>(group_rank)] = true;
  const size_t n = group.spec.ranks.size();
  if (++round->arrived == n) {
    Status agree = CheckCallsAgree(group, *round);
    group.rounds.erase(index);
    // Small rounds are computed by the last arriver: waking every rank for its share costs more
    // than the elements.
    // Sized only once the calls agree: a rank of a mismatched round may bring no tensor at all
    // (a barrier).
    const Contribution& first = round->parts[0];
    const Tensor* sized = first.in != nullptr ? first.in : first.inout;
    const bool splits = agree.ok() && n > 1 &&
                        (kind == CommKind::kAllReduce || kind == CommKind::kReduceScatter ||
                         kind == CommKind::kAllGather) &&
                        sized->numel() >= kSplitMinElements;
    if (!splits) {
      round->status = agree.ok() ? Complete(group, *round) : std::move(agree);
      round->done = true;
      cv_.notify_all();
      return round->status;
    }
    round->split = true;
    round->results.resize(n);
    cv_.notify_all();
  } else {
    PendingWait wait;
    wait.kind = kind;
    wait.ring_id = group.spec.ring_id;
    wait.site = site;
    wait.ready = [round] { return round->done || round->split; };
    wait.waiting_for = [round, ranks = group.spec.ranks] {
      std::vector<int> absent;
      for (size_t i = 0; i < ranks.size(); ++i) {
        if (!round->joined[i]) absent.push_back(ranks[i]);
      }
      return absent;
    };
    IRM_RETURN_IF_ERROR(Wait(lock, rank, std::move(wait)));
    if (!round->split) return round->status;
  }
  // Every rank of the round computes its share, even when the world aborts meanwhile: a rank
  // returning early would leave its peers writing into its tensors after it moved on. A share
  // always ends, so this wait needs no watchdog (the rank counts as busy).
  const size_t group_rank_index = static_cast<size_t>(group_rank);
  ComputeShare(lock, *round, group_rank_index);
  cv_.wait(lock, [&] { return round->done; });
  if (!round->status.ok()) return round->status;
  if (kind == CommKind::kReduceScatter || kind == CommKind::kAllGather) {
    *round->parts[group_rank_index].out = std::move(round->results[group_rank_index]);
  }
  return Status::Ok();
}

namespace {

std::string DescribeCall(CommKind kind, ReduceOp reduce, int root, const Tensor* t,
                         const CallSite& site, int ring_id) {
  std::string text = CommKindName(kind);
  if (kind == CommKind::kAllReduce || kind == CommKind::kReduceScatter) {
    text += fmt::format(" {}", ReduceOpName(reduce));
  }
  if (kind == CommKind::kBroadcast) text += fmt::format(" from root {}", root);
  if (t != nullptr) text += " " + t->Describe();
  std::string where = DescribeSite(ring_id, site);
  if (!site.op_type.empty()) where = site.op_type + ", " + where;
  return fmt::format("{} ({})", text, where);
}

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

Status ThreadWorld::CheckCallsAgree(const Group& group, const Round& round) const {
  const size_t n = round.parts.size();
  const auto tensor_of = [](const Contribution& c) -> const Tensor* {
    return c.in != nullptr ? c.in : c.inout;
  };
  // Every rank must make the same call: kind, reduction, root, dtype and element count (shape
  // where the result's shape is built from the others' tensors).
  const Contribution& first = round.parts[0];
  bool agree = true;
  for (size_t i = 1; i < n && agree; ++i) {
    const Contribution& c = round.parts[i];
    agree = c.kind == first.kind;
    if (agree && (c.kind == CommKind::kAllReduce || c.kind == CommKind::kReduceScatter)) {
      agree = c.reduce == first.reduce;
    }
    if (agree && c.kind == CommKind::kBroadcast) agree = c.root == first.root;
    if (agree && c.kind != CommKind::kBarrier) {
      const Tensor& a = *tensor_of(first);
      const Tensor& b = *tensor_of(c);
      agree = a.dtype() == b.dtype() && a.numel() == b.numel();
      if (agree && (c.kind == CommKind::kAllGather || c.kind == CommKind::kAllToAll ||
                    c.kind == CommKind::kReduceScatter)) {
        agree = a.shape() == b.shape();
      }
    }
  }
  if (!agree) {
    std::vector<std::string> calls;
    for (size_t i = 0; i < n; ++i) {
      const Contribution& c = round.parts[i];
      calls.push_back(
          fmt::format("rank {} calls {}", group.spec.ranks[i],
                      DescribeCall(c.kind, c.reduce, c.root,
                                   c.kind == CommKind::kBarrier ? nullptr : tensor_of(c), c.site,
                                   group.spec.ring_id)));
    }
    return Status(StatusCode::kInvalid, Location{},
                  fmt::format("mismatched collective calls in process group {}: {}",
                              group.spec.ring_id, fmt::join(calls, "; ")));
  }
  return Status::Ok();
}

Status ThreadWorld::Complete(const Group& /*group*/, Round& round) {
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
    cv_.notify_all();
  }
}

// ---- point to point
// ------------------------------------------------------------------------------

Status ThreadWorld::Send(int group_index, int group_rank, const Tensor& in, int peer,
                         const CallSite& site) {
  const bool buffered = options_.p2p.mode == schedules::P2pMode::kBuffered;
  auto message = std::make_shared<Message>();
  if (buffered) {
    message->copy = in.Clone();  // outside the lock: the sender's own tensor
    message->tensor = &message->copy;
  } else {
    message->tensor = &in;
  }
  std::unique_lock<std::mutex> lock(mu_);
  const CommGroup& spec = groups_[static_cast<size_t>(group_index)].spec;
  const int rank = spec.ranks[static_cast<size_t>(group_rank)];
  const int to = spec.ranks[static_cast<size_t>(peer)];
  if (!abort_.ok()) return Aborted(rank);
  message->sender = rank;
  message->site = site;
  // std::map keeps the node (and the channel) where it is while other channels come and go.
  Channel& channel = mailboxes_[{spec.ring_id, rank, to}];
  message->sequence = channel.sent++;
  channel.messages.push_back(message);
  cv_.notify_all();
  // Rendezvous: the receiver took it. Buffered(K): it also counts as delivered while fewer than K
  // unreceived messages are ahead of it in the channel, itself included.
  const int64_t depth = buffered ? options_.p2p.depth : 0;
  const auto delivered = [message, &channel, depth] {
    return message->taken || message->sequence - channel.taken < depth;
  };
  if (buffered && watchdog_.Finished(to)) {
    // Nobody will ever take it: the rendezvous case is the watchdog's "finished while waiting".
    channel.messages.pop_back();
    --channel.sent;
    return Unreceived(to, {DescribeMessage(*message, spec.ring_id)});
  }
  if (delivered()) return Status::Ok();
  PendingWait wait;
  wait.kind = CommKind::kSend;
  wait.ring_id = spec.ring_id;
  wait.peer = to;
  wait.site = site;
  wait.ready = delivered;
  wait.waiting_for = [to] { return std::vector<int>{to}; };
  IRM_RETURN_IF_ERROR(Wait(lock, rank, std::move(wait)));
  return message->taken ? message->status : Status::Ok();
}

Status ThreadWorld::Recv(int group_index, int group_rank, Tensor* out, int peer,
                         const CallSite& site) {
  std::unique_lock<std::mutex> lock(mu_);
  const CommGroup& spec = groups_[static_cast<size_t>(group_index)].spec;
  const int rank = spec.ranks[static_cast<size_t>(group_rank)];
  const int from = spec.ranks[static_cast<size_t>(peer)];
  if (!abort_.ok()) return Aborted(rank);
  Channel& channel = mailboxes_[{spec.ring_id, from, rank}];
  if (channel.messages.empty()) {
    PendingWait wait;
    wait.kind = CommKind::kRecv;
    wait.ring_id = spec.ring_id;
    wait.peer = from;
    wait.site = site;
    wait.ready = [&channel] { return !channel.messages.empty(); };
    wait.waiting_for = [from] { return std::vector<int>{from}; };
    IRM_RETURN_IF_ERROR(Wait(lock, rank, std::move(wait)));
  }
  std::shared_ptr<Message> message = channel.messages.front();
  channel.messages.pop_front();
  ++channel.taken;
  const Tensor& sent = *message->tensor;
  if (out->defined() && (out->dtype() != sent.dtype() || out->shape() != sent.shape())) {
    const std::string name = site.op_type.empty() ? "recv" : site.op_type;
    const std::string sender = message->site.op_type.empty() ? "send" : message->site.op_type;
    message->status = Status(
        StatusCode::kInvalid, Location{},
        fmt::format("{} on rank {} expects {} from rank {} ({}), but rank {} sends {} ({})", name,
                    rank, out->Describe(), from, DescribeSite(spec.ring_id, site), from,
                    sent.Describe(), sender + ", " + DescribeSite(spec.ring_id, message->site)));
  } else if (out->defined()) {
    CopyElements(sent, 0, *out, 0, sent.numel());
  } else {
    *out = sent.Clone();
  }
  message->taken = true;
  cv_.notify_all();
  return message->status;
}

std::string ThreadWorld::DescribeMessage(const Message& message, int ring_id) {
  const std::string name = message.site.op_type.empty() ? "send" : message.site.op_type;
  return fmt::format("{} from rank {} ({})", name, message.sender,
                     DescribeSite(ring_id, message.site));
}

Status ThreadWorld::Unreceived(int rank, const std::vector<std::string>& messages) {
  return Status(
      StatusCode::kInternal, Location{},
      fmt::format("rank {} finished without receiving {} buffered message{}: {}", rank,
                  messages.size(), messages.size() == 1 ? "" : "s", fmt::join(messages, "; ")));
}

Status ThreadWorld::UnreceivedBy(int rank) const {
  // Under rendezvous every unreceived message has its sender waiting on it: the watchdog's case.
  // Under buffered, so has a message beyond its channel's depth; the ones before it are lost.
  if (options_.p2p.mode != schedules::P2pMode::kBuffered) return Status::Ok();
  std::vector<std::string> lost;
  for (const auto& [key, channel] : mailboxes_) {
    const int ring_id = std::get<0>(key);
    const int receiver = std::get<2>(key);
    if (receiver != rank) continue;
    for (const std::shared_ptr<Message>& message : channel.messages) {
      if (message->sequence - channel.taken < options_.p2p.depth) {
        lost.push_back(DescribeMessage(*message, ring_id));
      }
    }
  }
  if (lost.empty()) return Status::Ok();
  return Unreceived(rank, lost);
}

}  // namespace irm::rt
