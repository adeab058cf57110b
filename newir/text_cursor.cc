// Lexing, positions and diagnostics of the PIR text cursor.
#include "newir/text_cursor.h"

#include "newir/nesting.h"

namespace irm::newir {
namespace {

bool IsNumberChar(char c) { return TextCursor::IsIdentChar(c) || c == '+' || c == '-'; }

}  // namespace

void TextCursor::SkipComment() {
  if (Peek() != '/' || Peek(1) != '/') return;
  while (!AtEnd() && Peek() != '\n') ++pos_;
}

void TextCursor::SkipWs() {
  while (!AtEnd()) {
    const char c = Peek();
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++pos_;
    } else if (c == '/' && Peek(1) == '/') {
      SkipComment();
    } else {
      return;
    }
  }
}

void TextCursor::SkipSpaces() {
  while (!AtEnd() && (Peek() == ' ' || Peek() == '\t')) ++pos_;
  SkipComment();
}

bool TextCursor::Consume(std::string_view s) {
  if (!LookingAt(s)) return false;
  pos_ += s.size();
  return true;
}

Status TextCursor::Expect(std::string_view s, std::string_view context) {
  if (Consume(s)) return Status::Ok();
  return Expected(fmt::format("'{}'", s), context);
}

Status TextCursor::ErrorAt(size_t pos, std::string message) const {
  int line = 1;
  int col = 1;
  for (size_t i = 0; i < pos && i < text_.size(); ++i) {
    if (text_[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return Status(StatusCode::kParseError, Location::Text(file_, line, col), std::move(message));
}

std::string TextCursor::DescribeAt(size_t pos) const {
  const std::string_view rest = pos < text_.size() ? text_.substr(pos) : std::string_view();
  if (rest.empty()) return "end of input";
  if (rest[0] == '\n') return "end of line";
  size_t n = 1;
  if (IsIdentChar(rest[0]) || rest[0] == '%' || rest[0] == '-') {
    while (n < rest.size() && n < 40 && (IsIdentChar(rest[n]) || rest[n] == '%')) ++n;
  }
  return fmt::format("'{}'", rest.substr(0, n));
}

Status TextCursor::Expected(std::string_view what, std::string_view context) const {
  return Error(fmt::format("expected {}{}{}, found {}", what, context.empty() ? "" : " ", context,
                           DescribeAt(pos_)));
}

std::string_view TextCursor::LexIdent() {
  const size_t start = pos_;
  if (!AtEnd() && IsIdentStart(Peek())) {
    while (!AtEnd() && IsIdentChar(Peek())) ++pos_;
  }
  return text_.substr(start, pos_ - start);
}

std::string_view TextCursor::LexNumber() {
  const size_t start = pos_;
  while (!AtEnd() && IsNumberChar(Peek())) ++pos_;
  return text_.substr(start, pos_ - start);
}

StatusOr<std::string> TextCursor::ParseString() {
  const size_t start = pos_;
  IRM_RETURN_IF_ERROR(Expect("\"", ""));
  std::string out;
  while (true) {
    if (AtEnd()) return ErrorAt(start, "unterminated string");
    char c = text_[pos_++];
    if (c == '"') return out;
    if (c == '\\' && (Peek() == '"' || Peek() == '\\')) c = text_[pos_++];
    out += c;
  }
}

StatusOr<std::vector<int64_t>> TextCursor::ParseIntList(std::string_view context) {
  std::vector<int64_t> out;
  IRM_RETURN_IF_ERROR(Expect("[", context));
  if (Consume("]")) return out;
  while (true) {
    IRM_ASSIGN_OR_RETURN(int64_t v, ParseInt<int64_t>("an integer"));
    out.push_back(v);
    if (Consume("]")) return out;
    IRM_RETURN_IF_ERROR(Expect(",", fmt::format("or ']' {}", context)));
  }
}

Status TextCursor::EnterBlock() {
  // The top block is at level 0 of region nesting, so kMaxRegionNesting + 1 blocks may be open.
  if (++block_depth_ > kMaxRegionNesting + 1) {
    return Error(fmt::format("regions nested deeper than {} levels", kMaxRegionNesting));
  }
  return Status::Ok();
}

Status TextCursor::Enter() {
  if (++depth_ > kMaxParseDepth) {
    return Error(fmt::format("nesting deeper than {} levels", kMaxParseDepth));
  }
  return Status::Ok();
}

}  // namespace irm::newir
