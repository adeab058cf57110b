// An output folder (a bundle) written all at once: its files go into a hidden temporary sibling
// folder, renamed into place when everything is written. A failure, an early return or a signal
// (temp_paths.h) removes the temporary folder, so the output either appears whole or not at all
// and a retry never finds a half-written bundle in its way.
#pragma once

#include <string>

#include "common/status.h"
#include "common/temp_paths.h"

namespace irm {

class StagedFolder {
 public:
  // Creates the temporary folder beside `dir` (and `dir`'s missing parent folders). `dir` must
  // not exist or be an empty folder when Commit() runs; a symbolic link to a folder stands for
  // the folder it names. kIoError when the folders cannot be created.
  static StatusOr<StagedFolder> Begin(const std::string& dir);

  StagedFolder(StagedFolder&& other) noexcept;
  StagedFolder& operator=(StagedFolder&&) = delete;
  StagedFolder(const StagedFolder&) = delete;
  StagedFolder& operator=(const StagedFolder&) = delete;
  ~StagedFolder();  // removes the temporary folder unless committed

  // Where to write the folder's content.
  const std::string& path() const { return staging_; }
  // Renames the temporary folder to the output folder (replacing an empty one, whose permissions
  // it takes). kIoError, naming the output folder, when that fails (the output folder is no
  // longer empty, ...); the temporary folder is removed then.
  Status Commit();
  // `status` with the temporary folder's name replaced by the output folder's in its location,
  // message and notes: diagnostics of writes into path() name the output the user asked for.
  Status Relocate(Status status) const;

 private:
  StagedFolder(std::string dir, std::string target, std::string staging, TempPathGuard guard)
      : dir_(std::move(dir)),
        target_(std::move(target)),
        staging_(std::move(staging)),
        guard_(std::move(guard)) {}

  std::string dir_;      // as given, for diagnostics
  std::string target_;   // what the rename replaces: dir_, or the folder a link names
  std::string staging_;  // empty once committed or moved from
  TempPathGuard guard_;
};

}  // namespace irm
