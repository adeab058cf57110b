// The names older Paddle releases gave to ProgramDesc enum values and fields, accepted by the
// protobuf text reader: Paddle 3.0 renamed LOD_TENSOR, LOD_TENSOR_ARRAY, lod_tensor and lod_level
// (same numbers, so binary files are unaffected), and text written before that says the old names.
// Before the text goes to protobuf's TextFormat parser, each old name standing as a field name or
// enum value is replaced by the current one; strings and comments are left alone. The writer
// prints the current names, so old text read and written again comes out in today's spelling.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace irm::oldir {

struct LegacyTextName {
  std::string_view old_name;
  std::string_view current_name;
  std::string_view history;  // which Paddle wrote the old name, and the change that renamed it
};

// Every renamed identifier, in the order they are documented (docs/validator.md).
const std::vector<LegacyTextName>& LegacyTextNames();

// The input with every old identifier replaced, and where the replacements shifted the columns,
// so that a parse error in the rewritten text is reported at its place in the original.
class LegacyNameRewrite {
 public:
  explicit LegacyNameRewrite(std::string_view text);

  bool changed() const { return !shifts_.empty(); }
  const std::string& text() const { return text_; }  // empty unless changed()
  // Maps a 0-based line and column of protobuf's tokenizer (tabs advance to the next multiple of
  // 8) in the rewritten text back to the original.
  int OriginalColumn(int line, int column) const;

 private:
  struct Shift {
    int line;   // 0-based
    int start;  // tokenizer column where the replacement starts, in the rewritten text
    int end;    // tokenizer column just past the replacement, in the rewritten text
    int delta;  // new length - old length
  };
  std::string text_;
  std::vector<Shift> shifts_;
};

}  // namespace irm::oldir
