// Reading and writing legacy programs: binary .pdmodel (raw serialized ProgramDesc, as Paddle
// writes it) and the protobuf text form (.prototxt). The format of an input is detected from its
// content, never its name. Reading never crashes on bad bytes: it returns a diagnostic saying where
// the input went wrong (byte offset and message path for binary, line:column for text).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "oldir/program.h"

namespace irm::oldir {

enum class ProgramFormat { kBinary, kText };

const char* ProgramFormatName(ProgramFormat format);  // "binary", "text"
std::optional<ProgramFormat> ProgramFormatFromName(std::string_view name);

// Text when the bytes are printable text that starts like a text-format message; else binary.
ProgramFormat DetectProgramFormat(std::string_view bytes);

// By extension, for outputs: .prototxt/.pbtxt/.txtpb/.txt -> text; .pdmodel/.pb/__model__ ->
// binary; nullopt when the name says nothing.
std::optional<ProgramFormat> ProgramFormatFromPath(std::string_view path);

// Parses a program. `file` only names the input in diagnostics. Errors are kParseError: malformed
// wire data, a text syntax error, a known field sent with the wrong wire type, a required field
// missing. Unknown fields with unused numbers are kept (see FindUnknownFields).
StatusOr<Program> ParseProgram(std::string_view bytes, const std::string& file,
                               std::optional<ProgramFormat> format = std::nullopt);

// ReadFile + ParseProgram; "-" reads standard input.
StatusOr<Program> LoadProgram(const std::string& path,
                              std::optional<ProgramFormat> format = std::nullopt);

struct SerializeOptions {
  // The text form cannot carry unknown fields; by default serializing a program that has some to
  // text fails. With this set they are dropped instead.
  bool drop_unknown_fields_in_text = false;
};

StatusOr<std::string> SerializeProgram(const Program& program, ProgramFormat format,
                                       const SerializeOptions& options = {});

// SerializeProgram + an atomic write; "-" writes standard output.
Status SaveProgram(const Program& program, const std::string& path, ProgramFormat format,
                   const SerializeOptions& options = {});

// A field the schema does not declare, kept from the input.
struct UnknownField {
  std::string path;   // "blocks[0].ops[3].attrs[1]"
  int number = 0;     // field number
  Location location;  // block/op/var/attr when the path names them (file not set)
};

// Every unknown field in the program, in message order.
std::vector<UnknownField> FindUnknownFields(const proto::ProgramDesc& desc);
// The first `limit` of them, and in `*total` how many there are: a junk input can hold millions,
// three bytes each, and each found costs a path and a location.
std::vector<UnknownField> FindUnknownFields(const proto::ProgramDesc& desc, size_t limit,
                                            size_t* total);

}  // namespace irm::oldir
