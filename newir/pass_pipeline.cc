// The textual pass-pipeline parser and printer: a hand-written scanner over the pipeline text
// that keeps byte offsets and turns them into line:column only for diagnostics.
#include "newir/pass_pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <set>

namespace irm::newir {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.';
}
// Characters that end an unquoted option value.
bool EndsBareValue(char c) {
  return IsSpace(c) || c == '{' || c == '}' || c == ',' || c == '\'' || c == '"';
}

// A character as diagnostics quote it.
std::string Quoted(char c) {
  if (c >= 0x20 && c < 0x7f) return fmt::format("'{}'", c);
  return fmt::format("byte 0x{:02x}", static_cast<unsigned char>(c));
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// " (did you mean 'x'?)" or "".
std::string Suggestion(std::string_view name, const std::vector<std::string_view>& candidates) {
  const std::string closest = ClosestName(name, candidates);
  return closest.empty() ? "" : fmt::format(" (did you mean '{}'?)", closest);
}

class PipelineParser {
 public:
  PipelineParser(std::string_view text, const PassRegistry& registry, const std::string& source)
      : text_(text), registry_(registry), source_(source) {}

  StatusOr<std::vector<PassPipelineElement>> Parse() {
    SkipSpace();
    if (AtEnd()) return std::vector<PassPipelineElement>{};
    // `builtin.module(…)` around the whole list.
    const size_t start = pos_;
    if (ReadName() == kWrapper) {
      SkipSpace();
      if (!AtEnd() && Peek() == '(') {
        ++pos_;
        IRM_ASSIGN_OR_RETURN(std::vector<PassPipelineElement> elements, ParseList(')'));
        SkipSpace();
        if (!AtEnd()) {
          return Error(pos_, fmt::format("unexpected {} after the ')' that closes '{}('",
                                         Quoted(Peek()), kWrapper));
        }
        return elements;
      }
    }
    pos_ = start;
    return ParseList('\0');
  }

 private:
  static constexpr std::string_view kWrapper = "builtin.module";

  // Passes up to `close` (')' inside the wrapper) or, for '\0', to the end of the text.
  StatusOr<std::vector<PassPipelineElement>> ParseList(char close) {
    std::vector<PassPipelineElement> elements;
    SkipSpace();
    if (close != '\0' && !AtEnd() && Peek() == close) {
      ++pos_;
      return elements;
    }
    while (true) {
      IRM_ASSIGN_OR_RETURN(PassPipelineElement element, ParseElement());
      elements.push_back(std::move(element));
      SkipSpace();
      if (AtEnd()) {
        if (close == '\0') return elements;
        return Error(pos_, fmt::format("expected ')' to close '{}('", kWrapper));
      }
      if (Peek() == ',') {
        ++pos_;
        continue;
      }
      if (close != '\0' && Peek() == close) {
        ++pos_;
        return elements;
      }
      return Error(pos_, fmt::format("expected ',' between passes, found {}", Quoted(Peek())));
    }
  }

  StatusOr<PassPipelineElement> ParseElement() {
    SkipSpace();
    if (AtEnd()) return Error(pos_, "expected a pass name at the end of the pipeline");
    const size_t start = pos_;
    const std::string_view name = ReadName();
    if (name.empty()) {
      return Error(pos_, fmt::format("expected a pass name, found {}", Quoted(Peek())));
    }
    const PassInfo* info = registry_.Lookup(name);
    if (info == nullptr) {
      if (name == kWrapper) {
        return Error(start, fmt::format("'{}(…)' may only wrap the whole pipeline", kWrapper));
      }
      std::vector<std::string_view> names;
      for (const PassInfo* known : registry_.passes()) names.push_back(known->name);
      return Error(start, fmt::format("unknown pass '{}'{}", name, Suggestion(name, names)));
    }
    PassPipelineElement element{info, info->DefaultOptions(), Column(start)};
    SkipSpace();
    if (!AtEnd() && Peek() == '{') {
      ++pos_;
      IRM_RETURN_IF_ERROR(ParseOptions(element));
    }
    return element;
  }

  // The options after '{', through the closing '}'.
  Status ParseOptions(PassPipelineElement& element) {
    const PassInfo& pass = *element.info;
    std::set<std::string, std::less<>> given;
    while (true) {
      SkipSpace();
      if (AtEnd()) {
        return Error(pos_,
                     fmt::format("expected '}}' to close the options of pass '{}'", pass.name));
      }
      if (Peek() == '}') {
        ++pos_;
        return Status::Ok();
      }
      const size_t key_start = pos_;
      const std::string_view key = ReadName();
      if (key.empty()) {
        return Error(pos_, fmt::format("expected an option name in the options of pass '{}', "
                                       "found {}",
                                       pass.name, Quoted(Peek())));
      }
      const PassOptionSpec* option = pass.FindOption(key);
      if (option == nullptr) return Error(key_start, UnknownOptionMessage(pass, key));
      if (!given.insert(std::string(key)).second) {
        return Error(key_start,
                     fmt::format("option '{}' of pass '{}' is given twice", key, pass.name));
      }
      if (!AtEnd() && Peek() == '=') {
        ++pos_;
        IRM_ASSIGN_OR_RETURN(PassOptionValue value, ParseValue(pass, *option));
        element.options.Set(option->name, std::move(value));
      } else if (AtEnd() || IsSpace(Peek()) || Peek() == '}') {
        if (option->kind() != PassOptionKind::kBool) {
          return Error(key_start,
                       fmt::format("option '{}' of pass '{}' needs a value: {}=<{}>", key,
                                   pass.name, key, PassOptionKindName(option->kind())));
        }
        element.options.Set(option->name, true);  // a bool option written alone
      } else {
        return Error(pos_, fmt::format("expected '=' after option '{}' of pass '{}', found {}", key,
                                       pass.name, Quoted(Peek())));
      }
      if (!AtEnd() && !IsSpace(Peek()) && Peek() != '}') {
        if (Peek() == ',') {
          return Error(pos_, fmt::format("options of pass '{}' are separated by spaces, not ','",
                                         pass.name));
        }
        return Error(pos_, fmt::format("expected a space or '}}' after option '{}' of pass '{}', "
                                       "found {}",
                                       key, pass.name, Quoted(Peek())));
      }
    }
  }

  // The value after '=': quoted, or a run of characters up to a space, brace, comma or quote.
  StatusOr<PassOptionValue> ParseValue(const PassInfo& pass, const PassOptionSpec& option) {
    const size_t value_start = pos_;
    std::string_view raw;
    if (!AtEnd() && (Peek() == '\'' || Peek() == '"')) {
      const char quote = Peek();
      const size_t close = text_.find(quote, pos_ + 1);
      if (close == std::string_view::npos) {
        return Error(value_start, fmt::format("unterminated quoted value of option '{}' of pass "
                                              "'{}'",
                                              option.name, pass.name));
      }
      raw = text_.substr(pos_ + 1, close - pos_ - 1);
      pos_ = close + 1;
    } else {
      while (!AtEnd() && !EndsBareValue(Peek())) ++pos_;
      raw = text_.substr(value_start, pos_ - value_start);
      if (raw.empty()) {
        return Error(value_start, fmt::format("option '{}' of pass '{}' needs a value after '='",
                                              option.name, pass.name));
      }
    }
    const std::string what = fmt::format("option '{}' of pass '{}'", option.name, pass.name);
    switch (option.kind()) {
      case PassOptionKind::kBool:
        if (raw == "true" || raw == "1") return PassOptionValue(true);
        if (raw == "false" || raw == "0") return PassOptionValue(false);
        return Error(value_start, fmt::format("{} expects true or false, not '{}'", what, raw));
      case PassOptionKind::kInt: {
        int64_t value = 0;
        const auto [end, error] = std::from_chars(raw.data(), raw.data() + raw.size(), value);
        if (error == std::errc::result_out_of_range) {
          return Error(value_start,
                       fmt::format("{} value '{}' does not fit in 64 bits", what, raw));
        }
        if (error != std::errc() || end != raw.data() + raw.size()) {
          return Error(value_start, fmt::format("{} expects an integer, not '{}'", what, raw));
        }
        if (value < option.min) {
          return Error(value_start,
                       fmt::format("{} must be at least {}, not {}", what, option.min, value));
        }
        if (value > option.max) {
          return Error(value_start,
                       fmt::format("{} must be at most {}, not {}", what, option.max, value));
        }
        return PassOptionValue(value);
      }
      case PassOptionKind::kString:
        return PassOptionValue(std::string(raw));
    }
    return Error(value_start, "unknown option kind");
  }

  static std::string UnknownOptionMessage(const PassInfo& pass, std::string_view key) {
    if (pass.options.empty()) {
      return fmt::format("pass '{}' has no option '{}' (it takes none)", pass.name, key);
    }
    std::vector<std::string_view> names;
    for (const PassOptionSpec& option : pass.options) names.push_back(option.name);
    std::string hint = Suggestion(key, names);
    if (hint.empty()) hint = fmt::format(" (its options: {})", fmt::join(names, ", "));
    return fmt::format("pass '{}' has no option '{}'{}", pass.name, key, hint);
  }

  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return text_[pos_]; }
  void SkipSpace() {
    while (!AtEnd() && IsSpace(Peek())) ++pos_;
  }
  std::string_view ReadName() {
    const size_t start = pos_;
    while (!AtEnd() && IsNameChar(Peek())) ++pos_;
    return text_.substr(start, pos_ - start);
  }

  int Column(size_t offset) const {
    const size_t newline = text_.substr(0, offset).rfind('\n');
    return static_cast<int>(newline == std::string_view::npos ? offset + 1 : offset - newline);
  }
  Status Error(size_t offset, std::string message) const {
    const int line = 1 + static_cast<int>(std::count(text_.begin(), text_.begin() + offset, '\n'));
    return Status(StatusCode::kInvalidArgument, Location::Text(source_, line, Column(offset)),
                  std::move(message));
  }

  std::string_view text_;
  const PassRegistry& registry_;
  const std::string& source_;
  size_t pos_ = 0;
};

bool NeedsQuotes(const std::string& value) {
  if (value.empty()) return true;
  return std::any_of(value.begin(), value.end(), EndsBareValue);
}

}  // namespace

StatusOr<std::vector<PassPipelineElement>> ParsePassPipeline(std::string_view text,
                                                             const PassRegistry& registry,
                                                             const std::string& source) {
  return PipelineParser(text, registry, source).Parse();
}

std::string PassPipelineToString(const std::vector<PassPipelineElement>& pipeline) {
  std::vector<std::string> passes;
  for (const PassPipelineElement& element : pipeline) {
    std::vector<std::string> options;
    for (const PassOptionSpec& option : element.info->options) {
      const PassOptionValue* value = element.options.Find(option.name);
      if (value == nullptr || *value == option.default_value) continue;
      std::string text = PassOptionValueToString(*value);
      if (KindOf(*value) == PassOptionKind::kString && NeedsQuotes(text)) {
        const char quote = text.find('"') == std::string::npos ? '"' : '\'';
        text = fmt::format("{}{}{}", quote, text, quote);
      }
      options.push_back(fmt::format("{}={}", option.name, text));
    }
    passes.push_back(options.empty()
                         ? element.info->name
                         : fmt::format("{}{{{}}}", element.info->name, fmt::join(options, " ")));
  }
  return fmt::format("{}", fmt::join(passes, ","));
}

std::string ClosestName(std::string_view name, const std::vector<std::string_view>& candidates) {
  const size_t limit = std::max<size_t>(1, name.size() / 3);
  std::string_view best;
  size_t best_distance = limit + 1;
  for (std::string_view candidate : candidates) {
    const size_t distance = EditDistance(name, candidate);
    if (distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return std::string(best);
}

}  // namespace irm::newir
