// POSIX implementation of whole-file reads and atomic writes.
#include "common/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <iterator>

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

}  // namespace

StatusOr<std::string> ReadFile(const std::string& path) {
  if (path == "-") {
    std::string data((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    if (std::cin.bad())
      return Status(StatusCode::kIoError, Location::File("<stdin>"), "cannot read standard input");
    return data;
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    StatusCode code = errno == ENOENT ? StatusCode::kNotFound : StatusCode::kIoError;
    return Status(code, Location::File(path), std::string("cannot open: ") + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    return Status(StatusCode::kIoError, Location::File(path), "is a directory, not a file");
  }
  std::string data;
  if (st.st_size > 0) data.reserve(static_cast<size_t>(st.st_size));
  char buffer[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      Status status = IoError(path, "cannot read");
      ::close(fd);
      return status;
    }
    data.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
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
  std::filesystem::path target(path);
  std::string dir = target.has_parent_path() ? target.parent_path().string() : ".";
  std::string tmpl = dir + "/." + target.filename().string() + ".tmp.XXXXXX";
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0) return IoError(path, "cannot create a temporary file in '" + dir + "'");
  Status status = WriteAll(fd, bytes, path);
  if (status.ok() && ::fsync(fd) != 0) status = IoError(path, "cannot flush");
  // mkstemp creates 0600; give the output the permissions of an ordinary file. (Reading the
  // umask means changing it, which would race with other threads.)
  if (status.ok() && ::fchmod(fd, 0644) != 0) status = IoError(path, "cannot set permissions");
  if (::close(fd) != 0 && status.ok()) status = IoError(path, "cannot close");
  if (status.ok() && std::rename(tmpl.c_str(), path.c_str()) != 0) {
    status = IoError(path, "cannot rename the temporary file over it");
  }
  if (!status.ok()) ::unlink(tmpl.c_str());
  return status;
}

}  // namespace irm
