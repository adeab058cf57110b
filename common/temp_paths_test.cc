// Tests of the registry of temporaries: SIGINT and SIGTERM remove every registered file and
// folder and still end the process by that signal; a released path is left alone. Each signal
// test runs in a forked child, which the test kills.
#include "common/temp_paths.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include "common/scratch_dir_test_support.h"

namespace irm {
namespace {

namespace fs = std::filesystem;

class TempPathsTest : public ScratchDirTest {
 protected:
  static void Put(const std::string& path) { std::ofstream(path) << "x"; }

  // Runs `setup` in a forked child, which then waits to be killed by `sig`; returns the child's
  // wait status.
  static int RunChildKilledBy(int sig, const std::function<void()>& setup) {
    int ready[2];
    if (::pipe(ready) != 0) return -1;
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::alarm(30);  // never outlives a broken test
      ::close(ready[0]);
      setup();
      const char byte = 1;
      if (::write(ready[1], &byte, 1) != 1) ::_exit(90);
      while (true) ::pause();
    }
    ::close(ready[1]);
    char byte = 0;
    const bool child_ready = ::read(ready[0], &byte, 1) == 1;
    ::close(ready[0]);
    if (child_ready) ::kill(pid, sig);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return status;
  }
};

TEST_F(TempPathsTest, SiblingNameIsHiddenBesideTheTarget) {
  const std::string a = TempSiblingName(Path("out.pdmodel"));
  const std::string b = TempSiblingName(Path("out.pdmodel"));
  EXPECT_NE(a, b);
  EXPECT_EQ(fs::path(a).parent_path(), dir_);
  const std::string name = fs::path(a).filename();
  EXPECT_EQ(name.rfind(".out.pdmodel.tmp.", 0), 0u) << name;
  EXPECT_EQ(name.size(), std::string(".out.pdmodel.tmp.").size() + 6);
  EXPECT_EQ(TempSiblingName("plain").rfind("./.plain.tmp.", 0), 0u);
}

TEST_F(TempPathsTest, RemoveRegisteredRemovesFilesAndFolderTrees) {
  const std::string file = Path(".a.tmp.1");
  const std::string folder = Path(".b.tmp.2");
  TempPathGuard file_guard(file, TempKind::kFile);
  TempPathGuard folder_guard(folder, TempKind::kFolder);
  ASSERT_TRUE(file_guard.registered() && folder_guard.registered());
  Put(file);
  fs::create_directories(folder + "/rank0/deeper");
  Put(folder + "/bundle.json");
  Put(folder + "/rank0/main.pdmodel");
  Put(folder + "/rank0/deeper/x");
  for (int i = 0; i < 300; ++i) Put(folder + "/rank0/f" + std::to_string(i));  // > one read
  Put(Path("keep"));
  RemoveRegisteredTempPaths();
  EXPECT_FALSE(fs::exists(file));
  EXPECT_FALSE(fs::exists(folder));
  EXPECT_TRUE(fs::exists(Path("keep")));
}

TEST_F(TempPathsTest, ReleasedPathIsLeftAlone) {
  const std::string file = Path("finished");
  {
    TempPathGuard guard(file, TempKind::kFile);
    Put(file);
  }
  RemoveRegisteredTempPaths();
  EXPECT_TRUE(fs::exists(file));
}

TEST_F(TempPathsTest, FolderSymlinkInsideATreeIsRemovedNotFollowed) {
  fs::create_directory(Path("outside"));
  Put(Path("outside/precious"));
  const std::string folder = Path(".stage.tmp.3");
  TempPathGuard guard(folder, TempKind::kFolder);
  fs::create_directory(folder);
  fs::create_directory_symlink(Path("outside"), folder + "/link");
  RemoveRegisteredTempPaths();
  EXPECT_FALSE(fs::exists(folder));
  EXPECT_TRUE(fs::exists(Path("outside/precious")));
}

void ExpectCleanDeathBy(int sig, const std::string& file, const std::string& folder, int status) {
  ASSERT_TRUE(WIFSIGNALED(status)) << "wait status " << status;
  EXPECT_EQ(WTERMSIG(status), sig);  // the handler re-raises: the parent sees the signal
  EXPECT_FALSE(fs::exists(file));
  EXPECT_FALSE(fs::exists(folder));
}

// A signal the process inherited as ignored stays ignored (as under nohup, or a background job
// of a script), so it cannot be tested here.
bool Ignored(int sig) {
  struct sigaction current {};
  return ::sigaction(sig, nullptr, &current) == 0 && !(current.sa_flags & SA_SIGINFO) &&
         current.sa_handler == SIG_IGN;
}

TEST_F(TempPathsTest, SigtermRemovesTemporariesAndEndsTheProcess) {
  if (Ignored(SIGTERM)) GTEST_SKIP() << "SIGTERM is ignored by this process";
  const std::string file = Path(".out.tmp.aaaaaa");
  const std::string folder = Path(".bundle.tmp.bbbbbb");
  const int status = RunChildKilledBy(SIGTERM, [&] {
    static TempPathGuard file_guard(file, TempKind::kFile);
    static TempPathGuard folder_guard(folder, TempKind::kFolder);
    Put(file);
    fs::create_directories(folder + "/rank0");
    Put(folder + "/rank0/main.pdmodel");
  });
  ExpectCleanDeathBy(SIGTERM, file, folder, status);
}

TEST_F(TempPathsTest, SigintRemovesTemporariesAndEndsTheProcess) {
  if (Ignored(SIGINT)) GTEST_SKIP() << "SIGINT is ignored by this process (a background job)";
  const std::string file = Path(".out.tmp.cccccc");
  const std::string folder = Path(".bundle.tmp.dddddd");
  const int status = RunChildKilledBy(SIGINT, [&] {
    static TempPathGuard file_guard(file, TempKind::kFile);
    static TempPathGuard folder_guard(folder, TempKind::kFolder);
    Put(file);
    fs::create_directories(folder + "/rank1");
  });
  ExpectCleanDeathBy(SIGINT, file, folder, status);
}

TEST_F(TempPathsTest, SignalLeavesReleasedPathsAndOtherFiles) {
  if (Ignored(SIGTERM)) GTEST_SKIP() << "SIGTERM is ignored by this process";
  const std::string done = Path("model.pdmodel");
  const std::string live = Path(".model.pdmodel.tmp.eeeeee");
  const int status = RunChildKilledBy(SIGTERM, [&] {
    {
      TempPathGuard guard(done, TempKind::kFile);
      Put(done);
    }
    static TempPathGuard guard(live, TempKind::kFile);
    Put(live);
  });
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_TRUE(fs::exists(done));
  EXPECT_FALSE(fs::exists(live));
}

}  // namespace
}  // namespace irm
