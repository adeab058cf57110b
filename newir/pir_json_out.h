// JsonOut: writes JSON text straight into a string, byte for byte as nlohmann::json::dump(indent)
// prints the same document (keys in the order the caller gives them, which must be nlohmann's
// sorted order; ", " and newlines as dump places them; numbers and escapes as dump writes them).
// The PIR JSON writer uses it instead of building a nlohmann tree: for a large program the tree's
// millions of small allocations cost ten times the dump itself. Internal to the writer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace irm::newir::pir_json {

class JsonOut {
 public:
  // `indent` as nlohmann's dump: negative for one line, else spaces per level.
  explicit JsonOut(int indent) : indent_(indent) {}

  void BeginObject() { Open('{'); }
  void EndObject() { Close('}'); }
  void BeginArray() { Open('['); }
  void EndArray() { Close(']'); }
  // The next value is the member `key` of the open object. Keys are written as they are: they
  // must need no escaping (the writer's keys are fixed ASCII names).
  void Key(std::string_view key);

  void String(std::string_view s);
  void Int(int64_t v);
  void Uint(uint64_t v);
  void Bool(bool v) {
    BeforeValue();
    out_ += v ? "true" : "false";
  }
  // A finite double as nlohmann writes it (shortest round-trip digits, "1.0" for whole numbers).
  void Double(double v);

  // Shorthands for members.
  void Member(std::string_view key, std::string_view s) {
    Key(key);
    String(s);
  }
  void Member(std::string_view key, int64_t v) {
    Key(key);
    Int(v);
  }

  std::string Take() { return std::move(out_); }

 private:
  // Writes what separates the next value from the one before (",", newline and indentation).
  void BeforeValue();
  void Open(char bracket);
  void Close(char bracket);
  void Newline();

  std::string out_;
  int indent_;
  // Per open container: whether nothing has been written into it yet.
  std::vector<bool> empty_;
  bool after_key_ = false;
};

}  // namespace irm::newir::pir_json
