// Watchdog (watchdog.h): the states of the ranks and the hang decisions.
#include "reference_runtime/comm/watchdog.h"

#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace irm::rt {

Watchdog::Watchdog(int world_size) : ranks_(static_cast<size_t>(world_size)) {}

void Watchdog::Reset() {
  for (RankState& r : ranks_) r = RankState{};
}

void Watchdog::Block(int rank, PendingWait wait) {
  RankState& r = ranks_[static_cast<size_t>(rank)];
  r.state = State::kBlocked;
  r.wait = std::move(wait);
}

void Watchdog::Unblock(int rank) {
  RankState& r = ranks_[static_cast<size_t>(rank)];
  r.state = State::kRunning;
  r.wait = PendingWait{};
}

void Watchdog::Finish(int rank) {
  RankState& r = ranks_[static_cast<size_t>(rank)];
  r.state = State::kFinished;
  r.wait = PendingWait{};
}

std::string Watchdog::DescribeWait(int rank) const {
  const PendingWait& w = ranks_[static_cast<size_t>(rank)].wait;
  const std::string name = w.site.op_type.empty() ? CommKindName(w.kind) : w.site.op_type;
  std::string target;
  if (w.kind == CommKind::kSend) {
    target = fmt::format(" to rank {}", w.peer);
  } else if (w.kind == CommKind::kRecv) {
    target = fmt::format(" from rank {}", w.peer);
  } else if (w.waiting_for) {
    const std::vector<int> absent = w.waiting_for();
    target = fmt::format(" for rank{} {}", absent.size() == 1 ? "" : "s", fmt::join(absent, ", "));
  }
  return fmt::format("rank {} waits in {}{} ({})", rank, name, target,
                     DescribeSite(w.ring_id, w.site));
}

std::string Watchdog::DescribeAll() const {
  std::vector<std::string> parts;
  for (size_t i = 0; i < ranks_.size(); ++i) {
    const int rank = static_cast<int>(i);
    switch (ranks_[i].state) {
      case State::kBlocked:
        parts.push_back(DescribeWait(rank));
        break;
      case State::kRunning:
        parts.push_back(fmt::format("rank {} is busy outside communication", rank));
        break;
      case State::kFinished:
        parts.push_back(fmt::format("rank {} finished", rank));
        break;
    }
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

Status Watchdog::Check() const {
  // A wait on a rank that has finished can never end, whatever the other ranks do.
  for (size_t i = 0; i < ranks_.size(); ++i) {
    const RankState& r = ranks_[i];
    if (r.state != State::kBlocked || r.wait.ready()) continue;
    for (int needed : r.wait.waiting_for()) {
      if (needed >= 0 && static_cast<size_t>(needed) < ranks_.size() &&
          ranks_[static_cast<size_t>(needed)].state == State::kFinished) {
        return Status(StatusCode::kInternal, Location{},
                      fmt::format("hang: rank {} finished while {}", needed,
                                  DescribeWait(static_cast<int>(i))));
      }
    }
  }
  bool any_blocked = false;
  for (const RankState& r : ranks_) {
    if (r.state == State::kRunning) return Status::Ok();
    if (r.state == State::kBlocked) {
      if (r.wait.ready()) return Status::Ok();
      any_blocked = true;
    }
  }
  if (!any_blocked) return Status::Ok();
  std::vector<std::string> waits;
  for (size_t i = 0; i < ranks_.size(); ++i) {
    if (ranks_[i].state == State::kBlocked) waits.push_back(DescribeWait(static_cast<int>(i)));
  }
  return Status(StatusCode::kInternal, Location{},
                fmt::format("hang: no rank can progress: {}", fmt::join(waits, "; ")));
}

Status Watchdog::TimedOut(int rank, std::chrono::milliseconds waited) const {
  return Status(StatusCode::kInternal, Location{},
                fmt::format("hang: rank {} waited {} ms without progress: {}", rank, waited.count(),
                            DescribeAll()));
}

}  // namespace irm::rt
