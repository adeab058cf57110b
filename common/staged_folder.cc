// The staged output folder: mkdir of a registered hidden sibling, rename(2) into place.
#include "common/staged_folder.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>

namespace irm {
namespace {

namespace fs = std::filesystem;

Status IoError(const std::string& path, const std::string& what, int error) {
  return Status(StatusCode::kIoError, Location::File(path), what + ": " + std::strerror(error));
}

void ReplaceAll(std::string& text, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

}  // namespace

StatusOr<StagedFolder> StagedFolder::Begin(const std::string& dir) {
  // "out/" and "out" are one folder; the temporary sibling is named after "out".
  std::string shown = dir;
  while (shown.size() > 1 && shown.back() == '/') shown.pop_back();
  std::string target = shown;
  std::error_code ec;
  if (fs::is_symlink(target, ec) && fs::is_directory(target, ec)) {
    const fs::path resolved = fs::canonical(target, ec);
    if (!ec) target = resolved.string();
  }
  const fs::path parent = fs::path(target).parent_path();
  if (!parent.empty()) {
    fs::create_directories(parent, ec);
    if (ec) {
      return Status(StatusCode::kIoError, Location::File(parent.string()),
                    "cannot create the folder: " + ec.message());
    }
  }
  int error = EEXIST;
  for (int attempt = 0; attempt < 100 && error == EEXIST; ++attempt) {
    std::string staging = TempSiblingName(target);
    // Registered before it exists: a signal at any moment removes it.
    TempPathGuard guard(staging, TempKind::kFolder);
    if (::mkdir(staging.c_str(), 0777) == 0) {
      return StagedFolder(shown, std::move(target), std::move(staging), std::move(guard));
    }
    error = errno;
  }
  return IoError(shown,
                 "cannot create a temporary folder in '" +
                     (parent.empty() ? std::string(".") : parent.string()) + "'",
                 error);
}

StagedFolder::StagedFolder(StagedFolder&& other) noexcept
    : dir_(std::move(other.dir_)),
      target_(std::move(other.target_)),
      staging_(std::exchange(other.staging_, std::string())),
      guard_(std::move(other.guard_)) {}

StagedFolder::~StagedFolder() {
  if (staging_.empty()) return;
  std::error_code ec;
  fs::remove_all(staging_, ec);
}

Status StagedFolder::Commit() {
  // An empty output folder that already exists is replaced; the result keeps its permissions.
  struct stat old {};
  if (::stat(target_.c_str(), &old) == 0 && S_ISDIR(old.st_mode)) {
    ::chmod(staging_.c_str(), old.st_mode & 07777);
  }
  if (std::rename(staging_.c_str(), target_.c_str()) != 0) {
    const int error = errno;
    if (error == ENOTEMPTY || error == EEXIST) {
      Status status(StatusCode::kIoError, Location::File(dir_),
                    "the output directory is no longer empty; nothing was written");
      return status;  // the destructor removes the temporary folder
    }
    return IoError(dir_, "cannot move the written folder into place", error);
  }
  staging_.clear();
  guard_.Release();
  return Status::Ok();
}

Status StagedFolder::Relocate(Status status) const {
  if (status.ok() || staging_.empty()) return status;
  Diagnostic diagnostic = status.diagnostic();
  ReplaceAll(diagnostic.location.file, staging_, dir_);
  ReplaceAll(diagnostic.message, staging_, dir_);
  for (std::string& note : diagnostic.notes) ReplaceAll(note, staging_, dir_);
  return Status(status.code(), std::move(diagnostic));
}

}  // namespace irm
