// Temporary paths that must not outlive the process: the atomic writer's temporary files and the
// staging folders of bundles. Each is registered for as long as it exists; SIGINT, SIGTERM and
// SIGHUP remove every registered path (a folder with everything in it) and then take their usual
// course, so an interrupted or killed write leaves nothing behind that a retry would trip over.
// The handlers are installed with the first registration, unless the signal is ignored; a handler
// the program had installed before runs after the clean-up.
#pragma once

#include <string>

namespace irm {

enum class TempKind { kFile, kFolder };

// One registered path; forgotten (not removed) by Release() or the destructor. Registration is
// best effort: a path longer than PATH_MAX or more than 64 live temporaries at once go
// unregistered (and then are not cleaned up by a signal).
class TempPathGuard {
 public:
  TempPathGuard() = default;
  // Register `path` before creating it, so that no moment exists where it is on disk but
  // unknown to the signal handlers.
  TempPathGuard(const std::string& path, TempKind kind);
  ~TempPathGuard() { Release(); }
  TempPathGuard(TempPathGuard&& other) noexcept : slot_(other.slot_) { other.slot_ = -1; }
  TempPathGuard& operator=(TempPathGuard&& other) noexcept;
  TempPathGuard(const TempPathGuard&) = delete;
  TempPathGuard& operator=(const TempPathGuard&) = delete;

  bool registered() const { return slot_ >= 0; }
  void Release();

 private:
  int slot_ = -1;
};

// Removes every registered path now (folders recursively), using only async-signal-safe calls:
// for a program's own SIGINT/SIGTERM handler. The paths stay registered until released.
void RemoveRegisteredTempPaths();

// A fresh hidden name beside `target`, in the same folder (so that a rename onto `target` stays
// on one file system): "DIR/.NAME.tmp.XXXXXX" with six random letters and digits.
std::string TempSiblingName(const std::string& target);

}  // namespace irm
