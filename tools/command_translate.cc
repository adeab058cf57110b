// `ir-migrate translate`: a legacy program to a new-IR program (PIR text or JSON by the output's
// extension or --to), verified before it is written. Unknown op types fail the translation, all
// of them listed, unless --allow-unregistered keeps them as opaque ops; a program the legacy
// validator rejects is not translated (exit 1, with its findings); --coverage prints the
// per-op-type table on stderr. A directory is translated as a bundle (docs/bundle.md): every
// program of every rank, into a new pir bundle directory, one progress line per program.
#include <fmt/format.h>

#include <filesystem>

#include "common/file_io.h"
#include "newir/nesting.h"
#include "newir/verifier.h"
#include "oldir/validator.h"
#include "tools/cli_options.h"
#include "tools/command_registry.h"
#include "tools/commands.h"
#include "tools/exit_code.h"
#include "translator/bundle_translate.h"
#include "translator/translate.h"

namespace irm::tools {
namespace {

std::string Plural(int64_t n, const char* word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

int RunTranslateBundle(const TranslateCommand& command, std::ostream& out, std::ostream& err) {
  // "dir/" and "dir" name the same bundle; diagnostics name it one way.
  std::string in_dir = command.input;
  while (in_dir.size() > 1 && in_dir.back() == '/') in_dir.pop_back();
  std::string out_dir = command.output;
  while (out_dir.size() > 1 && out_dir.back() == '/') out_dir.pop_back();
  if (command.from || command.to) {
    return Fail(Status(StatusCode::kInvalidArgument, Location::File(in_dir),
                       "--from and --to apply to a program file; a bundle is translated into a "
                       "pir bundle of .json programs"),
                err);
  }
  if (out_dir == "-") {
    Status status(StatusCode::kInvalidArgument, Location::File(in_dir),
                  "a bundle is translated into a directory");
    status.AddNote("use -o DIR");
    return Fail(status, err);
  }
  translator::BundleTranslateOptions options;
  options.comm_ops = command.comm_ops;
  options.allow_unregistered = command.newir.allow_unregistered;
  auto progress = [&err](const translator::ProgramProgress& p) {
    err << fmt::format("[rank {}/{}] {} -> {} ({})\n", p.rank, p.world_size, p.legacy_file,
                       p.output_file, Plural(p.ops, "op"));
  };
  StatusOr<translator::BundleTranslation> t =
      translator::TranslateBundle(in_dir, out_dir, options, progress);
  if (!t.ok()) return Fail(t.status(), err);
  err << t->notes.Render();
  if (command.coverage) err << t->coverage.ToText();
  out << fmt::format("{}: wrote a pir bundle: {}, {}, {} legacy ops -> {}\n", out_dir,
                     Plural(t->ranks, "rank"), Plural(t->programs, "program"), t->legacy_ops,
                     Plural(t->ops, "op"));
  return kExitOk;
}

}  // namespace

int RunTranslate(const TranslateCommand& command, std::ostream& out, std::ostream& err) {
  std::error_code ec;
  if (command.input != "-" && std::filesystem::is_directory(command.input, ec)) {
    return RunTranslateBundle(command, out, err);
  }
  std::optional<IrFormat> to = command.to;
  if (!to) to = command.output == "-" ? IrFormat::kPir : IrFormatFromPath(command.output);
  if (!to || !IsNewIr(*to)) {
    Status status(StatusCode::kInvalidArgument, Location::File(command.output),
                  "a translation is written as PIR text or PIR JSON");
    status.AddNote("use --to pir|json, or an output ending in .pir or .json");
    return Fail(status, err);
  }
  const std::string file = command.input == "-" ? "<stdin>" : command.input;
  StatusOr<std::string> input = ReadFile(command.input);
  if (!input.ok()) return Fail(input.status(), err);
  if (IsNewIr(command.from.value_or(DetectIrFormat(*input)))) {
    return Fail(Status(StatusCode::kInvalidArgument, Location::File(file),
                       "the input is already a new-IR program"),
                err);
  }
  StatusOr<oldir::Program> legacy = oldir::ParseProgram(
      *input, file, command.from ? std::optional(ToLegacyFormat(*command.from)) : std::nullopt);
  if (!legacy.ok()) return Fail(legacy.status(), err);
  // A program `validate` rejects is not translated: the translator assumes what the validator
  // checks (declared vars, slots and attributes, sub-blocks that nest), and its own error for a
  // broken program would name a symptom, not the cause. One difference: a declared var the
  // program reads before writing it is an input of the translation (a pd_op.data), so every
  // declared name counts as fed, as `validate --feed NAME` would take it. Unknown op types are
  // not validation errors, so --allow-unregistered keeps its meaning: the translator decides
  // what to do with them.
  oldir::ValidateOptions validate;
  validate.file = file;
  for (const oldir::proto::BlockDesc& block : legacy->desc().blocks()) {
    for (const oldir::proto::VarDesc& var : block.vars()) validate.extra_feeds.insert(var.name());
  }
  const Diagnostics findings = oldir::ValidateProgram(*legacy, validate);
  if (findings.HasErrors()) {
    err << findings.Render();
    return Fail(Status(StatusCode::kInvalid, Location::File(file),
                       fmt::format("not translated: the program does not validate ({})",
                                   Plural(findings.CountOf(Severity::kError), "error"))),
                err);
  }

  translator::TranslateOptions options;
  options.file = file;
  options.comm_ops = command.comm_ops;
  options.allow_unregistered = command.newir.allow_unregistered;
  StatusOr<translator::Translation> t = translator::TranslateProgram(*legacy, options);
  if (!t.ok()) return Fail(t.status(), err);
  err << t->notes.Render();
  if (command.coverage) err << t->coverage.ToText();

  const Diagnostics verified = newir::VerifyProgramAll(
      t->program, {.allow_unregistered = command.newir.allow_unregistered, .file = file});
  if (verified.HasErrors()) {
    // The legacy program translated but its translation breaks the new IR's rules: a gap in the
    // translator, reported as such.
    err << verified.Render();
    return Fail(Status(StatusCode::kInternal, Location::File(file),
                       "the translation does not verify (a translator bug)"),
                err);
  }
  // Nothing is written, to a file or to standard output, that the new-IR readers would refuse.
  const Status nesting = newir::CheckRegionNesting(
      t->program, command.output == "-" ? std::string("<stdout>") : command.output);
  if (!nesting.ok()) return Fail(nesting, err);
  const std::string bytes =
      newir::SerializeProgramFile(t->program, ToNewIrFormat(*to), command.newir.ToPrintOptions());
  if (command.output == "-") {
    out << bytes;
    out.flush();
    return kExitOk;
  }
  const Status written = WriteFileAtomically(command.output, bytes);
  return written.ok() ? kExitOk : Fail(written, err);
}

RegisteredCommand AddTranslateCommand(CLI::App& parent) {
  auto command = std::make_shared<TranslateCommand>();
  TranslateCommand& translate = *command;
  CLI::App* translate_app = parent.add_subcommand(
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
  return {translate_app, [command](std::ostream& out, std::ostream& err) {
            return RunTranslate(*command, out, err);
          }};
}

}  // namespace irm::tools
