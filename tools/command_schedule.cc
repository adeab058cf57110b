// `ir-migrate schedule` (command_schedule.h). Every source of a schedule — a generated Paddle job
// list or PyTorch order, a PyTorch CSV, a bundle — becomes a CommProgram, which `check` simulates
// and `draw` pictures; `generate` and `lower` write schedules themselves.
#include "tools/command_schedule.h"

#include <algorithm>
#include <filesystem>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/file_io.h"
#include "diff_tests/corpus/bundle_comm_program.h"
#include "oldir/bundle.h"
#include "schedules/action_comm.h"
#include "schedules/action_csv.h"
#include "schedules/action_generate.h"
#include "schedules/action_lower.h"
#include "schedules/action_validate.h"
#include "schedules/grid.h"
#include "schedules/paddle_comm.h"
#include "schedules/paddle_schedule.h"
#include "schedules/plan_check.h"
#include "schedules/schedule_trace.h"
#include "schedules/simulator.h"
#include "tools/cli_options.h"
#include "tools/command_registry.h"
#include "tools/commands.h"
#include "tools/exit_code.h"

namespace irm::tools {
namespace {

namespace sched = irm::schedules;

Status Usage(std::string message) {
  return Status(StatusCode::kInvalidArgument, Location{}, std::move(message));
}

// A schedule that breaks its form's rules (a plan naming a micro-batch twice, a PyTorch
// schedule with a backward before its forward) is bad input, exit 2: the check proper is the
// simulation (exit 1).
Status AsBadInput(Status status) {
  if (status.ok() || status.code() != StatusCode::kInvalid) return status;
  return Status(StatusCode::kInvalidArgument, status.diagnostic());
}

Status WriteOutput(const std::string& path, const std::string& text, std::ostream& out) {
  if (path == "-") {
    out << text;
    return Status::Ok();
  }
  return WriteFileAtomically(path, text);
}

// ---- generated schedules

struct Generated {
  bool paddle = false;
  sched::PaddleScheduleSpec spec;
  sched::GeneratedSchedule pytorch;
};

StatusOr<Generated> Generate(const ScheduleCommand& c) {
  if (c.mode.empty()) return Usage("--mode is required (a Paddle mode or a PyTorch schedule)");
  if (c.pp < 1) return Usage("--pp must be at least 1");
  if (c.micro_batches < 1) return Usage("--micro-batches must be at least 1");
  Generated g;
  // "1F1B" is both Paddle's and PyTorch's: Paddle's unless spelled "pytorch:1F1B".
  std::string_view name = c.mode;
  const bool pytorch = name.starts_with("pytorch:");
  if (pytorch) name.remove_prefix(8);
  if (name.starts_with("paddle:")) name.remove_prefix(7);
  StatusOr<sched::PaddleMode> mode = sched::ParsePaddleMode(name);
  if (!pytorch && mode.ok()) {
    g.paddle = true;
    g.spec.mode = *mode;
    g.spec.pp = c.pp;
    g.spec.micro_batches = c.micro_batches;
    g.spec.vpp = c.vpp.value_or(1);
    g.spec.split_backward = c.split_backward;
    if (c.ir != "legacy" && c.ir != "pir") return Usage("--ir is 'legacy' or 'pir'");
    g.spec.ir = c.ir == "pir" ? sched::JobListIr::kPir : sched::JobListIr::kLegacy;
    IRM_RETURN_IF_ERROR(sched::ValidatePaddleScheduleSpec(g.spec));
    return g;
  }
  StatusOr<sched::PyTorchSchedule> schedule = sched::ParsePyTorchSchedule(name);
  if (!schedule.ok()) {
    return Usage(
        fmt::format("--mode '{}' is neither a Paddle mode (FThenB, 1F1B, Eager1F1B, VPP, "
                    "ZBH1, ZBVPP) nor a PyTorch schedule (GPipe, 1F1B, Interleaved1F1B, "
                    "LoopedBFS, InterleavedZeroBubble, ZBVZeroBubble, DualPipeV)",
                    c.mode));
  }
  if (c.split_backward || c.ir != "legacy") {
    return Usage("--split-backward and --ir apply to Paddle's job lists");
  }
  const int stages_per_rank = c.vpp.value_or(sched::DefaultStagesPerRank(*schedule));
  IRM_ASSIGN_OR_RETURN(
      g.pytorch, sched::GeneratePyTorchSchedule(*schedule, c.pp, c.micro_batches, stages_per_rank));
  return g;
}

// A Paddle job list's compute jobs as PyTorch actions (forward F, backward B, backward_b I,
// backward_w W) on the virtual stage the job's chunk puts them on; communication and
// once-per-step jobs (recv_forward, send_backward, optimizer) have no compute action.
sched::ActionSchedule PaddleAsActions(const sched::PaddleScheduleSpec& spec,
                                      const std::vector<std::vector<sched::Job>>& stages) {
  sched::ActionSchedule actions;
  for (size_t s = 0; s < stages.size(); ++s) {
    std::vector<std::optional<sched::Action>>& row = actions.ranks.emplace_back();
    for (const sched::Job& job : stages[s]) {
      const sched::JobTypeInfo info = sched::ClassifyJobType(job.type);
      sched::ActionType type;
      switch (info.kind) {
        case sched::JobKind::kForward:
          type = sched::ActionType::kForward;
          break;
        case sched::JobKind::kBackward:
          type = sched::ActionType::kFullBackward;
          break;
        case sched::JobKind::kBackwardB:
          type = sched::ActionType::kBackwardInput;
          break;
        case sched::JobKind::kBackwardW:
          type = sched::ActionType::kBackwardWeight;
          break;
        default:
          continue;
      }
      const int chunk = std::max(info.chunk, 0);
      const int stage = static_cast<int>(s);
      // ZBVPP's chunks form a V (paddle_comm.h): odd chunks run from stage p-1 down to 0.
      const bool down = spec.mode == sched::PaddleMode::kZbvpp && chunk % 2 == 1;
      const int virtual_stage = chunk * spec.pp + (down ? spec.pp - 1 - stage : stage);
      row.push_back(sched::Action::Make(virtual_stage, type, job.micro_batch));
    }
  }
  return actions;
}

int RunGenerate(const ScheduleCommand& c, std::ostream& out, std::ostream& err) {
  StatusOr<Generated> g = Generate(c);
  if (!g.ok()) return Fail(g.status(), err);
  const std::string format = c.format.value_or(g->paddle ? "plan" : "csv");
  if (format != "plan" && format != "csv") return Fail(Usage("--format is 'plan' or 'csv'"), err);
  std::string text;
  if (!g->paddle) {
    if (format == "plan") {
      return Fail(Usage("a PyTorch schedule is written as --format csv (plans are Paddle's)"), err);
    }
    if (c.stage.has_value()) return Fail(Usage("--stage applies to Paddle's plans"), err);
    text = sched::WriteActionCsv(g->pytorch.order);
  } else {
    StatusOr<std::vector<std::vector<sched::Job>>> stages = sched::MakeJobLists(g->spec);
    if (!stages.ok()) return Fail(stages.status(), err);
    if (c.stage.has_value() && (*c.stage < 0 || *c.stage >= c.pp)) {
      return Fail(
          Usage(fmt::format("--stage {} is not a stage of {} (0..{})", *c.stage, c.pp, c.pp - 1)),
          err);
    }
    const auto plan = [](const std::vector<sched::Job>& jobs) {
      std::vector<oldir::PlanJob> plan_jobs;
      for (const sched::Job& job : jobs) plan_jobs.push_back({job.type, job.micro_batch});
      return oldir::PlanJsonText(plan_jobs);
    };
    if (format == "csv") {
      text = sched::WriteActionCsv(PaddleAsActions(g->spec, *stages));
    } else if (c.stage.has_value()) {
      text = plan((*stages)[static_cast<size_t>(*c.stage)]);
    } else if (c.output != "-") {
      // Every stage's plan into a bundle folder: OUTPUT/rank<s>/plan.json.
      for (size_t s = 0; s < stages->size(); ++s) {
        const std::string dir = oldir::RankDir(c.output, static_cast<int>(s));
        std::error_code ec;
        std::filesystem::create_directories(dir, ec);
        Status written =
            ec ? Status(StatusCode::kIoError, Location::File(dir),
                        fmt::format("cannot create the folder: {}", ec.message()))
               : WriteFileAtomically(oldir::RankFile(c.output, static_cast<int>(s), "plan.json"),
                                     plan((*stages)[s]));
        if (!written.ok()) return Fail(written, err);
      }
      return kExitOk;
    } else {
      // Every stage's plan.json on standard output, each headed by the rank folder it belongs in.
      for (size_t s = 0; s < stages->size(); ++s) {
        text += fmt::format("{}// rank{}/plan.json\n{}", s == 0 ? "" : "\n", s, plan((*stages)[s]));
      }
    }
  }
  Status written = WriteOutput(c.output, text, out);
  return written.ok() ? kExitOk : Fail(written, err);
}

// ---- the CommProgram of any source

struct Source {
  sched::CommProgram program;
  std::string name;  // for reports: the file, the bundle, or "1F1B pp=2 m=4"
};

bool IsCommunication(const sched::Action& action) {
  switch (action.type) {
    case sched::ActionType::kSendF:
    case sched::ActionType::kRecvF:
    case sched::ActionType::kSendB:
    case sched::ActionType::kRecvB:
      return true;
    default:
      return false;
  }
}

// Ranks, stages and micro-batches a CSV's actions name (overlapped pairs included).
struct CsvShape {
  int pp = 0;
  int num_stages = 0;
  int micro_batches = 0;
  bool has_communication = false;
};

CsvShape ShapeOf(const sched::ActionSchedule& schedule) {
  CsvShape shape;
  shape.pp = static_cast<int>(schedule.ranks.size());
  const auto visit = [&](const sched::Action& a, const auto& self) -> void {
    if (a.type == sched::ActionType::kOverlapFB) {
      for (const sched::Action& sub : a.sub_actions) self(sub, self);
      return;
    }
    shape.num_stages = std::max(shape.num_stages, a.stage + 1);
    shape.micro_batches = std::max(shape.micro_batches, a.micro_batch + 1);
    shape.has_communication = shape.has_communication || IsCommunication(a);
  };
  for (const auto& row : schedule.ranks) {
    for (const std::optional<sched::Action>& a : row) {
      if (a.has_value()) visit(*a, visit);
    }
  }
  return shape;
}

// A CSV with its communication: as written when it has some, else lowered (PyTorch's
// `_add_send_recv`, after `_merge_bw` unless told not to, as PyTorch's lowering test does); the
// stage -> rank map comes from validating the compute actions.
StatusOr<sched::ActionSchedule> ReadCsvWithCommunication(const std::string& file, bool merge_bw,
                                                         std::vector<int>* stage_to_rank) {
  IRM_ASSIGN_OR_RETURN(const std::string text, ReadFile(file));
  IRM_ASSIGN_OR_RETURN(sched::ActionSchedule schedule, sched::ReadActionCsv(text, file));
  const CsvShape shape = ShapeOf(schedule);
  if (shape.has_communication) {
    // The map of a schedule with communication: each stage on the rank whose row computes it.
    stage_to_rank->assign(static_cast<size_t>(shape.num_stages), -1);
    for (size_t r = 0; r < schedule.ranks.size(); ++r) {
      for (const std::optional<sched::Action>& a : schedule.ranks[r]) {
        if (a.has_value() && !IsCommunication(*a) && a->type != sched::ActionType::kOverlapFB) {
          (*stage_to_rank)[static_cast<size_t>(a->stage)] = static_cast<int>(r);
        }
      }
    }
    for (size_t s = 0; s < stage_to_rank->size(); ++s) {
      if ((*stage_to_rank)[s] < 0) {
        return Status(StatusCode::kInvalidArgument, Location::File(file),
                      fmt::format("no rank computes stage {}, which the schedule sends to", s));
      }
    }
    return schedule;
  }
  StatusOr<std::vector<int>> validated = sched::ValidateActionSchedule(
      schedule, shape.pp, shape.num_stages, shape.micro_batches, file);
  if (!validated.ok()) return AsBadInput(validated.status());
  *stage_to_rank = std::move(validated).value();
  StatusOr<sched::ActionSchedule> lowered =
      sched::LowerComputeSchedule(merge_bw ? sched::MergeBw(schedule) : schedule, shape.pp,
                                  shape.num_stages, shape.micro_batches, {}, file);
  if (!lowered.ok()) return AsBadInput(lowered.status());
  return lowered;
}

StatusOr<Source> LoadSource(const ScheduleCommand& c) {
  Source source;
  if (c.input.empty()) {
    IRM_ASSIGN_OR_RETURN(const Generated g, Generate(c));
    if (g.paddle) {
      source.name =
          fmt::format("{} ({}) pp={} m={}{}", sched::PaddleModeName(g.spec.mode), c.ir, c.pp,
                      c.micro_batches, g.spec.vpp > 1 ? fmt::format(" vpp={}", g.spec.vpp) : "");
      IRM_ASSIGN_OR_RETURN(source.program, sched::PaddleCommProgram(g.spec));
      return source;
    }
    source.name = fmt::format("{} pp={} m={}", c.mode, c.pp, c.micro_batches);
    IRM_ASSIGN_OR_RETURN(const sched::ActionSchedule lowered,
                         sched::AddSendRecv(g.pytorch.order, g.pytorch.stage_to_rank));
    IRM_ASSIGN_OR_RETURN(source.program,
                         sched::ActionScheduleToCommProgram(lowered, g.pytorch.stage_to_rank));
    return source;
  }
  if (!c.mode.empty()) return Usage("give a schedule file or bundle, or --mode, not both");
  source.name = c.input;
  std::error_code ec;
  if (std::filesystem::is_directory(c.input, ec)) {
    IRM_ASSIGN_OR_RETURN(const oldir::Bundle bundle, oldir::ReadBundle(c.input));
    for (const oldir::BundleRank& rank : bundle.ranks) {
      if (!rank.plan.has_value()) continue;
      std::vector<sched::Job> jobs;
      for (const oldir::PlanJob& job : *rank.plan) jobs.push_back({job.type, job.micro_batch});
      IRM_RETURN_IF_ERROR(AsBadInput(
          sched::CheckJobList(jobs, bundle.micro_batches,
                              Location::File(oldir::RankFile(c.input, rank.rank, "plan.json")))));
    }
    IRM_ASSIGN_OR_RETURN(source.program, corpus::BundleCommProgram(bundle, c.input));
    return source;
  }
  std::vector<int> stage_to_rank;
  IRM_ASSIGN_OR_RETURN(const sched::ActionSchedule schedule,
                       ReadCsvWithCommunication(c.input, c.merge_bw, &stage_to_rank));
  IRM_ASSIGN_OR_RETURN(source.program,
                       sched::ActionScheduleToCommProgram(schedule, stage_to_rank, c.input));
  return source;
}

// ---- check, draw, lower

int OutcomeExit(const sched::SimResult& result) {
  switch (result.outcome) {
    case sched::SimOutcome::kCompleted:
      return kExitOk;
    case sched::SimOutcome::kDeadlock:
    case sched::SimOutcome::kWrongMatch:
      return kExitCheckFailed;
    case sched::SimOutcome::kUnmatched:
      return kExitBadInput;
  }
  return kExitCheckFailed;
}

std::string CheckJson(const Source& source, const sched::SimResult& result,
                      const std::optional<int>& depth) {
  nlohmann::ordered_json doc;
  doc["schedule"] = source.name;
  doc["p2p"] = sched::P2pModelName(result.model);
  doc["outcome"] = sched::SimOutcomeName(result.outcome);
  doc["ranks"] = source.program.ranks.size();
  doc["ticks"] = result.ticks;
  doc["bubble_ratio"] = result.bubble_ratio;
  doc["min_buffer_depth"] = depth.has_value() ? nlohmann::ordered_json(*depth) : nullptr;
  doc["diagnostic"] = result.diagnostic;
  nlohmann::ordered_json waits = nlohmann::ordered_json::array();
  for (const sched::Wait& w : result.waits) {
    waits.push_back({{"rank", w.rank},
                     {"peer", w.peer},
                     {"step", w.step_index},
                     {"waits_in", sched::DescribeStep(w.step)}});
  }
  doc["waits"] = std::move(waits);
  return doc.dump(2) + "\n";
}

int RunCheckOrDraw(const ScheduleCommand& c, std::ostream& out, std::ostream& err) {
  StatusOr<sched::P2pModel> model = sched::ParseP2pModel(c.p2p);
  if (!model.ok()) return Fail(model.status(), err);
  const bool draw = c.action == "draw";
  if (draw && c.grid == c.chrome) return Fail(Usage("draw needs one of --grid or --chrome"), err);
  StatusOr<Source> source = LoadSource(c);
  if (!source.ok()) return Fail(source.status(), err);
  StatusOr<sched::SimResult> result = sched::Simulate(source->program, *model);
  if (!result.ok()) return Fail(result.status(), err);
  if (draw) {
    std::string text = c.grid ? sched::FormatTimelineGrid(source->program, *result)
                              : sched::ScheduleTraceJson(source->program, *result);
    if (!text.empty() && text.back() != '\n') text += '\n';
    Status written = WriteOutput(c.output, text, out);
    if (!written.ok()) return Fail(written, err);
    if (!result->completed()) err << "error: " << result->diagnostic << "\n";
    return OutcomeExit(*result);
  }
  StatusOr<std::optional<int>> depth = sched::MinBufferDepth(source->program);
  if (!depth.ok()) return Fail(depth.status(), err);
  std::string text;
  if (c.json) {
    text = CheckJson(*source, *result, *depth);
  } else if (result->completed()) {
    text = fmt::format(
        "{}: completes under {} in {} ticks on {} ranks (bubble ratio {:.3f}); needs buffer depth "
        "{}\n",
        source->name, sched::P2pModelName(*model), result->ticks, source->program.ranks.size(),
        result->bubble_ratio, sched::BufferDepthName(*depth));
  } else {
    text = fmt::format("{}: {}\n  needs buffer depth {} (0: safe under rendezvous)\n", source->name,
                       result->diagnostic, sched::BufferDepthName(*depth));
  }
  Status written = WriteOutput(c.output, text, out);
  if (!written.ok()) return Fail(written, err);
  return OutcomeExit(*result);
}

int RunLower(const ScheduleCommand& c, std::ostream& out, std::ostream& err) {
  if (c.input.empty()) return Fail(Usage("lower needs a compute-only CSV file"), err);
  StatusOr<std::string> text = ReadFile(c.input);
  if (!text.ok()) return Fail(text.status(), err);
  StatusOr<sched::ActionSchedule> compute = sched::ReadActionCsv(*text, c.input);
  if (!compute.ok()) return Fail(compute.status(), err);
  const CsvShape shape = ShapeOf(*compute);
  if (shape.has_communication) {
    return Fail(Status(StatusCode::kInvalidArgument, Location::File(c.input),
                       "the schedule already has send/recv actions: lowering takes a "
                       "compute-only schedule"),
                err);
  }
  StatusOr<sched::ActionSchedule> lowered =
      sched::LowerComputeSchedule(c.merge_bw ? sched::MergeBw(*compute) : *compute, shape.pp,
                                  shape.num_stages, shape.micro_batches, {}, c.input);
  if (!lowered.ok()) return Fail(AsBadInput(lowered.status()), err);
  Status written = WriteOutput(c.output, sched::WriteActionCsv(*lowered), out);
  return written.ok() ? kExitOk : Fail(written, err);
}

}  // namespace

int RunSchedule(const ScheduleCommand& command, std::ostream& out, std::ostream& err) {
  if (command.action == "generate") return RunGenerate(command, out, err);
  if (command.action == "check" || command.action == "draw") {
    return RunCheckOrDraw(command, out, err);
  }
  if (command.action == "lower") return RunLower(command, out, err);
  return Fail(Usage(fmt::format("unknown schedule action '{}'", command.action)), err);
}

RegisteredCommand AddScheduleCommand(CLI::App& parent) {
  auto command = std::make_shared<ScheduleCommand>();
  ScheduleCommand& schedule = *command;
  CLI::App* schedule_app = parent.add_subcommand(
      "schedule",
      "Pipeline schedules as data: generate Paddle's job lists or PyTorch's action schedules, "
      "check one for deadlocks under a point-to-point model, lower a compute-only CSV, draw a run");
  schedule_app->require_subcommand(1);
  // The options that name a generated schedule.
  const auto add_generated = [&schedule](CLI::App* sub) {
    sub->add_option("--mode", schedule.mode,
                    "Paddle: FThenB, 1F1B, Eager1F1B, VPP, ZBH1, ZBVPP; PyTorch: GPipe, 1F1B, "
                    "Interleaved1F1B, LoopedBFS, InterleavedZeroBubble, ZBVZeroBubble, DualPipeV "
                    "(1F1B is Paddle's; pytorch:1F1B is PyTorch's)");
    sub->add_option("--pp", schedule.pp, "Pipeline stages (ranks)");
    sub->add_option("--micro-batches", schedule.micro_batches, "Micro-batches per step");
    sub->add_option_function<int>(
        "--vpp", [&schedule](int v) { schedule.vpp = v; },
        "Paddle: model chunks per stage (vpp_degree); PyTorch: stages per rank");
    sub->add_flag("--split-backward", schedule.split_backward,
                  "Paddle VPP: split backward into backward_b / backward_w");
    sub->add_option("--ir", schedule.ir, "Paddle: the legacy pass's list or its PIR twin's")
        ->check(CLI::IsMember({"legacy", "pir"}))
        ->capture_default_str();
  };
  const auto add_p2p = [&schedule](CLI::App* sub) {
    sub->add_option("--p2p", schedule.p2p,
                    "Point-to-point model: rendezvous (a send waits for its receive) or "
                    "buffered[=K] (a send completes while its channel holds fewer than K)")
        ->capture_default_str();
  };
  CLI::App* generate_app = schedule_app->add_subcommand(
      "generate", "Print a schedule: Paddle's plan.json per stage, or PyTorch's CSV");
  add_generated(generate_app);
  generate_app->add_option_function<int>(
      "--stage", [&schedule](int s) { schedule.stage = s; }, "Only this stage's plan.json");
  generate_app->add_option_function<std::string>(
      "--format", [&schedule](const std::string& f) { schedule.format = f; },
      "plan (Paddle's job lists, the default for them) or csv (PyTorch's form)");
  CLI::App* check_app = schedule_app->add_subcommand(
      "check",
      "Simulate a schedule (a PyTorch CSV, a bundle's real send/recv order, or --mode ...) "
      "without running a kernel: exit 0 when it completes, 1 naming the deadlock cycle");
  check_app->add_option("schedule", schedule.input, "A PyTorch CSV file or a bundle directory");
  add_generated(check_app);
  add_p2p(check_app);
  check_app->add_flag("--json", schedule.json, "Print a JSON report");
  CLI::App* lower_app = schedule_app->add_subcommand(
      "lower", "Insert PyTorch's send/recv actions into a compute-only CSV (_add_send_recv)");
  lower_app->add_option("csv", schedule.input, "A compute-only PyTorch CSV")->required();
  CLI::App* draw_app = schedule_app->add_subcommand(
      "draw", "Draw a simulated run as an ASCII grid or a Chrome trace (Perfetto)");
  draw_app->add_option("schedule", schedule.input, "A PyTorch CSV file or a bundle directory");
  add_generated(draw_app);
  add_p2p(draw_app);
  draw_app->add_flag("--grid", schedule.grid, "Ranks across, ticks down");
  draw_app->add_flag("--chrome", schedule.chrome, "Chrome trace JSON");
  for (CLI::App* sub : {generate_app, check_app, lower_app, draw_app}) {
    sub->add_option("-o,--output", schedule.output,
                    sub == generate_app
                        ? "Write here (atomically) instead of stdout; a Paddle mode without "
                          "--stage: a bundle folder that gets every rank<s>/plan.json"
                        : "Write here (atomically) instead of stdout");
  }
  for (CLI::App* sub : {check_app, lower_app, draw_app}) {
    sub->add_flag("!--no-merge-bw", schedule.merge_bw,
                  "Lowering a compute-only CSV: keep an I and its W apart instead of merging them "
                  "into one B first (PyTorch's _merge_bw)");
  }
  const std::vector<CLI::App*> actions = {generate_app, check_app, lower_app, draw_app};
  return {schedule_app, [command, actions](std::ostream& out, std::ostream& err) {
            for (CLI::App* sub : actions) {
              if (sub->parsed()) command->action = sub->get_name();
            }
            return RunSchedule(*command, out, err);
          }};
}

}  // namespace irm::tools
