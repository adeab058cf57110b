// What the bundle's tests share (bundle_test.cc, bundle_json_test.cc, bundle_check_test.cc):
// small legacy programs in protobuf text, and a fixture with a scratch bundle directory and
// writers for bundle.json, rank folders and plans.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "common/file_io.h"
#include "oldir/bundle.h"
#include "oldir/program_io.h"

namespace irm::oldir {

// --- programs, in protobuf text -------------------------------------------------------------

inline std::string Var(const std::string& name, const std::string& dims,
                       const std::string& flags = "") {
  return "vars { name: \"" + name +
         "\" type { type: DENSE_TENSOR dense_tensor { tensor { data_type: FP32 " + dims +
         " } } } " + flags + " }\n";
}
inline std::string ProgramText(const std::string& vars, const std::string& ops) {
  return "blocks { idx: 0 parent_idx: -1\n" + vars + ops + "}\n";
}

inline const std::string kStartupText = ProgramText("", "");
// x is not need_check_feed: only the bundle's feeds make it defined.
inline const std::string kForwardText =
    ProgramText(Var("x", "dims: -1 dims: 4") + Var("w", "dims: 4 dims: 2", "persistable: true") +
                    Var("y", "dims: -1 dims: 2") + Var("loss", ""),
                R"(ops { type: "matmul_v2" inputs { parameter: "X" arguments: "x" }
           inputs { parameter: "Y" arguments: "w" } outputs { parameter: "Out" arguments: "y" } }
       ops { type: "mean" inputs { parameter: "X" arguments: "y" }
           outputs { parameter: "Out" arguments: "loss" } }
    )");
// Reads y, which only the forward program writes.
inline const std::string kBackwardText = ProgramText(
    Var("y", "dims: -1 dims: 2") + Var("w@GRAD", "dims: 4 dims: 2", "persistable: true"),
    R"(ops { type: "relu" inputs { parameter: "X" arguments: "y" }
                   outputs { parameter: "Out" arguments: "w@GRAD" } })");
inline const std::string kOptimizerText =
    ProgramText(Var("w", "dims: 4 dims: 2", "persistable: true") +
                    Var("w@GRAD", "dims: 4 dims: 2", "persistable: true") +
                    Var("lr", "dims: 1", "persistable: true"),
                R"(ops { type: "sgd" inputs { parameter: "Param" arguments: "w" }
           inputs { parameter: "Grad" arguments: "w@GRAD" }
           inputs { parameter: "LearningRate" arguments: "lr" }
           outputs { parameter: "ParamOut" arguments: "w" } })");
// An allreduce on ring 0, for the process-group checks.
inline const std::string kAllreduceText =
    ProgramText(Var("g", "dims: 2", "persistable: true"),
                R"(ops { type: "c_allreduce_sum" inputs { parameter: "X" arguments: "g" }
                   outputs { parameter: "Out" arguments: "g" }
                   attrs { name: "ring_id" type: INT i: 0 } })");

inline oldir::Program Parse(const std::string& text) {
  StatusOr<oldir::Program> program = ParseProgram(text, "test.prototxt");
  EXPECT_TRUE(program.ok()) << program.status().ToString();
  return program.ok() ? std::move(program).value() : oldir::Program();
}

// --- files ------------------------------------------------------------------------------------

class BundleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::path(::testing::TempDir()) /
            ("irm_bundle_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void Write(const std::string& relative, const std::string& text) {
    std::filesystem::path path = std::filesystem::path(dir_) / relative;
    std::filesystem::create_directories(path.parent_path());
    ASSERT_TRUE(WriteFileAtomically(path.string(), text).ok());
  }
  void WriteProgram(const std::string& relative, const std::string& text) {
    ASSERT_TRUE(SaveProgram(Parse(text), (std::filesystem::path(dir_) / relative).string(),
                            ProgramFormat::kBinary)
                    .ok());
  }
  std::string P(const std::string& relative) const {
    return (std::filesystem::path(dir_) / relative).string();
  }

  // bundle.json of `world_size` ranks with the given extra fields (",\n"-separated JSON members).
  void WriteBundleJson(int world_size, const std::string& extra = "") {
    Write("bundle.json",
          "{\"format\": \"ir-migrate.bundle\", \"version\": 1, \"ir\": \"legacy\", "
          "\"world_size\": " +
              std::to_string(world_size) + (extra.empty() ? "" : ", " + extra) + "}\n");
  }
  // A plan-less rank running the forward program as main.
  void WriteMainRank(int rank) {
    const std::string folder = "rank" + std::to_string(rank) + "/";
    std::filesystem::create_directories(P(folder));
    WriteProgram(folder + "startup.pdmodel", kStartupText);
    WriteProgram(folder + "main.pdmodel", kForwardText);
  }
  void WritePipelineRank(int rank, const std::string& plan) {
    const std::string folder = "rank" + std::to_string(rank) + "/";
    std::filesystem::create_directories(P(folder));
    WriteProgram(folder + "startup.pdmodel", kStartupText);
    WriteProgram(folder + "forward.pdmodel", kForwardText);
    WriteProgram(folder + "backward.pdmodel", kBackwardText);
    WriteProgram(folder + "optimizer.pdmodel", kOptimizerText);
    Write(folder + "plan.json", plan);
  }

  // ReadBundle + CheckBundle; the rendered findings.
  std::string Check(bool* usable = nullptr) {
    StatusOr<Bundle> bundle = ReadBundle(dir_);
    if (!bundle.ok()) return "read failed: " + bundle.status().ToString();
    BundleCheck check = CheckBundle(*bundle, dir_);
    if (usable) *usable = check.usable;
    return check.findings.Render();
  }
  // ReadBundle's error.
  std::string ReadError() {
    StatusOr<Bundle> bundle = ReadBundle(dir_);
    return bundle.ok() ? "read fine" : bundle.status().ToString();
  }

  std::string dir_;
};

inline const std::string kFeedX =
    R"("feeds": [{"name": "x", "shape": [-1, 4], "dtype": "float32"}])";
inline const std::string kPlan2 = R"({"jobs": [{"type": "forward", "micro_batch": 0},
  {"type": "forward", "micro_batch": 1}, {"type": "backward", "micro_batch": 0},
  {"type": "backward", "micro_batch": 1}, {"type": "optimizer"}]})";

}  // namespace irm::oldir
