// Reading and writing new-IR programs as files: the PIR text form (.pir, printer.h/parser.h) and
// the PIR JSON save form (.json, pir_json.h). The format of an input is told from its content:
// both forms open with `{`, and JSON's first key is a quoted string while text goes on with an op
// line, a block argument line or the closing brace.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "newir/parser.h"
#include "newir/printer.h"
#include "newir/program.h"

namespace irm::newir {

enum class FileFormat { kText, kJson };

// kJson or kText when the bytes (after blanks and `//` comment lines) open with `{` as one of the
// two forms does; nullopt when they are not a new-IR program at all (a legacy ProgramDesc, say).
std::optional<FileFormat> DetectFileFormat(std::string_view bytes);

// By extension, for outputs: .pir -> text, .json -> JSON; nullopt when the name says nothing.
std::optional<FileFormat> FileFormatFromPath(std::string_view path);

struct ReadOptions {
  // Keep ops the registry does not know (the text parser rejects them otherwise; the JSON reader
  // always keeps them and leaves the decision to the verifier).
  bool allow_unregistered = false;
};

// Parses a program in `format`, or in the detected one (text when detection says nothing, so the
// text parser explains what is wrong). `file` names the input in diagnostics.
StatusOr<Program> ParseProgramFile(std::string_view bytes, const std::string& file,
                                   std::optional<FileFormat> format = std::nullopt,
                                   const ReadOptions& options = {});

// ReadFile + ParseProgramFile; "-" reads standard input.
StatusOr<Program> LoadProgramFile(const std::string& path,
                                  std::optional<FileFormat> format = std::nullopt,
                                  const ReadOptions& options = {});

// The program in `format`: text as PrintProgram writes it with `print`, JSON as WritePirJson writes
// it (Paddle's trainable layout, one line per document).
std::string SerializeProgramFile(const Program& program, FileFormat format,
                                 const PrintOptions& print = {});

// SerializeProgramFile + an atomic write; "-" writes standard output.
Status SaveProgramFile(const Program& program, const std::string& path, FileFormat format,
                       const PrintOptions& print = {});

}  // namespace irm::newir
