// Tests of staged output folders: the content appears under the output name only on Commit, an
// abandoned or failed stage leaves nothing, an existing empty folder (or a link to one) is
// replaced, a non-empty one is never touched, and diagnostics name the output, not the stage.
#include "common/staged_folder.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>
#include "common/scratch_dir_test_support.h"

namespace irm {
namespace {

namespace fs = std::filesystem;

class StagedFolderTest : public ScratchDirTest {
 protected:
  static void Put(const std::string& path, const std::string& bytes) {
    std::ofstream(path) << bytes;
  }
  static std::string Slurp(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::vector<std::string> Entries(const std::string& folder) const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(folder)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }
};

TEST_F(StagedFolderTest, ContentAppearsOnlyOnCommit) {
  const std::string out = Path("bundle");
  StatusOr<StagedFolder> staged = StagedFolder::Begin(out);
  ASSERT_TRUE(staged.ok()) << staged.status().ToString();
  EXPECT_EQ(fs::path(staged->path()).parent_path(), dir_);
  EXPECT_EQ(fs::path(staged->path()).filename().string().rfind(".bundle.tmp.", 0), 0u);
  fs::create_directory(staged->path() + "/rank0");
  Put(staged->path() + "/bundle.json", "{}");
  Put(staged->path() + "/rank0/main.pdmodel", "m");
  EXPECT_FALSE(fs::exists(out));
  ASSERT_TRUE(staged->Commit().ok());
  EXPECT_EQ(Slurp(out + "/bundle.json"), "{}");
  EXPECT_EQ(Slurp(out + "/rank0/main.pdmodel"), "m");
  EXPECT_EQ(Entries(dir_.string()), std::vector<std::string>{"bundle"});
}

TEST_F(StagedFolderTest, AbandonedStageLeavesNothing) {
  {
    StatusOr<StagedFolder> staged = StagedFolder::Begin(Path("bundle"));
    ASSERT_TRUE(staged.ok());
    fs::create_directory(staged->path() + "/rank0");
    Put(staged->path() + "/rank0/half.pdmodel", "half");
  }
  EXPECT_TRUE(Entries(dir_.string()).empty());
}

TEST_F(StagedFolderTest, MissingParentFoldersAreCreated) {
  const std::string out = Path("a/b/bundle/");  // a trailing slash names the same folder
  StatusOr<StagedFolder> staged = StagedFolder::Begin(out);
  ASSERT_TRUE(staged.ok()) << staged.status().ToString();
  Put(staged->path() + "/bundle.json", "{}");
  ASSERT_TRUE(staged->Commit().ok());
  EXPECT_EQ(Slurp(Path("a/b/bundle/bundle.json")), "{}");
  EXPECT_EQ(Entries(Path("a/b")), std::vector<std::string>{"bundle"});
}

TEST_F(StagedFolderTest, EmptyFolderIsReplacedAndKeepsItsPermissions) {
  const std::string out = Path("empty");
  fs::create_directory(out);
  ASSERT_EQ(::chmod(out.c_str(), 0750), 0);
  StatusOr<StagedFolder> staged = StagedFolder::Begin(out);
  ASSERT_TRUE(staged.ok());
  Put(staged->path() + "/bundle.json", "{}");
  ASSERT_TRUE(staged->Commit().ok());
  EXPECT_EQ(Slurp(out + "/bundle.json"), "{}");
  struct stat st {};
  ASSERT_EQ(::stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0750u);
  EXPECT_EQ(Entries(dir_.string()), std::vector<std::string>{"empty"});
}

TEST_F(StagedFolderTest, NonEmptyFolderIsNeverTouched) {
  const std::string out = Path("taken");
  fs::create_directory(out);
  Put(out + "/bundle.json", "old");
  {
    StatusOr<StagedFolder> staged = StagedFolder::Begin(out);
    ASSERT_TRUE(staged.ok());
    Put(staged->path() + "/bundle.json", "new");
    const Status committed = staged->Commit();
    ASSERT_FALSE(committed.ok());
    EXPECT_EQ(committed.code(), StatusCode::kIoError);
    EXPECT_EQ(committed.ToString(),
              out + ": error: the output directory is no longer empty; nothing was written");
  }
  EXPECT_EQ(Slurp(out + "/bundle.json"), "old");
  EXPECT_EQ(Entries(dir_.string()), std::vector<std::string>{"taken"});
}

TEST_F(StagedFolderTest, LinkToAnEmptyFolderStaysALink) {
  fs::create_directory(Path("real"));
  fs::create_directory_symlink("real", Path("link"));
  StatusOr<StagedFolder> staged = StagedFolder::Begin(Path("link"));
  ASSERT_TRUE(staged.ok());
  Put(staged->path() + "/bundle.json", "{}");
  ASSERT_TRUE(staged->Commit().ok());
  EXPECT_TRUE(fs::is_symlink(Path("link")));
  EXPECT_EQ(Slurp(Path("real/bundle.json")), "{}");
  EXPECT_EQ(Entries(dir_.string()), (std::vector<std::string>{"link", "real"}));
}

TEST_F(StagedFolderTest, RelocateNamesTheOutputFolder) {
  const std::string out = Path("bundle");
  StatusOr<StagedFolder> staged = StagedFolder::Begin(out);
  ASSERT_TRUE(staged.ok());
  Status failed(StatusCode::kIoError, Location::File(staged->path() + "/rank0/main.json"),
                "cannot create a temporary file in '" + staged->path() + "/rank0'");
  failed.AddNote("see " + staged->path());
  const Status relocated = staged->Relocate(failed);
  EXPECT_EQ(relocated.code(), StatusCode::kIoError);
  EXPECT_EQ(relocated.ToString(),
            out + "/rank0/main.json: error: cannot create a temporary file in '" + out +
                "/rank0'\n  note: see " + out);
  EXPECT_TRUE(staged->Relocate(Status::Ok()).ok());
}

TEST_F(StagedFolderTest, UncreatableParentIsAnIoError) {
  Put(Path("file"), "x");
  StatusOr<StagedFolder> staged = StagedFolder::Begin(Path("file/bundle"));
  ASSERT_FALSE(staged.ok());
  EXPECT_EQ(staged.status().code(), StatusCode::kIoError);
  EXPECT_EQ(Entries(dir_.string()), std::vector<std::string>{"file"});
}

}  // namespace
}  // namespace irm
