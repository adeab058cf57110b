// Fuzzes ir-deadcode's JSON readers — the configuration, the evidence manifest, the report — with
// any bytes: each must give a value or an error, never crash. A report that reads is rendered
// (Markdown, SARIF) and must read back after it is written again.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tools/deadcode/config.h"
#include "tools/deadcode/evidence.h"
#include "tools/deadcode/report_json.h"
#include "tools/deadcode/report_markdown.h"
#include "tools/deadcode/report_sarif.h"

namespace {

// The readers of the configuration and of the manifest take a path: one scratch file per process.
const std::string& ScratchPath() {
  static const std::string path = [] {
    std::string name = (std::filesystem::temp_directory_path() /
                        ("irm_deadcode_json_fuzzer_" + std::to_string(getpid()) + ".json"))
                           .string();
    std::atexit([] { std::remove(ScratchPath().c_str()); });
    return name;
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0: {
      std::ofstream(ScratchPath(), std::ios::binary | std::ios::trunc) << text;
      (void)irm::deadcode::LoadConfig(ScratchPath());
      break;
    }
    case 1: {
      std::ofstream(ScratchPath(), std::ios::binary | std::ios::trunc) << text;
      (void)irm::deadcode::LoadEvidence(ScratchPath());
      break;
    }
    default: {
      const irm::deadcode::Json document =
          irm::deadcode::Json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (document.is_discarded()) break;
      irm::StatusOr<irm::deadcode::DeadcodeReport> report =
          irm::deadcode::ReportFromJson(document, "fuzz");
      if (!report.ok()) break;
      const irm::deadcode::Json written = irm::deadcode::ReportToJson(*report);
      (void)irm::deadcode::DumpCanonical(written);
      (void)irm::deadcode::RenderMarkdown(written);
      (void)irm::deadcode::DumpCanonical(irm::deadcode::RenderSarif(written));
      if (!irm::deadcode::ReportFromJson(written, "fuzz").ok()) __builtin_trap();
    }
  }
  return 0;
}
