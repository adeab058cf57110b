// The pass manager: runs passes in order and wraps each run with printing, dumping, verification
// and timing.
#include "newir/pass_manager.h"

#include <fmt/format.h>

#include <filesystem>

#include "common/file_io.h"
#include "newir/pass_pipeline.h"
#include "newir/verifier.h"

namespace irm::newir {
namespace {

using Clock = std::chrono::steady_clock;

std::chrono::nanoseconds Since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start);
}

// A pass name as a file-name part: anything but [A-Za-z0-9._-] becomes '_'.
std::string FileStem(std::string_view name) {
  std::string stem(name);
  for (char& c : stem) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-';
    if (!keep) c = '_';
  }
  return stem;
}

double Seconds(std::chrono::nanoseconds wall) {
  return std::chrono::duration<double>(wall).count();
}

}  // namespace

Status VerifyWithDefaults(const Program& program) { return VerifyProgram(program); }

std::string PassTimingReport::ToString() const {
  const double total_seconds = Seconds(total);
  auto line = [&](std::chrono::nanoseconds wall, std::string_view name) {
    const double percent = total_seconds > 0 ? 100.0 * Seconds(wall) / total_seconds : 0.0;
    return fmt::format("  {:8.4f} ({:5.1f}%)  {}\n", Seconds(wall), percent, name);
  };
  std::string out =
      "===-------------------------------------------------------------------------===\n"
      "                      ... Pass execution timing report ...\n"
      "===-------------------------------------------------------------------------===\n";
  out += fmt::format("  Total Execution Time: {:.4f} seconds\n\n", total_seconds);
  out += "  ----Wall Time----  ----Name----\n";
  for (const Entry& entry : passes) out += line(entry.wall, entry.pass);
  if (verification.count() > 0) out += line(verification, "(verifier)");
  out += line(total, "Total");
  return out;
}

Status PassManager::AddPipeline(std::string_view pipeline, const PassRegistry& registry,
                                const std::string& source) {
  IRM_ASSIGN_OR_RETURN(std::vector<PassPipelineElement> elements,
                       ParsePassPipeline(pipeline, registry, source));
  for (const PassPipelineElement& element : elements) {
    AddPass(element.info->factory(element.options));
  }
  return Status::Ok();
}

std::string PassManager::PipelineNames() const {
  std::vector<std::string_view> names;
  for (const auto& pass : passes_) names.push_back(pass->name());
  return fmt::format("{}", fmt::join(names, ","));
}

Status PassManager::CheckPrintNames() const {
  for (const auto* names : {&options_.print_ir_before, &options_.print_ir_after}) {
    for (const std::string& name : *names) {
      bool found = false;
      for (const auto& pass : passes_) found = found || pass->name() == name;
      if (!found) {
        return Status(StatusCode::kInvalidArgument, Location{},
                      fmt::format("cannot print the IR {} pass '{}': it is not in the pipeline "
                                  "'{}'",
                                  names == &options_.print_ir_before ? "before" : "after", name,
                                  PipelineNames()));
      }
    }
  }
  return Status::Ok();
}

Status PassManager::Verify(const Program& program, std::string_view what) {
  const Clock::time_point start = Clock::now();
  Status status = options_.verifier(program);
  timing_.verification += Since(start);
  if (status.ok()) return status;
  Diagnostic diagnostic = status.diagnostic();
  diagnostic.message = fmt::format("{}: {}", what, diagnostic.message);
  return Status(status.code(), std::move(diagnostic));
}

void PassManager::PrintIr(const Program& program, std::string_view when, std::string_view pass) {
  if (options_.ir_stream == nullptr) return;
  *options_.ir_stream << "// -----// IR Dump " << when << " " << pass << " //----- //\n"
                      << PrintProgram(program, options_.print_options) << "\n";
}

Status PassManager::Dump(const Program& program, size_t index, std::string_view stem) {
  const int width = std::max<int>(2, static_cast<int>(std::to_string(passes_.size()).size()));
  const std::filesystem::path path =
      std::filesystem::path(options_.dump_dir) / fmt::format("{:0{}}_{}.pir", index, width, stem);
  return WriteFileAtomically(path.string(), PrintProgram(program, options_.print_options));
}

StatusOr<IrChange> PassManager::Run(Program& program) {
  timing_ = {};
  const Clock::time_point run_start = Clock::now();
  // Fills in the total on every way out.
  struct TotalTimer {
    PassTimingReport& report;
    Clock::time_point start;
    ~TotalTimer() { report.total = Since(start); }
  } total_timer{timing_, run_start};

  IRM_RETURN_IF_ERROR(CheckPrintNames());
  if (options_.verify_each && !options_.verifier) {
    return Status(StatusCode::kInvalidArgument, Location{},
                  "verify_each is set but no verifier is given");
  }
  const bool dumping = !options_.dump_dir.empty();
  if (dumping) {
    std::error_code error;
    std::filesystem::create_directories(options_.dump_dir, error);
    if (error) {
      return Status(StatusCode::kIoError, Location::File(options_.dump_dir),
                    fmt::format("cannot create the dump folder: {}", error.message()));
    }
    IRM_RETURN_IF_ERROR(Dump(program, 0, "input"));
  }
  if (options_.verify_each) IRM_RETURN_IF_ERROR(Verify(program, "the input IR is invalid"));

  IrChange overall = IrChange::kUnchanged;
  for (size_t i = 0; i < passes_.size(); ++i) {
    Pass& pass = *passes_[i];
    const std::string name(pass.name());
    if (options_.print_ir_before_all || options_.print_ir_before.contains(name)) {
      PrintIr(program, "Before", name);
    }

    const Clock::time_point start = Clock::now();
    StatusOr<IrChange> result = pass.Run(program);
    timing_.passes.push_back({name, Since(start)});

    if (!result.ok()) {
      Status status = result.status();
      status.AddNote(
          fmt::format("in pass '{}' ({} of {} in the pipeline)", name, i + 1, passes_.size()));
      if (options_.print_ir_after_failure) PrintIr(program, "After", name + " Failed");
      if (dumping) {
        Status dumped = Dump(program, i + 1, FileStem(name) + ".failed");
        if (!dumped.ok()) status.AddNote("the IR dump failed too: " + dumped.ToString());
      }
      return status;
    }
    const bool changed = *result == IrChange::kChanged;
    if (changed) overall = IrChange::kChanged;

    if (dumping) IRM_RETURN_IF_ERROR(Dump(program, i + 1, FileStem(name)));
    if (options_.verify_each) {
      Status verified = Verify(program, fmt::format("the IR is invalid after pass '{}'", name));
      if (!verified.ok()) {
        if (options_.print_ir_after_failure) PrintIr(program, "After", name + " Failed");
        return verified;
      }
    }
    const bool chosen = options_.print_ir_after_all || options_.print_ir_after.contains(name) ||
                        (options_.print_ir_after_change && options_.print_ir_after.empty());
    if (chosen && (changed || !options_.print_ir_after_change)) {
      PrintIr(program, "After", name);
    }
  }
  return overall;
}

}  // namespace irm::newir
