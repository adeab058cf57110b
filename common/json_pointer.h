// JSON pointers (RFC 6901) for diagnostics that locate a value inside a JSON document:
// "/feeds/2/dtype". Shared by every JSON reader (bundles, PIR JSON).
#pragma once

#include <string>
#include <string_view>

namespace irm {

// Appends "/" and `key`, escaping '~' as ~0 and '/' as ~1.
inline void AppendJsonPointerToken(std::string* pointer, std::string_view key) {
  pointer->push_back('/');
  for (char c : key) {
    if (c == '~') {
      pointer->append("~0");
    } else if (c == '/') {
      pointer->append("~1");
    } else {
      pointer->push_back(c);
    }
  }
}

// `pointer` with `key` appended as one token.
inline std::string JsonPointerChild(const std::string& pointer, std::string_view key) {
  std::string out = pointer;
  AppendJsonPointerToken(&out, key);
  return out;
}

}  // namespace irm
