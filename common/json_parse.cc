// Parsing JSON text with located diagnostics (json_parse.h).
#include "common/json_parse.h"

#include <fmt/format.h>

#include <vector>

#include "common/json_access.h"
#include "common/json_depth.h"

namespace irm {
namespace {

using nlohmann::json;

// nlohmann keeps the last of two equal keys silently; a hand-edited file that says "shape" twice
// must not lose one. This SAX handler builds the document as nlohmann's own parser does and stops
// at the second occurrence of a key in one object. (nlohmann's parse callback could check keys
// too, but after each object it ends it searches the enclosing array for discarded values:
// quadratic in the length of an array of objects, such as a plan of 100,000 jobs.) Time
// O(text + keys × log(keys per object)); memory the document plus one frame per open level.
class StrictDomBuilder final : public nlohmann::json_sax<json> {
 public:
  struct Failure {
    std::string pointer;  // a duplicate key: the JSON pointer of its second occurrence
    std::string key;      // a duplicate key: the key; empty for a syntax error
    std::string what;     // a syntax error: nlohmann's message
    size_t byte = 0;      // a syntax error: the characters read
  };

  explicit StrictDomBuilder(json* root) : root_(root) {}
  const Failure& failure() const { return failure_; }

  bool null() override { return Add(nullptr) != nullptr; }
  bool boolean(bool value) override { return Add(value) != nullptr; }
  bool number_integer(number_integer_t value) override { return Add(value) != nullptr; }
  bool number_unsigned(number_unsigned_t value) override { return Add(value) != nullptr; }
  bool number_float(number_float_t value, const string_t& /*text*/) override {
    return Add(value) != nullptr;
  }
  bool string(string_t& value) override { return Add(std::move(value)) != nullptr; }
  bool binary(binary_t& value) override { return Add(json::binary(std::move(value))) != nullptr; }
  bool start_object(std::size_t /*elements*/) override { return Open(json::object()); }
  bool start_array(std::size_t /*elements*/) override { return Open(json::array()); }
  bool end_object() override { return Close(); }
  bool end_array() override { return Close(); }
  bool key(string_t& key) override {
    Frame& top = frames_.back();
    top.key = key;
    if (top.value->contains(key)) {
      failure_.key = key;
      failure_.pointer = Pointer();
      return false;
    }
    return true;
  }
  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& e) override {
    failure_.what = e.what();
    failure_.byte = position;
    return false;
  }

 private:
  struct Frame {
    json* value;      // an object or an array being read
    std::string key;  // objects: the member being read
  };

  // Stores `value` where the parser is (the root, the next element, the member of the last key)
  // and returns where it now lives. An array's elements move when it grows, but an element is
  // only referred to while it is the innermost open value, before its array grows again.
  json* Add(json value) {
    if (frames_.empty()) {
      *root_ = std::move(value);
      return root_;
    }
    Frame& top = frames_.back();
    if (top.value->is_array()) {
      top.value->push_back(std::move(value));
      return &top.value->back();
    }
    json& member = (*top.value)[top.key];
    member = std::move(value);
    return &member;
  }
  bool Open(json value) {
    frames_.push_back({Add(std::move(value)), {}});
    return true;
  }
  bool Close() {
    frames_.pop_back();
    return true;
  }
  // The pointer of the member being read: in every array the element last added, in every object
  // the member of its last key.
  std::string Pointer() const {
    std::string out;
    for (const Frame& frame : frames_) {
      if (frame.value->is_array()) {
        out += "/" + std::to_string(frame.value->size() - 1);
      } else {
        AppendJsonPointerToken(&out, frame.key);
      }
    }
    return out;
  }

  json* root_;
  std::vector<Frame> frames_;
  Failure failure_;
};

}  // namespace

Status JsonSyntaxError(std::string_view text, const std::string& file, size_t byte,
                       const std::string& what) {
  constexpr size_t kMaxMessage = 400;
  // what(): "[json.exception.parse_error.101] parse error at line 3, column 7: <message>".
  std::string message = what;
  const size_t colon = message.find(": ", message.find("parse error"));
  if (colon != std::string::npos) message = message.substr(colon + 2);
  if (message.size() > kMaxMessage) message = message.substr(0, kMaxMessage) + "...";
  const auto [line, column] = TextLineColumn(text, byte > 0 ? byte - 1 : 0);
  return Status(StatusCode::kParseError, Location::Text(file, line, column), std::move(message));
}

StatusOr<nlohmann::json> ParseStrictJson(std::string_view text, const std::string& file,
                                         int max_depth) {
  IRM_RETURN_IF_ERROR(CheckJsonDepth(text, file, max_depth));
  json doc;
  StrictDomBuilder builder(&doc);
  try {
    if (json::sax_parse(text.begin(), text.end(), &builder)) return doc;
  } catch (const json::exception& e) {
    return Status(StatusCode::kParseError, Location::File(file), e.what());
  }
  const StrictDomBuilder::Failure& failure = builder.failure();
  if (!failure.key.empty() || failure.what.empty()) {
    return Status(StatusCode::kParseError, JsonLocation(file, failure.pointer),
                  fmt::format("key '{}' appears twice", failure.key));
  }
  return JsonSyntaxError(text, file, failure.byte, failure.what);
}

}  // namespace irm
