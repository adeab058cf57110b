// Parsing JSON text into a document, with the diagnostics every reader of the project gives: a
// syntax error at file:line:col with nlohmann's message, a document nested too deeply refused
// before it is parsed (json_depth.h), and — for the project's own files — a key given twice in one
// object refused at the JSON pointer of its second occurrence, where nlohmann would keep the last
// silently. The checks of the parsed document are json_access.h's.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace irm {

// kParseError at the file:line:col of nlohmann's syntax error: `byte` is its count of characters
// read (1-based: the character it stopped at) and `what` its exception text, whose position
// prefix is dropped and whose message is cut to a few hundred characters (a message can quote
// megabytes of the input).
Status JsonSyntaxError(std::string_view text, const std::string& file, size_t byte,
                       const std::string& what);

// Parses `text`, refusing a document nested deeper than `max_depth` and a key given twice in one
// object ("key 'k' appears twice", at the pointer of the second). Time O(text + keys × log(keys
// per object)).
StatusOr<nlohmann::json> ParseStrictJson(std::string_view text, const std::string& file,
                                         int max_depth);

}  // namespace irm
