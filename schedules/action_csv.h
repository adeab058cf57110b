// PyTorch's CSV form of an action schedule (`_load_csv` / `_dump_csv` in
// torch/distributed/pipelining/schedules.py): one row per rank, in rank order, one cell per step;
// a cell is an action as `_Action.__repr__` prints it ("0F0", "2RECV_F1", "1UNSHARD",
// "(0F7;7B3)OVERLAP_F_B"), and an empty (or all-blank) cell is an idle step.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "schedules/action.h"

namespace irm::schedules {

// Splits `text` into rows and cells exactly as Python's `csv.reader` (the excel dialect, reading
// a file opened with newline="") and reads each cell with ParseAction. Rows end at "\n", "\r" or
// "\r\n"; an empty line is a rank with no steps; quoted cells ("...", with "" for a quote) may hold
// commas and line breaks. A malformed cell is a kParseError located at the line and column
// (1-based, in bytes) where the cell starts, in `file`, with the cell quoted in the message. Never
// fails otherwise: any bytes give either a schedule or a diagnostic.
StatusOr<ActionSchedule> ReadActionCsv(std::string_view text, const std::string& file);

struct CsvWriteOptions {
  // "\n" gives PyTorch's checked-in artifacts byte for byte (test/distributed/pipelining/
  // artifacts/*.csv); "\r\n" is what Python's csv.writer itself ends rows with.
  std::string line_end = "\n";
};

// What `_dump_csv` writes: each rank's row, cells joined by ',', an idle step as an empty cell and
// a row made of one idle step as `""` (csv.writer's way to tell it from an empty row).
// ReadActionCsv(WriteActionCsv(s)) == s for every schedule whose actions ParseAction accepts.
std::string WriteActionCsv(const ActionSchedule& schedule, const CsvWriteOptions& options = {});

}  // namespace irm::schedules
