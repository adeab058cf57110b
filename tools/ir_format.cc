// Format names and detection for the CLI, over oldir's and newir's own detection.
#include "tools/ir_format.h"

namespace irm::tools {

const char* IrFormatName(IrFormat format) {
  switch (format) {
    case IrFormat::kBinary:
      return "binary";
    case IrFormat::kText:
      return "text";
    case IrFormat::kPir:
      return "pir";
    case IrFormat::kJson:
      return "json";
  }
  return "binary";
}

std::optional<IrFormat> IrFormatFromName(std::string_view name) {
  for (IrFormat f : {IrFormat::kBinary, IrFormat::kText, IrFormat::kPir, IrFormat::kJson}) {
    if (name == IrFormatName(f)) return f;
  }
  return std::nullopt;
}

std::vector<std::string> IrFormatNames() { return {"binary", "text", "pir", "json"}; }

oldir::ProgramFormat ToLegacyFormat(IrFormat format) {
  return format == IrFormat::kText ? oldir::ProgramFormat::kText : oldir::ProgramFormat::kBinary;
}

newir::FileFormat ToNewIrFormat(IrFormat format) {
  return format == IrFormat::kJson ? newir::FileFormat::kJson : newir::FileFormat::kText;
}

IrFormat DetectIrFormat(std::string_view bytes) {
  if (std::optional<newir::FileFormat> f = newir::DetectFileFormat(bytes)) {
    return *f == newir::FileFormat::kJson ? IrFormat::kJson : IrFormat::kPir;
  }
  return oldir::DetectProgramFormat(bytes) == oldir::ProgramFormat::kText ? IrFormat::kText
                                                                          : IrFormat::kBinary;
}

std::optional<IrFormat> IrFormatFromPath(std::string_view path) {
  if (std::optional<newir::FileFormat> f = newir::FileFormatFromPath(path)) {
    return *f == newir::FileFormat::kJson ? IrFormat::kJson : IrFormat::kPir;
  }
  if (std::optional<oldir::ProgramFormat> f = oldir::ProgramFormatFromPath(path)) {
    return *f == oldir::ProgramFormat::kText ? IrFormat::kText : IrFormat::kBinary;
  }
  return std::nullopt;
}

newir::PrintOptions NewIrOptions::ToPrintOptions() const {
  newir::PrintOptions options;
  options.generic = print_generic;
  options.debug_info = print_debuginfo;
  return options;
}

newir::ReadOptions NewIrOptions::ToReadOptions() const {
  newir::ReadOptions options;
  options.allow_unregistered = allow_unregistered;
  return options;
}

}  // namespace irm::tools
