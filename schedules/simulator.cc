// Simulate / MinBufferDepth (simulator.h).
#include "schedules/simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <utility>

namespace irm::schedules {
namespace {

Location StepLocation(int rank, size_t index) {
  return Location{}.With(fmt::format("rank {}, step {}", rank, index));
}

Status CheckProgram(const CommProgram& program, const P2pModel& model) {
  if (model.mode == P2pMode::kBuffered && model.depth < 1) {
    return Status(StatusCode::kInvalidArgument, Location{},
                  fmt::format("buffered depth {} is below 1", model.depth));
  }
  const int world = static_cast<int>(program.ranks.size());
  for (int r = 0; r < world; ++r) {
    const std::vector<Step>& steps = program.ranks[static_cast<size_t>(r)];
    for (size_t i = 0; i < steps.size(); ++i) {
      const Step& step = steps[i];
      if (step.kind == StepKind::kCompute) {
        if (step.cost < 1) {
          return Status(
              StatusCode::kInvalidArgument, StepLocation(r, i),
              fmt::format("compute step '{}' costs {} ticks (at least 1)", step.label, step.cost));
        }
        continue;
      }
      const Channel& c = step.channel;
      if (c.sender < 0 || c.sender >= world || c.receiver < 0 || c.receiver >= world) {
        return Status(StatusCode::kInvalidArgument, StepLocation(r, i),
                      fmt::format("{} names rank {} -> {}, outside the program's {} ranks",
                                  DescribeStep(step), c.sender, c.receiver, world));
      }
      if (c.sender == c.receiver) {
        return Status(StatusCode::kInvalidArgument, StepLocation(r, i),
                      fmt::format("{} goes from rank {} to itself", DescribeStep(step), c.sender));
      }
      const int own = step.kind == StepKind::kSend ? c.sender : c.receiver;
      if (own != r) {
        return Status(StatusCode::kInvalidArgument, StepLocation(r, i),
                      fmt::format("{} on channel {} -> {} is held by rank {}, not rank {}",
                                  DescribeStep(step), c.sender, c.receiver, r, own));
      }
    }
  }
  return Status::Ok();
}

// One link of a chain of waits: "rank 0 waits in send (...) for rank 1", and for the links after
// the first, whose rank the previous one named, ", which waits in recv (...) for rank 0".
std::string WaitText(const Wait& wait, bool first) {
  const std::string what =
      fmt::format("waits in {} for rank {}", DescribeStep(wait.step), wait.peer);
  return first ? fmt::format("rank {} {}", wait.rank, what) : ", which " + what;
}

// A message in flight on a channel: the send that put it there.
struct InFlight {
  int rank = 0;
  int step_index = 0;
};

// Both ends name a message and the names differ: the receive would take another's data.
bool WrongMessage(const Step& send, const Step& recv) {
  return !send.message.empty() && !recv.message.empty() && send.message != recv.message;
}

class Simulation {
 public:
  Simulation(const CommProgram& program, const P2pModel& model)
      : program_(program), model_(model), world_(static_cast<int>(program.ranks.size())) {
    result_.model = model;
    result_.timeline.resize(static_cast<size_t>(world_));
    result_.next_step.assign(static_cast<size_t>(world_), 0);
    left_.assign(static_cast<size_t>(world_), 0);
  }

  SimResult Run() {
    while (!AllDone()) {
      acted_.assign(static_cast<size_t>(world_), false);
      for (auto& row : result_.timeline) row.push_back(-1);
      bool moved = RunCompute();
      // Sweep the ranks in order until nothing more moves this tick.
      for (bool again = true; again && !failed_;) {
        again = false;
        for (int r = 0; r < world_ && !failed_; ++r) {
          if (!acted_[Index(r)] && !Done(r) && TryComm(r)) again = moved = true;
        }
      }
      if (failed_) {
        ++result_.ticks;  // the tick of the wrong match, shown as its row
        break;
      }
      if (!moved) {
        for (auto& row : result_.timeline) row.pop_back();
        Stuck();
        break;
      }
      ++result_.ticks;
    }
    if (AllDone() && result_.outcome == SimOutcome::kCompleted) CheckLeftovers();
    const long slots = static_cast<long>(world_) * result_.ticks;
    result_.bubble_ratio =
        slots == 0 ? 0.0 : 1.0 - static_cast<double>(result_.compute_ticks) / slots;
    return std::move(result_);
  }

 private:
  static size_t Index(int r) { return static_cast<size_t>(r); }
  const std::vector<Step>& StepsOf(int r) const { return program_.ranks[Index(r)]; }
  int& Pc(int r) { return result_.next_step[Index(r)]; }
  bool Done(int r) const {
    return result_.next_step[Index(r)] >= static_cast<int>(StepsOf(r).size());
  }
  bool AllDone() const {
    for (int r = 0; r < world_; ++r) {
      if (!Done(r)) return false;
    }
    return true;
  }
  const Step& Head(int r) const {
    return StepsOf(r)[static_cast<size_t>(result_.next_step[Index(r)])];
  }
  void Mark(int r) {
    acted_[Index(r)] = true;
    result_.timeline[Index(r)].back() = Pc(r);
  }
  // Completes `r`'s head step this tick.
  void Complete(int r) {
    Mark(r);
    ++Pc(r);
  }

  // Every rank whose head step is compute runs one tick of it.
  bool RunCompute() {
    bool moved = false;
    for (int r = 0; r < world_; ++r) {
      if (Done(r) || Head(r).kind != StepKind::kCompute) continue;
      int& left = left_[Index(r)];
      if (left == 0) left = Head(r).cost;
      Mark(r);
      ++result_.compute_ticks;
      if (--left == 0) ++Pc(r);
      moved = true;
    }
    return moved;
  }

  Wait WaitAt(int r) const {
    const Step& step = Head(r);
    return Wait{r, result_.next_step[Index(r)], step,
                step.kind == StepKind::kSend ? step.channel.receiver : step.channel.sender};
  }

  void FailWrongMatch(const Wait& recv, const Wait& send) {
    failed_ = true;
    result_.outcome = SimOutcome::kWrongMatch;
    result_.wrong_receive = recv;
    result_.wrong_send = send;
    result_.diagnostic = fmt::format(
        "wrong match under {} at tick {}: rank {} step {}, {}, would take the message of rank {} "
        "step {}, {} (messages on a channel are received in the order they were sent)",
        P2pModelName(model_), result_.ticks, recv.rank, recv.step_index, DescribeStep(recv.step),
        send.rank, send.step_index, DescribeStep(send.step));
  }

  // Tries `r`'s head send or receive; true when it (and, under rendezvous, its peer) completed.
  bool TryComm(int r) {
    const Step& step = Head(r);
    const Channel& channel = step.channel;
    if (model_.mode == P2pMode::kRendezvous) {
      const int peer = step.kind == StepKind::kSend ? channel.receiver : channel.sender;
      if (acted_[Index(peer)] || Done(peer)) return false;
      const Step& other = Head(peer);
      const StepKind want = step.kind == StepKind::kSend ? StepKind::kRecv : StepKind::kSend;
      if (other.kind != want || other.channel != channel) return false;
      const Wait mine = WaitAt(r), theirs = WaitAt(peer);
      const Wait& send = step.kind == StepKind::kSend ? mine : theirs;
      const Wait& recv = step.kind == StepKind::kSend ? theirs : mine;
      if (WrongMessage(send.step, recv.step)) {
        FailWrongMatch(recv, send);
        return false;
      }
      Complete(r);
      Complete(peer);
      return true;
    }
    std::deque<InFlight>& queue = channels_[channel];
    if (step.kind == StepKind::kSend) {
      if (static_cast<int>(queue.size()) >= model_.depth) return false;
      queue.push_back({r, Pc(r)});
      Complete(r);
      return true;
    }
    if (queue.empty()) return false;
    const InFlight sent = queue.front();
    const Step& send_step = StepsOf(sent.rank)[static_cast<size_t>(sent.step_index)];
    if (WrongMessage(send_step, step)) {
      FailWrongMatch(WaitAt(r), Wait{sent.rank, sent.step_index, send_step, r});
      return false;
    }
    queue.pop_front();
    Complete(r);
    return true;
  }

  // Nothing moved in a tick: follow the wait-for edges to a cycle, or to a finished rank.
  void Stuck() {
    // A cycle first: that is a deadlock whatever the peers still hold.
    for (int start = 0; start < world_; ++start) {
      if (Done(start)) continue;
      std::map<int, int> seen;  // rank -> position on the path
      std::vector<int> path;
      int r = start;
      while (!Done(r) && !seen.contains(r)) {
        seen[r] = static_cast<int>(path.size());
        path.push_back(r);
        r = WaitAt(r).peer;
      }
      if (Done(r)) continue;
      std::vector<int> cycle(path.begin() + seen[r], path.end());
      size_t lowest = 0;
      for (size_t i = 1; i < cycle.size(); ++i) {
        if (cycle[i] < cycle[lowest]) lowest = i;
      }
      result_.outcome = SimOutcome::kDeadlock;
      for (size_t i = 0; i < cycle.size(); ++i) {
        result_.waits.push_back(WaitAt(cycle[(lowest + i) % cycle.size()]));
      }
      std::string text =
          fmt::format("deadlock under {} at tick {}: ", P2pModelName(model_), result_.ticks);
      for (size_t i = 0; i < result_.waits.size(); ++i) {
        const Wait& w = result_.waits[i];
        text += WaitText(w, i == 0);
      }
      result_.diagnostic = std::move(text);
      return;
    }
    // No cycle: some chain of waits ends at a rank that has finished. Report the first.
    for (int start = 0; start < world_; ++start) {
      if (Done(start)) continue;
      int r = start;
      while (!Done(r)) {
        result_.waits.push_back(WaitAt(r));
        r = WaitAt(r).peer;
      }
      break;
    }
    result_.outcome = SimOutcome::kUnmatched;
    std::string text = fmt::format(
        "unmatched send/recv under {} at tick {}: ", P2pModelName(model_), result_.ticks);
    for (size_t i = 0; i < result_.waits.size(); ++i) {
      const Wait& w = result_.waits[i];
      text += WaitText(w, i == 0);
    }
    const Wait& last = result_.waits.back();
    text += fmt::format(", which has finished: it has no {} left for it",
                        last.step.kind == StepKind::kSend ? "receive" : "send");
    result_.diagnostic = std::move(text);
  }

  // Every rank finished: a message still in a channel is a send no receive takes.
  void CheckLeftovers() {
    for (const auto& [channel, queue] : channels_) {
      if (queue.empty()) continue;
      const InFlight& sent = queue.front();
      const Step& step = StepsOf(sent.rank)[static_cast<size_t>(sent.step_index)];
      result_.outcome = SimOutcome::kUnmatched;
      result_.waits.push_back(Wait{sent.rank, sent.step_index, step, channel.receiver});
      result_.diagnostic = fmt::format(
          "unmatched send/recv under {}: rank {} step {}, {}, is never received: rank {} has no "
          "receive left for it ({} message(s) left on the channel)",
          P2pModelName(model_), sent.rank, sent.step_index, DescribeStep(step), channel.receiver,
          queue.size());
      return;
    }
  }

  const CommProgram& program_;
  P2pModel model_;
  int world_ = 0;
  SimResult result_;
  std::vector<int> left_;  // ticks left of the compute step in progress; 0: none
  std::vector<bool> acted_;
  std::map<Channel, std::deque<InFlight>> channels_;
  bool failed_ = false;
};

}  // namespace

const char* SimOutcomeName(SimOutcome outcome) {
  switch (outcome) {
    case SimOutcome::kCompleted:
      return "completed";
    case SimOutcome::kDeadlock:
      return "deadlock";
    case SimOutcome::kWrongMatch:
      return "wrong match";
    case SimOutcome::kUnmatched:
      return "unmatched";
  }
  return "?";
}

const char* StepKindName(StepKind kind) {
  switch (kind) {
    case StepKind::kCompute:
      return "compute";
    case StepKind::kSend:
      return "send";
    case StepKind::kRecv:
      return "recv";
  }
  return "?";
}

std::string DescribeStep(const Step& step) {
  std::string what = step.message;
  if (step.kind != StepKind::kCompute && step.channel.group != 0) {
    what += fmt::format("{}ring {}", what.empty() ? "" : ", ", step.channel.group);
  }
  std::string where = step.job.empty() ? step.label : step.job;
  const auto add = [&](const std::string& part) { where += where.empty() ? part : ", " + part; };
  if (step.micro_batch >= 0) add(fmt::format("micro-batch {}", step.micro_batch));
  if (step.chunk >= 0) add(fmt::format("chunk {}", step.chunk));
  if (!step.op.empty()) add(step.op);
  std::string inside = what;
  if (!where.empty()) inside += (inside.empty() ? "" : "; ") + where;
  if (inside.empty()) return StepKindName(step.kind);
  return fmt::format("{} ({})", StepKindName(step.kind), inside);
}

StatusOr<SimResult> Simulate(const CommProgram& program, const P2pModel& model) {
  IRM_RETURN_IF_ERROR(CheckProgram(program, model));
  return Simulation(program, model).Run();
}

StatusOr<std::optional<int>> MinBufferDepth(const CommProgram& program) {
  IRM_RETURN_IF_ERROR(CheckProgram(program, P2pModel::Rendezvous()));
  int messages = 0;
  for (const auto& steps : program.ranks) {
    for (const Step& step : steps) messages += step.kind == StepKind::kSend ? 1 : 0;
  }
  // With a depth no channel can fill no send ever waits: if that does not complete, none does.
  const int most = std::max(1, messages);
  if (!Simulation(program, P2pModel::Buffered(most)).Run().completed()) {
    return std::optional<int>();
  }
  if (Simulation(program, P2pModel::Rendezvous()).Run().completed()) return std::optional<int>(0);
  for (int depth = 1; depth < most; ++depth) {
    if (Simulation(program, P2pModel::Buffered(depth)).Run().completed()) {
      return std::optional<int>(depth);
    }
  }
  return std::optional<int>(most);
}

std::string BufferDepthName(const std::optional<int>& depth) {
  return depth.has_value() ? std::to_string(*depth) : "never";
}

}  // namespace irm::schedules
