// A protobuf wire-format walker that explains why bytes do not parse. protobuf's own parser only
// says "failed"; this walks the same bytes against the message descriptor and reports the first
// problem with its byte offset and the path of the message it is in ("blocks[0].ops[2]").
// It also reports known fields sent with the wrong wire type, which protobuf silently moves to
// the unknown fields.
#pragma once

#include <google/protobuf/descriptor.h>

#include <optional>
#include <string>
#include <string_view>

namespace irm::oldir {

struct WireProblem {
  size_t offset = 0;  // byte offset in the whole input
  std::string path;   // message path, "" for the top-level message
  std::string message;
  bool cut_short = false;  // inside a length-delimited field that runs past the end of the input
};

std::optional<WireProblem> FindWireProblem(std::string_view bytes,
                                           const google::protobuf::Descriptor* descriptor);

}  // namespace irm::oldir
