// Test helpers for byte-level expectations: bytes written as a list of values, and a hex rendering
// for readable failure messages. Used by the wire-format tests; not part of the library.
#pragma once

#include <cstdio>
#include <initializer_list>
#include <string>

namespace irm::oldir::wire_test {

// Bytes from a list of byte values; characters may be written as 'r'.
inline std::string B(std::initializer_list<int> bytes) {
  std::string out;
  for (int b : bytes) out.push_back(static_cast<char>(b));
  return out;
}

// "1a 04 72 65" for the bytes 0x1a 0x04 'r' 'e'.
inline std::string Hex(const std::string& bytes) {
  std::string out;
  char buf[4];
  for (unsigned char c : bytes) {
    std::snprintf(buf, sizeof buf, "%02x ", c);
    out += buf;
  }
  if (!out.empty()) out.pop_back();
  return out;
}

}  // namespace irm::oldir::wire_test
