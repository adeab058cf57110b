// Command-line parsing for ir-migrate: one binary, one subcommand per job. Keeps CLI11 (slow to
// compile) in this one file; the commands themselves live in command_*.cc.
#include "tools/driver.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "tools/command_schedule.h"
#include "tools/commands.h"
#include "tools/exit_code.h"

namespace irm::tools {
namespace {

constexpr const char* kVersion = "0.1.0";

// Adds --from/--to style format options: binary|text (legacy), pir|json (new IR).
CLI::Option* AddFormatOption(CLI::App* app, const std::string& name,
                             std::optional<IrFormat>* target, const std::string& help) {
  return app
      ->add_option_function<std::string>(
          name, [target](const std::string& value) { *target = IrFormatFromName(value); }, help)
      ->check(CLI::IsMember(IrFormatNames()))
      ->type_name("binary|text|pir|json");
}

void AddAllowUnregistered(CLI::App* app, bool* target) {
  app->add_flag("--allow-unregistered", *target,
                "New IR: keep ops no dialect registers (opaquely) instead of rejecting them");
}

// How new-IR programs are read and printed.
void AddNewIrOptions(CLI::App* app, NewIrOptions* o) {
  AddAllowUnregistered(app, &o->allow_unregistered);
  app->add_flag("--print-generic", o->print_generic,
                "New IR: print every op in the generic form (no custom pd_op.if/while forms)");
  app->add_flag("--print-debuginfo", o->print_debuginfo,
                "New IR: print each op's id ([id:N]) after its name");
}

// Adds an option whose value is one of `names` and is turned into T by `parse`.
template <typename T, typename Parse>
void AddNamedOption(CLI::App* app, const std::string& name, T* target,
                    std::vector<std::string> names, Parse parse, const std::string& help) {
  app->add_option_function<std::string>(
         name, [target, parse](const std::string& value) { *target = *parse(value); }, help)
      ->check(CLI::IsMember(names))
      ->type_name(fmt::format("{}", fmt::join(names, "|")));
}

void AddOptimizerOptions(CLI::App* app, oldir::OptimizerOptions* o) {
  AddNamedOption(app, "--optimizer", &o->kind, {"sgd", "momentum", "adam", "adamw"},
                 oldir::OptimizerKindFromName, "Optimizer (default sgd)");
  app->add_option("--lr", o->learning_rate, "Learning rate")->capture_default_str();
  app->add_option_function<float>(
      "--clip-norm", [o](float norm) { o->clip_global_norm = norm; },
      "Clip gradients by their global norm (ClipGradByGlobalNorm)");
}

void AddMlpOptions(CLI::App* app, oldir::models::MlpConfig* c) {
  app->add_option("--depth", c->depth, "Linear layers")->capture_default_str();
  app->add_option("--in-features", c->in_features, "Input features")->capture_default_str();
  app->add_option("--width", c->width, "Hidden width")->capture_default_str();
  app->add_option("--classes", c->classes, "Outputs")->capture_default_str();
  AddNamedOption(app, "--activation", &c->activation, {"relu", "gelu", "tanh", "sigmoid"},
                 oldir::models::MlpActivationFromName, "Activation (default relu)");
  AddNamedOption(app, "--loss", &c->loss, {"softmax_cross_entropy", "mse"},
                 oldir::models::MlpLossFromName, "Loss (default softmax_cross_entropy)");
  app->add_option("--seed", c->seed, "Program random seed")->capture_default_str();
}

void AddGptOptions(CLI::App* app, oldir::models::GptConfig* c) {
  app->add_option("--layers", c->layers, "Decoder blocks")->capture_default_str();
  app->add_option("--hidden", c->hidden, "Hidden size")->capture_default_str();
  app->add_option("--heads", c->heads, "Attention heads (divide hidden)")->capture_default_str();
  app->add_option("--vocab", c->vocab, "Vocabulary size")->capture_default_str();
  app->add_option("--seq", c->seq, "Sequence length")->capture_default_str();
  app->add_option("--dropout", c->dropout, "Attention dropout probability")->capture_default_str();
  app->add_option("--seed", c->seed, "Program random seed")->capture_default_str();
}

// Integer options with a lower bound: CLI11's PositiveNumber and NonNegativeNumber would say
// "Value 0 not in range 2.225074e-308 to 1.797693e+308"; this one says what is wanted. Shown in
// --help as INT:POSITIVE (min 1) or INT:NONNEGATIVE (min 0).
CLI::Validator AtLeast(int min) {
  return CLI::Validator(
      [min](std::string& input) -> std::string {
        int64_t value = 0;
        if (CLI::detail::lexical_cast(input, value) && value >= min) return {};
        return fmt::format("must be an integer of at least {}, got '{}'", min, input);
      },
      min > 0 ? "POSITIVE" : "NONNEGATIVE");
}

}  // namespace

int RunIrMigrate(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{
      "ir-migrate: read, check, convert and transform PaddlePaddle programs on the way from the "
      "legacy IR (ProgramDesc) to PIR.\nInputs are legacy .pdmodel (binary) or protobuf text, or "
      "new-IR PIR text (.pir) or PIR JSON (.json),\ndetected from content; '-' is standard "
      "input.\nExit codes: 0 ok, 1 check failed, 2 bad usage or input, 3 runtime failure.",
      "ir-migrate"};
  app.set_version_flag("--version", std::string("ir-migrate ") + kVersion);
  app.require_subcommand(1);
  app.fallthrough();

  DumpCommand dump;
  CLI::App* dump_app = app.add_subcommand(
      "dump",
      "Print a legacy program one line per var and op (like Paddle's Program.__str__), a "
      "new-IR program as PIR text, or summarise a tensor file (.npy, .pdiparams)");
  dump_app->add_option("file", dump.input, "Program, .npy or .pdiparams file ('-' = stdin)")
      ->required();
  AddFormatOption(dump_app, "--from", &dump.format, "Force the program format");
  dump_app->add_option("-o,--output", dump.output, "Write here (atomically) instead of stdout");
  AddNewIrOptions(dump_app, &dump.newir);
  dump_app->add_flag("--callstack", dump.show_callstack, "Show op_callstack attributes");
  dump_app->add_flag("--flat", dump.flat, "Print blocks one after another, not nested");
  dump_app->add_flag("--no-vars", dump.hide_vars, "Leave out variable declarations");
  dump_app->add_option("--program", dump.program_for_params,
                       "Program whose persistable vars name the tensors of a .pdiparams file");

  ValidateCommand validate;
  CLI::App* validate_app = app.add_subcommand(
      "validate",
      "Check a program. Legacy: block tree, dataflow, var declarations, attribute encodings and "
      "the schema of known ops. New IR: the verifier (SSA scoping, op tables, dist attributes). "
      "Reports every finding.");
  validate_app->add_option("path", validate.input, "Program file ('-' = stdin) or bundle directory")
      ->required();
  AddFormatOption(validate_app, "--from", &validate.format, "Force the program format");
  validate_app->add_option(
      "--feed", validate.feeds,
      "A var fed from outside (repeatable; need_check_feed vars count already)");
  AddAllowUnregistered(validate_app, &validate.allow_unregistered);
  validate_app->add_flag("--json", validate.json, "Print a JSON report on stdout");
  validate_app->add_flag("--Werror", validate.warnings_as_errors, "Treat warnings as errors");
  validate_app->add_flag("-q,--quiet", validate.quiet, "No summary line");

  ConvertCommand convert;
  CLI::App* convert_app = app.add_subcommand(
      "convert",
      "Convert a program between its two forms, losslessly: legacy binary (.pdmodel) <-> "
      "protobuf text (.prototxt), or new-IR PIR text (.pir) <-> PIR JSON (.json).");
  convert_app->add_option("input", convert.input, "Program file ('-' = stdin)")->required();
  convert_app->add_option("-o,--output", convert.output, "Output file ('-' = stdout)")->required();
  AddFormatOption(convert_app, "--from", &convert.from, "Force the input format");
  AddFormatOption(convert_app, "--to", &convert.to,
                  "Output format (default: from the output's extension)");
  convert_app->add_flag("--drop-unknown", convert.drop_unknown_fields,
                        "Allow text output to drop fields the schema does not know");
  AddNewIrOptions(convert_app, &convert.newir);

  OptCommand opt;
  CLI::App* opt_app = app.add_subcommand(
      "opt",
      "Run a pass pipeline over a new-IR program (like mlir-opt): verify the input, run the "
      "passes, verify after each, write PIR text or JSON");
  opt_app->add_option("input", opt.input, "New-IR program: PIR text or JSON ('-' = stdin)");
  opt_app->add_option("-o,--output", opt.output, "Output file ('-' = stdout, the default)");
  AddFormatOption(opt_app, "--from", &opt.from, "Force the input format");
  AddFormatOption(opt_app, "--to", &opt.to,
                  "Output format, pir or json (default: from the output's extension)");
  opt_app->add_option("--pass-pipeline", opt.pass_pipeline,
                      "Passes to run, e.g. 'dce,canonicalize{max-iterations=3}'");
  opt_app->add_flag("--list-passes", opt.list_passes, "List the passes and their options");
  newir::PassManagerOptions& pm = opt.pass_manager;
  opt_app->add_flag("--verify-each,!--no-verify-each", pm.verify_each,
                    "Verify the input and the IR after every pass (default on)");
  opt_app
      ->add_option_function<std::vector<std::string>>(
          "--print-ir-before",
          [&pm](const std::vector<std::string>& names) {
            pm.print_ir_before.insert(names.begin(), names.end());
          },
          "Print the IR before these passes (comma-separated)")
      ->delimiter(',');
  opt_app
      ->add_option_function<std::vector<std::string>>(
          "--print-ir-after",
          [&pm](const std::vector<std::string>& names) {
            pm.print_ir_after.insert(names.begin(), names.end());
          },
          "Print the IR after these passes (comma-separated)")
      ->delimiter(',');
  opt_app->add_flag("--print-ir-before-all", pm.print_ir_before_all,
                    "Print the IR before every pass");
  opt_app->add_flag("--print-ir-after-all", pm.print_ir_after_all, "Print the IR after every pass");
  opt_app->add_flag("--print-ir-after-change", pm.print_ir_after_change,
                    "Print the IR after a pass only when it changed the IR");
  opt_app->add_flag("--print-ir-after-failure", pm.print_ir_after_failure,
                    "Print the IR after a pass that failed or broke the IR");
  opt_app->add_option("--dump-dir", pm.dump_dir,
                      "Write the input and the IR after each pass as numbered files here");
  opt_app->add_flag("--pass-timing", opt.pass_timing, "Print wall time per pass on stderr");
  AddNewIrOptions(opt_app, &opt.newir);

  ParallelizeCommand parallelize;
  CLI::App* parallelize_app = app.add_subcommand(
      "parallelize",
      "Make a translated serial pir bundle into a pir bundle of every rank's dense programs: "
      "shard_tensor annotations, SPMD completion, reshard lowering, dist-to-dense");
  parallelize_app->add_option("input", parallelize.input, "Serial pir bundle directory")
      ->required();
  parallelize_app->add_option("--strategy", parallelize.strategy, "Strategy JSON")->required();
  parallelize_app->add_option("--annotations", parallelize.annotations,
                              "Annotation JSON: mesh and placements by var name (default: the "
                              "strategy's standard placements: batch sharding for dp, Megatron "
                              "for mp, a [dp, mp] mesh for both)");
  parallelize_app->add_option("-o,--output", parallelize.output, "Output bundle, a new directory")
      ->required();

  TranslateCommand translate;
  CLI::App* translate_app = app.add_subcommand(
      "translate",
      "Translate a legacy program into a new-IR program (PIR text or JSON), or a legacy bundle "
      "directory into a pir bundle directory, verified before anything is written; every op "
      "type that cannot be translated is listed");
  translate_app
      ->add_option("input", translate.input, "Legacy program ('-' = stdin) or bundle directory")
      ->required();
  translate_app->add_option(
      "-o,--output", translate.output,
      "Output file ('-' = PIR text on stdout, the default); for a bundle, a new directory");
  AddFormatOption(translate_app, "--from", &translate.from, "Force the input format");
  AddFormatOption(translate_app, "--to", &translate.to,
                  "Output format, pir or json (default: from the output's extension)");
  AddNamedOption(
      translate_app, "--comm-ops", &translate.comm_ops, {"dist", "legacy"},
      [](std::string_view name) -> std::optional<translator::CommOpStyle> {
        if (name == "dist") return translator::CommOpStyle::kDist;
        if (name == "legacy") return translator::CommOpStyle::kLegacy;
        return std::nullopt;
      },
      "Communication ops as the new IR's collectives (dist, default) or Paddle's legacy names");
  translate_app->add_flag("--coverage", translate.coverage,
                          "Print a table of op types (count, translated, dropped, opaque, "
                          "unsupported) on stderr");
  AddNewIrOptions(translate_app, &translate.newir);

  RunCommand run;
  CLI::App* run_app = app.add_subcommand(
      "run",
      "Run a program (legacy or new IR, by content) or one rank of a bundle on the reference "
      "runtime: the startup program once, then N training steps; prints each step's fetches");
  run_app->add_option("input", run.input, "Program file or bundle directory")->required();
  run_app->add_option("--startup", run.startup,
                      "Startup program run once before the steps (a bundle rank's own by "
                      "default)");
  run_app->add_option("--rank", run.rank, "The bundle rank to run")
      ->check(AtLeast(0))
      ->capture_default_str();
  run_app
      ->add_option("--ranks", run.ranks,
                   "Run every rank of the bundle at once, as threads communicating through "
                   "the backend (N must be the bundle's world size)")
      ->check(AtLeast(1));
  run_app
      ->add_option("--backend", run.backend,
                   "The communication backend of a --ranks run: thread (in-process, "
                   "reductions in rank order; the reference) or gloo (TCP on loopback)")
      ->check(CLI::IsMember({"thread", "gloo"}))
      ->capture_default_str();
  run_app->add_option("--trace", run.trace,
                      "With --ranks: write a Chrome trace of the run (one track per rank, job "
                      "and op spans, communication as flows; opens in Perfetto)");
  run_app
      ->add_option("--launch", run.launch,
                   "How --backend gloo hosts the ranks: threads of this process, or one "
                   "process per rank meeting through a file store")
      ->check(CLI::IsMember({"threads", "processes"}))
      ->capture_default_str();
  run_app
      ->add_option("--timeout-ms", run.timeout_ms,
                   "--backend gloo: a call waiting longer than this fails (a hang becomes an "
                   "error)")
      ->check(AtLeast(1))
      ->capture_default_str();
  run_app->add_option("--p2p", run.p2p,
                      "With --ranks: when a send returns: rendezvous (once the receiver takes the "
                      "message; the strict model) or buffered[=K] (at once while its channel holds "
                      "fewer than K unreceived messages, K = 1 by default); default: the model "
                      "bundle.json states, else rendezvous");
  // The children of a --launch processes run: one rank each (not for people to call).
  run_app->add_option("--rank-process", run.rank_process)->group("");
  run_app->add_option("--store", run.store)->group("");
  run_app->add_option("--steps", run.steps, "Training steps (default: the bundle's, else 1)")
      ->check(AtLeast(1));
  run_app->add_option("--feed", run.feeds,
                      "A feed for every step: NAME=FILE.npy (repeatable; NAME one the program "
                      "or bundle feeds)");
  run_app->add_flag("--random-feeds", run.random_feeds,
                    "Draw the feeds not given from the seed, anew each step (integer ids below "
                    "the table size they index)");
  run_app->add_option_function<uint64_t>(
      "--seed", [&run](uint64_t seed) { run.seed = seed; },
      "The run's seed: random feeds and random ops without their own seed (default: the "
      "bundle's, else 0)");
  run_app->add_option("--batch-size", run.batch_size, "The -1 dims of random feeds")
      ->check(AtLeast(1))
      ->capture_default_str();
  run_app->add_option("--fetch", run.fetch,
                      "Fetch these instead of the program's fetch list: fetched names or "
                      "persistable vars (repeatable)");
  run_app->add_option("--save-params", run.save_params,
                      "Save every persistable var afterwards to this .pdiparams file");
  AddNamedOption(
      run_app, "--gemm", &run.gemm, {"blas", "reference"},
      [](std::string_view name) -> std::optional<rt::GemmMode> {
        if (name == "blas") return rt::GemmMode::kBlas;
        if (name == "reference") return rt::GemmMode::kReference;
        return std::nullopt;
      },
      "Matrix products by OpenBLAS (blas, default) or by fixed-order loops whose bits are the "
      "same on every machine (reference)");
  run_app->add_flag("--json", run.json, "JSON on stdout: every step's fetches with hashes");

  ParityCommand parity;
  CLI::App* parity_app = app.add_subcommand(
      "parity",
      "Run a legacy program (or every rank of a legacy bundle) and its new-IR twin (--against, "
      "or translated on the fly) side by side and compare every fetch, persistable var, aligned "
      "intermediate and, for a bundle, each rank's communication; exit 0 parity, 1 mismatch, "
      "2 bad input, 3 runtime failure (a hang included)");
  parity_app->add_option("legacy", parity.legacy, "Legacy program file or bundle directory")
      ->required();
  parity_app->add_option("--startup", parity.startup,
                         "Legacy startup program, run once first (translated for the new IR)");
  parity_app->add_option("--against", parity.against,
                         "New-IR program (pir bundle for a bundle) to compare with (default: "
                         "translate the legacy one)");
  parity_app->add_option("--serial", parity.serial,
                         "The serial program's one-rank bundle: check the distributed bundle "
                         "against it (losses, parameters and optimizer state reassembled from "
                         "the ranks) instead of against a translation");
  parity_app->add_option("--steps", parity.steps, "Training steps (default: the bundle's, else 1)");
  parity_app->add_option("--feed", parity.feeds,
                         "A feed for every step: NAME=FILE.npy (repeatable; others are random)");
  parity_app->add_option("--seed", parity.seed,
                         "Seed of random feeds and random ops (default: the bundle's, else 0)");
  parity_app->add_option("--ranks", parity.ranks,
                         "A bundle: every rank at once (N must be the world size; default: it)");
  parity_app
      ->add_option("--backend", parity.backend,
                   "A bundle's communication backend: thread (in-process, reductions in rank "
                   "order; the reference)")
      ->capture_default_str();
  parity_app->add_option(
      "--p2p", parity.p2p,
      "For a bundle: when a send returns, rendezvous or buffered[=K] (a pipeline's "
      "1F1B needs buffered sends, as NCCL gives them); default: the model "
      "bundle.json states, else rendezvous");
  parity_app->add_option("--batch-size", parity.batch_size, "The -1 dims of random feeds")
      ->capture_default_str();
  AddNamedOption(parity_app, "--tier", &parity.tier, {"exact", "reordered", "noise-floor"},
                 diff::TierFromName,
                 "Tolerance tier (default exact: bitwise; with --serial, reordered; noise-floor: "
                 "a float64 shadow of the serial program arbitrates, --serial only)");
  parity_app->add_option("--report", parity.report, "Write the JSON report to this file");
  parity_app->add_option("--junit", parity.junit, "Write a JUnit XML report to this file");
  parity_app->add_option("--trace", parity.trace,
                         "Write a Chrome trace of both runs (a process per side and rank; opens "
                         "in Perfetto)");
  parity_app->add_option("--dump", parity.dump_dir,
                         "Write the kept tensors (the first divergence's, --dump-name's) as .npy");
  parity_app->add_option("--dump-name", parity.dump_names,
                         "Keep (and dump) the tensors of names matching this glob (repeatable)");
  AddNamedOption(
      parity_app, "--gemm", &parity.gemm, {"blas", "reference"},
      [](std::string_view name) -> std::optional<rt::GemmMode> {
        if (name == "blas") return rt::GemmMode::kBlas;
        if (name == "reference") return rt::GemmMode::kReference;
        return std::nullopt;
      },
      "Matrix products by OpenBLAS (blas, default) or by fixed-order loops (reference)");

  BuildCommand build;
  CLI::App* build_app = app.add_subcommand(
      "build",
      "Build a model-zoo training program (startup + main, forward, backward, optimizer) "
      "as a single-rank bundle directory");
  build_app->require_subcommand(1);
  build_app->add_option("-o,--output", build.output, "The bundle directory to write")->required();
  build_app->add_flag("--text", build.text_copies, "Also write .prototxt copies of the programs");
  build_app->add_option("--steps", build.steps, "Training steps the bundle asks for")
      ->capture_default_str();
  build_app->add_option("--strategy", build.strategy,
                        "A strategy JSON file (dp_degree, dp_optimization, ...): write the "
                        "per-rank programs of its distributed run instead of one rank");
  build_app
      ->add_option("--batch-size", build.batch_size,
                   "Rows per data-parallel replica and step: a pipeline's send/recv shapes "
                   "are static, so its bundle's feeds fix dim 0 to this")
      ->capture_default_str();
  build_app->add_option("--annotations", build.annotations,
                        "A dist sidecar (binary or text) placing every parameter over the "
                        "model-parallel mesh, in place of the Megatron placements");
  AddNamedOption(
      build_app, "--job-lists", &build.job_lists, {"legacy", "pir"},
      [](std::string_view name) -> std::optional<schedules::JobListIr> {
        if (name == "legacy") return schedules::JobListIr::kLegacy;
        if (name == "pir") return schedules::JobListIr::kPir;
        return std::nullopt;
      },
      "A pipeline's jobs as Paddle's legacy passes make them (legacy, default) or as its PIR "
      "passes do (pir: recv_forward and send_backward jobs for 1F1B and VPP)");
  AddOptimizerOptions(build_app, &build.optimizer);
  CLI::App* mlp_app = build_app->add_subcommand("mlp", "Linear layers with an activation");
  AddMlpOptions(mlp_app, &build.mlp);
  CLI::App* gpt_app = build_app->add_subcommand("gpt", "A small GPT-style decoder");
  AddGptOptions(gpt_app, &build.gpt);
  CLI::App* corpus_app = build_app->add_subcommand(
      "corpus",
      "The parity corpus: distributed bundles the legacy passes make from strategies (data, "
      "tensor and pipeline parallel, gradient merge, hybrids), each in OUTPUT/<case>");
  // Options of `build` may also follow the model name: `build gpt --layers 2 -o OUT`.
  mlp_app->fallthrough();
  gpt_app->fallthrough();
  corpus_app->fallthrough();

  SuiteCommand suite;
  CLI::App* suite_app = app.add_subcommand(
      "suite",
      "Run the parity suite's cases (one JSON file each): build each case's distributed bundle, "
      "compare it with its serial program and its translation; exit 0 all pass, 1 a mismatch, 2 "
      "a malformed case, 3 a runtime failure");
  suite_app->add_option("dir", suite.dir, "The folder of case files (diff_tests/cases)")
      ->required();
  suite_app->add_option("--filter", suite.filter, "Only cases whose name matches this glob");
  suite_app->add_option("--tag", suite.tags, "Only cases with this tag (e.g. fast)");
  suite_app->add_option("--jobs", suite.jobs, "Cases run at once")
      ->check(AtLeast(1))
      ->capture_default_str();
  suite_app->add_option("--junit", suite.junit, "Write JUnit XML (a test suite per case group)");
  suite_app->add_option("--json", suite.json, "Write the JSON summary");
  suite_app->add_option("--md", suite.md, "Write the Markdown table");
  suite_app->add_option("--evidence", suite.evidence,
                        "Write an ir-deadcode evidence manifest (and the parity reports it "
                        "names, in <stem>.reports/ beside it)");

  ScheduleCommand schedule;
  CLI::App* schedule_app = app.add_subcommand(
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

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e, out, err);
  } catch (const CLI::ParseError& e) {
    app.exit(e, out, err);
    return kExitBadInput;
  }

  if (dump_app->parsed()) return RunDump(dump, out, err);
  if (validate_app->parsed()) return RunValidate(validate, out, err);
  if (convert_app->parsed()) return RunConvert(convert, out, err);
  if (opt_app->parsed()) return RunOpt(opt, out, err);
  if (translate_app->parsed()) return RunTranslate(translate, out, err);
  if (parallelize_app->parsed()) return RunParallelize(parallelize, out, err);
  if (run_app->parsed()) return RunRun(run, out, err);
  if (parity_app->parsed()) return RunParity(parity, out, err);
  if (suite_app->parsed()) return RunSuite(suite, out, err);
  if (schedule_app->parsed()) {
    for (CLI::App* sub : {generate_app, check_app, lower_app, draw_app}) {
      if (sub->parsed()) schedule.action = sub->get_name();
    }
    return RunSchedule(schedule, out, err);
  }
  if (build_app->parsed()) {
    build.model = gpt_app->parsed()      ? BuildCommand::Model::kGpt
                  : corpus_app->parsed() ? BuildCommand::Model::kCorpus
                                         : BuildCommand::Model::kMlp;
    return RunBuild(build, out, err);
  }
  return kExitBadInput;
}

}  // namespace irm::tools
