// POSIX implementation of whole-file reads and atomic writes. Reads stop at the input cap
// (input_limit.h), so that /dev/zero or a huge file ends with a diagnostic, not with the memory
// exhausted. A regular file is replaced by a registered temporary sibling (removed on
// SIGINT/SIGTERM, see temp_paths.h) renamed over it; a symbolic link's target is replaced, the
// link kept; devices and FIFOs are written in place.
#include "common/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <vector>

#include "common/input_limit.h"
#include "common/temp_paths.h"

namespace irm {
namespace {

Status IoError(const std::string& path, const std::string& what) {
  return Status(StatusCode::kIoError, Location::File(path), what + ": " + std::strerror(errno));
}

Status WriteAll(int fd, std::string_view bytes, const std::string& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError(path, "cannot write");
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

// Where a write to `path` lands: a symbolic link is followed (a chain too) so that its target is
// replaced and the link stays; a dangling link names the file to create, as the shell's `>` does.
StatusOr<std::string> ResolveSymlinks(const std::string& path) {
  std::string current = path;
  for (int hops = 0;; ++hops) {
    struct stat st {};
    if (::lstat(current.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return current;
    if (hops == 40) {
      errno = ELOOP;
      return IoError(path, "cannot follow the symbolic link");
    }
    std::string link(PATH_MAX, '\0');
    const ssize_t n = ::readlink(current.c_str(), link.data(), link.size());
    if (n < 0) return IoError(path, "cannot read the symbolic link '" + current + "'");
    link.resize(static_cast<size_t>(n));
    const std::filesystem::path base = std::filesystem::path(current).parent_path();
    current = link.empty() || link.front() == '/' || base.empty() ? link : (base / link).string();
  }
}

// Opens and writes an existing file that is not a regular file (a device, a FIFO), in place.
Status WriteThrough(const std::string& path, const std::string& target, std::string_view bytes) {
  const int fd = ::open(target.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return IoError(path, "cannot open");
  Status status = WriteAll(fd, bytes, path);
  if (::close(fd) != 0 && status.ok()) status = IoError(path, "cannot close");
  return status;
}

}  // namespace

uint64_t MaxInputBytes() {
  // 2 GiB: protobuf refuses a message of 2 GiB or more (sizes are ints), so no legacy program is
  // larger, and JSON or PIR text of that size would take tens of GiB once parsed; tensors (.npy,
  // .pdiparams) that large are beyond what the reference runtime runs. A quarter of physical
  // memory on a small machine: a reader's working set is a few times its input, and a process
  // killed for memory tells the user nothing.
  constexpr uint64_t kCap = uint64_t{2} << 30;
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return kCap;
  return std::min(kCap, static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size) / 4);
}

StatusOr<std::string> ReadFile(const std::string& path) {
  return ReadFileUpTo(path, MaxInputBytes());
}

StatusOr<std::string> ReadFileUpTo(const std::string& path, uint64_t max_bytes) {
  const bool is_stdin = path == "-";
  const std::string name = is_stdin ? "<stdin>" : path;
  int fd = STDIN_FILENO;
  if (!is_stdin) {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      StatusCode code = errno == ENOENT ? StatusCode::kNotFound : StatusCode::kIoError;
      return Status(code, Location::File(path),
                    std::string("cannot open: ") + std::strerror(errno));
    }
  }
  // Closes what was opened here, never standard input.
  struct Closer {
    int fd;
    bool owned;
    ~Closer() {
      if (owned) ::close(fd);
    }
  } closer{fd, !is_stdin};
  const auto too_large = [&] {
    return Status(
        StatusCode::kIoError, Location::File(name),
        fmt::format("input is larger than {} bytes, the most an input may hold", max_bytes));
  };
  struct stat st {};
  const bool known_size = ::fstat(fd, &st) == 0;
  if (known_size && S_ISDIR(st.st_mode)) {
    return Status(StatusCode::kIoError, Location::File(name), "is a directory, not a file");
  }
  // A regular file says its size: one that is too large is refused before any byte is read.
  const bool regular = known_size && S_ISREG(st.st_mode);
  if (regular && static_cast<uint64_t>(st.st_size) > max_bytes) return too_large();

  // A stream (a pipe, a device) is read in chunks joined at the end, so that one that never ends
  // holds at most max_bytes before it is refused (a growing string would also copy itself).
  std::string data;
  std::vector<std::string> chunks;
  const auto read_error = [&] {
    return is_stdin ? Status(StatusCode::kIoError, Location::File(name),
                             std::string("cannot read standard input: ") + std::strerror(errno))
                    : IoError(path, "cannot read");
  };
  uint64_t total = 0;
  if (regular && st.st_size > 0) {
    // Straight into a string of the file's size: no staging buffer to zero and copy from (the
    // dead-code report reads thousands of small files). A file that grew since fstat goes on below.
    data.resize(static_cast<size_t>(st.st_size));
    size_t filled = 0;
    while (filled < data.size()) {
      const ssize_t n = ::read(fd, data.data() + filled, data.size() - filled);
      if (n == 0) break;
      if (n < 0) {
        if (errno == EINTR) continue;
        return read_error();
      }
      filled += static_cast<size_t>(n);
    }
    data.resize(filled);
    total = filled;
    if (filled < static_cast<size_t>(st.st_size)) return data;  // it shrank: what is there
  }
  std::string buffer(regular ? size_t{1} << 12 : size_t{1} << 20, '\0');
  while (true) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return read_error();
    }
    total += static_cast<uint64_t>(n);
    if (total > max_bytes) return too_large();
    if (regular) {
      data.append(buffer.data(), static_cast<size_t>(n));
    } else {
      chunks.emplace_back(buffer.data(), static_cast<size_t>(n));
    }
  }
  if (!regular) {
    data.reserve(static_cast<size_t>(total));
    for (std::string& chunk : chunks) {
      data += chunk;
      std::string().swap(chunk);
    }
  }
  return data;
}

Status WriteFileAtomically(const std::string& path, std::string_view bytes) {
  if (path == "-") {
    std::cout.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    std::cout.flush();
    if (!std::cout)
      return Status(StatusCode::kIoError, Location::File("<stdout>"),
                    "cannot write standard output");
    return Status::Ok();
  }
  IRM_ASSIGN_OR_RETURN(const std::string target, ResolveSymlinks(path));
  struct stat old {};
  const bool exists = ::stat(target.c_str(), &old) == 0;
  // A device, a FIFO or a socket is written to, never replaced: renaming a file over /dev/null
  // would break every other user of it.
  if (exists && !S_ISREG(old.st_mode) && !S_ISDIR(old.st_mode)) {
    return WriteThrough(path, target, bytes);
  }

  const std::string dir = std::filesystem::path(target).has_parent_path()
                              ? std::filesystem::path(target).parent_path().string()
                              : ".";
  // The temporary is registered before it is created, so a signal at any moment removes it.
  std::string tmp;
  TempPathGuard guard;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    tmp = TempSiblingName(target);
    guard = TempPathGuard(tmp, TempKind::kFile);
    // 0666 under the umask, as any program creating a file.
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) return IoError(path, "cannot create a temporary file in '" + dir + "'");
  Status status = WriteAll(fd, bytes, path);
  if (status.ok() && ::fsync(fd) != 0) status = IoError(path, "cannot flush");
  if (status.ok() && exists) {
    // The replacement keeps the old file's owner (best effort: only root may give a file away)
    // and permissions; the owner first, as a change of owner clears the set-id bits.
    if (old.st_uid != ::geteuid() || old.st_gid != ::getegid()) {
      [[maybe_unused]] const int ignored = ::fchown(fd, old.st_uid, old.st_gid);
    }
    if (::fchmod(fd, old.st_mode & 07777) != 0) status = IoError(path, "cannot set permissions");
  }
  if (::close(fd) != 0 && status.ok()) status = IoError(path, "cannot close");
  if (status.ok() && std::rename(tmp.c_str(), target.c_str()) != 0) {
    status = IoError(path, "cannot rename the temporary file over it");
  }
  if (!status.ok()) ::unlink(tmp.c_str());
  return status;
}

}  // namespace irm
