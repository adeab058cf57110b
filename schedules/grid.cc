// FormatGrid / FormatActionGrid / FormatTimelineGrid (grid.h).
#include "schedules/grid.h"

#include <fmt/format.h>

#include <algorithm>

namespace irm::schedules {
namespace {

std::string StepName(const Step& step) {
  return step.label.empty() ? DescribeStep(step) : step.label;
}

}  // namespace

std::string FormatGrid(const std::vector<std::vector<std::string>>& cells,
                       std::optional<int> error_row) {
  if (cells.empty()) return "";
  size_t rows = 0;
  for (const auto& column : cells) rows = std::max(rows, column.size());
  const size_t digits = rows <= 1 ? 1 : std::to_string(rows - 1).size();
  const auto step_label = [&](size_t row) { return fmt::format("Step {:0{}}", row, digits); };
  const size_t label_width = step_label(0).size();

  std::vector<size_t> widths;
  for (size_t r = 0; r < cells.size(); ++r) {
    size_t width = std::max(label_width, fmt::format("Rank {}", r).size());
    for (const std::string& cell : cells[r]) width = std::max(width, cell.size());
    widths.push_back(width);
  }
  std::string out(label_width + 2, ' ');
  for (size_t r = 0; r < cells.size(); ++r) {
    if (r > 0) out += ' ';
    out += fmt::format("{:<{}}", fmt::format("Rank {}", r), widths[r]);
  }
  out += '\n';
  for (size_t row = 0; row < rows; ++row) {
    out += step_label(row) + ": ";
    for (size_t r = 0; r < cells.size(); ++r) {
      if (r > 0) out += ' ';
      const std::string& cell = row < cells[r].size() ? cells[r][row] : std::string();
      out += fmt::format("{:<{}}", cell, widths[r]);
    }
    if (error_row.has_value() && static_cast<size_t>(*error_row) == row) out += " <-- ERROR HERE";
    out += '\n';
  }
  return out;
}

std::string FormatActionGrid(const ActionSchedule& schedule, std::optional<int> error_step) {
  std::vector<std::vector<std::string>> cells;
  for (const auto& actions : schedule.ranks) {
    auto& column = cells.emplace_back();
    for (const auto& action : actions) column.push_back(action ? action->ToString() : "");
  }
  return FormatGrid(cells, error_step);
}

std::string FormatTimelineGrid(const CommProgram& program, const SimResult& result) {
  std::vector<std::vector<std::string>> cells(program.ranks.size());
  for (size_t r = 0; r < program.ranks.size() && r < result.timeline.size(); ++r) {
    for (int index : result.timeline[r]) {
      cells[r].push_back(index < 0 ? "" : StepName(program.ranks[r][static_cast<size_t>(index)]));
    }
    cells[r].resize(static_cast<size_t>(result.ticks));
  }
  std::optional<int> error_row;
  if (result.outcome == SimOutcome::kWrongMatch && result.wrong_receive.has_value() &&
      result.ticks > 0) {
    error_row = result.ticks - 1;
    const Wait& recv = *result.wrong_receive;
    cells[static_cast<size_t>(recv.rank)].back() = StepName(recv.step);
  } else if (!result.waits.empty() && result.outcome != SimOutcome::kCompleted &&
             result.next_step.size() == program.ranks.size()) {
    // Stuck: a row of the steps the ranks wait in (a leftover message has no such row).
    bool stuck = false;
    for (size_t r = 0; r < program.ranks.size(); ++r) {
      const int next = result.next_step[r];
      const bool waiting = next < static_cast<int>(program.ranks[r].size());
      stuck = stuck || waiting;
      cells[r].push_back(waiting ? StepName(program.ranks[r][static_cast<size_t>(next)]) : "");
    }
    if (stuck) {
      error_row = result.ticks;
    } else {
      for (auto& column : cells) column.pop_back();
    }
  }
  return FormatGrid(cells, error_row);
}

}  // namespace irm::schedules
