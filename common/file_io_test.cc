// Tests of whole-file reads and atomic writes: the error codes for missing files and folders, and
// that a failed write never leaves a half-written or temporary file behind.
#include "common/file_io.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace irm {
namespace {

namespace fs = std::filesystem;

// A fresh, empty folder under the test temp dir, removed at the end of the test.
class FileIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "irm_file_io_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

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

  fs::path dir_;
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
  // NUL and high bytes survive, and a file larger than the 64 KiB read buffer is read whole.
  std::string bytes;
  for (int i = 0; i < 200000; ++i) bytes.push_back(static_cast<char>((i * 131 + 7) & 0xff));
  bytes[0] = '\0';
  Put(Path("big.bin"), bytes);
  StatusOr<std::string> r = ReadFile(Path("big.bin"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 200000u);
  EXPECT_EQ(*r, bytes);
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

TEST_F(FileIoTest, WrittenFileHasOrdinaryPermissions) {
  // mkstemp creates 0600; the result must look like an ordinary create under the umask.
  const mode_t old_mask = ::umask(022);
  const std::string path = Path("perm.out");
  Status s = WriteFileAtomically(path, "x");
  ::umask(old_mask);
  ASSERT_TRUE(s.ok());
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
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
