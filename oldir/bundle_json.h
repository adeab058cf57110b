// The JSON forms of a bundle (docs/bundle.md): the text bundle.json is written as, and the strict
// parse every bundle file goes through (a key given twice is an error, not a silent overwrite).
// The public parsers and writers of bundle.json, plan.json and shards.json are in bundle.h;
// this header is internal to the bundle's files.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "oldir/bundle.h"

namespace irm::oldir {

// bundle.json as WriteBundle writes it: members in docs/bundle.md's order, indented.
std::string BundleJsonText(const Bundle& bundle);

// Parses `text` as one JSON document, refusing documents nested deeper than kMaxSmallJsonDepth
// and any key given twice in one object. kParseError at file:line:col for syntax, at file + JSON
// pointer for a repeated key.
StatusOr<nlohmann::json> ParseBundleFileJson(std::string_view text, const std::string& file);

}  // namespace irm::oldir
