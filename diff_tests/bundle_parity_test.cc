// Bundle parity (bundle_parity.h) on the corpus: every standard bundle against its translation is
// in parity on every rank over its steps — fetches, persistables and intermediates compared, the
// same communication — and faults injected into a translated rank's job program are caught: a
// send to the wrong peer (a hang or a communication difference, said which), a flipped
// transpose_y on rank 1 (the first divergence names that op on rank 1, isolation blames it).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>

#include "common/file_io.h"
#include "diff_tests/bundle_parity.h"
#include "diff_tests/corpus/corpus.h"
#include "diff_tests/schema_check_test_support.h"
#include "newir/pir_json.h"
#include "oldir/bundle.h"
#include "translator/bundle_translate.h"

namespace irm::diff {
namespace {

namespace fs = std::filesystem;

class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name)
      : path_((fs::path(::testing::TempDir()) /
               ("irm_bundle_parity_" + std::to_string(::getpid()) + "_" + name))
                  .string()) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~ScratchDir() { fs::remove_all(path_); }
  std::string operator/(const std::string& child) const {
    return (fs::path(path_) / child).string();
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The standard cases, made once: the instantiation below and every test read them.
const std::vector<corpus::BundleCase>& StandardCases() {
  static const std::vector<corpus::BundleCase>* const cases = [] {
    StatusOr<std::vector<corpus::BundleCase>> made = corpus::StandardCases();
    return new std::vector<corpus::BundleCase>(made.ok() ? *std::move(made)
                                                         : std::vector<corpus::BundleCase>{});
  }();
  return *cases;
}

int CountCompared(const ParityReport& report, int rank, TensorGroup group) {
  int n = 0;
  for (const ComparedTensor& t : report.tensors) {
    if (t.rank == rank && t.group == group && t.compared) ++n;
  }
  return n;
}

class CorpusBundleParityTest : public ::testing::TestWithParam<int> {};

TEST_P(CorpusBundleParityTest, EveryRankIsInParityWithTheTranslation) {
  const corpus::BundleCase& c = StandardCases().at(static_cast<size_t>(GetParam()));
  ScratchDir dir(c.name);
  ASSERT_TRUE(corpus::WriteBundleCase(c, dir / c.name).ok());
  StatusOr<ParityResult> result = RunBundleParity(dir / c.name, "", {});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const ParityReport& report = result->report;
  EXPECT_TRUE(report.parity()) << RenderMarkdown(report);
  EXPECT_EQ(report.new_program, "(translated)");
  EXPECT_EQ(report.steps, c.bundle.steps);
  EXPECT_FALSE(report.first_divergence.has_value());
  ASSERT_EQ(report.communication.size(), c.ranks.size());
  for (int r = 0; r < static_cast<int>(c.ranks.size()); ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    EXPECT_GT(CountCompared(report, r, TensorGroup::kParameter), 0);
    EXPECT_GT(CountCompared(report, r, TensorGroup::kIntermediate), 0);
    const CommDiff& comm = report.communication[static_cast<size_t>(r)];
    EXPECT_EQ(comm.rank, r);
    EXPECT_TRUE(comm.equal) << comm.old_record << " vs " << comm.new_record;
    EXPECT_GT(comm.old_records, 0);
    EXPECT_EQ(comm.new_records, comm.old_records);
  }
  // Some rank fetches the loss at every step.
  EXPECT_GE(report.Compared(TensorGroup::kFetch), c.bundle.steps);
  EXPECT_TRUE(testing::SchemaErrors(RenderJson(report)).empty());
  // The scratch translation beside the bundle is gone.
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    EXPECT_EQ(entry.path().filename().string(), c.name);
  }
}

TEST(CorpusBundleParityCasesTest, TheStandardCasesAreMade) {
  StatusOr<std::vector<corpus::BundleCase>> made = corpus::StandardCases();
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_EQ(StandardCases().size(), made->size());
}

INSTANTIATE_TEST_SUITE_P(StandardCases, CorpusBundleParityTest,
                         ::testing::Range(0, static_cast<int>(StandardCases().size())),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return StandardCases().at(static_cast<size_t>(info.param)).name;
                         });

// A corpus bundle written and translated, ready to have a translated program mutated.
class BundleFaultTest : public ::testing::Test {
 protected:
  void Prepare(const std::string& name) {
    dir_.emplace(name);
    StatusOr<corpus::BundleCase> c = corpus::CaseNamed(name);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    ASSERT_TRUE(corpus::WriteBundleCase(*c, *dir_ / "legacy").ok());
    StatusOr<translator::BundleTranslation> t =
        translator::TranslateBundle(*dir_ / "legacy", *dir_ / "pir");
    ASSERT_TRUE(t.ok()) << t.status().ToString();
  }

  // Applies `mutate` to the first op of rank `rank`'s job programs (startup excluded) it accepts;
  // returns the op's name, or "" when no op was accepted.
  std::string Mutate(int rank, const std::function<bool(newir::Operation&)>& mutate) {
    StatusOr<oldir::Bundle> bundle = oldir::ReadBundle(*dir_ / "pir");
    EXPECT_TRUE(bundle.ok());
    if (!bundle.ok()) return "";
    for (const oldir::BundleRank& r : bundle->ranks) {
      if (r.rank != rank) continue;
      for (const auto& [job, file] : r.programs) {
        const std::string path = oldir::RankFile(*dir_ / "pir", rank, file);
        StatusOr<std::string> text = ReadFile(path);
        EXPECT_TRUE(text.ok());
        if (!text.ok()) return "";
        StatusOr<newir::Program> program = newir::ReadPirJson(*text, path);
        EXPECT_TRUE(program.ok()) << program.status().ToString();
        if (!program.ok()) return "";
        for (newir::Operation& op : program->block()) {
          if (!mutate(op)) continue;
          EXPECT_TRUE(WriteFileAtomically(path, newir::WritePirJson(*program)).ok());
          return std::string(op.name());
        }
      }
    }
    return "";
  }

  StatusOr<ParityResult> Run() {
    return RunBundleParity(*dir_ / "legacy", *dir_ / "pir", BundleParityOptions{});
  }

  std::optional<ScratchDir> dir_;
};

TEST_F(BundleFaultTest, TheUnmutatedTranslationIsInParityAgainstItsDirectory) {
  Prepare("tp2_mlp");
  StatusOr<ParityResult> result = Run();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(result->report.parity()) << RenderMarkdown(result->report);
  EXPECT_EQ(result->report.new_program, *dir_ / "pir");
}

// With two ranks the only other peer of a send is the sender itself: refused at once, naming
// the op and the rank, in the new-IR run.
TEST_F(BundleFaultTest, ASendToItselfIsRefusedAtOnce) {
  Prepare("pp2_fthenb_mb2_mlp");
  const std::string mutated = Mutate(0, [](newir::Operation& op) {
    if (op.name() != "pd_op.p_send") return false;
    op.SetAttribute("peer", newir::Attribute::Int32(0));
    return true;
  });
  ASSERT_EQ(mutated, "pd_op.p_send");
  StatusOr<ParityResult> result = Run();
  ASSERT_FALSE(result.ok());
  const std::string message = result.status().ToString();
  EXPECT_NE(message.find("pd_op.p_send: peer 0 is this rank (ring 0, job forward, micro-batch 0, "
                         "step 1, op 6)"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("note: on rank 0"), std::string::npos) << message;
  EXPECT_NE(message.find("note: in the new-IR run"), std::string::npos) << message;
}

// Rank 0 sends its activations on the gradients' ring (the group [1, 0], where peer 0 is still rank
// 1), on which rank 1 never receives them: a hang, reported at once with what both ranks wait for.
TEST_F(BundleFaultTest, ASendOnTheWrongRingIsAHang) {
  Prepare("pp2_fthenb_mb2_mlp");
  const std::string mutated = Mutate(0, [](newir::Operation& op) {
    if (op.name() != "pd_op.p_send") return false;
    op.SetAttribute("ring_id", newir::Attribute::Int32(1));
    op.SetAttribute("peer", newir::Attribute::Int32(0));
    return true;
  });
  ASSERT_EQ(mutated, "pd_op.p_send");
  StatusOr<ParityResult> result = Run();
  ASSERT_FALSE(result.ok());
  const std::string message = result.status().ToString();
  EXPECT_EQ(result.status().code(), StatusCode::kInternal) << message;
  EXPECT_NE(message.find("hang: no rank can progress"), std::string::npos) << message;
  EXPECT_NE(message.find("rank 0 waits in pd_op.p_send to rank 1 (ring 1"), std::string::npos)
      << message;
  EXPECT_NE(message.find("in the new-IR run"), std::string::npos) << message;
}

// Both ranks reduce their first gradient with another reduction: they agree with each other, so
// the run completes, and the communication diff names the call on each rank.
TEST_F(BundleFaultTest, AnotherReductionOnEveryRankIsACommunicationDifference) {
  Prepare("dp2_mlp");
  for (int rank = 0; rank < 2; ++rank) {
    const std::string mutated = Mutate(rank, [](newir::Operation& op) {
      if (op.name() != "pd_op.all_reduce_") return false;
      op.SetAttribute("reduce_type", newir::Attribute::Int32(1));
      return true;
    });
    ASSERT_EQ(mutated, "pd_op.all_reduce_");
  }
  StatusOr<ParityResult> result = Run();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const ParityReport& report = result->report;
  EXPECT_FALSE(report.parity());
  ASSERT_EQ(report.communication.size(), 2u);
  for (const CommDiff& c : report.communication) {
    EXPECT_FALSE(c.equal);
    EXPECT_EQ(c.index, 0);
    EXPECT_EQ(c.old_records, c.new_records);
    EXPECT_NE(c.old_record.find("all_reduce sum float32 x3 ("), std::string::npos) << c.old_record;
    EXPECT_EQ(c.new_record.find("all_reduce sum"), std::string::npos) << c.new_record;
  }
  const std::string md = RenderMarkdown(report);
  EXPECT_NE(md.find("| 0 | 18 | 18 | DIFF at call 0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("Rank 1, call 0: legacy `all_reduce sum float32 x3 ("), std::string::npos)
      << md;
  EXPECT_NE(RenderJunit(report).find("name=\"communication\">\n      <failure message=\"call 0 "
                                     "differs\">"),
            std::string::npos);
}

TEST_F(BundleFaultTest, AFlippedTransposeYOnRank1IsTheFirstDivergenceOnRank1) {
  Prepare("tp2_mlp");
  // The first matmul of rank 1 multiplies by its column shard of the first weight, 4 x 4: flipped,
  // it still runs.
  const std::string mutated = Mutate(1, [&](newir::Operation& op) {
    if (op.name() != "pd_op.matmul") return false;
    op.SetAttribute("transpose_y", newir::Attribute::Bool(true));
    return true;
  });
  ASSERT_EQ(mutated, "pd_op.matmul");
  StatusOr<ParityResult> result = Run();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const ParityReport& report = result->report;
  EXPECT_FALSE(report.parity());
  ASSERT_TRUE(report.first_divergence.has_value()) << RenderMarkdown(report);
  const DivergenceReport& d = *report.first_divergence;
  EXPECT_EQ(d.rank, 1);
  EXPECT_EQ(d.step, 1);
  EXPECT_EQ(d.old_op.type, "matmul_v2");
  EXPECT_EQ(d.new_op.type, "pd_op.matmul");
  EXPECT_TRUE(d.inputs_matched);
  EXPECT_TRUE(d.has_metrics);
  EXPECT_GT(d.comparison.metrics.max_abs_diff, 0.0);
  EXPECT_NE(d.new_op.text.find("transpose_y:true"), std::string::npos) << d.new_op.text;
  EXPECT_NE(d.old_op.text.find("matmul_v2"), std::string::npos) << d.old_op.text;
  ASSERT_TRUE(report.isolation.has_value());
  EXPECT_EQ(report.isolation->verdict, IsolationReport::Verdict::kOpDiffers)
      << report.isolation->detail;
  const std::string md = RenderMarkdown(report);
  EXPECT_NE(md.find("## First divergence\n\nrank 1, step 1, micro-batch 0, job main: legacy "
                    "`matmul_v2`"),
            std::string::npos)
      << md;
}

}  // namespace
}  // namespace irm::diff
