// JsonOut: JSON text as nlohmann::json::dump writes it, without building a tree (see
// pir_json_out.h).
#include "newir/pir_json_out.h"

#include <charconv>
#include <nlohmann/json.hpp>

namespace irm::newir::pir_json {

void JsonOut::Newline() {
  if (indent_ < 0) return;
  out_ += '\n';
  out_.append(static_cast<size_t>(indent_) * empty_.size(), ' ');
}

void JsonOut::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (empty_.empty()) return;  // the top value
  if (empty_.back()) {
    empty_.back() = false;
  } else {
    out_ += ',';
  }
  Newline();
}

void JsonOut::Open(char bracket) {
  BeforeValue();
  out_ += bracket;
  empty_.push_back(true);
}

void JsonOut::Close(char bracket) {
  const bool empty = empty_.back();
  empty_.pop_back();
  if (!empty) Newline();
  out_ += bracket;
}

void JsonOut::Key(std::string_view key) {
  BeforeValue();
  out_ += '"';
  out_ += key;
  out_ += indent_ < 0 ? "\":" : "\": ";
  after_key_ = true;
}

void JsonOut::String(std::string_view s) {
  BeforeValue();
  // Printable ASCII other than '"' and '\\' is written as it is; anything else (escapes, UTF-8,
  // invalid bytes) as nlohmann writes it, invalid UTF-8 replaced by U+FFFD.
  bool plain = true;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f || c == '"' || c == '\\') {
      plain = false;
      break;
    }
  }
  if (plain) {
    out_ += '"';
    out_ += s;
    out_ += '"';
    return;
  }
  out_ +=
      nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void JsonOut::Int(int64_t v) {
  BeforeValue();
  char buf[24];
  out_.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

void JsonOut::Uint(uint64_t v) {
  BeforeValue();
  char buf[24];
  out_.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

void JsonOut::Double(double v) {
  BeforeValue();
  // Rare in a program (float attributes only): nlohmann's own formatting, to the byte.
  out_ += nlohmann::json(v).dump();
}

}  // namespace irm::newir::pir_json
