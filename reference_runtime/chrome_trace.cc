// ChromeTraceRecorder (chrome_trace.h).
#include "reference_runtime/chrome_trace.h"

#include <fmt/format.h>

#include <map>
#include <tuple>

#include <nlohmann/json.hpp>

namespace irm::rt {
namespace {

constexpr int kJobTrack = 0;
constexpr int kOpTrack = 1;

using SiteKey = std::tuple<int, std::string, int, int>;  // step, job, micro-batch, op index

SiteKey KeyOf(const CallSite& site) {
  return {site.step, site.job, site.micro_batch, site.op_index};
}

bool IsCollective(CommKind kind) { return kind != CommKind::kSend && kind != CommKind::kRecv; }

}  // namespace

ChromeTraceRecorder::ChromeTraceRecorder(int world_size, std::string label, int pid_base)
    : start_(std::chrono::steady_clock::now()), label_(std::move(label)), pid_base_(pid_base) {
  for (int r = 0; r < world_size; ++r) {
    ranks_.push_back(std::make_unique<RankState>());
    observers_.push_back(
        std::make_unique<OpObserver>([this, r](const OpEvent& event) { Record(r, event); }));
  }
}

double ChromeTraceRecorder::Now() const {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start_)
      .count();
}

void ChromeTraceRecorder::OnJob(int rank, const JobContext& job) {
  RankState& state = *ranks_[static_cast<size_t>(rank)];
  const double now = Now();
  if (!state.jobs.empty() && state.jobs.back().end_us < 0) state.jobs.back().end_us = now;
  state.current = job;
  state.current_job = std::string(job.job_type);
  Span span;
  span.name = fmt::format("{} mb{} (step {})", job.job_type, job.micro_batch, job.step);
  span.begin_us = now;
  span.step = job.step;
  span.job = state.current_job;
  span.micro_batch = job.micro_batch;
  state.jobs.push_back(std::move(span));
  state.last_end_us = now;
}

const OpObserver* ChromeTraceRecorder::observer(int rank) const {
  return observers_[static_cast<size_t>(rank)].get();
}

void ChromeTraceRecorder::Record(int rank, const OpEvent& event) {
  RankState& state = *ranks_[static_cast<size_t>(rank)];
  const double now = Now();
  Span span;
  span.name = std::string(event.op_type);
  span.begin_us = state.last_end_us;
  span.end_us = now;
  span.step = state.current.step;
  span.job = state.current_job;
  span.micro_batch = state.current.micro_batch;
  span.op_index = event.block == 0 ? event.op_index : -1;  // call sites name top-level ops
  state.ops.push_back(std::move(span));
  state.last_end_us = now;
}

std::string ChromeTraceRecorder::Render(
    const std::vector<const CommTrace*>& comm,
    const std::vector<std::pair<int, std::vector<int>>>& ranks_of_ring) const {
  nlohmann::json events = nlohmann::json::array();
  auto complete = [&](int rank, int track, const Span& span, const nlohmann::json& args) {
    const double end =
        span.end_us < 0 ? ranks_[static_cast<size_t>(rank)]->last_end_us : span.end_us;
    events.push_back({{"name", span.name},
                      {"ph", "X"},
                      {"pid", pid_base_ + rank},
                      {"tid", track},
                      {"ts", span.begin_us},
                      {"dur", std::max(0.0, end - span.begin_us)},
                      {"args", args}});
  };
  for (size_t r = 0; r < ranks_.size(); ++r) {
    const int rank = static_cast<int>(r);
    const int pid = pid_base_ + rank;
    const std::string name =
        label_.empty() ? fmt::format("rank {}", rank) : fmt::format("{} rank {}", label_, rank);
    events.push_back(
        {{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"args", {{"name", name}}}});
    events.push_back({{"name", "process_sort_index"},
                      {"ph", "M"},
                      {"pid", pid},
                      {"args", {{"sort_index", pid}}}});
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", pid},
                      {"tid", kJobTrack},
                      {"args", {{"name", "jobs"}}}});
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", pid},
                      {"tid", kOpTrack},
                      {"args", {{"name", "ops"}}}});
    for (const Span& job : ranks_[r]->jobs) {
      complete(rank, kJobTrack, job,
               {{"step", job.step}, {"job", job.job}, {"micro_batch", job.micro_batch}});
    }
    for (const Span& op : ranks_[r]->ops) {
      complete(rank, kOpTrack, op, {{"op_index", op.op_index}});
    }
  }

  // Flows: each communication record found at its op span (by call site).
  std::map<int, std::vector<int>> rings(ranks_of_ring.begin(), ranks_of_ring.end());
  std::vector<std::map<SiteKey, const Span*>> span_at(ranks_.size());
  for (size_t r = 0; r < ranks_.size(); ++r) {
    for (const Span& op : ranks_[r]->ops) {
      if (op.op_index >= 0) span_at[r][{op.step, op.job, op.micro_batch, op.op_index}] = &op;
    }
  }
  // Per (ring, sender, receiver) the sends and receives in order; per ring the collectives of
  // each member in order.
  std::map<std::tuple<int, int, int>, std::vector<std::pair<int, const Span*>>> sends, recvs;
  std::map<std::pair<int, int>, std::vector<const Span*>> collectives;  // (ring, global rank)
  for (size_t r = 0; r < comm.size() && r < ranks_.size(); ++r) {
    if (comm[r] == nullptr) continue;
    for (const CommRecord& record : comm[r]->records()) {
      auto span = span_at[r].find(KeyOf(record.site));
      if (span == span_at[r].end()) continue;
      const auto ring = rings.find(record.ring_id);
      const int rank = static_cast<int>(r);
      if (IsCollective(record.kind)) {
        collectives[{record.ring_id, rank}].push_back(span->second);
        continue;
      }
      if (ring == rings.end() || record.peer < 0 ||
          record.peer >= static_cast<int>(ring->second.size())) {
        continue;
      }
      const int peer = ring->second[static_cast<size_t>(record.peer)];
      if (record.kind == CommKind::kSend) {
        sends[{record.ring_id, rank, peer}].push_back({rank, span->second});
      } else {
        recvs[{record.ring_id, peer, rank}].push_back({rank, span->second});
      }
    }
  }
  // Flow ids distinct across the recorders a merged trace holds.
  int64_t next_id = int64_t{pid_base_} * 1000000 + 1;
  auto flow = [&](const char* name, int from_rank, const Span& from, int to_rank, const Span& to) {
    const int64_t id = next_id++;
    events.push_back({{"name", name},
                      {"cat", "comm"},
                      {"ph", "s"},
                      {"id", id},
                      {"pid", pid_base_ + from_rank},
                      {"tid", kOpTrack},
                      {"ts", from.begin_us}});
    events.push_back({{"name", name},
                      {"cat", "comm"},
                      {"ph", "f"},
                      {"bp", "e"},
                      {"id", id},
                      {"pid", pid_base_ + to_rank},
                      {"tid", kOpTrack},
                      {"ts", to.begin_us}});
  };
  for (const auto& [key, sent] : sends) {
    auto received = recvs.find(key);
    if (received == recvs.end()) continue;
    for (size_t k = 0; k < sent.size() && k < received->second.size(); ++k) {
      flow("send", sent[k].first, *sent[k].second, received->second[k].first,
           *received->second[k].second);
    }
  }
  for (const auto& [ring, members] : rings) {
    for (size_t i = 0; i + 1 < members.size(); ++i) {
      auto a = collectives.find({ring, members[i]});
      auto b = collectives.find({ring, members[i + 1]});
      if (a == collectives.end() || b == collectives.end()) continue;
      for (size_t k = 0; k < a->second.size() && k < b->second.size(); ++k) {
        flow("collective", members[i], *a->second[k], members[i + 1], *b->second[k]);
      }
    }
  }
  return nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump() + "\n";
}

StatusOr<std::string> MergeChromeTraces(const std::vector<std::string>& traces) {
  nlohmann::json events = nlohmann::json::array();
  for (size_t i = 0; i < traces.size(); ++i) {
    nlohmann::json trace = nlohmann::json::parse(traces[i], nullptr, /*allow_exceptions=*/false);
    if (trace.is_discarded() || !trace.is_object() || !trace.contains("traceEvents") ||
        !trace["traceEvents"].is_array()) {
      return Status(StatusCode::kParseError, Location{},
                    fmt::format("trace {} is not a Chrome trace with traceEvents", i));
    }
    for (nlohmann::json& event : trace["traceEvents"]) events.push_back(std::move(event));
  }
  return nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump() + "\n";
}

}  // namespace irm::rt
