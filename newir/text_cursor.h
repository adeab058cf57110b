// The character cursor under the PIR text parser: it lexes on demand (identifiers, numbers,
// strings, integer lists), turns positions into `file:line:col` diagnostics, and counts nesting so
// that no input can recurse deeper than kMaxParseDepth (values) or kMaxRegionNesting (regions).
// Blanks are spaces, tabs and newlines; `//` starts a comment that runs to the end of the line, as
// in MLIR's text form: test files carry `// expected-error` annotations and `// -----` separators
// (opt --split-input-file), and the pass manager's IR dumps start with a `// -----// IR Dump`
// line. The printer writes no comments, and Paddle's printer (paddle/pir/src/core/ir_printer.cc)
// writes `//` only inside string attributes, which the string lexer reads apart.
#pragma once

#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "common/status.h"

namespace irm::newir {

// Attribute arrays and nested types together may nest this deep within one attribute or type, no
// deeper. Regions have their own bound, kMaxRegionNesting (nesting.h), shared with the writers.
inline constexpr int kMaxParseDepth = 64;

class TextCursor {
 public:
  static bool IsIdentStart(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  }
  static bool IsDigit(char c) { return c >= '0' && c <= '9'; }
  static bool IsIdentChar(char c) { return IsIdentStart(c) || IsDigit(c) || c == '.'; }

  TextCursor(std::string_view text, const std::string& file) : text_(text), file_(file) {}

  size_t pos() const { return pos_; }
  void set_pos(size_t pos) { pos_ = pos; }
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  std::string_view Rest() const { return text_.substr(pos_); }
  std::string_view Slice(size_t from, size_t to) const { return text_.substr(from, to - from); }
  bool LookingAt(std::string_view s) const { return Rest().substr(0, s.size()) == s; }

  // Spaces, tabs, newlines and comments.
  void SkipWs();
  // Spaces and tabs, then a comment up to (not including) its newline: where a newline ends a
  // construct (an op's result type list).
  void SkipSpaces();
  // A `//` comment up to (not including) its newline; nothing when the cursor is not at one.
  void SkipComment();

  bool Consume(std::string_view s);
  Status Expect(std::string_view s, std::string_view context);

  // A parse error at `pos` ("file:line:col: error: message").
  Status ErrorAt(size_t pos, std::string message) const;
  Status Error(std::string message) const { return ErrorAt(pos_, std::move(message)); }
  // "expected WHAT CONTEXT, found TOKEN" at the cursor.
  Status Expected(std::string_view what, std::string_view context) const;
  // The token at `pos` as diagnostics quote it: `'1.5x'`, `'{'`, `end of input`.
  std::string DescribeAt(size_t pos) const;

  // [A-Za-z_][A-Za-z0-9_.]*, or empty (nothing consumed).
  std::string_view LexIdent();
  // The characters a number may be made of (digits, sign, dot, exponent and the letters of
  // nan/inf), so that "1x" is one bad token rather than a number followed by junk.
  std::string_view LexNumber();

  template <typename T>
  StatusOr<T> ParseInt(std::string_view what);
  template <typename T>
  StatusOr<T> ParseFloat(std::string_view what);
  // `"…"`: `\"` and `\\` are escapes; any other backslash is kept as it is (Paddle escapes only
  // quotes, so `"C:\dir"` from Paddle reads as written).
  StatusOr<std::string> ParseString();
  // `[1,-2,3]` of int64.
  StatusOr<std::vector<int64_t>> ParseIntList(std::string_view context);

  // One more level of attribute or type nesting; fails past kMaxParseDepth.
  Status Enter();
  void Leave() { --depth_; }
  // One more block (the top block is the first); fails past kMaxRegionNesting levels of regions.
  Status EnterBlock();
  void LeaveBlock() { --block_depth_; }

 private:
  std::string_view text_;
  const std::string& file_;
  size_t pos_ = 0;
  int depth_ = 0;
  int block_depth_ = 0;
};

template <typename T>
StatusOr<T> TextCursor::ParseInt(std::string_view what) {
  const size_t start = pos_;
  const std::string_view tok = LexNumber();
  T value{};
  auto [end, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), value);
  if (tok.empty() || ec == std::errc::invalid_argument || end != tok.data() + tok.size()) {
    pos_ = start;
    return Expected(what, "");
  }
  if (ec == std::errc::result_out_of_range) {
    return ErrorAt(start, fmt::format("{} '{}' is out of range", what, tok));
  }
  return value;
}

template <typename T>
StatusOr<T> TextCursor::ParseFloat(std::string_view what) {
  const size_t start = pos_;
  const std::string_view tok = LexNumber();
  T value{};
  // from_chars takes no leading '+' and may read "-nan" without its sign: handle the sign here.
  const bool negative = !tok.empty() && tok[0] == '-';
  const std::string_view body = negative ? tok.substr(1) : tok;
  if (body == "nan") {
    value = std::numeric_limits<T>::quiet_NaN();
  } else if (body == "inf") {
    value = std::numeric_limits<T>::infinity();
  } else {
    auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), value);
    if (body.empty() || body[0] == '-' || ec == std::errc::invalid_argument ||
        end != body.data() + body.size()) {
      pos_ = start;
      return Expected(what, "");
    }
    if (ec == std::errc::result_out_of_range) {
      return ErrorAt(start, fmt::format("{} '{}' is out of range", what, tok));
    }
  }
  return negative ? -value : value;
}

}  // namespace irm::newir
