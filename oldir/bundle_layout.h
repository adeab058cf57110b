// The file names of a bundle's layout (docs/bundle.md), shared by the bundle's reader and writer
// (bundle.cc), its JSON forms (bundle_json.cc) and its checks (bundle_check.cc). Internal to them.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace irm::oldir::bundle_layout {

inline constexpr const char* kBundleJson = "bundle.json";
inline constexpr const char* kPlanJson = "plan.json";
inline constexpr const char* kShardsJson = "shards.json";
inline constexpr const char* kStartup = "startup";
inline constexpr const char* kMain = "main";

inline std::string JoinPath(const std::string& dir, std::string_view name) {
  return (std::filesystem::path(dir) / std::filesystem::path(name)).string();
}

}  // namespace irm::oldir::bundle_layout
