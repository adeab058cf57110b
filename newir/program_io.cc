// File I/O of new-IR programs: format detection and the dispatch to the text and JSON forms.
#include "newir/program_io.h"

#include "common/file_io.h"
#include "newir/nesting.h"
#include "newir/pir_json.h"

namespace irm::newir {

std::optional<FileFormat> DetectFileFormat(std::string_view bytes) {
  auto is_blank = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  size_t i = 0;
  // Blanks and `//` comment lines (PIR text's comments; docs/opt.md) before the first brace.
  while (i < bytes.size()) {
    if (is_blank(bytes[i])) {
      ++i;
    } else if (bytes.substr(i, 2) == "//") {
      while (i < bytes.size() && bytes[i] != '\n') ++i;
    } else {
      break;
    }
  }
  if (i == bytes.size() || bytes[i] != '{') return std::nullopt;
  for (++i; i < bytes.size() && is_blank(bytes[i]); ++i) {
  }
  if (i == bytes.size()) return FileFormat::kText;
  return bytes[i] == '"' ? FileFormat::kJson : FileFormat::kText;
}

std::optional<FileFormat> FileFormatFromPath(std::string_view path) {
  if (path.ends_with(".pir")) return FileFormat::kText;
  if (path.ends_with(".json")) return FileFormat::kJson;
  return std::nullopt;
}

StatusOr<Program> ParseProgramFile(std::string_view bytes, const std::string& file,
                                   std::optional<FileFormat> format, const ReadOptions& options) {
  const FileFormat actual = format.value_or(DetectFileFormat(bytes).value_or(FileFormat::kText));
  if (actual == FileFormat::kJson) return ReadPirJson(bytes, file);
  ParseOptions parse;
  parse.allow_unregistered = options.allow_unregistered;
  return ParseProgram(bytes, file, parse);
}

StatusOr<Program> LoadProgramFile(const std::string& path, std::optional<FileFormat> format,
                                  const ReadOptions& options) {
  IRM_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  return ParseProgramFile(bytes, path == "-" ? "<stdin>" : path, format, options);
}

std::string SerializeProgramFile(const Program& program, FileFormat format,
                                 const PrintOptions& print) {
  if (format == FileFormat::kJson) return WritePirJson(program) + "\n";
  return PrintProgram(program, print);
}

Status SaveProgramFile(const Program& program, const std::string& path, FileFormat format,
                       const PrintOptions& print) {
  // Nothing is written that the readers would refuse.
  IRM_RETURN_IF_ERROR(CheckRegionNesting(program, path));
  return WriteFileAtomically(path, SerializeProgramFile(program, format, print));
}

}  // namespace irm::newir
