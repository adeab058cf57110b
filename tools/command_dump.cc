// `ir-migrate dump`: a legacy program one line per var and op, a new-IR program in PIR text, or a
// summary of a tensor file. The kind of input is told from its first bytes: "\x93NUMPY" is .npy,
// four zero bytes (tensor version 0) are a .pdiparams file — a ProgramDesc never starts with a zero
// byte —, `{` opens a new-IR program (tools/ir_format.h) and anything else is a legacy program.
#include <fmt/format.h>

#include <cstring>

#include "common/file_io.h"
#include "common/npy.h"
#include "oldir/dump.h"
#include "oldir/params_io.h"
#include "tools/cli_options.h"
#include "tools/command_registry.h"
#include "tools/commands.h"
#include "tools/exit_code.h"

namespace irm::tools {
namespace {

// Up to `limit` leading elements, for the dtypes people read as numbers.
std::string LeadingValues(const HostTensor& t, int64_t limit) {
  const int64_t n = std::min<int64_t>(t.numel(), limit);
  std::vector<std::string> values;
  auto read = [&](auto zero) {
    for (int64_t i = 0; i < n; ++i) {
      decltype(zero) v;
      std::memcpy(&v, t.bytes.data() + i * sizeof v, sizeof v);
      values.push_back(fmt::format("{}", v));
    }
  };
  switch (t.dtype) {
    case DType::kFloat32:
      read(0.0f);
      break;
    case DType::kFloat64:
      read(0.0);
      break;
    case DType::kInt32:
      read(int32_t{0});
      break;
    case DType::kInt64:
      read(int64_t{0});
      break;
    case DType::kInt8:
      read(int8_t{0});
      break;
    case DType::kUInt8:
    case DType::kBool:
      read(uint8_t{0});
      break;
    default:
      return "";
  }
  std::string text = fmt::format("[{}", fmt::join(values, ", "));
  return text + (t.numel() > n ? ", ...]" : "]");
}

std::string TensorLine(const std::string& name, const HostTensor& t) {
  std::string line = fmt::format("{}{}[{}]  {} elements", name.empty() ? "" : name + " : ",
                                 DTypeName(t.dtype), fmt::join(t.shape, ", "), t.numel());
  std::string values = LeadingValues(t, 8);
  if (!values.empty()) line += "  " + values;
  return line + "\n";
}

StatusOr<std::string> DumpParams(const DumpCommand& command, std::string_view bytes,
                                 const std::string& file) {
  std::vector<std::string> names;
  if (!command.program_for_params.empty()) {
    IRM_ASSIGN_OR_RETURN(oldir::Program program, oldir::LoadProgram(command.program_for_params));
    names = oldir::ParamNamesForProgram(program);
  }
  IRM_ASSIGN_OR_RETURN(std::vector<oldir::ParamTensor> params,
                       oldir::ParseParams(bytes, file, names.empty() ? nullptr : &names));
  std::string text = fmt::format("// parameters, {} tensors\n", params.size());
  for (const oldir::ParamTensor& p : params) text += TensorLine(p.name, p.tensor);
  return text;
}

StatusOr<std::string> Render(const DumpCommand& command) {
  const std::string file = command.input == "-" ? "<stdin>" : command.input;
  IRM_ASSIGN_OR_RETURN(std::string bytes, ReadFile(command.input));
  if (!command.format) {
    if (bytes.rfind("\x93NUMPY", 0) == 0) {
      IRM_ASSIGN_OR_RETURN(HostTensor tensor, ParseNpy(bytes, file));
      return TensorLine("", tensor);
    }
    if (bytes.size() >= 4 && std::memcmp(bytes.data(), "\0\0\0\0", 4) == 0) {
      return DumpParams(command, bytes, file);
    }
  }
  const IrFormat format = command.format.value_or(DetectIrFormat(bytes));
  if (IsNewIr(format)) {
    IRM_ASSIGN_OR_RETURN(
        newir::Program program,
        newir::ParseProgramFile(bytes, file, ToNewIrFormat(format), command.newir.ToReadOptions()));
    return newir::PrintProgram(program, command.newir.ToPrintOptions());
  }
  IRM_ASSIGN_OR_RETURN(oldir::Program program,
                       oldir::ParseProgram(bytes, file, ToLegacyFormat(format)));
  oldir::DumpOptions options;
  options.show_callstack = command.show_callstack;
  options.nest_sub_blocks = !command.flat;
  options.show_vars = !command.hide_vars;
  return oldir::DumpProgram(program, options);
}

}  // namespace

int Fail(const Status& status, std::ostream& err) {
  err << status.diagnostic().Render();
  return ExitCodeFor(status);
}

int RunDump(const DumpCommand& command, std::ostream& out, std::ostream& err) {
  StatusOr<std::string> text = Render(command);
  if (!text.ok()) return Fail(text.status(), err);
  if (command.output == "-") {
    out << *text;
    return kExitOk;
  }
  Status written = WriteFileAtomically(command.output, *text);
  return written.ok() ? kExitOk : Fail(written, err);
}

RegisteredCommand AddDumpCommand(CLI::App& parent) {
  auto command = std::make_shared<DumpCommand>();
  DumpCommand& dump = *command;
  CLI::App* dump_app = parent.add_subcommand(
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
  return {dump_app,
          [command](std::ostream& out, std::ostream& err) { return RunDump(*command, out, err); }};
}

}  // namespace irm::tools
