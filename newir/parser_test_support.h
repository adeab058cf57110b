// Test support shared by the text parser's tests (parser_test.cc, parse_styles_test.cc).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "newir/parser.h"
#include "newir/printer.h"

namespace irm::newir::testing {

inline Type T(std::vector<int64_t> dims, Type dtype = Type::F32()) {
  return Type::DenseTensor(std::move(dtype), std::move(dims));
}

inline ParseOptions Unregistered() {
  ParseOptions options;
  options.allow_unregistered = true;
  return options;
}

// Parses `text` and prints it back, or says why it does not parse.
inline std::string Reprint(const std::string& text, const ParseOptions& options = {}) {
  StatusOr<Program> program = ParseProgram(text, "t.pir", options);
  if (!program.ok()) return "PARSE ERROR: " + program.status().ToString();
  return PrintProgram(*program);
}

// The diagnostic for text that must not parse (named bad.pir), or "parsed".
inline std::string ErrorOf(const std::string& text, const ParseOptions& options = {}) {
  StatusOr<Program> program = ParseProgram(text, "bad.pir", options);
  if (program.ok()) return "parsed";
  EXPECT_EQ(program.status().code(), StatusCode::kParseError);
  return program.status().ToString();
}

}  // namespace irm::newir::testing
