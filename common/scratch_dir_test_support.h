// Scratch folders for tests of code that writes files: ScratchDirTest, a GoogleTest fixture that
// gives each test a fresh, empty folder under the test temp dir (`dir_`, `Path(name)`), removed
// when the test ends; and ScratchDir, a named path under the test temp dir that does not exist yet
// (for code that creates it, such as a bundle writer), removed when it goes out of scope.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace irm {

class ScratchDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "irm_test_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name)
      : path_((std::filesystem::path(::testing::TempDir()) /
               ("irm_" + name + "_" + std::to_string(::getpid())))
                  .string()) {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  std::string operator/(const std::string& child) const {
    return (std::filesystem::path(path_) / child).string();
  }

 private:
  std::string path_;
};

}  // namespace irm
