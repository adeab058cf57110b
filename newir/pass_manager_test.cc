// Tests of the PassManager with fake passes and an injected fake verifier: running order and the
// change report, IR printing before/after (by name, all, after change, after failure), dump-dir
// files and their names, verify-each (input and after every pass, naming the pass that broke the
// IR), pass failures, pipelines added from text, and the timing report.
#include "newir/pass_manager.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "common/file_io.h"
#include "newir/builder.h"
#include "newir/parser.h"
#include "newir/printer.h"

namespace irm::newir {
namespace {

// What each fake pass does to the program.
enum class Action {
  kNothing,       // reports no change
  kAddParameter,  // appends a builtin.parameter named after the pass; reports a change
  kBreak,         // appends an op the fake verifier rejects; reports a change
  kFail,          // returns an error
};

class FakePass : public Pass {
 public:
  FakePass(std::string name, Action action, std::vector<std::string>* log)
      : name_(std::move(name)), action_(action), log_(log) {}
  std::string_view name() const override { return name_; }
  StatusOr<IrChange> Run(Program& program) override {
    if (log_ != nullptr) log_->push_back(name_);
    Builder builder(program.block());
    switch (action_) {
      case Action::kNothing:
        return IrChange::kUnchanged;
      case Action::kAddParameter:
        builder.Create("builtin.parameter", {}, {Type::DenseTensor(Type::F32(), {2})},
                       {{"parameter_name", Attribute::String(name_)}});
        return IrChange::kChanged;
      case Action::kBreak:
        builder.Create("test.broken", {}, {});
        return IrChange::kChanged;
      case Action::kFail:
        return Status(StatusCode::kInvalid, Location{}.With("op 7"), "cannot lower this");
    }
    return IrChange::kUnchanged;
  }

 private:
  std::string name_;
  Action action_;
  std::vector<std::string>* log_;
};

// Rejects a program holding a test.broken op; counts its calls.
struct FakeVerifier {
  int* calls;
  Status operator()(const Program& program) const {
    ++*calls;
    for (Operation& op : program.block()) {
      if (op.name() == "test.broken") {
        return Status(StatusCode::kInvalid, LocationOf(op), "test.broken is never valid")
            .AddNote("see the op table");
      }
    }
    return Status::Ok();
  }
};

const char kInputText[] =
    "{\n"
    "    (%0) = \"builtin.parameter\" () {parameter_name:\"w\"} : () -> builtin.tensor<2xf32>\n"
    "}\n";

Program Input() {
  StatusOr<Program> program = ParseProgram(kInputText);
  EXPECT_TRUE(program.ok()) << program.status().ToString();
  return std::move(program).value();
}

std::string ParameterLine(int index, const std::string& name) {
  return "    (%" + std::to_string(index) + ") = \"builtin.parameter\" () {parameter_name:\"" +
         name + "\"} : () -> builtin.tensor<2xf32>\n";
}

// The program after the passes named in `added` appended their parameters.
std::string ProgramWith(const std::vector<std::string>& added) {
  std::string text = "{\n" + ParameterLine(0, "w");
  for (size_t i = 0; i < added.size(); ++i)
    text += ParameterLine(static_cast<int>(i) + 1, added[i]);
  return text + "}\n";
}

std::string Dump(const std::string& when, const std::string& text) {
  return "// -----// IR Dump " + when + " //----- //\n" + text + "\n";
}

struct Harness {
  std::vector<std::string> log;
  int verifier_calls = 0;
  std::ostringstream ir;
  PassManagerOptions options;

  Harness() {
    options.verifier = FakeVerifier{&verifier_calls};
    options.ir_stream = &ir;
  }
  // Builds a manager over `options` with passes "name:action" in order.
  PassManager Make(const std::vector<std::pair<std::string, Action>>& passes) {
    PassManager manager(options);
    for (const auto& [name, action] : passes) {
      manager.AddPass(std::make_unique<FakePass>(name, action, &log));
    }
    return manager;
  }
};

TEST(PassManagerTest, RunsPassesInOrderAndReportsChange) {
  Harness h;
  PassManager manager = h.Make({{"a", Action::kNothing}, {"b", Action::kAddParameter}});
  EXPECT_EQ(manager.size(), 2u);
  EXPECT_EQ(manager.PipelineNames(), "a,b");
  Program program = Input();
  StatusOr<IrChange> change = manager.Run(program);
  ASSERT_TRUE(change.ok()) << change.status().ToString();
  EXPECT_EQ(*change, IrChange::kChanged);
  EXPECT_EQ(h.log, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(PrintProgram(program), ProgramWith({"b"}));
  EXPECT_EQ(h.ir.str(), "");  // nothing asked to print

  Harness quiet;
  PassManager unchanged = quiet.Make({{"a", Action::kNothing}});
  Program other = Input();
  change = unchanged.Run(other);
  ASSERT_TRUE(change.ok());
  EXPECT_EQ(*change, IrChange::kUnchanged);
}

TEST(PassManagerTest, EmptyPipeline) {
  Harness h;
  PassManager manager = h.Make({});
  Program program = Input();
  StatusOr<IrChange> change = manager.Run(program);
  ASSERT_TRUE(change.ok());
  EXPECT_EQ(*change, IrChange::kUnchanged);
  EXPECT_EQ(h.verifier_calls, 1);  // the input is still verified
}

TEST(PassManagerTest, PrintBeforeNamedPass) {
  Harness h;
  h.options.print_ir_before = {"b"};
  PassManager manager = h.Make({{"a", Action::kAddParameter}, {"b", Action::kAddParameter}});
  Program program = Input();
  ASSERT_TRUE(manager.Run(program).ok());
  EXPECT_EQ(h.ir.str(), Dump("Before b", ProgramWith({"a"})));
}

TEST(PassManagerTest, PrintAfterNamedPassEveryRunOfIt) {
  Harness h;
  h.options.print_ir_after = {"a"};
  PassManager manager =
      h.Make({{"a", Action::kAddParameter}, {"b", Action::kAddParameter}, {"a", Action::kNothing}});
  Program program = Input();
  ASSERT_TRUE(manager.Run(program).ok());
  EXPECT_EQ(h.ir.str(),
            Dump("After a", ProgramWith({"a"})) + Dump("After a", ProgramWith({"a", "b"})));
}

TEST(PassManagerTest, PrintBeforeAllAndAfterAll) {
  Harness h;
  h.options.print_ir_before_all = true;
  h.options.print_ir_after_all = true;
  PassManager manager = h.Make({{"a", Action::kNothing}, {"b", Action::kAddParameter}});
  Program program = Input();
  ASSERT_TRUE(manager.Run(program).ok());
  EXPECT_EQ(h.ir.str(), Dump("Before a", ProgramWith({})) + Dump("After a", ProgramWith({})) +
                            Dump("Before b", ProgramWith({})) +
                            Dump("After b", ProgramWith({"b"})));
}

TEST(PassManagerTest, PrintAfterChangeAlonePrintsAfterEveryChangingPass) {
  Harness h;
  h.options.print_ir_after_change = true;
  PassManager manager =
      h.Make({{"a", Action::kNothing}, {"b", Action::kAddParameter}, {"c", Action::kAddParameter}});
  Program program = Input();
  ASSERT_TRUE(manager.Run(program).ok());
  EXPECT_EQ(h.ir.str(),
            Dump("After b", ProgramWith({"b"})) + Dump("After c", ProgramWith({"b", "c"})));
}

TEST(PassManagerTest, PrintAfterChangeFiltersNamedAndAll) {
  Harness named;
  named.options.print_ir_after = {"a", "c"};
  named.options.print_ir_after_change = true;
  PassManager manager = named.Make(
      {{"a", Action::kNothing}, {"b", Action::kAddParameter}, {"c", Action::kAddParameter}});
  Program program = Input();
  ASSERT_TRUE(manager.Run(program).ok());
  EXPECT_EQ(named.ir.str(), Dump("After c", ProgramWith({"b", "c"})));

  Harness all;
  all.options.print_ir_after_all = true;
  all.options.print_ir_after_change = true;
  PassManager all_manager = all.Make({{"a", Action::kNothing}, {"b", Action::kAddParameter}});
  Program other = Input();
  ASSERT_TRUE(all_manager.Run(other).ok());
  EXPECT_EQ(all.ir.str(), Dump("After b", ProgramWith({"b"})));
}

TEST(PassManagerTest, PrintNamesMustBeInThePipeline) {
  Harness h;
  h.options.print_ir_after = {"dcee"};
  PassManager manager = h.Make({{"dce", Action::kNothing}, {"canonicalize", Action::kNothing}});
  Program program = Input();
  StatusOr<IrChange> change = manager.Run(program);
  ASSERT_FALSE(change.ok());
  EXPECT_EQ(change.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(change.status().ToString(),
            "error: cannot print the IR after pass 'dcee': it is not in the pipeline "
            "'dce,canonicalize'");
  EXPECT_TRUE(h.log.empty());

  Harness before;
  before.options.print_ir_before = {"cse"};
  PassManager before_manager = before.Make({{"dce", Action::kNothing}});
  change = before_manager.Run(program);
  ASSERT_FALSE(change.ok());
  EXPECT_EQ(change.status().ToString(),
            "error: cannot print the IR before pass 'cse': it is not in the pipeline 'dce'");
}

TEST(PassManagerTest, PrintsWithPrintOptions) {
  Harness h;
  h.options.print_ir_after_all = true;
  h.options.print_options.style = TypeStyle::kCurrent;
  PassManager manager = h.Make({{"a", Action::kNothing}});
  Program program = Input();
  ASSERT_TRUE(manager.Run(program).ok());
  EXPECT_EQ(h.ir.str(), Dump("After a",
                             "{\n    (%0) = \"builtin.parameter\" () {parameter_name:\"w\"} : () "
                             "-> tensor<2xf32>\n}\n"));
}

TEST(PassManagerTest, NullStreamPrintsNothing) {
  Harness h;
  h.options.print_ir_after_all = true;
  h.options.ir_stream = nullptr;
  PassManager manager = h.Make({{"a", Action::kAddParameter}});
  Program program = Input();
  EXPECT_TRUE(manager.Run(program).ok());
}

// ---- verify-each ------------------------------------------------------------------------------

TEST(PassManagerTest, VerifiesTheInputAndAfterEveryPass) {
  Harness h;
  PassManager manager =
      h.Make({{"a", Action::kNothing}, {"b", Action::kAddParameter}, {"c", Action::kNothing}});
  Program program = Input();
  ASSERT_TRUE(manager.Run(program).ok());
  EXPECT_EQ(h.verifier_calls, 4);

  Harness off;
  off.options.verify_each = false;
  PassManager unverified = off.Make({{"a", Action::kNothing}, {"b", Action::kBreak}});
  Program other = Input();
  EXPECT_TRUE(unverified.Run(other).ok());  // the broken op goes unnoticed, as asked
  EXPECT_EQ(off.verifier_calls, 0);
}

TEST(PassManagerTest, VerifierFailureNamesThePass) {
  Harness h;
  PassManager manager = h.Make(
      {{"a", Action::kAddParameter}, {"lower-dist", Action::kBreak}, {"c", Action::kNothing}});
  Program program = Input();
  StatusOr<IrChange> change = manager.Run(program);
  ASSERT_FALSE(change.ok());
  EXPECT_EQ(change.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(change.status().ToString(),
            "op 2 (test.broken): error: the IR is invalid after pass 'lower-dist': test.broken "
            "is never valid\n"
            "  note: see the op table");
  EXPECT_EQ(h.log, (std::vector<std::string>{"a", "lower-dist"}));  // c never ran
  EXPECT_EQ(h.verifier_calls, 3);
  EXPECT_EQ(h.ir.str(), "");  // print_ir_after_failure is off
}

TEST(PassManagerTest, InvalidInputStopsBeforeTheFirstPass) {
  Harness h;
  PassManager manager = h.Make({{"a", Action::kNothing}});
  Program program = Input();
  Builder(program.block()).Create("test.broken", {}, {});
  StatusOr<IrChange> change = manager.Run(program);
  ASSERT_FALSE(change.ok());
  EXPECT_EQ(change.status().ToString(),
            "op 1 (test.broken): error: the input IR is invalid: test.broken is never valid\n"
            "  note: see the op table");
  EXPECT_TRUE(h.log.empty());
}

TEST(PassManagerTest, MissingVerifier) {
  Harness h;
  h.options.verifier = nullptr;
  PassManager manager = h.Make({{"a", Action::kNothing}});
  Program program = Input();
  StatusOr<IrChange> change = manager.Run(program);
  ASSERT_FALSE(change.ok());
  EXPECT_EQ(change.status().ToString(), "error: verify_each is set but no verifier is given");
}

TEST(PassManagerTest, PassFailureStopsTheRunWithANote) {
  Harness h;
  PassManager manager = h.Make(
      {{"a", Action::kAddParameter}, {"lower", Action::kFail}, {"c", Action::kAddParameter}});
  Program program = Input();
  StatusOr<IrChange> change = manager.Run(program);
  ASSERT_FALSE(change.ok());
  EXPECT_EQ(change.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(change.status().ToString(),
            "op 7: error: cannot lower this\n"
            "  note: in pass 'lower' (2 of 3 in the pipeline)");
  EXPECT_EQ(h.log, (std::vector<std::string>{"a", "lower"}));
  EXPECT_EQ(h.verifier_calls, 2);  // the input and after a
}

TEST(PassManagerTest, PrintAfterFailure) {
  Harness failing;
  failing.options.print_ir_after_failure = true;
  failing.options.print_ir_after_all = true;
  PassManager manager = failing.Make({{"a", Action::kAddParameter}, {"lower", Action::kFail}});
  Program program = Input();
  EXPECT_FALSE(manager.Run(program).ok());
  EXPECT_EQ(failing.ir.str(),
            Dump("After a", ProgramWith({"a"})) + Dump("After lower Failed", ProgramWith({"a"})));

  Harness breaking;
  breaking.options.print_ir_after_failure = true;
  PassManager breaking_manager = breaking.Make({{"b", Action::kBreak}});
  Program other = Input();
  EXPECT_FALSE(breaking_manager.Run(other).ok());
  EXPECT_EQ(breaking.ir.str(),
            Dump("After b Failed",
                 "{\n" + ParameterLine(0, "w") + "    () = \"test.broken\" () {} : () -> \n}\n"));
}

// ---- dump-dir ---------------------------------------------------------------------------------

class DumpDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("irm_pass_dump_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  std::vector<std::string> Files(const std::filesystem::path& dir) const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }
  std::string Read(const std::filesystem::path& path) const {
    StatusOr<std::string> text = ReadFile(path.string());
    return text.ok() ? *text : "UNREADABLE: " + text.status().ToString();
  }

  std::filesystem::path root_;
};

TEST_F(DumpDirTest, WritesInputAndOneFilePerPass) {
  Harness h;
  const std::filesystem::path dir = root_ / "nested" / "dumps";  // created as needed
  h.options.dump_dir = dir.string();
  PassManager manager = h.Make({{"a", Action::kAddParameter},
                                {"b", Action::kNothing},
                                {"a", Action::kAddParameter},
                                {"odd name/x", Action::kNothing}});
  Program program = Input();
  ASSERT_TRUE(manager.Run(program).ok());
  EXPECT_EQ(Files(dir), (std::vector<std::string>{"00_input.pir", "01_a.pir", "02_b.pir",
                                                  "03_a.pir", "04_odd_name_x.pir"}));
  EXPECT_EQ(Read(dir / "00_input.pir"), kInputText);
  EXPECT_EQ(Read(dir / "01_a.pir"), ProgramWith({"a"}));
  EXPECT_EQ(Read(dir / "02_b.pir"), ProgramWith({"a"}));
  EXPECT_EQ(Read(dir / "03_a.pir"), ProgramWith({"a", "a"}));
  EXPECT_EQ(Read(dir / "04_odd_name_x.pir"), ProgramWith({"a", "a"}));
  // The files are parseable programs.
  EXPECT_TRUE(ParseProgram(Read(dir / "03_a.pir")).ok());
}

TEST_F(DumpDirTest, NumbersWidenPastNinetyNinePasses) {
  Harness h;
  h.options.dump_dir = root_.string();
  h.options.verify_each = false;
  std::vector<std::pair<std::string, Action>> passes(100, {"noop", Action::kNothing});
  PassManager manager = h.Make(passes);
  Program program = Input();
  ASSERT_TRUE(manager.Run(program).ok());
  const std::vector<std::string> files = Files(root_);
  ASSERT_EQ(files.size(), 101u);
  EXPECT_EQ(files.front(), "000_input.pir");
  EXPECT_EQ(files[1], "001_noop.pir");
  EXPECT_EQ(files.back(), "100_noop.pir");
}

TEST_F(DumpDirTest, BrokenAndFailedPassesAreDumped) {
  Harness breaking;
  breaking.options.dump_dir = (root_ / "break").string();
  PassManager manager = breaking.Make({{"b", Action::kBreak}, {"c", Action::kNothing}});
  Program program = Input();
  EXPECT_FALSE(manager.Run(program).ok());
  // The IR that failed verification is there to look at.
  EXPECT_EQ(Files(root_ / "break"), (std::vector<std::string>{"00_input.pir", "01_b.pir"}));
  EXPECT_EQ(Read(root_ / "break" / "01_b.pir"),
            "{\n" + ParameterLine(0, "w") + "    () = \"test.broken\" () {} : () -> \n}\n");

  Harness failing;
  failing.options.dump_dir = (root_ / "fail").string();
  PassManager failing_manager = failing.Make({{"a", Action::kAddParameter}, {"f", Action::kFail}});
  Program other = Input();
  EXPECT_FALSE(failing_manager.Run(other).ok());
  EXPECT_EQ(Files(root_ / "fail"),
            (std::vector<std::string>{"00_input.pir", "01_a.pir", "02_f.failed.pir"}));
}

TEST_F(DumpDirTest, FolderThatCannotBeCreated) {
  std::filesystem::create_directories(root_);
  ASSERT_TRUE(WriteFileAtomically((root_ / "file").string(), "x").ok());
  Harness h;
  h.options.dump_dir = (root_ / "file" / "dumps").string();
  PassManager manager = h.Make({{"a", Action::kNothing}});
  Program program = Input();
  StatusOr<IrChange> change = manager.Run(program);
  ASSERT_FALSE(change.ok());
  EXPECT_EQ(change.status().code(), StatusCode::kIoError);
  EXPECT_EQ(change.status().ToString(),
            (root_ / "file" / "dumps").string() +
                ": error: cannot create the dump folder: Not a directory");
  EXPECT_TRUE(h.log.empty());
}

// ---- pipelines from text ----------------------------------------------------------------------

TEST(PassManagerTest, AddPipelineBuildsPassesWithTheirOptions) {
  PassRegistry registry;
  std::vector<std::string> log;
  ASSERT_TRUE(registry
                  .Register({.name = "add",
                             .summary = "adds a parameter",
                             .options = {{.name = "times", .default_value = int64_t{1}}},
                             .factory =
                                 [&log](const PassOptions& options) {
                                   return std::make_unique<FakePass>(
                                       "add" + std::to_string(options.GetInt("times")),
                                       Action::kAddParameter, &log);
                                 }})
                  .ok());
  PassManagerOptions options;
  options.verify_each = false;
  PassManager manager(options);
  ASSERT_TRUE(manager.AddPipeline("add,add{times=3}", registry).ok());
  EXPECT_EQ(manager.PipelineNames(), "add1,add3");
  // A bad pipeline adds nothing.
  Status bad = manager.AddPipeline("add,ad", registry, "--passes");
  EXPECT_EQ(bad.ToString(), "--passes:1:5: error: unknown pass 'ad' (did you mean 'add'?)");
  EXPECT_EQ(manager.size(), 2u);
  Program program = Input();
  ASSERT_TRUE(manager.Run(program).ok());
  EXPECT_EQ(log, (std::vector<std::string>{"add1", "add3"}));
}

TEST(PassManagerTest, AddPipelineFromTheGlobalRegistry) {
  PassManagerOptions options;
  options.verify_each = false;
  PassManager manager(options);
  ASSERT_TRUE(manager.AddPipeline("dce,canonicalize{max-iterations=2}").ok());
  EXPECT_EQ(manager.PipelineNames(), "dce,canonicalize");
}

// ---- timing -----------------------------------------------------------------------------------

TEST(PassManagerTest, TimingHasOneEntryPerPassRun) {
  Harness h;
  PassManager manager = h.Make({{"a", Action::kNothing}, {"b", Action::kNothing}});
  Program program = Input();
  ASSERT_TRUE(manager.Run(program).ok());
  const PassTimingReport& timing = manager.timing();
  ASSERT_EQ(timing.passes.size(), 2u);
  EXPECT_EQ(timing.passes[0].pass, "a");
  EXPECT_EQ(timing.passes[1].pass, "b");
  EXPECT_GE(timing.total, timing.passes[0].wall + timing.passes[1].wall + timing.verification);
  // A second run starts a fresh report.
  ASSERT_TRUE(manager.Run(program).ok());
  EXPECT_EQ(manager.timing().passes.size(), 2u);
}

TEST(PassManagerTest, TimingReportText) {
  using std::chrono::microseconds;
  PassTimingReport report;
  report.passes = {{"dce", microseconds(10000)}, {"canonicalize", microseconds(2000)}};
  report.verification = microseconds(300);
  report.total = microseconds(12300);
  EXPECT_EQ(report.ToString(),
            "===-------------------------------------------------------------------------===\n"
            "                      ... Pass execution timing report ...\n"
            "===-------------------------------------------------------------------------===\n"
            "  Total Execution Time: 0.0123 seconds\n"
            "\n"
            "  ----Wall Time----  ----Name----\n"
            "    0.0100 ( 81.3%)  dce\n"
            "    0.0020 ( 16.3%)  canonicalize\n"
            "    0.0003 (  2.4%)  (verifier)\n"
            "    0.0123 (100.0%)  Total\n");
  PassTimingReport empty;
  EXPECT_EQ(empty.ToString(),
            "===-------------------------------------------------------------------------===\n"
            "                      ... Pass execution timing report ...\n"
            "===-------------------------------------------------------------------------===\n"
            "  Total Execution Time: 0.0000 seconds\n"
            "\n"
            "  ----Wall Time----  ----Name----\n"
            "    0.0000 (  0.0%)  Total\n");
}

}  // namespace
}  // namespace irm::newir
