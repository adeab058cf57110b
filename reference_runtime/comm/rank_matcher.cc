// RankMatcher (rank_matcher.h): process groups, collective rounds and their call checks,
// point-to-point channels under the p2p model, the run of the ranks, the abort on failure and the
// hang checks, all under one lock (a handful of rank threads on few cores: simplicity and a
// global view beat finer locking here).
#include "reference_runtime/comm/rank_matcher.h"

#include <algorithm>
#include <set>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace irm::rt {
namespace {

// "all_reduce sum float32[4, 8] (c_allreduce_sum, ring 0, ...)".
std::string DescribeCall(const RankMatcher::Call& call, int ring_id) {
  std::string text = CommKindName(call.kind);
  if (call.kind == CommKind::kAllReduce || call.kind == CommKind::kReduceScatter) {
    text += fmt::format(" {}", ReduceOpName(call.reduce));
  }
  if (call.kind == CommKind::kBroadcast) text += fmt::format(" from root {}", call.root);
  if (call.kind != CommKind::kBarrier && call.tensor != nullptr) {
    text += " " + call.tensor->Describe();
  }
  std::string where = DescribeSite(ring_id, call.site);
  if (!call.site.op_type.empty()) where = call.site.op_type + ", " + where;
  return fmt::format("{} ({})", text, where);
}

}  // namespace

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

RankMatcher::RankMatcher(int world_size, std::vector<CommGroup> groups, Options options,
                         const CommFactory& make_comm)
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
      comms_.push_back(make_comm(static_cast<int>(g), static_cast<int>(i)));
      if (options_.trace) {
        comms_.back()->set_trace(traces_[static_cast<size_t>(spec.ranks[i])].get());
      }
      comm_index_[{spec.ranks[i], spec.ring_id}] = comms_.back().get();
    }
  }
}

StatusOr<Communicator*> RankMatcher::For(int rank, int ring_id) {
  auto it = comm_index_.find({rank, ring_id});
  if (it != comm_index_.end()) return it->second;
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

CommContext RankMatcher::Context(int rank) {
  CommContext context;
  context.rank = rank;
  context.communicator = [this, rank](int ring_id) { return For(rank, ring_id); };
  return context;
}

const CommTrace* RankMatcher::trace(int rank) const {
  if (!options_.trace || rank < 0 || rank >= world_size_) return nullptr;
  return traces_[static_cast<size_t>(rank)].get();
}

Status RankMatcher::RunRanks(const std::function<Status(int rank)>& fn) {
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

void RankMatcher::Abort(Status status) {
  if (!abort_.ok()) return;
  abort_ = std::move(status);
  cv_.notify_all();
}

void RankMatcher::CheckHang() {
  if (!abort_.ok()) return;
  Status hang = watchdog_.Check();
  if (!hang.ok()) Abort(std::move(hang));
}

Status RankMatcher::Aborted(int rank) {
  woken_[static_cast<size_t>(rank)] = true;
  return abort_;
}

Status RankMatcher::Wait(std::unique_lock<std::mutex>& lock, int rank, PendingWait wait) {
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

Status RankMatcher::JoinRound(int group_index, int group_rank, const Call& call, bool* last,
                              std::shared_ptr<Round>* joined,
                              const std::function<std::shared_ptr<Round>(size_t n)>& make_round) {
  Group& group = groups_[static_cast<size_t>(group_index)];
  const int rank = group.spec.ranks[static_cast<size_t>(group_rank)];
  if (!abort_.ok()) return Aborted(rank);
  const int64_t index = group.next_round[static_cast<size_t>(group_rank)]++;
  std::shared_ptr<Round>& slot = group.rounds[index];
  if (slot == nullptr) slot = make_round(group.spec.ranks.size());
  std::shared_ptr<Round> round = slot;
  round->calls[static_cast<size_t>(group_rank)] = call;
  round->joined[static_cast<size_t>(group_rank)] = true;
  *last = ++round->arrived == group.spec.ranks.size();
  if (*last) group.rounds.erase(index);
  *joined = std::move(round);
  return Status::Ok();
}

Status RankMatcher::WaitForRound(std::unique_lock<std::mutex>& lock, int group_index,
                                 int group_rank, const std::shared_ptr<Round>& round,
                                 std::function<bool()> ready) {
  const CommGroup& spec = group(group_index);
  const Call& call = round->calls[static_cast<size_t>(group_rank)];
  PendingWait wait;
  wait.kind = call.kind;
  wait.ring_id = spec.ring_id;
  wait.site = call.site;
  wait.ready = std::move(ready);
  wait.waiting_for = [round, ranks = spec.ranks] {
    std::vector<int> absent;
    for (size_t i = 0; i < ranks.size(); ++i) {
      if (!round->joined[i]) absent.push_back(ranks[i]);
    }
    return absent;
  };
  return Wait(lock, GlobalRank(group_index, group_rank), std::move(wait));
}

Status RankMatcher::CheckCallsAgree(int group_index, const Round& round) const {
  const CommGroup& spec = group(group_index);
  const size_t n = round.calls.size();
  const Call& first = round.calls[0];
  bool agree = true;
  for (size_t i = 1; i < n && agree; ++i) {
    const Call& c = round.calls[i];
    agree = c.kind == first.kind;
    if (agree && (c.kind == CommKind::kAllReduce || c.kind == CommKind::kReduceScatter)) {
      agree = c.reduce == first.reduce;
    }
    if (agree && c.kind == CommKind::kBroadcast) agree = c.root == first.root;
    if (agree && c.kind != CommKind::kBarrier) {
      const Tensor& a = *first.tensor;
      const Tensor& b = *c.tensor;
      agree = a.dtype() == b.dtype() && a.numel() == b.numel();
      if (agree && (c.kind == CommKind::kAllGather || c.kind == CommKind::kAllToAll ||
                    c.kind == CommKind::kReduceScatter)) {
        agree = a.shape() == b.shape();
      }
    }
  }
  if (agree) return Status::Ok();
  std::vector<std::string> calls;
  for (size_t i = 0; i < n; ++i) {
    calls.push_back(
        fmt::format("rank {} calls {}", spec.ranks[i], DescribeCall(round.calls[i], spec.ring_id)));
  }
  return Status(StatusCode::kInvalid, Location{},
                fmt::format("mismatched collective calls in process group {}: {}", spec.ring_id,
                            fmt::join(calls, "; ")));
}

// ---- point to point
// ------------------------------------------------------------------------------

Status RankMatcher::Send(int group_index, int group_rank, int peer,
                         std::shared_ptr<Message> message, const CallSite& site) {
  const bool buffered = options_.p2p.mode == schedules::P2pMode::kBuffered;
  std::unique_lock<std::mutex> lock(mu_);
  const CommGroup& spec = group(group_index);
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

StatusOr<std::shared_ptr<RankMatcher::Message>> RankMatcher::Take(
    std::unique_lock<std::mutex>& lock, int group_index, int group_rank, int peer,
    const CallSite& site) {
  const CommGroup& spec = group(group_index);
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
  return message;
}

void RankMatcher::Release(Message& message, Status status) {
  message.status = std::move(status);
  message.taken = true;
  cv_.notify_all();
}

Status RankMatcher::MismatchedMessage(int group_index, int group_rank, int peer, const Tensor& out,
                                      const CallSite& site, const Message& message,
                                      const std::string& sent) const {
  const CommGroup& spec = group(group_index);
  const int rank = spec.ranks[static_cast<size_t>(group_rank)];
  const int from = spec.ranks[static_cast<size_t>(peer)];
  const std::string name = site.op_type.empty() ? "recv" : site.op_type;
  const std::string sender = message.site.op_type.empty() ? "send" : message.site.op_type;
  return Status(StatusCode::kInvalid, Location{},
                fmt::format("{} on rank {} expects {} from rank {} ({}), but rank {} sends {} ({})",
                            name, rank, out.Describe(), from, DescribeSite(spec.ring_id, site),
                            from, sent, sender + ", " + DescribeSite(spec.ring_id, message.site)));
}

std::string RankMatcher::DescribeMessage(const Message& message, int ring_id) {
  const std::string name = message.site.op_type.empty() ? "send" : message.site.op_type;
  return fmt::format("{} from rank {} ({})", name, message.sender,
                     DescribeSite(ring_id, message.site));
}

Status RankMatcher::Unreceived(int rank, const std::vector<std::string>& messages) {
  return Status(
      StatusCode::kInternal, Location{},
      fmt::format("rank {} finished without receiving {} buffered message{}: {}", rank,
                  messages.size(), messages.size() == 1 ? "" : "s", fmt::join(messages, "; ")));
}

Status RankMatcher::UnreceivedBy(int rank) const {
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
