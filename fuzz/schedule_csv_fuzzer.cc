// Fuzzes the PyTorch action-schedule CSV reader: any bytes give a schedule or a diagnostic; what it
// accepts must write back and read back to the same schedule, and validating and lowering it
// (small ones: the lowering's rounds grow with ranks x actions) must not crash either.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "schedules/action_csv.h"
#include "schedules/action_lower.h"
#include "schedules/action_validate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto schedule = irm::schedules::ReadActionCsv(bytes, "fuzz-input");
  if (!schedule.ok()) return 0;
  const std::string written = irm::schedules::WriteActionCsv(*schedule);
  auto again = irm::schedules::ReadActionCsv(written, "rewritten");
  if (!again.ok() || !(*again == *schedule)) __builtin_trap();

  const int pp = static_cast<int>(schedule->ranks.size());
  int max_stage = -1;
  int max_mb = -1;
  for (const auto& steps : schedule->ranks) {
    for (const auto& step : steps) {
      if (!step.has_value()) continue;
      max_stage = std::max(max_stage, step->stage);
      max_mb = std::max(max_mb, step->micro_batch);
      for (const auto& sub : step->sub_actions) max_stage = std::max(max_stage, sub.stage);
    }
  }
  if (pp < 1 || pp > 64 || max_stage < 0 || max_stage >= 256) return 0;
  const int num_stages = max_stage + 1;
  (void)irm::schedules::ValidateActionSchedule(*schedule, pp, num_stages, max_mb + 1);
  auto mapping =
      irm::schedules::StageToRankMapping(pp, num_stages, irm::schedules::StageStyle::kLoop);
  if (mapping.ok()) (void)irm::schedules::AddSendRecv(*schedule, *mapping);
  (void)irm::schedules::LowerComputeSchedule(*schedule, pp, num_stages, max_mb + 1);
  return 0;
}
