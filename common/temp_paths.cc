// The registry of live temporaries and the signal handlers that remove them. The registry is a
// fixed array of slots with an atomic state each, so that a signal handler can walk it without
// locks or allocation while other threads register and release paths.
#include "common/temp_paths.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <mutex>

namespace irm {
namespace {

constexpr int kSlots = 64;

// A slot's life: kFree -> kFilling (its owner copies the path in) -> kLive -> kFree on release.
// A signal handler takes a live slot to kCleaning while it removes the path, then to kCleaned;
// the owner's release waits out kCleaning (it cannot run on the handler's thread meanwhile) and
// frees a kCleaned slot, so a slot is never reused while a handler reads its path.
enum SlotState : int { kFree, kFilling, kLive, kCleaning, kCleaned };

struct Slot {
  std::atomic<int> state{kFree};
  TempKind kind = TempKind::kFile;
  char path[PATH_MAX];
};
static_assert(std::atomic<int>::is_always_lock_free, "signal handlers need lock-free atomics");

Slot g_slots[kSlots];

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int kNumSignals = sizeof(kSignals) / sizeof(kSignals[0]);
struct sigaction g_previous[kNumSignals];

// Removes `name` (relative to `parent_fd`) and, when it is a folder, everything in it: depth
// first, with fixed buffers and only async-signal-safe calls. Bundles are two levels deep; the
// depth cap keeps the stack use of a handler bounded (about 2 KiB a level).
void RemoveTreeAt(int parent_fd, const char* name, int depth) {
  if (::unlinkat(parent_fd, name, 0) == 0 || errno == ENOENT) return;
  if (depth < 8) {
    // Entries removed while a directory is read may shift the listing: read it again until a
    // pass finds nothing to remove (a few passes at most).
    for (int pass = 0; pass < 4; ++pass) {
      const int fd = ::openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0) break;
      bool removed_any = false;
      alignas(struct dirent64) char buffer[2048];
      while (true) {
        const ssize_t n = ::getdents64(fd, buffer, sizeof buffer);
        if (n <= 0) break;
        for (ssize_t at = 0; at < n;) {
          const auto* entry = reinterpret_cast<const struct dirent64*>(buffer + at);
          at += entry->d_reclen;
          const char* child = entry->d_name;
          if (std::strcmp(child, ".") == 0 || std::strcmp(child, "..") == 0) continue;
          RemoveTreeAt(fd, child, depth + 1);
          removed_any = true;
        }
      }
      ::close(fd);
      if (!removed_any) break;
    }
  }
  ::unlinkat(parent_fd, name, AT_REMOVEDIR);
}

void OnSignal(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  RemoveRegisteredTempPaths();
  int index = 0;
  while (index < kNumSignals && kSignals[index] != sig) ++index;
  const struct sigaction& previous = g_previous[index];
  if (previous.sa_flags & SA_SIGINFO) {
    previous.sa_sigaction(sig, info, context);
  } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    previous.sa_handler(sig);
  } else {
    // The default action, by the same signal, so that the parent sees how the process ended. The
    // signal is blocked while this handler runs: it is delivered as the handler returns.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    ::sigaction(sig, &dfl, nullptr);
    ::raise(sig);
  }
  errno = saved_errno;
}

void InstallHandlers() {
  struct sigaction action {};
  action.sa_sigaction = OnSignal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  for (int sig : kSignals) sigaddset(&action.sa_mask, sig);
  for (int i = 0; i < kNumSignals; ++i) {
    if (::sigaction(kSignals[i], nullptr, &g_previous[i]) != 0) continue;
    // An ignored signal (nohup) stays ignored: it will not end the process.
    if (!(g_previous[i].sa_flags & SA_SIGINFO) && g_previous[i].sa_handler == SIG_IGN) continue;
    ::sigaction(kSignals[i], &action, nullptr);
  }
}

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

TempPathGuard::TempPathGuard(const std::string& path, TempKind kind) {
  static std::once_flag installed;
  std::call_once(installed, InstallHandlers);
  // Absolute, so that a later change of the working directory does not redirect the clean-up.
  std::error_code ec;
  std::string absolute = std::filesystem::absolute(path, ec).string();
  if (ec) absolute = path;
  if (absolute.size() >= PATH_MAX) return;
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!g_slots[i].state.compare_exchange_strong(expected, kFilling)) continue;
    std::memcpy(g_slots[i].path, absolute.c_str(), absolute.size() + 1);
    g_slots[i].kind = kind;
    g_slots[i].state.store(kLive, std::memory_order_release);
    slot_ = i;
    return;
  }
}

TempPathGuard& TempPathGuard::operator=(TempPathGuard&& other) noexcept {
  if (this != &other) {
    Release();
    slot_ = other.slot_;
    other.slot_ = -1;
  }
  return *this;
}

void TempPathGuard::Release() {
  if (slot_ < 0) return;
  std::atomic<int>& state = g_slots[slot_].state;
  slot_ = -1;
  while (true) {
    int expected = kLive;
    if (state.compare_exchange_strong(expected, kFree)) return;
    expected = kCleaned;
    if (state.compare_exchange_strong(expected, kFree)) return;
    // kCleaning: a handler on another thread is removing the path.
  }
}

void RemoveRegisteredTempPaths() {
  for (Slot& slot : g_slots) {
    int expected = kLive;
    if (!slot.state.compare_exchange_strong(expected, kCleaning, std::memory_order_acquire)) {
      continue;
    }
    if (slot.kind == TempKind::kFolder) {
      RemoveTreeAt(AT_FDCWD, slot.path, 0);
    } else {
      ::unlink(slot.path);
    }
    slot.state.store(kCleaned, std::memory_order_release);
  }
}

std::string TempSiblingName(const std::string& target) {
  static std::atomic<uint64_t> counter{0};
  struct timespec now {};
  ::clock_gettime(CLOCK_REALTIME, &now);
  uint64_t bits =
      SplitMix64(counter.fetch_add(1) ^ (static_cast<uint64_t>(::getpid()) << 40) ^
                 static_cast<uint64_t>(now.tv_nsec) ^ (static_cast<uint64_t>(now.tv_sec) << 20));
  static constexpr char kLetters[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::string suffix;
  for (int i = 0; i < 6; ++i) {
    suffix.push_back(kLetters[bits % 62]);
    bits /= 62;
  }
  const std::filesystem::path path(target);
  const std::string dir = path.has_parent_path() ? path.parent_path().string() : ".";
  return dir + "/." + path.filename().string() + ".tmp." + suffix;
}

}  // namespace irm
