// Bundle and serial parity run every rank on the kernels they are given (--device gpu hands them
// the GPU registry): with none, the CPU's, and parity holds; with a registry that has no kernel at
// all, both runs fail at their first op naming the missing kernel — so the registry reaches every
// rank's executor, on both sides. Likewise the world they are given (--backend device|nccl hands
// them the GPU's): a factory that refuses fails both drivers with its words. Needs no GPU.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "diff_tests/bundle_parity.h"
#include "diff_tests/corpus/corpus.h"
#include "diff_tests/serial_parity.h"

namespace irm::diff {
namespace {

namespace fs = std::filesystem;

class ParityKernelsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("irm_parity_kernels_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    StatusOr<corpus::BundleCase> dp2 = corpus::CaseNamed("dp2_mlp");
    ASSERT_TRUE(dp2.ok()) << dp2.status().ToString();
    ASSERT_TRUE(corpus::WriteBundleCase(*dp2, (dir_ / "dp2").string()).ok());
    // Two replicas of kRows rows: the serial run takes the global batch.
    StatusOr<corpus::BundleCase> serial = corpus::SerialMlp(2 * kRows);
    ASSERT_TRUE(serial.ok()) << serial.status().ToString();
    ASSERT_TRUE(corpus::WriteBundleCase(*serial, (dir_ / "serial").string()).ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  static constexpr int64_t kRows = 4;
  fs::path dir_;
  rt::KernelRegistry empty_;  // no kernel at all
};

TEST_F(ParityKernelsTest, BundleParityRunsBothSidesOnTheGivenKernels) {
  BundleParityOptions options;
  options.steps = 1;
  options.batch_size = kRows;
  StatusOr<ParityResult> cpu = RunBundleParity((dir_ / "dp2").string(), "", options);
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  EXPECT_TRUE(cpu->report.parity());

  options.kernels = &empty_;
  StatusOr<ParityResult> none = RunBundleParity((dir_ / "dp2").string(), "", options);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().ToString().find("there is no kernel"), std::string::npos)
      << none.status().ToString();
}

TEST_F(ParityKernelsTest, SerialParityRunsBothRunsOnTheGivenKernels) {
  SerialParityOptions options;
  options.steps = 1;
  options.batch_size = kRows;
  StatusOr<ParityResult> cpu =
      RunSerialParity((dir_ / "dp2").string(), (dir_ / "serial").string(), options);
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  EXPECT_TRUE(cpu->report.parity());

  options.kernels = &empty_;
  StatusOr<ParityResult> none =
      RunSerialParity((dir_ / "dp2").string(), (dir_ / "serial").string(), options);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().ToString().find("there is no kernel"), std::string::npos)
      << none.status().ToString();
}

// A world factory that makes no world: whoever runs ranks through it fails with its words.
rt::RankWorldFactory RefusingWorld() {
  return [](int world_size, std::vector<rt::CommGroup>,
            const schedules::P2pModel&) -> StatusOr<std::unique_ptr<rt::RankWorld>> {
    return Status(StatusCode::kInternal, Location{},
                  "the test's world refuses " + std::to_string(world_size) + " ranks");
  };
}

TEST_F(ParityKernelsTest, BothDriversRunTheRanksInTheWorldTheyAreGiven) {
  BundleParityOptions bundle;
  bundle.steps = 1;
  bundle.batch_size = kRows;
  bundle.make_world = RefusingWorld();
  StatusOr<ParityResult> refused = RunBundleParity((dir_ / "dp2").string(), "", bundle);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().ToString().find("the test's world refuses 2 ranks"), std::string::npos)
      << refused.status().ToString();

  SerialParityOptions serial;
  serial.steps = 1;
  serial.batch_size = kRows;
  serial.make_world = RefusingWorld();
  refused = RunSerialParity((dir_ / "dp2").string(), (dir_ / "serial").string(), serial);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().ToString().find("the test's world refuses"), std::string::npos)
      << refused.status().ToString();
}

}  // namespace
}  // namespace irm::diff
