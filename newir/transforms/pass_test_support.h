// Test support shared by the pass tests: programs are written and checked as PIR text.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "newir/parser.h"
#include "newir/printer.h"

namespace irm::newir::testing {

// The printed program with the spaces at line ends removed (the printer ends zero-result op lines
// with "-> "), so that expectations can be raw strings.
inline std::string Print(const Program& program) {
  std::string out;
  for (char c : PrintProgram(program)) {
    if (c == '\n') {
      while (!out.empty() && out.back() == ' ') out.pop_back();
    }
    out += c;
  }
  return out;
}

// Parses typed PIR text (unregistered ops allowed); a failure fails the test.
inline Program Parse(const std::string& text) {
  ParseOptions options;
  options.allow_unregistered = true;
  StatusOr<Program> program = ParseProgram(text, "t.pir", options);
  EXPECT_TRUE(program.ok()) << program.status().ToString();
  return program.ok() ? std::move(program).value() : Program();
}

}  // namespace irm::newir::testing
