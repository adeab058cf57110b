// What the Markdown and SARIF renderers share: lenient access to the members of a report document
// (a renderer takes the document as ReportToJson wrote it; a member that is missing or of another
// type reads as empty rather than throwing), and file paths written as relative URI references.
#pragma once

#include <string>
#include <string_view>

#include "tools/deadcode/json_read.h"

namespace irm::deadcode::render {

// object[key], or null when `object` is not an object or has no such member.
const Json& Member(const Json& object, const char* key);
std::string String(const Json& object, const char* key);
int Int(const Json& object, const char* key);
bool Bool(const Json& object, const char* key);
// The elements of an array member; an empty array otherwise.
const Json& Elements(const Json& object, const char* key);

// A path as a URI reference: bytes other than letters, digits, "-._~" and "/" are
// percent-encoded ("a b:c.py" -> "a%20b%3Ac.py"), so a path never reads as a scheme or a query.
std::string UriPath(std::string_view path);

}  // namespace irm::deadcode::render
