// GlooWatch (gloo_watch.h): the board's states and files, the hang decision and the monitor.
#include "reference_runtime/comm/gloo_watch.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace irm::rt {
namespace {

using Phase = GlooCallState::Phase;
using States = std::vector<std::optional<GlooCallState>>;

bool IsCollective(CommKind kind) { return kind != CommKind::kSend && kind != CommKind::kRecv; }

const GlooCallState* Blocked(const States& states, int rank) {
  if (rank < 0 || static_cast<size_t>(rank) >= states.size()) return nullptr;
  const std::optional<GlooCallState>& s = states[static_cast<size_t>(rank)];
  return s.has_value() && s->phase == Phase::kBlocked ? &*s : nullptr;
}

Phase PhaseOf(const States& states, int rank) {
  if (rank < 0 || static_cast<size_t>(rank) >= states.size()) return Phase::kRunning;
  const std::optional<GlooCallState>& s = states[static_cast<size_t>(rank)];
  return s.has_value() ? s->phase : Phase::kRunning;
}

// The members of a blocked collective's group that are not in the same collective.
std::vector<int> Absent(const States& states, const std::map<int, std::vector<int>>& groups,
                        int rank, const GlooCallState& wait) {
  std::vector<int> absent;
  auto group = groups.find(wait.ring_id);
  if (group == groups.end()) return absent;
  for (int member : group->second) {
    if (member == rank) continue;
    const GlooCallState* other = Blocked(states, member);
    if (other == nullptr || !IsCollective(other->kind) || other->ring_id != wait.ring_id ||
        other->index != wait.index) {
      absent.push_back(member);
    }
  }
  return absent;
}

// The ranks whose call a blocked rank still needs.
std::vector<int> Needed(const States& states, const std::map<int, std::vector<int>>& groups,
                        int rank, const GlooCallState& wait) {
  if (!IsCollective(wait.kind)) {
    const GlooCallState* peer = Blocked(states, wait.peer);
    const CommKind counterpart = wait.kind == CommKind::kSend ? CommKind::kRecv : CommKind::kSend;
    if (peer != nullptr && peer->kind == counterpart && peer->peer == rank &&
        peer->ring_id == wait.ring_id) {
      return {};
    }
    return {wait.peer};
  }
  return Absent(states, groups, rank, wait);
}

// "rank 0 waits in send_v2 to rank 1 (ring 0, ...)", as the thread world's watchdog words it.
std::string DescribeWait(const States& states, const std::map<int, std::vector<int>>& groups,
                         int rank, const GlooCallState& wait) {
  std::string target;
  if (wait.kind == CommKind::kSend) {
    target = fmt::format(" to rank {}", wait.peer);
  } else if (wait.kind == CommKind::kRecv) {
    target = fmt::format(" from rank {}", wait.peer);
  } else {
    const std::vector<int> absent = Absent(states, groups, rank, wait);
    if (!absent.empty()) {
      target =
          fmt::format(" for rank{} {}", absent.size() == 1 ? "" : "s", fmt::join(absent, ", "));
    }
  }
  return fmt::format("rank {} waits in {}{} ({})", rank, wait.name, target, wait.where);
}

std::string ReadWholeFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string EncodeCallState(const GlooCallState& s) {
  return fmt::format("{} {} {} {} {} {}\t{}\t{}", static_cast<int>(s.phase), s.serial,
                     static_cast<int>(s.kind), s.ring_id, s.peer, s.index, s.name, s.where);
}

std::optional<GlooCallState> DecodeCallState(std::string_view text) {
  const size_t tab1 = text.find('\t');
  const size_t tab2 = tab1 == std::string_view::npos ? tab1 : text.find('\t', tab1 + 1);
  if (tab2 == std::string_view::npos) return std::nullopt;
  int64_t fields[6];
  const char* p = text.data();
  const char* end = text.data() + tab1;
  for (int64_t& field : fields) {
    while (p < end && *p == ' ') ++p;
    auto [next, error] = std::from_chars(p, end, field);
    if (error != std::errc()) return std::nullopt;
    p = next;
  }
  if (fields[0] < 0 || fields[0] > static_cast<int>(Phase::kFailed) || fields[2] < 0 ||
      fields[2] > static_cast<int>(CommKind::kBarrier)) {
    return std::nullopt;
  }
  GlooCallState s;
  s.phase = static_cast<Phase>(fields[0]);
  s.serial = static_cast<uint64_t>(fields[1]);
  s.kind = static_cast<CommKind>(fields[2]);
  s.ring_id = static_cast<int>(fields[3]);
  s.peer = static_cast<int>(fields[4]);
  s.index = fields[5];
  s.name = std::string(text.substr(tab1 + 1, tab2 - tab1 - 1));
  std::string_view where = text.substr(tab2 + 1);
  while (!where.empty() && where.back() == '\n') where.remove_suffix(1);
  s.where = std::string(where);
  return s;
}

std::optional<std::string> FindGlooHang(const States& states,
                                        const std::map<int, std::vector<int>>& groups,
                                        bool finished_only) {
  // A wait on a rank that finished can never end, whatever the others do.
  for (size_t i = 0; i < states.size(); ++i) {
    const int rank = static_cast<int>(i);
    const GlooCallState* wait = Blocked(states, rank);
    if (wait == nullptr) continue;
    for (int needed : Needed(states, groups, rank, *wait)) {
      if (PhaseOf(states, needed) == Phase::kFinished) {
        return fmt::format("hang: rank {} finished while {}", needed,
                           DescribeWait(states, groups, rank, *wait));
      }
    }
  }
  if (finished_only) return std::nullopt;
  std::vector<std::string> waits;
  for (size_t i = 0; i < states.size(); ++i) {
    const int rank = static_cast<int>(i);
    if (!states[i].has_value()) return std::nullopt;
    switch (states[i]->phase) {
      case Phase::kRunning:
      case Phase::kFailed:
        return std::nullopt;
      case Phase::kFinished:
        break;
      case Phase::kBlocked:
        if (Needed(states, groups, rank, *states[i]).empty()) return std::nullopt;
        waits.push_back(DescribeWait(states, groups, rank, *states[i]));
        break;
    }
  }
  if (waits.empty()) return std::nullopt;
  return fmt::format("hang: no rank can progress: {}", fmt::join(waits, "; "));
}

GlooWatch::GlooWatch(int world_size, std::vector<int> hosted,
                     std::map<int, std::vector<int>> groups, GlooWatchOptions options)
    : world_size_(world_size),
      hosted_(std::move(hosted)),
      groups_(std::move(groups)),
      options_(std::move(options)),
      local_(static_cast<size_t>(world_size)),
      written_(static_cast<size_t>(world_size)) {
  if (!options_.folder.empty()) {
    std::error_code error;
    std::filesystem::create_directories(options_.folder, error);  // else the board stays empty
  }
}

GlooWatch::~GlooWatch() { Stop(); }

void GlooWatch::Start(std::function<void()> abort) {
  Stop();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int rank : hosted_) local_[static_cast<size_t>(rank)] = GlooCallState{};
    report_.reset();
    abort_ = std::move(abort);
    stop_ = false;
  }
  Publish();
  monitor_ = std::thread([this] { Monitor(); });
}

void GlooWatch::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (monitor_.joinable()) monitor_.join();
}

void GlooWatch::Block(int rank, GlooCallState state) {
  std::lock_guard<std::mutex> lock(mu_);
  state.phase = Phase::kBlocked;
  state.serial = next_serial_++;
  local_[static_cast<size_t>(rank)] = std::move(state);
}

void GlooWatch::Unblock(int rank) {
  std::lock_guard<std::mutex> lock(mu_);
  GlooCallState& s = local_[static_cast<size_t>(rank)];
  s = GlooCallState{.serial = s.serial};
}

void GlooWatch::Finish(int rank, bool ok) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    local_[static_cast<size_t>(rank)] =
        GlooCallState{.phase = ok ? Phase::kFinished : Phase::kFailed};
  }
  Publish();
}

void GlooWatch::WriteFile(const std::string& name, const std::string& text) {
  const std::filesystem::path dir(options_.folder);
  const std::filesystem::path tmp = dir / ("." + name + ".tmp");
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) return;  // best effort: a board that cannot be written decides nothing
  }
  std::error_code error;
  std::filesystem::rename(tmp, dir / name, error);
}

void GlooWatch::Publish() {
  if (options_.folder.empty()) return;
  // One writer at a time, each writing the latest states: a stale snapshot never lands after a
  // newer one (Finish must not be overwritten by a Blocked read a moment before).
  std::lock_guard<std::mutex> writing(publish_mu_);
  std::vector<std::pair<int, std::string>> changed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int rank : hosted_) {
      std::string text = EncodeCallState(local_[static_cast<size_t>(rank)]);
      if (text != written_[static_cast<size_t>(rank)]) {
        written_[static_cast<size_t>(rank)] = text;
        changed.emplace_back(rank, std::move(text));
      }
    }
  }
  for (const auto& [rank, text] : changed) WriteFile(fmt::format("rank{}.state", rank), text);
}

std::vector<std::optional<GlooCallState>> GlooWatch::Gather() {
  States states(static_cast<size_t>(world_size_));
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int rank : hosted_) states[static_cast<size_t>(rank)] = local_[static_cast<size_t>(rank)];
  }
  if (options_.folder.empty()) return states;
  for (int rank = 0; rank < world_size_; ++rank) {
    if (std::find(hosted_.begin(), hosted_.end(), rank) != hosted_.end()) continue;
    const std::string text =
        ReadWholeFile(std::filesystem::path(options_.folder) / fmt::format("rank{}.state", rank));
    states[static_cast<size_t>(rank)] = DecodeCallState(text);
  }
  return states;
}

std::optional<std::string> GlooWatch::Report() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!report_.has_value() && !options_.folder.empty()) {
    std::string text = ReadWholeFile(std::filesystem::path(options_.folder) / "hang");
    if (!text.empty()) report_ = std::move(text);
  }
  return report_;
}

std::optional<std::string> GlooWatch::Diagnose(bool timed_out) {
  if (std::optional<std::string> report = Report()) return report;
  return FindGlooHang(Gather(), groups_, /*finished_only=*/!timed_out);
}

std::string GlooWatch::DescribeAll() {
  const States states = Gather();
  std::vector<std::string> parts;
  for (size_t i = 0; i < states.size(); ++i) {
    const int rank = static_cast<int>(i);
    if (!states[i].has_value()) {
      parts.push_back(fmt::format("rank {} has not reported", rank));
      continue;
    }
    switch (states[i]->phase) {
      case Phase::kBlocked:
        parts.push_back(DescribeWait(states, groups_, rank, *states[i]));
        break;
      case Phase::kRunning:
        parts.push_back(fmt::format("rank {} is busy outside communication", rank));
        break;
      case Phase::kFinished:
        parts.push_back(fmt::format("rank {} finished", rank));
        break;
      case Phase::kFailed:
        parts.push_back(fmt::format("rank {} failed", rank));
        break;
    }
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

void GlooWatch::Decide(const std::string& report) {
  std::function<void()> abort;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!report_.has_value()) {
      report_ = report;
      if (!options_.folder.empty()) {
        // The first process to decide wins: link() refuses an existing name, so every process
        // reports one text.
        const std::filesystem::path dir(options_.folder);
        const std::string tmp = (dir / fmt::format(".hang.{}.tmp", ::getpid())).string();
        {
          std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
          out << report;
        }
        if (::link(tmp.c_str(), (dir / "hang").c_str()) != 0 && errno == EEXIST) {
          std::string first = ReadWholeFile(dir / "hang");
          if (!first.empty()) report_ = std::move(first);
        }
        ::unlink(tmp.c_str());
      }
    }
    abort = abort_;
  }
  if (abort) abort();
}

void GlooWatch::Monitor() {
  std::string candidate;
  auto since = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, options_.period, [this] { return stop_; });
    if (stop_) break;
    lock.unlock();
    Publish();
    std::optional<std::string> decided = Report();
    if (!decided.has_value()) {
      const States states = Gather();
      std::optional<std::string> hang = FindGlooHang(states, groups_, /*finished_only=*/false);
      // The same deadlock means the same waits: their serials are part of the key.
      std::string key;
      if (hang.has_value()) {
        key = *hang;
        for (const std::optional<GlooCallState>& s : states) {
          key += fmt::format(" {}", s.has_value() ? s->serial : 0);
        }
      }
      const auto now = std::chrono::steady_clock::now();
      if (key.empty() || key != candidate) {
        candidate = key;
        since = now;
      } else if (now - since >= options_.settle) {
        decided = hang;
      }
    }
    if (decided.has_value()) {
      Decide(*decided);
      lock.lock();
      break;
    }
    lock.lock();
  }
}

}  // namespace irm::rt
