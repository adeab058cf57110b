// The new IR's engine flow on the zoo models, end to end: the serial legacy program of a legacy
// matrix case (diff_tests/cases: the 4-linear mlp, the gpt of 2 layers with 4 heads and a
// vocabulary of 12; SGD and AdamW) is translated, parallelized by the new IR's passes with the
// strategy's standard placements (DP2, TP2, TP4, DP2 x TP2: parallelize_bundle.h, what
// `ir-migrate parallelize` runs), and its ranks run 3 steps on the thread world:
//   - against the serial run of the same global batches from the same initial parameters (shards
//     drawn as slices of the serial initialisation): every loss, every parameter and optimizer
//     state reassembled from the shards, in the reordered tier (serial_parity.h's comparison);
//   - against the same strategy applied by the legacy passes and translated (the three-way check,
//     pir_bundle_compare.h): bit for bit where both make the same ops in the same order, else the
//     reordered tier for every fetch and persistable, with the op differences reported.
// The standard placements read off the translation must be the legacy passes' own
// (oldir/passes/placements.h) for every parameter they name.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "diff_tests/corpus/model_bundle.h"
#include "diff_tests/parallelize_bundle.h"
#include "diff_tests/parity_compare.h"
#include "diff_tests/pir_bundle_compare.h"
#include "diff_tests/serial_parity.h"
#include "diff_tests/suite_case.h"
#include "diff_tests/suite_runner.h"
#include "newir/auto_parallel/strategy_placements.h"
#include "newir/program_io.h"
#include "oldir/float64_shadow.h"
#include "oldir/passes/placements.h"
#include "oldir/program_io.h"
#include "reference_runtime/legacy_executor.h"
#include "reference_runtime/multi_rank_run.h"
#include "reference_runtime/run.h"
#include "translator/bundle_translate.h"

namespace irm::diff {
namespace {

// The matrix cases this flow runs, by file stem.
const std::vector<std::string>& CaseNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const char* model : {"mlp", "gpt"}) {
      for (const char* optimizer : {"sgd", "adamw"}) {
        for (const char* strategy : {"dp2", "tp2", "tp4", "dp2_tp2"}) {
          out.push_back(std::string(model) + "_" + optimizer + "_" + strategy);
        }
      }
    }
    return out;
  }();
  return names;
}

StatusOr<SuiteCase> ReadCase(const std::string& name) {
  const std::string file = std::string(IRM_SUITE_CASES) + "/" + name + ".json";
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return ParseSuiteCase(text.str(), file);
}

// A scratch folder removed afterwards.
class Scratch {
 public:
  explicit Scratch(const std::string& name) {
    path_ = std::filesystem::temp_directory_path() /
            ("irm-newir-parallelize-" + name + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

StatusOr<corpus::ModelBundle> WriteBundle(const corpus::ModelRecipe& recipe,
                                          const std::string& dir) {
  IRM_ASSIGN_OR_RETURN(corpus::ModelBundle made, corpus::MakeModelBundle(recipe));
  IRM_RETURN_IF_ERROR(corpus::WriteModelBundle(made, dir).status());
  return made;
}

// Every tensor that misses the tier, with its worst error, for the failure message.
std::string FailingTensors(const ParityReport& report) {
  std::string out;
  for (const ComparedTensor& t : report.tensors) {
    if (!t.compared || t.comparison.pass || t.comparison.reason.starts_with("only")) continue;
    out += fmt::format("\n  {} (rank {}, step {}): {}; max abs {:.3g}", t.name, t.rank, t.step,
                       t.comparison.reason, t.comparison.metrics.max_abs_diff);
  }
  return out;
}

class NewIrParallelizeTest : public ::testing::TestWithParam<std::string> {};

TEST_P(NewIrParallelizeTest, MatchesTheSerialRunAndTheLegacyPasses) {
  StatusOr<SuiteCase> read = ReadCase(GetParam());
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  const SuiteCase& c = *read;
  ASSERT_TRUE(c.recipe.strategy.has_value());
  const oldir::passes::Strategy strategy = *c.recipe.strategy;
  const int64_t rows = c.recipe.batch_size;  // per replica
  const Scratch scratch(GetParam());

  // The serial legacy program, translated; then the new IR's passes.
  corpus::ModelRecipe serial_recipe = c.recipe;
  serial_recipe.strategy.reset();
  StatusOr<corpus::ModelBundle> serial_made = WriteBundle(serial_recipe, scratch / "serial");
  ASSERT_TRUE(serial_made.ok()) << serial_made.status().ToString();
  StatusOr<translator::BundleTranslation> serial_pir =
      translator::TranslateBundle(scratch / "serial", scratch / "serial_pir");
  ASSERT_TRUE(serial_pir.ok()) << serial_pir.status().ToString();
  StatusOr<ParallelizedBundle> made = ParallelizeBundle(scratch / "serial_pir", strategy, c.file);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  const Status written = WriteParallelizedBundle(*made, scratch / "new");
  ASSERT_TRUE(written.ok()) << written.ToString();

  // The placements are the legacy passes' for every parameter those name.
  if (strategy.mp_degree > 1) {
    StatusOr<oldir::Program> legacy_main =
        oldir::LoadProgram(scratch / "serial/rank0/main.pdmodel");
    ASSERT_TRUE(legacy_main.ok()) << legacy_main.status().ToString();
    StatusOr<oldir::passes::Placements> legacy = oldir::passes::MegatronPlacements(*legacy_main);
    ASSERT_TRUE(legacy.ok()) << legacy.status().ToString();
    StatusOr<newir::Program> translated =
        newir::LoadProgramFile(scratch / "serial_pir/rank0/main.json");
    ASSERT_TRUE(translated.ok()) << translated.status().ToString();
    StatusOr<std::map<std::string, std::vector<int64_t>>> placements =
        newir::MegatronPlacements(*translated);
    ASSERT_TRUE(placements.ok()) << placements.status().ToString();
    for (const auto& [name, mapping] : *legacy) {
      auto it = placements->find(name);
      ASSERT_NE(it, placements->end()) << name;
      EXPECT_EQ(it->second, mapping) << name;
    }
  }

  // Against the serial run of the global batch.
  StatusOr<oldir::Bundle> bundle = oldir::ReadBundle(scratch / "new");
  ASSERT_TRUE(bundle.ok()) << bundle.status().ToString();
  rt::MultiRankConfig config;
  config.rank_config.steps = c.recipe.steps;
  config.rank_config.seed = static_cast<uint64_t>(bundle->seed);
  config.rank_config.random_feeds = true;
  config.rank_config.batch_size = rows;
  StatusOr<rt::MultiRankResult> distributed = rt::RunBundleRanks(scratch / "new", config);
  ASSERT_TRUE(distributed.ok()) << distributed.status().ToString();
  config.rank_config.batch_size = rows * strategy.dp_degree;
  StatusOr<rt::MultiRankResult> serial = rt::RunBundleRanks(scratch / "serial", config);
  ASSERT_TRUE(serial.ok()) << serial.status().ToString();
  // The reordered tier, a tensor that misses it arbitrated by the float64 shadow (the noise-floor
  // tier of the legacy matrix cases): the gpt's key biases have a gradient that is zero but for
  // rounding (softmax is invariant to a shift along the keys), which no summation order can
  // reproduce bit for bit. The mlp needs no arbitration.
  StatusOr<std::unique_ptr<Float64Shadow>> shadow = RunFloat64Shadow(
      &serial_made->ranks[0].startup, serial_made->ranks[0].main, c.recipe.steps,
      static_cast<uint64_t>(bundle->seed), rows * strategy.dp_degree, rt::GemmMode::kBlas);
  ASSERT_TRUE(shadow.ok()) << shadow.status().ToString();
  ParityReport against_serial;
  against_serial.against_serial = true;
  against_serial.tier = Tier::kNoiseFloor;
  const Status compared =
      CompareWithSerial({&*bundle, &distributed->ranks},
                        {&serial->ranks.front(), &(*shadow)->scope, &(*shadow)->fetches},
                        Tier::kNoiseFloor, against_serial);
  ASSERT_TRUE(compared.ok()) << compared.ToString();
  EXPECT_GT(against_serial.Compared(TensorGroup::kParameter), 0);
  EXPECT_GT(against_serial.Compared(TensorGroup::kFetch), 0);
  EXPECT_TRUE(against_serial.parity())
      << DescribeMismatch(against_serial) << FailingTensors(against_serial);
  std::string arbitrated;
  for (const ComparedTensor& t : against_serial.tensors) {
    if (t.arbitration) arbitrated += " " + t.name;
  }
  if (c.recipe.model == corpus::ZooModel::kMlp) {
    EXPECT_EQ(arbitrated, "");
  }
  if (!arbitrated.empty()) {
    std::cout << GetParam() << ": noise-floor arbitration:" << arbitrated << "\n";
    RecordProperty("noise_floor", arbitrated);
  }

  // The three-way check: the legacy passes' bundle, translated, against the new IR's.
  StatusOr<corpus::ModelBundle> legacy_made = WriteBundle(c.recipe, scratch / "legacy");
  ASSERT_TRUE(legacy_made.ok()) << legacy_made.status().ToString();
  StatusOr<translator::BundleTranslation> legacy_pir =
      translator::TranslateBundle(scratch / "legacy", scratch / "legacy_pir");
  ASSERT_TRUE(legacy_pir.ok()) << legacy_pir.status().ToString();
  PirBundleCompareOptions options;
  options.steps = c.recipe.steps;
  options.batch_size = rows;
  options.shadow = &(*shadow)->scope;
  StatusOr<PirBundleComparison> three_way =
      ComparePirBundles(scratch / "legacy_pir", scratch / "new", options);
  ASSERT_TRUE(three_way.ok()) << three_way.status().ToString();
  const std::string differences = DescribeOpDifferences(*three_way);
  RecordProperty("three_way_tier", TierName(three_way->report.tier));
  std::cout << GetParam() << ": " << TierName(three_way->report.tier) << " tier\n"
            << differences.substr(0, 2000) << "\n";
  EXPECT_GT(three_way->report.Compared(TensorGroup::kParameter), 0);
  EXPECT_TRUE(three_way->parity())
      << DescribeMismatch(three_way->report) << FailingTensors(three_way->report) << differences;
  std::string three_way_arbitrated;
  for (const ComparedTensor& t : three_way->report.tensors) {
    if (t.arbitration) three_way_arbitrated += fmt::format(" {}@{}", t.name, t.rank);
  }
  if (c.recipe.model == corpus::ZooModel::kMlp) {
    EXPECT_EQ(three_way_arbitrated, "");
  }
  if (!three_way_arbitrated.empty()) {
    std::cout << GetParam() << ": three-way noise-floor arbitration:" << three_way_arbitrated
              << "\n";
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, NewIrParallelizeTest, ::testing::ValuesIn(CaseNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace irm::diff
