// The JSON depth check (json_depth.h): a scan of brackets outside strings, as JSON's grammar
// delimits them. On malformed text the scan may count differently from a parser, but only after
// the first syntax error, which the parser reports when the depth is within bounds.
#include "common/json_depth.h"

#include <fmt/format.h>

#include <utility>

namespace irm {

std::optional<size_t> FindJsonTooDeep(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character, a quote included, does not end the string
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::nullopt;
}

std::pair<int, int> TextLineColumn(std::string_view text, size_t offset) {
  int line = 1;
  int column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

Status CheckJsonDepth(std::string_view text, const std::string& file, int max_depth) {
  const std::optional<size_t> at = FindJsonTooDeep(text, max_depth);
  if (!at) return Status::Ok();
  const auto [line, column] = TextLineColumn(text, *at);
  return Status(StatusCode::kParseError, Location::Text(file, line, column),
                fmt::format("JSON nested deeper than {} levels", max_depth));
}

}  // namespace irm
