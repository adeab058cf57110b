// Tests of whole-file reads and atomic writes: the error codes for missing files and folders, that
// a failed write never leaves a half-written or temporary file behind, and what is never replaced:
// a device node or a FIFO (written in place), a symbolic link (its target is replaced), the
// permissions and owner of the file replaced.
#include "common/file_io.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "common/input_limit.h"
#include "common/scratch_dir_test_support.h"

namespace irm {
namespace {

namespace fs = std::filesystem;

// A fresh, empty folder under the test temp dir, removed at the end of the test.
class FileIoTest : public ScratchDirTest {
 protected:
  static std::string Slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  static void Put(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary);
    out << bytes;
  }

  // Names of everything in the folder, sorted.
  std::vector<std::string> Entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }
};

TEST_F(FileIoTest, ReadMissingFileIsNotFound) {
  const std::string path = Path("missing.pdmodel");
  StatusOr<std::string> r = ReadFile(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().location().file, path);
  EXPECT_EQ(r.status().message(), "cannot open: No such file or directory");
  EXPECT_EQ(r.status().ToString(), path + ": error: cannot open: No such file or directory");
}

TEST_F(FileIoTest, ReadMissingFolderIsNotFound) {
  StatusOr<std::string> r = ReadFile(Path("no_such_dir/x"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

TEST_F(FileIoTest, ReadDirectoryIsAnError) {
  StatusOr<std::string> r = ReadFile(dir_.string());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIoError);
  EXPECT_EQ(r.status().message(), "is a directory, not a file");
  EXPECT_EQ(r.status().location().file, dir_.string());
}

TEST_F(FileIoTest, ReadEmptyFile) {
  Put(Path("empty"), "");
  StatusOr<std::string> r = ReadFile(Path("empty"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, "");
}

TEST_F(FileIoTest, ReadBinaryBytesExactly) {
  // NUL and high bytes survive, and a file larger than the 1 MiB read buffer is read whole.
  std::string bytes;
  for (int i = 0; i < 3000000; ++i) bytes.push_back(static_cast<char>((i * 131 + 7) & 0xff));
  bytes[0] = '\0';
  Put(Path("big.bin"), bytes);
  StatusOr<std::string> r = ReadFile(Path("big.bin"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 3000000u);
  EXPECT_EQ(*r, bytes);
}

// The input cap: a regular file over it is refused from its size, before a byte is read (a sparse
// file of a few GiB costs nothing here); a stream is refused once it passes the cap, so an endless
// one (/dev/zero) ends with a diagnostic instead of exhausting memory.
TEST_F(FileIoTest, FileOverTheInputCapIsRefusedFromItsSize) {
  const std::string path = Path("huge.bin");
  Put(path, "");
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(MaxInputBytes() + 1)), 0);
  StatusOr<std::string> r = ReadFile(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIoError);
  EXPECT_EQ(r.status().ToString(), path + ": error: input is larger than " +
                                       std::to_string(MaxInputBytes()) +
                                       " bytes, the most an input may hold");
}

TEST_F(FileIoTest, InputCapIsAtMostTwoGiB) {
  EXPECT_LE(MaxInputBytes(), uint64_t{2} << 30);
  EXPECT_GE(MaxInputBytes(), uint64_t{64} << 20);
}

TEST_F(FileIoTest, FileAtTheCapIsReadWhole) {
  Put(Path("ten"), "0123456789");
  StatusOr<std::string> r = ReadFileUpTo(Path("ten"), 10);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, "0123456789");
  EXPECT_FALSE(ReadFileUpTo(Path("ten"), 9).ok());
}

TEST_F(FileIoTest, EndlessDeviceIsRefusedAtTheCap) {
  StatusOr<std::string> r = ReadFileUpTo("/dev/zero", 3 << 20);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().ToString(),
            "/dev/zero: error: input is larger than 3145728 bytes, the most an input may hold");
}

TEST_F(FileIoTest, StreamUnderTheCapIsReadWholeAndOverItRefused) {
  const std::string fifo = Path("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string bytes;
  for (int i = 0; i < 300000; ++i) bytes.push_back(static_cast<char>('a' + i % 26));
  for (const uint64_t cap : {uint64_t{300000}, uint64_t{299999}}) {
    std::thread writer([&] {
      std::ofstream out(fifo, std::ios::binary);
      out << bytes;
    });
    // Refused only once a byte past the cap is read: here, the last one, so the writer finishes.
    StatusOr<std::string> r = ReadFileUpTo(fifo, cap);
    writer.join();
    if (cap == bytes.size()) {
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_EQ(*r, bytes);
    } else {
      ASSERT_FALSE(r.ok());
      EXPECT_EQ(r.status().code(), StatusCode::kIoError);
    }
  }
}

TEST_F(FileIoTest, WriteCreatesFile) {
  const std::string path = Path("out.pdmodel");
  const std::string bytes("a\0b\xff", 4);
  ASSERT_TRUE(WriteFileAtomically(path, bytes).ok());
  EXPECT_EQ(Slurp(path), bytes);
  EXPECT_EQ(Entries(), std::vector<std::string>{"out.pdmodel"});  // no temporary left behind
}

TEST_F(FileIoTest, WriteEmptyContent) {
  const std::string path = Path("empty.out");
  ASSERT_TRUE(WriteFileAtomically(path, "").ok());
  ASSERT_TRUE(fs::exists(path));
  EXPECT_EQ(fs::file_size(path), 0u);
}

TEST_F(FileIoTest, WriteReplacesExistingFile) {
  const std::string path = Path("out.txt");
  Put(path, "a much longer old content that must disappear entirely");
  ASSERT_TRUE(WriteFileAtomically(path, "new").ok());
  EXPECT_EQ(Slurp(path), "new");  // replaced, not overwritten in place (no old tail)
  EXPECT_EQ(Entries(), std::vector<std::string>{"out.txt"});
}

// The permission bits of `path` (following links).
mode_t ModeOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return 07777;
  return st.st_mode & 07777;
}

TEST_F(FileIoTest, WrittenFileHasOrdinaryPermissions) {
  // A new output looks like an ordinary create: 0666 under the umask, whatever the umask is.
  const mode_t old_mask = ::umask(022);
  const std::string path = Path("perm.out");
  Status s = WriteFileAtomically(path, "x");
  ::umask(077);
  Status s2 = WriteFileAtomically(Path("private.out"), "x");
  ::umask(0);
  Status s3 = WriteFileAtomically(Path("open.out"), "x");
  ::umask(old_mask);
  ASSERT_TRUE(s.ok() && s2.ok() && s3.ok());
  EXPECT_EQ(ModeOf(path), 0644u);
  EXPECT_EQ(ModeOf(Path("private.out")), 0600u);
  EXPECT_EQ(ModeOf(Path("open.out")), 0666u);
}

TEST_F(FileIoTest, ReplacedFileKeepsItsPermissions) {
  const std::string secret = Path("secret.pdiparams");
  const std::string script = Path("run.sh");
  Put(secret, "old");
  Put(script, "old");
  ASSERT_EQ(::chmod(secret.c_str(), 0600), 0);
  ASSERT_EQ(::chmod(script.c_str(), 0751), 0);
  ASSERT_TRUE(WriteFileAtomically(secret, "new").ok());
  ASSERT_TRUE(WriteFileAtomically(script, "new").ok());
  EXPECT_EQ(Slurp(secret), "new");
  EXPECT_EQ(ModeOf(secret), 0600u);  // not widened to 0644
  EXPECT_EQ(ModeOf(script), 0751u);
}

TEST_F(FileIoTest, ReplacedFileKeepsItsOwnerWhenRoot) {
  if (::geteuid() != 0) GTEST_SKIP() << "only root can give a file to another owner";
  const std::string path = Path("owned.out");
  Put(path, "old");
  ASSERT_EQ(::chown(path.c_str(), 4321, 8765), 0);
  ASSERT_TRUE(WriteFileAtomically(path, "new").ok());
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 4321u);
  EXPECT_EQ(st.st_gid, 8765u);
  EXPECT_EQ(Slurp(path), "new");
}

// A private character device node in the test's folder, never one under /dev: `major:minor` 1:3
// is the null device (writes vanish), 1:7 the full device (writes fail with ENOSPC).
class DeviceNodeTest : public FileIoTest {
 protected:
  // Makes the node, or says why the test cannot run.
  std::string MakeNode(const std::string& name, unsigned minor) {
    const std::string path = Path(name);
    if (::geteuid() != 0) return "";
    if (::mknod(path.c_str(), S_IFCHR | 0666, makedev(1, minor)) != 0) return "";
    return path;
  }
  static void ExpectCharDevice(const std::string& path, unsigned minor) {
    struct stat st {};
    ASSERT_EQ(::lstat(path.c_str(), &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode)) << path << " was replaced by a file";
    EXPECT_EQ(st.st_rdev, makedev(1, minor));
  }
};

TEST_F(DeviceNodeTest, DeviceIsWrittenThroughNotReplaced) {
  const std::string node = MakeNode("null", 3);
  if (node.empty()) GTEST_SKIP() << "mknod needs root (CI runs as root)";
  Status s = WriteFileAtomically(node, "bytes that vanish");
  if (!s.ok() && s.message() == "cannot open: Permission denied") {
    GTEST_SKIP() << "the test folder's file system is mounted nodev";
  }
  ASSERT_TRUE(s.ok()) << s.ToString();
  ExpectCharDevice(node, 3);
  EXPECT_EQ(Entries(), std::vector<std::string>{"null"});  // no temporary, nothing renamed
}

TEST_F(DeviceNodeTest, FailedWriteToADeviceIsReportedAndKeepsIt) {
  const std::string node = MakeNode("full", 7);
  if (node.empty()) GTEST_SKIP() << "mknod needs root (CI runs as root)";
  Status s = WriteFileAtomically(node, "no room");
  if (!s.ok() && s.message() == "cannot open: Permission denied") {
    GTEST_SKIP() << "the test folder's file system is mounted nodev";
  }
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_EQ(s.ToString(), node + ": error: cannot write: No space left on device");
  ExpectCharDevice(node, 7);
  EXPECT_EQ(Entries(), std::vector<std::string>{"full"});
}

TEST_F(FileIoTest, FifoIsWrittenThroughToItsReader) {
  const std::string fifo = Path("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // More than a pipe's buffer (64 KiB), so the writer must wait for the reader.
  std::string bytes;
  for (int i = 0; i < 300000; ++i) bytes.push_back(static_cast<char>('a' + i % 26));
  std::string received;
  std::thread reader([&] { received = Slurp(fifo); });
  Status s = WriteFileAtomically(fifo, bytes);
  reader.join();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(received, bytes);
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(Entries(), std::vector<std::string>{"pipe"});
}

// What a symbolic link points at, or "" when `path` is not one.
std::string LinkText(const std::string& path) {
  std::error_code ec;
  if (!fs::is_symlink(path, ec)) return "";
  return fs::read_symlink(path, ec).string();
}

TEST_F(FileIoTest, SymlinkKeepsTheLinkAndReplacesItsTarget) {
  const std::string target = Path("model.pdmodel");
  Put(target, "old content, longer than the new one");
  ASSERT_EQ(::chmod(target.c_str(), 0600), 0);
  ASSERT_EQ(::symlink("model.pdmodel", Path("latest").c_str()), 0);
  ASSERT_TRUE(WriteFileAtomically(Path("latest"), "new").ok());
  EXPECT_EQ(LinkText(Path("latest")), "model.pdmodel");
  EXPECT_EQ(Slurp(target), "new");
  EXPECT_EQ(ModeOf(target), 0600u);
  EXPECT_EQ(Entries(), (std::vector<std::string>{"latest", "model.pdmodel"}));
}

TEST_F(FileIoTest, SymlinkChainIsFollowedToTheEnd) {
  // out -> (absolute) sub/hop -> (relative to sub/) ../final.txt. A relative link is read from
  // the folder holding the link, not the current directory.
  fs::create_directory(Path("sub"));
  Put(Path("final.txt"), "old");
  ASSERT_EQ(::symlink("../final.txt", Path("sub/hop").c_str()), 0);
  ASSERT_EQ(::symlink(Path("sub/hop").c_str(), Path("out").c_str()), 0);
  ASSERT_TRUE(WriteFileAtomically(Path("out"), "new").ok());
  EXPECT_EQ(LinkText(Path("out")), Path("sub/hop"));
  EXPECT_EQ(LinkText(Path("sub/hop")), "../final.txt");
  EXPECT_EQ(Slurp(Path("final.txt")), "new");
  EXPECT_EQ(Entries(), (std::vector<std::string>{"final.txt", "out", "sub"}));
  EXPECT_EQ(std::distance(fs::directory_iterator(Path("sub")), fs::directory_iterator()), 1);
}

TEST_F(FileIoTest, DanglingSymlinkCreatesItsTarget) {
  // As the shell's `>` does: the link names the file to create, and stays a link.
  ASSERT_EQ(::symlink("created.json", Path("link.json").c_str()), 0);
  ASSERT_TRUE(WriteFileAtomically(Path("link.json"), "{}").ok());
  EXPECT_EQ(LinkText(Path("link.json")), "created.json");
  EXPECT_EQ(Slurp(Path("created.json")), "{}");
  EXPECT_EQ(Entries(), (std::vector<std::string>{"created.json", "link.json"}));
}

TEST_F(FileIoTest, SymlinkLoopIsAnErrorAndCreatesNothing) {
  ASSERT_EQ(::symlink("b", Path("a").c_str()), 0);
  ASSERT_EQ(::symlink("a", Path("b").c_str()), 0);
  Status s = WriteFileAtomically(Path("a"), "x");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_EQ(s.ToString(), Path("a") +
                              ": error: cannot follow the symbolic link: Too many levels "
                              "of symbolic links");
  EXPECT_EQ(Entries(), (std::vector<std::string>{"a", "b"}));
}

TEST_F(FileIoTest, WriteIntoMissingFolderFailsAndCreatesNothing) {
  const std::string path = Path("no_such_dir/out.pdmodel");
  Status s = WriteFileAtomically(path, "bytes");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_EQ(s.location().file, path);
  EXPECT_EQ(s.message(), "cannot create a temporary file in '" + Path("no_such_dir") +
                             "': No such file or directory");
  EXPECT_FALSE(fs::exists(Path("no_such_dir")));
  EXPECT_TRUE(Entries().empty());
}

TEST_F(FileIoTest, RenameOverADirectoryFailsAndCleansUp) {
  // The destination is a non-empty folder: the rename fails, the folder is untouched and the
  // temporary file is removed.
  const std::string target = Path("taken");
  fs::create_directory(target);
  Put(target + "/inside", "keep");
  Status s = WriteFileAtomically(target, "bytes");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_EQ(s.message(), "cannot rename the temporary file over it: Is a directory");
  EXPECT_EQ(Entries(), std::vector<std::string>{"taken"});
  EXPECT_EQ(Slurp(target + "/inside"), "keep");
}

// Makes write(2) fail with EFBIG beyond `limit` bytes (RLIMIT_FSIZE), which works even for root,
// where a read-only folder would not stop the write. SIGXFSZ is ignored so the write returns an
// error instead of killing the process.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t limit) {
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    ::getrlimit(RLIMIT_FSIZE, &old_);
    struct rlimit lim = old_;
    lim.rlim_cur = limit;
    ::setrlimit(RLIMIT_FSIZE, &lim);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old_);
    std::signal(SIGXFSZ, old_handler_);
  }

 private:
  struct rlimit old_ {};
  void (*old_handler_)(int) = nullptr;
};

TEST_F(FileIoTest, FailedWriteKeepsOldContentAndLeavesNoTemporary) {
  const std::string path = Path("model.pdmodel");
  Put(path, "old content");
  const std::string big(8192, 'n');
  Status s;
  {
    FileSizeLimit limit(1024);
    s = WriteFileAtomically(path, big);
  }
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_EQ(s.message(), "cannot write: File too large");
  EXPECT_EQ(s.ToString(), path + ": error: cannot write: File too large");
  EXPECT_EQ(Slurp(path), "old content");
  EXPECT_EQ(Entries(), std::vector<std::string>{"model.pdmodel"});
}

TEST_F(FileIoTest, FailedWriteOfANewFileCreatesNothing) {
  const std::string path = Path("new.pdmodel");
  Status s;
  {
    FileSizeLimit limit(16);
    s = WriteFileAtomically(path, std::string(4096, 'x'));
  }
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Entries().empty());
}

TEST_F(FileIoTest, RelativePathWithoutFolderWritesInTheCurrentDirectory) {
  const fs::path old_cwd = fs::current_path();
  fs::current_path(dir_);
  Status s = WriteFileAtomically("plain_name.txt", "rel");
  fs::current_path(old_cwd);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(Slurp(Path("plain_name.txt")), "rel");
  EXPECT_EQ(Entries(), std::vector<std::string>{"plain_name.txt"});
}

TEST_F(FileIoTest, WriteThenReadRoundTrip) {
  const std::string path = Path("rt.bin");
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<char>(i));
  ASSERT_TRUE(WriteFileAtomically(path, bytes).ok());
  StatusOr<std::string> r = ReadFile(path);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, bytes);
}

}  // namespace
}  // namespace irm
