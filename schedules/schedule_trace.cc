// ScheduleTraceJson (schedule_trace.h). Written with fmt: the module depends on common/ only, and
// the events are few and flat.
#include "schedules/schedule_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

namespace irm::schedules {
namespace {

// A JSON string literal: quotes, backslashes and control characters escaped.
std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      out += fmt::format("\\u{:04x}", u);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string NameOf(const Step& step) {
  return step.label.empty() ? DescribeStep(step) : step.label;
}

std::string Args(const Step& step, int index) {
  return fmt::format(
      "{{\"step\":{},\"kind\":\"{}\",\"job\":{},\"micro_batch\":{},\"chunk\":{},\"op\":{},"
      "\"message\":{}}}",
      index, StepKindName(step.kind), JsonString(step.job), step.micro_batch, step.chunk,
      JsonString(step.op), JsonString(step.message));
}

// Where a completed send or receive sits on the trace.
struct Placed {
  int rank = 0;
  int tick = 0;
};

}  // namespace

std::string ScheduleTraceJson(const CommProgram& program, const SimResult& result) {
  std::vector<std::string> events;
  std::map<Channel, std::vector<Placed>> sends, recvs;  // in completion order, per channel
  for (size_t r = 0; r < program.ranks.size() && r < result.timeline.size(); ++r) {
    const int rank = static_cast<int>(r);
    events.push_back(fmt::format(
        "{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{},\"args\":{{\"name\":\"rank {}\"}}}}",
        rank, rank));
    events.push_back(
        fmt::format("{{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":{},\"args\":{{\"sort_"
                    "index\":{}}}}}",
                    rank, rank));
    const std::vector<int>& line = result.timeline[r];
    for (size_t t = 0; t < line.size();) {
      const int index = line[t];
      size_t end = t + 1;
      // A compute step's ticks follow one another; a step never runs twice.
      while (end < line.size() && line[end] == index) ++end;
      if (index >= 0 && static_cast<size_t>(index) < program.ranks[r].size()) {
        const Step& step = program.ranks[r][static_cast<size_t>(index)];
        events.push_back(fmt::format(
            "{{\"name\":{},\"cat\":\"{}\",\"ph\":\"X\",\"pid\":{},\"tid\":0,\"ts\":{},\"dur\":{},"
            "\"args\":{}}}",
            JsonString(NameOf(step)), StepKindName(step.kind), rank, t, end - t,
            Args(step, index)));
        if (step.kind == StepKind::kSend)
          sends[step.channel].push_back({rank, static_cast<int>(t)});
        if (step.kind == StepKind::kRecv)
          recvs[step.channel].push_back({rank, static_cast<int>(t)});
      }
      t = end;
    }
  }
  // The n-th receive on a channel took the n-th send.
  int next_id = 1;
  for (const auto& [channel, sent] : sends) {
    const auto received = recvs.find(channel);
    if (received == recvs.end()) continue;
    for (size_t k = 0; k < sent.size() && k < received->second.size(); ++k) {
      const int id = next_id++;
      events.push_back(fmt::format(
          "{{\"name\":\"message\",\"cat\":\"p2p\",\"ph\":\"s\",\"id\":{},\"pid\":{},\"tid\":0,"
          "\"ts\":{}}}",
          id, sent[k].rank, sent[k].tick));
      events.push_back(fmt::format(
          "{{\"name\":\"message\",\"cat\":\"p2p\",\"ph\":\"f\",\"bp\":\"e\",\"id\":{},\"pid\":{},"
          "\"tid\":0,\"ts\":{}}}",
          id, received->second[k].rank, received->second[k].tick));
    }
  }
  // Where a failed run stopped.
  const auto instant = [&](const std::string& name, int rank, int tick, const Step& step,
                           int index) {
    events.push_back(fmt::format(
        "{{\"name\":{},\"cat\":\"error\",\"ph\":\"i\",\"s\":\"t\",\"pid\":{},\"tid\":0,\"ts\":{},"
        "\"args\":{}}}",
        JsonString(name), rank, tick, Args(step, index)));
  };
  if (result.outcome == SimOutcome::kWrongMatch && result.wrong_receive.has_value()) {
    const Wait& recv = *result.wrong_receive;
    instant("wrong match: " + NameOf(recv.step), recv.rank, std::max(0, result.ticks - 1),
            recv.step, recv.step_index);
  } else if (!result.completed() && result.next_step.size() == program.ranks.size()) {
    for (size_t r = 0; r < program.ranks.size(); ++r) {
      const int next = result.next_step[r];
      if (next >= static_cast<int>(program.ranks[r].size())) continue;
      const Step& step = program.ranks[r][static_cast<size_t>(next)];
      instant("waits in " + NameOf(step), static_cast<int>(r), result.ticks, step, next);
    }
  }

  std::string out = "{\"traceEvents\":[";
  for (size_t i = 0; i < events.size(); ++i) {
    if (i > 0) out += ",\n";
    out += events[i];
  }
  out += "],\"displayTimeUnit\":\"ms\"}\n";
  return out;
}

}  // namespace irm::schedules
