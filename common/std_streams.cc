// Guarding and checking the standard streams (POSIX descriptors, C stdio and iostreams).
#include "common/std_streams.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

namespace irm {
namespace {

bool g_stdout_was_closed = false;

}  // namespace

void GuardStandardDescriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    if (fd == STDOUT_FILENO) g_stdout_was_closed = true;
    // The read end of a pipe: reads see end of file, writes fail with EBADF. pipe() returns the
    // lowest free descriptors, so the read end lands on `fd` itself. Child processes inherit it
    // and so see the same closed stream.
    int ends[2];
    if (::pipe(ends) != 0) continue;
    if (ends[0] != fd) {
      ::dup2(ends[0], fd);
      ::close(ends[0]);
    }
    ::close(ends[1]);
  }
}

Status FinishStandardOutput() {
  // std::cout writes through C's stdout (synchronised with stdio): flushing either reports a
  // failure of the bytes still buffered, with errno saying why.
  const bool was_good = std::cout.good();
  errno = 0;
  std::cout.flush();
  bool failed_now = was_good && !std::cout.good();
  int error = errno;
  if (std::fflush(stdout) != 0) {
    failed_now = true;
    error = errno;
  }
  if (!failed_now && std::cout.good() && !std::ferror(stdout)) return Status::Ok();
  std::string message = "cannot write standard output";
  if (g_stdout_was_closed) {
    message = "standard output is closed; the output was lost";
  } else if (failed_now && error != 0) {
    // The reason of a write that failed earlier is gone: stdio keeps only that one did.
    message += std::string(": ") + std::strerror(error);
  }
  return Status(StatusCode::kIoError, Location::File("<stdout>"), message);
}

}  // namespace irm
