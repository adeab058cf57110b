// The CSV reader is a transcription of the state machine of CPython's Modules/_csv.c for the
// excel dialect with strict=False (what `csv.reader` uses), run over lines split the way a file
// opened with newline="" splits them; the writer is csv.writer's QUOTE_MINIMAL output for cells
// that never need quoting.
#include "schedules/action_csv.h"

#include <fmt/format.h>

#include <utility>

namespace irm::schedules {
namespace {

struct Cell {
  std::string text;
  int line = 0;
  int column = 0;
};

enum class State {
  kStartRecord,
  kStartField,
  kInField,
  kInQuotedField,
  kQuoteInQuotedField,
  kEatCrnl,
};

// Splits `text` into lines as Python's universal newlines do, each line keeping its terminator.
std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' || text[i] == '\r') {
      size_t end = i + 1;
      if (text[i] == '\r' && end < text.size() && text[end] == '\n') ++end;
      lines.push_back(text.substr(start, end - start));
      start = end;
      i = end - 1;
    }
  }
  if (start < text.size()) lines.push_back(text.substr(start));
  return lines;
}

// Rows of cells, each cell with the line and column where it starts.
std::vector<std::vector<Cell>> SplitCsv(std::string_view text) {
  std::vector<std::vector<Cell>> rows;
  const std::vector<std::string_view> lines = SplitLines(text);
  State state = State::kStartRecord;
  std::vector<Cell> row;
  Cell field;
  bool field_started = false;

  auto begin_field = [&](int line, int column) {
    if (!field_started) {
      field.line = line;
      field.column = column;
      field_started = true;
    }
  };
  auto save_field = [&](int line, int column) {
    begin_field(line, column);
    row.push_back(std::move(field));
    field = Cell{};
    field_started = false;
  };

  size_t next_line = 0;
  while (next_line < lines.size()) {
    // One record: CPython keeps pulling lines while a quoted cell is open.
    row.clear();
    state = State::kStartRecord;
    do {
      if (next_line >= lines.size()) {
        // End of input inside a record: a non-strict reader saves what it has.
        if (!field.text.empty() || state == State::kInQuotedField) save_field(0, 0);
        break;
      }
      const std::string_view line = lines[next_line];
      const int line_no = static_cast<int>(next_line) + 1;
      ++next_line;
      // Each character of the line, then the end-of-line marker (c == -1).
      for (size_t i = 0; i <= line.size(); ++i) {
        const int c = i < line.size() ? static_cast<unsigned char>(line[i]) : -1;
        const int col = static_cast<int>(i) + 1;
        const bool eol = c == -1;
        const bool crlf = c == '\n' || c == '\r';
        switch (state) {
          case State::kStartRecord:
            if (eol) break;  // an empty line: an empty row
            if (crlf) {
              state = State::kEatCrnl;
              break;
            }
            state = State::kStartField;
            [[fallthrough]];
          case State::kStartField:
            if (crlf || eol) {
              save_field(line_no, col);
              state = eol ? State::kStartRecord : State::kEatCrnl;
            } else if (c == '"') {
              begin_field(line_no, col);
              state = State::kInQuotedField;
            } else if (c == ',') {
              save_field(line_no, col);
            } else {
              begin_field(line_no, col);
              field.text += static_cast<char>(c);
              state = State::kInField;
            }
            break;
          case State::kInField:
            if (crlf || eol) {
              save_field(line_no, col);
              state = eol ? State::kStartRecord : State::kEatCrnl;
            } else if (c == ',') {
              save_field(line_no, col);
              state = State::kStartField;
            } else {
              field.text += static_cast<char>(c);
            }
            break;
          case State::kInQuotedField:
            if (eol) break;
            if (c == '"') {
              state = State::kQuoteInQuotedField;
            } else {
              field.text += static_cast<char>(c);
            }
            break;
          case State::kQuoteInQuotedField:
            if (c == '"') {
              field.text += '"';
              state = State::kInQuotedField;
            } else if (c == ',') {
              save_field(line_no, col);
              state = State::kStartField;
            } else if (crlf || eol) {
              save_field(line_no, col);
              state = eol ? State::kStartRecord : State::kEatCrnl;
            } else {
              field.text += static_cast<char>(c);
              state = State::kInField;
            }
            break;
          case State::kEatCrnl:
            // Lines end at their terminator, so only the end-of-line marker follows it.
            if (eol) state = State::kStartRecord;
            break;
        }
      }
    } while (state != State::kStartRecord);
    rows.push_back(std::move(row));
    row = {};
  }
  return rows;
}

}  // namespace

StatusOr<ActionSchedule> ReadActionCsv(std::string_view text, const std::string& file) {
  ActionSchedule schedule;
  for (std::vector<Cell>& row : SplitCsv(text)) {
    std::vector<std::optional<Action>> steps;
    steps.reserve(row.size());
    for (const Cell& cell : row) {
      bool blank = true;
      for (char c : cell.text) {
        if (!(c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' ||
              (c >= '\x1c' && c <= '\x1f'))) {
          blank = false;
          break;
        }
      }
      if (blank) {
        steps.emplace_back(std::nullopt);
        continue;
      }
      StatusOr<Action> action = ParseAction(cell.text);
      if (!action.ok()) {
        return Status(StatusCode::kParseError, Location::Text(file, cell.line, cell.column),
                      fmt::format("rank {}, step {}: {}", schedule.ranks.size(), steps.size(),
                                  action.status().message()));
      }
      steps.emplace_back(std::move(action).value());
    }
    schedule.ranks.push_back(std::move(steps));
  }
  return schedule;
}

std::string WriteActionCsv(const ActionSchedule& schedule, const CsvWriteOptions& options) {
  std::string out;
  for (const std::vector<std::optional<Action>>& steps : schedule.ranks) {
    if (steps.size() == 1 && !steps.front().has_value()) {
      out += "\"\"";
    } else {
      for (size_t i = 0; i < steps.size(); ++i) {
        if (i > 0) out += ',';
        if (steps[i].has_value()) out += steps[i]->ToString();
      }
    }
    out += options.line_end;
  }
  return out;
}

}  // namespace irm::schedules
