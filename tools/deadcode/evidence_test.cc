#include "tools/deadcode/evidence.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/file_io.h"
#include "tools/deadcode/report_test_support.h"

namespace irm::deadcode {
namespace {

// A fresh folder per test (ctest runs the tests of this binary in parallel processes).
std::string TempDir(const std::string& test) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("irm_deadcode_evidence_" + test);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::string Write(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name;
  EXPECT_TRUE(WriteFileAtomically(path, text).ok());
  return path;
}

std::vector<std::string> Refs(const std::vector<Evidence>& evidence) {
  std::vector<std::string> refs;
  for (const Evidence& e : evidence) refs.push_back(e.kind + " " + e.ref);
  return refs;
}

TEST(DeadcodeEvidenceTest, LooksUpByLegacyAndTwinOrByTwinAlone) {
  StatusOr<EvidenceManifest> manifest = LoadEvidence(ReportTestdata("sample.evidence.json"));
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  ASSERT_EQ(manifest->entries.size(), 6u);
  EXPECT_EQ(manifest->entries[1].pointer, "/entries/1");
  EXPECT_EQ(manifest->entries[1].legacy, "");

  const std::string twin = "pkg.engine.Engine._pir_build_program";
  // Entry 0 names this legacy unit, entry 1 covers every legacy unit of the twin; the test both
  // name is given once.
  EXPECT_EQ(Refs(manifest->Lookup("pkg.engine.Engine._build_program", twin)),
            (std::vector<std::string>{"parity parity/gpt.json",
                                      "test test/auto_parallel/pir/test_engine_api.py",
                                      "coverage coverage/pir.json"}));
  const std::vector<Evidence> first = manifest->Lookup("pkg.engine.Engine._build_program", twin);
  EXPECT_EQ(first[0].detail, "gpt 3 steps bit-identical");
  EXPECT_EQ(Refs(manifest->Lookup("pkg.engine.Engine._other", twin)),
            (std::vector<std::string>{"coverage coverage/pir.json",
                                      "test test/auto_parallel/pir/test_engine_api.py"}));
  EXPECT_EQ(Refs(manifest->Lookup("", twin)), Refs(manifest->Lookup("pkg.x", twin)));
  EXPECT_TRUE(manifest->Lookup("pkg.engine.Engine._build_program", "pkg.nothing").empty());
  // The mismatching parity report is dropped, the manual review stays.
  EXPECT_EQ(
      Refs(manifest->Lookup("paddle::framework::Executor::Run", "::pir::Interpreter<float>::Run")),
      (std::vector<std::string>{"manual https://example.org/review/12"}));
  EXPECT_TRUE(manifest->Lookup("", "::pir::Interpreter<float>::Run").empty());
  EXPECT_TRUE(manifest->Lookup("", "pkg.passes.<locals>.fuse_pir").empty());
}

TEST(DeadcodeEvidenceTest, ParityCountsOnlyWhenTheReportShowsIt) {
  const std::string path = ReportTestdata("sample.evidence.json");
  StatusOr<EvidenceManifest> manifest = LoadEvidence(path);
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  std::vector<std::string> messages;
  for (const FileProblem& p : manifest->problems) {
    EXPECT_EQ(p.file, path);
    EXPECT_EQ(p.line, 0);
    messages.push_back(p.message);
  }
  const std::string dropped = "; the evidence does not count";
  const std::string unrelated = "; unrelated evidence, not used";
  EXPECT_EQ(messages,
            (std::vector<std::string>{
                "evidence /entries/2/evidence/0/ref: the parity report 'parity/mismatch.json' "
                "says mismatch" +
                    dropped,
                "evidence /entries/3/evidence/0/ref: cannot read the parity report "
                "'parity/missing.json' (cannot open: No such file or directory)" +
                    dropped,
                "evidence /entries/3/evidence/1/ref: the parity report "
                "'parity/contradicting.json' says parity but counts 2 mismatched tensors and 0 "
                "ranks whose communication differs" +
                    dropped,
                "evidence /entries/3/evidence/2/ref: the parity report "
                "'parity/compares_nothing.json' compares nothing" +
                    dropped,
                "evidence /entries/3/evidence/3/ref: 'parity/not_a_report.json' is not a parity "
                "report (format \"ir-migrate-parity-report\", version 1)" +
                    dropped,
                "evidence /entries/3/evidence/4/ref: the parity report 'parity/garbage.json' is "
                "not JSON" +
                    dropped,
                "evidence /entries/4/evidence/0/ref: the parity report 'parity/fthenb.json' "
                "covers pkg.passes.FThenBPass._partial_pir_programs, not "
                "pkg.passes.OneFOneBPass._partial_pir_programs" +
                    unrelated,
                "evidence /entries/4/evidence/1/ref: the parity report "
                "'parity/covers_nothing.json' names no twin (it has no \"covers\")" +
                    unrelated,
                "evidence /entries/4/evidence/2/ref: the parity report "
                "'parity/covers_garbled.json' has a \"covers\" that is not a list of twin names" +
                    unrelated,
            }));
}

// The integrity rule: a passing parity report is evidence only for the twins it says it covers.
// An FThenB run never verifies the 1F1B twin; the same report verifies the FThenB twin it covers.
TEST(DeadcodeEvidenceTest, AParityReportCountsOnlyForTheTwinsItCovers) {
  StatusOr<EvidenceManifest> manifest = LoadEvidence(ReportTestdata("sample.evidence.json"));
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  const std::string one_f_one_b = "pkg.passes.OneFOneBPass._partial_pir_programs";
  const std::string fthenb = "pkg.passes.FThenBPass._partial_pir_programs";
  // Not covered: only the test counts; the three passing reports are listed as unrelated.
  EXPECT_EQ(Refs(manifest->Lookup("pkg.passes.OneFOneBPass._partial_programs", one_f_one_b)),
            std::vector<std::string>{"test test/auto_parallel/pir/test_1f1b.py"});
  const EvidenceEntry& entry = manifest->entries[4];
  EXPECT_EQ(Refs(entry.unrelated), (std::vector<std::string>{"parity parity/fthenb.json",
                                                             "parity parity/covers_nothing.json",
                                                             "parity parity/covers_garbled.json"}));
  EXPECT_EQ(entry.unrelated[0].detail, "an FThenB run, not 1F1B");
  // Covered: the same report counts for the twin it names.
  EXPECT_EQ(Refs(manifest->Lookup("pkg.passes.FThenBPass._partial_programs", fthenb)),
            std::vector<std::string>{"parity parity/fthenb.json"});
  EXPECT_TRUE(manifest->entries[5].unrelated.empty());
  // gpt.json covers the engine's twin: it counts there.
  EXPECT_TRUE(manifest->entries[0].unrelated.empty());
  EXPECT_EQ(manifest->entries[0].evidence[0].ref, "parity/gpt.json");
}

TEST(DeadcodeEvidenceTest, AParityReportWithoutVerdictOrSummaryDoesNotCount) {
  const std::string dir = TempDir("verdict");
  Write(dir, "no_verdict.json", R"({"format": "ir-migrate-parity-report", "version": 1})");
  Write(dir, "no_summary.json",
        R"({"format": "ir-migrate-parity-report", "version": 1, "verdict": "parity"})");
  Write(dir, "comm.json", R"({"format": "ir-migrate-parity-report",
      "version": 1, "verdict": "parity",
      "summary": {"compared": 3, "mismatched": 0, "communication_mismatched": 1}})");
  const std::string good = Write(dir, "good.json", R"({"format": "ir-migrate-parity-report",
      "version": 1, "verdict": "parity", "covers": ["a.f_pir"],
      "summary": {"compared": 3, "mismatched": 0, "communication_mismatched": 0}})");
  // An absolute ref is read where it is.
  const std::string manifest_path = Write(dir, "m.json",
                                          R"({"schema": "ir-deadcode-evidence/1",
      "entries": [{"twin": "a.f_pir", "evidence": [
        {"kind": "parity", "ref": "no_verdict.json"}, {"kind": "parity", "ref": "no_summary.json"},
        {"kind": "parity", "ref": "comm.json"}, {"kind": "parity", "ref": ")" +
                                              good + R"("}]}]})");
  StatusOr<EvidenceManifest> manifest = LoadEvidence(manifest_path);
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  ASSERT_EQ(manifest->problems.size(), 3u);
  EXPECT_EQ(manifest->problems[0].message,
            "evidence /entries/0/evidence/0/ref: the parity report 'no_verdict.json' has no "
            "verdict \"parity\" or \"mismatch\"; the evidence does not count");
  EXPECT_EQ(manifest->problems[1].message,
            "evidence /entries/0/evidence/1/ref: the parity report 'no_summary.json' has no "
            "summary of what it compared; the evidence does not count");
  EXPECT_EQ(manifest->problems[2].message,
            "evidence /entries/0/evidence/2/ref: the parity report 'comm.json' says parity but "
            "counts 0 mismatched tensors and 1 ranks whose communication differs; the evidence "
            "does not count");
  EXPECT_EQ(Refs(manifest->Lookup("a.f", "a.f_pir")), std::vector<std::string>{"parity " + good});
}

TEST(DeadcodeEvidenceTest, NamesArePythonQualnamesOrCppQualifiedNames) {
  const std::string dir = TempDir("names");
  const auto load = [&](const std::string& twin) {
    return LoadEvidence(Write(dir, "m.json",
                              R"({"schema": "ir-deadcode-evidence/1", "entries": [{"twin": ")" +
                                  twin + R"(", "evidence": [{"kind": "test", "ref": "t"}]}]})"));
  };
  for (const std::string ok :
       {"f", "pkg.mod.Class._pir_run", "outer.<locals>.inner", "pir::Program", "::pir::Foo::Run",
        "ns::Foo<int, Bar<T>>::Run", "ns::Foo::~Foo", "ns::Foo::operator()", "pkg.naïve",
        "ir::Run(const pir::Program &)", "REGISTER_IR_PASS(fuse_gemm)"}) {
    StatusOr<EvidenceManifest> manifest = load(ok);
    EXPECT_TRUE(manifest.ok()) << ok << ": " << manifest.status().ToString();
  }
  for (const std::string bad : {"a..b", "pir:Foo", "pir::", "1abc", "pkg.<locals", "a b",
                                "ns::Foo<int", "pkg.f()", "REGISTER(a b)", "f(x"}) {
    StatusOr<EvidenceManifest> manifest = load(bad);
    ASSERT_FALSE(manifest.ok()) << bad;
    EXPECT_EQ(manifest.status().location().detail, "/entries/0/twin");
    EXPECT_EQ(manifest.status().message(),
              "'" + bad +
                  "' is neither a Python qualname (pkg.mod.Class.method), a C++ qualified name "
                  "(ns::Class::method, with its parameter types for an overload) nor a "
                  "registration (MACRO(name))");
  }
}

TEST(DeadcodeEvidenceTest, ErrorsNameTheFileAndTheJsonPointer) {
  struct Case {
    std::string text;
    std::string message;
  };
  const std::string head = R"({"schema": "ir-deadcode-evidence/1", "entries": )";
  const std::vector<Case> cases = {
      {"[", "error: evidence: not valid JSON"},
      {"[]", "/: error: expected an object, found an array"},
      {R"({"schema": "ir-deadcode-evidence/1"})", "/: error: missing key 'entries'"},
      {R"({"schema": "ir-deadcode-evidence/2", "entries": []})",
       "/schema: error: 'ir-deadcode-evidence/2' is not \"ir-deadcode-evidence/1\""},
      {head + "{}}", "/entries: error: expected an array, found an object"},
      {head + R"([{"evidence": []}]})", "/entries/0: error: missing key 'twin'"},
      {head + R"([{"twin": "a.b", "evidence": [], "why": 1}]})",
       "/entries/0/why: error: unknown key 'why'"},
      {head + R"([{"twin": 3, "evidence": []}]})",
       "/entries/0/twin: error: expected a string, found an integer"},
      {head + R"([{"legacy": "a.b", "twin": "a.b", "evidence": []}]})",
       "/entries/0: error: legacy and twin are the same unit 'a.b'"},
      {head + R"([{"legacy": "", "twin": "a.b", "evidence": []}]})",
       "/entries/0/legacy: error: expected a non-empty string"},
      {head + R"([{"twin": "a.b", "evidence": []}]})",
       "/entries/0/evidence: error: an entry names at least one evidence"},
      {head + R"([{"twin": "a.b", "evidence": {}}]})",
       "/entries/0/evidence: error: expected an array, found an object"},
      {head + R"([{"twin": "a.b", "evidence": [{"kind": "rumour", "ref": "x"}]}]})",
       "/entries/0/evidence/0/kind: error: 'rumour' is not an evidence kind (parity, test, "
       "coverage, manual)"},
      {head + R"([{"twin": "a.b", "evidence": [{"kind": "test", "ref": ""}]}]})",
       "/entries/0/evidence/0/ref: error: expected a non-empty string"},
      {head + R"([{"twin": "a.b", "evidence": [{"kind": "test", "ref": "t", "detail": 3}]}]})",
       "/entries/0/evidence/0/detail: error: expected a string, found an integer"},
      {head + R"([{"twin": "a.b", "evidence": [{"kind": "test"}]}]})",
       "/entries/0/evidence/0: error: missing key 'ref'"},
      {head + R"([{"twin": "a.b", "evidence": [{"kind": "manual", "ref": "r"}]}]})",
       "/entries/0/evidence/0: error: manual evidence says in its detail who checked what"},
  };
  const std::string dir = TempDir("errors");
  for (const Case& c : cases) {
    const std::string path = Write(dir, "m.json", c.text);
    StatusOr<EvidenceManifest> manifest = LoadEvidence(path);
    ASSERT_FALSE(manifest.ok()) << c.text;
    EXPECT_EQ(manifest.status().ToString(), path + ": " + c.message) << c.text;
  }
  StatusOr<EvidenceManifest> missing = LoadEvidence(dir + "/none.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "cannot open: No such file or directory");
}

// Bad input never crashes: every value of the sample manifest, in turn, replaced by a value of
// each JSON type; the parity reports it names are copied beside it.
TEST(DeadcodeEvidenceTest, NoManifestMakesTheLoaderThrow) {
  const std::string dir = TempDir("mutations");
  std::filesystem::copy(ReportTestdata("parity"), dir + "/parity");
  StatusOr<std::string> text = ReadFile(ReportTestdata("sample.evidence.json"));
  ASSERT_TRUE(text.ok());
  const nlohmann::ordered_json sample = nlohmann::ordered_json::parse(*text);
  const nlohmann::ordered_json leaves = sample.flatten();
  const std::vector<nlohmann::ordered_json> replacements = {nullptr,
                                                            true,
                                                            -1,
                                                            2.5,
                                                            "",
                                                            "a.b",
                                                            nlohmann::ordered_json::array(),
                                                            nlohmann::ordered_json::object()};
  int refused = 0;
  for (const auto& [pointer, value] : leaves.items()) {
    for (const auto& replacement : replacements) {
      nlohmann::ordered_json doc = sample;
      doc[nlohmann::ordered_json::json_pointer(pointer)] = replacement;
      const std::string path = Write(dir, "m.json", doc.dump());
      EXPECT_NO_THROW({
        StatusOr<EvidenceManifest> manifest = LoadEvidence(path);
        refused += manifest.ok() ? 0 : 1;
      }) << pointer;
    }
  }
  EXPECT_GT(refused, 0);
}

// A manifest nesting 100,000 levels is refused before it is parsed (nlohmann's copies and
// comparisons recurse once per level), located at the first bracket past the bound.
TEST(DeadcodeEvidenceTest, DeeplyNestedManifestIsRefused) {
  const std::string dir = TempDir("deep");
  const std::string path = Write(
      dir, "m.json", "{\"schema\": " + std::string(100000, '[') + std::string(100000, ']') + "}");
  StatusOr<EvidenceManifest> manifest = LoadEvidence(path);
  ASSERT_FALSE(manifest.ok());
  EXPECT_EQ(manifest.status().ToString(), path + ":1:75: error: JSON nested deeper than 64 levels");
}

}  // namespace
}  // namespace irm::deadcode
