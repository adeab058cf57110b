// Old ProgramDesc names in protobuf text: the table (from the history of Paddle's
// framework.proto) and the identifier rewrite that runs before TextFormat parses the text.
#include "oldir/legacy_text_names.h"

#include <cctype>

namespace irm::oldir {
namespace {

bool IsIdentifierStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_';
}
bool IsIdentifierChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

const LegacyTextName* Find(std::string_view identifier) {
  for (const LegacyTextName& name : LegacyTextNames()) {
    if (name.old_name == identifier) return &name;
  }
  return nullptr;
}

// Whether any old name can occur at all: most inputs have none, and then the text is not copied.
bool MayHoldOldNames(std::string_view text) {
  for (const LegacyTextName& name : LegacyTextNames()) {
    if (text.find(name.old_name) != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace

const std::vector<LegacyTextName>& LegacyTextNames() {
  // paddle/fluid/framework/framework.proto (moved to paddle/phi/core/framework/ in 3.0).
  static const std::vector<LegacyTextName> names = {
      {"LOD_TENSOR", "DENSE_TENSOR",
       "VarType.Type 7; Paddle 1.x to 3.0-beta (renamed by commit 6627469c, 2024-11-13)"},
      {"LOD_TENSOR_ARRAY", "DENSE_TENSOR_ARRAY",
       "VarType.Type 13; Paddle 1.x to 3.0-beta (renamed by commit 535763c3, 2024-11-12)"},
      {"lod_tensor", "dense_tensor",
       "VarType field 3 and ReaderDesc field 1; Paddle 1.x to 3.0-beta (commit 596c99fb, "
       "2024-11-28)"},
      {"lod_level", "legacy_lod_level",
       "field 2 of the dense tensor and tensor array descriptions; Paddle 1.x to 3.0-beta "
       "(commit cf5ce024, 2024-12-04)"},
      {"CHANNEL", "FETCH_VAR_LIST",
       "VarType.Type 16 in Paddle 0.12 to 0.15 (2018-02 to 2018-09, commit ddd60581 removed it)"},
      {"NCCL_COM", "RAW", "VarType.Type 17 until 2018-02 (commit 9b5be6ef renamed it RAW)"},
  };
  return names;
}

LegacyNameRewrite::LegacyNameRewrite(std::string_view in) {
  if (!MayHoldOldNames(in)) return;
  std::string out;
  out.reserve(in.size() + 64);
  int line = 0;
  int column = 0;  // the tokenizer's column in `out`
  auto emit = [&](char c) {
    out.push_back(c);
    if (c == '\n') {
      ++line;
      column = 0;
    } else if (c == '\t') {
      column += 8 - column % 8;
    } else {
      ++column;
    }
  };
  size_t i = 0;
  while (i < in.size()) {
    const char c = in[i];
    if (c == '#') {  // a comment runs to the end of the line
      while (i < in.size() && in[i] != '\n') emit(in[i++]);
    } else if (c == '"' || c == '\'') {  // a string, with backslash escapes
      emit(in[i++]);
      while (i < in.size() && in[i] != c && in[i] != '\n') {
        if (in[i] == '\\' && i + 1 < in.size()) emit(in[i++]);
        emit(in[i++]);
      }
      if (i < in.size()) emit(in[i++]);
    } else if (IsIdentifierStart(c)) {
      size_t end = i;
      while (end < in.size() && IsIdentifierChar(in[end])) ++end;
      const std::string_view identifier = in.substr(i, end - i);
      const LegacyTextName* name = Find(identifier);
      const std::string_view replacement = name != nullptr ? name->current_name : identifier;
      const int start = column;
      for (char r : replacement) emit(r);
      if (name != nullptr) {
        shifts_.push_back(
            {line, start, column,
             static_cast<int>(replacement.size()) - static_cast<int>(identifier.size())});
      }
      i = end;
    } else if (std::isdigit(static_cast<unsigned char>(c)) != 0) {
      // A number such as 1e5 or 0x1f: its letters are not identifiers.
      while (i < in.size() && (IsIdentifierChar(in[i]) || in[i] == '.')) emit(in[i++]);
    } else {
      emit(in[i++]);
    }
  }
  if (!shifts_.empty()) text_ = std::move(out);
}

int LegacyNameRewrite::OriginalColumn(int line, int column) const {
  int original = column;
  for (const Shift& shift : shifts_) {
    if (shift.line != line || shift.start >= column) continue;
    // Inside a replaced name: its start. Past it: shifted back by the length it gained.
    original = column < shift.end ? original - (column - shift.start) : original - shift.delta;
  }
  return original;
}

}  // namespace irm::oldir
