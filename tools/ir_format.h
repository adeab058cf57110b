// The program file formats the CLI reads and writes, legacy and new IR under one set of names
// (`--from`/`--to`): `binary` (.pdmodel) and `text` (.prototxt) for ProgramDesc, `pir` (PIR text)
// and `json` (PIR JSON) for the new IR. Inputs are told apart by content; outputs by extension.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "newir/program_io.h"
#include "oldir/program_io.h"

namespace irm::tools {

enum class IrFormat { kBinary, kText, kPir, kJson };

const char* IrFormatName(IrFormat format);
std::optional<IrFormat> IrFormatFromName(std::string_view name);
// Every name, for --from/--to's help and checks.
std::vector<std::string> IrFormatNames();

inline bool IsNewIr(IrFormat format) {
  return format == IrFormat::kPir || format == IrFormat::kJson;
}
oldir::ProgramFormat ToLegacyFormat(IrFormat format);  // binary or text
newir::FileFormat ToNewIrFormat(IrFormat format);      // pir or json

// New IR when the bytes open as PIR text or JSON, else a legacy ProgramDesc (binary or text).
IrFormat DetectIrFormat(std::string_view bytes);

// By extension (.pdmodel/.prototxt/.pir/.json, see oldir and newir program_io.h); nullopt when the
// name says nothing.
std::optional<IrFormat> IrFormatFromPath(std::string_view path);

// How new-IR programs are read and printed by the commands that take them.
struct NewIrOptions {
  bool allow_unregistered = false;  // keep unknown ops opaquely instead of rejecting them
  bool print_generic = false;       // no custom forms (pd_op.if, pd_op.while)
  bool print_debuginfo = false;     // [id:N] after each op name
  newir::PrintOptions ToPrintOptions() const;
  newir::ReadOptions ToReadOptions() const;
};

}  // namespace irm::tools
