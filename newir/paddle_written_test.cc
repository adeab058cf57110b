// Programs Paddle itself printed or saved (newir/testdata/paddle/, README.md there names the
// source of each): every one loads, verifies, and converts text -> JSON -> text and
// JSON -> text -> JSON without a change. Facts checked per fixture come from the printed text
// itself, not from this project's reading of it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "common/file_io.h"
#include "newir/block.h"
#include "newir/parser.h"
#include "newir/pir_json.h"
#include "newir/printer.h"
#include "newir/structural_equal.h"
#include "newir/verifier.h"

namespace irm::newir {
namespace {

std::filesystem::path FixtureDir() {
  const char* dir = std::getenv("IRM_SOURCE_DIR");
  const std::filesystem::path root =
      dir != nullptr && *dir != '\0' ? std::filesystem::path(dir) : std::filesystem::current_path();
  return root / "newir" / "testdata" / "paddle";
}

std::string Fixture(const std::string& name) {
  StatusOr<std::string> text = ReadFile((FixtureDir() / name).string());
  EXPECT_TRUE(text.ok()) << text.status().ToString()
                         << " (run from the repository root or set IRM_SOURCE_DIR)";
  return text.ok() ? *text : std::string();
}

struct PaddleFixture {
  const char* file;
  const char* printed_by;
  // Paddle's print is already canonical (typed style, values numbered in order, attributes
  // sorted, four-space indent): this project's print must give it back byte for byte.
  bool reprints_verbatim = false;
};

// Oldest first; README.md gives the exact source of each.
constexpr PaddleFixture kPaddleFixtures[] = {
    {"recompute_doc_2023.pir", "develop, Dec 2023 (pd_op.tensor, typed values)"},
    {"save_load_doc_if_2023.pir", "develop, late 2023 (pd_op.if, `{` on its own line)"},
    {"save_load_doc_while_2023.pir", "develop, Oct-Dec 2023 (`^%arg_0` alone on its line)"},
    {"simple_llama_excerpt_2024.pir", "3.0-beta, 2024 (builtin.tensor, typed values)", true},
    {"allreduce_split_2024.pir", "3.0-beta, 2024 (non-contiguous value numbers)"},
    {"save_load_doc_fc_2024.pir", "3.0-beta, 2024 (parameter flags, persistable)", true},
    {"special_ops_split_2024.pir", "3.0-beta, late 2024 (builtin.split, (Double) scalars)"},
    {"xpu_adaptive_layernorm_3.0.pir", "3.0, 2025 (untyped values, struct_name)"},
    {"save_load_doc_fc_2024.json", "PIR JSON version 1, 2024"},
};

bool IsJson(const std::string& file) { return file.ends_with(".json"); }

StatusOr<Program> Load(const std::string& file) {
  return IsJson(file) ? ReadPirJson(Fixture(file), file) : ParseProgram(Fixture(file), file);
}

// The folder holds the fixtures of the table and nothing else but its README.
TEST(PaddleWrittenTest, EveryFileOfTheFolderIsAFixture) {
  std::set<std::string> listed;
  for (const PaddleFixture& f : kPaddleFixtures) listed.insert(f.file);
  std::set<std::string> found;
  for (const auto& entry : std::filesystem::directory_iterator(FixtureDir())) {
    const std::string name = entry.path().filename().string();
    if (name != "README.md") found.insert(name);
  }
  EXPECT_EQ(found, listed);
}

TEST(PaddleWrittenTest, EveryFixtureLoadsVerifiesAndRoundTrips) {
  for (const PaddleFixture& f : kPaddleFixtures) {
    SCOPED_TRACE(std::string(f.file) + ", written by Paddle " + f.printed_by);
    StatusOr<Program> program = Load(f.file);
    ASSERT_TRUE(program.ok()) << program.status().ToString();
    const Status verified = VerifyProgram(*program);
    EXPECT_TRUE(verified.ok()) << verified.ToString();

    // Text: the canonical print parses back to the same program and prints the same.
    const std::string canonical = PrintProgram(*program);
    if (f.reprints_verbatim) {
      EXPECT_EQ(canonical, Fixture(f.file));
    }
    StatusOr<Program> again = ParseProgram(canonical, "canonical.pir");
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    EXPECT_EQ(FindStructuralDifference(*program, *again).value_or(""), "");
    EXPECT_EQ(PrintProgram(*again), canonical);

    // text -> JSON -> text.
    const std::string json = WritePirJson(*program);
    StatusOr<Program> from_json = ReadPirJson(json, "fixture.json");
    ASSERT_TRUE(from_json.ok()) << from_json.status().ToString();
    EXPECT_EQ(FindStructuralDifference(*program, *from_json).value_or(""), "");
    EXPECT_EQ(PrintProgram(*from_json), canonical);

    // JSON -> text -> JSON.
    EXPECT_EQ(WritePirJson(*again), json);
    EXPECT_EQ(WritePirJson(*from_json), json);
  }
}

// ---- Facts read off each print ----------------------------------------------------------------

std::vector<std::string> OpNames(const Block& block) {
  std::vector<std::string> names;
  for (const Operation* op : block.ops()) names.push_back(op->name());
  return names;
}

TEST(PaddleWrittenTest, Recompute2023) {
  StatusOr<Program> p = Load("recompute_doc_2023.pir");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  std::vector<Operation*> ops = p->block().ops();
  ASSERT_EQ(ops.size(), 12u);
  EXPECT_EQ(ops[0]->result(0)->type(),
            Type::DenseTensor(Type::F32(), {4096, 4096}));         // pd_op.tensor<4096x4096xf32>
  EXPECT_EQ(ops[6]->attribute("value"), Attribute::Float(-1.0f));  // value:(Float)-1
  EXPECT_EQ(ops[7]->operand(0), ops[5]->result(0));                // scale (%5, %6)
  EXPECT_EQ(ops[11]->attribute("is_persistable"), Attribute::Array({Attribute::Bool(true)}));
}

TEST(PaddleWrittenTest, If2023WithItsBranchOnTheNextLine) {
  StatusOr<Program> p = Load("save_load_doc_if_2023.pir");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  std::vector<Operation*> ops = p->block().ops();
  ASSERT_EQ(ops.size(), 6u);
  const Operation& if_op = *ops[4];
  ASSERT_EQ(if_op.name(), "pd_op.if");
  EXPECT_EQ(if_op.operand(0), ops[3]->result(0));
  EXPECT_EQ(OpNames(if_op.region(0).front()), (std::vector<std::string>{"pd_op.add", "cf.yield"}));
  EXPECT_EQ(OpNames(if_op.region(1).front()),
            (std::vector<std::string>{"pd_op.subtract", "cf.yield"}));
  EXPECT_EQ(ops[5]->operand(0), if_op.result(0));                            // mean (%4)
  EXPECT_EQ(ops[2]->result(0)->type(), Type::DenseTensor(Type::F32(), {}));  // pd_op.tensor<f32>
}

TEST(PaddleWrittenTest, While2023WithABareArgumentLine) {
  StatusOr<Program> p = Load("save_load_doc_while_2023.pir");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  std::vector<Operation*> ops = p->block().ops();
  ASSERT_EQ(ops.size(), 5u);
  const Operation& loop = *ops[4];
  ASSERT_EQ(loop.name(), "pd_op.while");
  EXPECT_EQ(loop.operand(0), ops[3]->result(0));  // cond=%3
  EXPECT_EQ(loop.operand(1), ops[0]->result(0));  // inputs=%0
  const Block& body = loop.region(0).front();
  ASSERT_EQ(body.num_arguments(), 1u);
  EXPECT_EQ(body.argument(0)->type(), Type::DenseTensor(Type::I64(), {1}));
  EXPECT_EQ(body.ops()[0]->operand(0), body.argument(0));  // add (%arg_0, %1)
  EXPECT_EQ(body.ops()[0]->operand(1), ops[1]->result(0));
  EXPECT_EQ(OpNames(body), (std::vector<std::string>{"pd_op.add", "pd_op.less_than", "cf.yield"}));
}

TEST(PaddleWrittenTest, SimpleLlama2024) {
  StatusOr<Program> p = Load("simple_llama_excerpt_2024.pir");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  std::vector<Operation*> ops = p->block().ops();
  ASSERT_EQ(ops.size(), 50u);
  EXPECT_EQ(ops[0]->attribute("name"), Attribute::String("embedding_0.w_0"));
  EXPECT_EQ(ops[0]->result(0)->type(), Type::DenseTensor(Type::F16(), {32000, 4096}));
  EXPECT_EQ(ops[19]->attribute("value"), Attribute::Array({Attribute::Int64(0)}));
  EXPECT_EQ(ops.back()->name(), "pd_op.embedding");
  EXPECT_EQ(ops.back()->attribute("padding_idx"), Attribute::Int64(-1));
  EXPECT_EQ(ops.back()->operand(1), ops[0]->result(0));  // (%17, %0)
}

TEST(PaddleWrittenTest, AllReduceSplit2024) {
  StatusOr<Program> p = Load("allreduce_split_2024.pir");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  std::vector<Operation*> ops = p->block().ops();
  ASSERT_EQ(ops.size(), 10u);
  EXPECT_EQ(ops[3]->operand(1), ops[0]->result(0));  // matmul (%48, %2)
  EXPECT_EQ(ops[4]->name(), "pd_op.all_reduce_");
  EXPECT_EQ(ops[4]->attribute("ring_id"), Attribute::Int32(36));
  EXPECT_EQ(ops[4]->attribute("events_to_wait"), Attribute::Array({}));
  const Type half = Type::DenseTensor(Type::BF16(), {2048, 1, 8192});
  EXPECT_EQ(ops[7]->result(0)->type(), Type::Vector({half, half}));
  EXPECT_EQ(ops[8]->attribute("index"), Attribute::Int32(0));
}

// The printed program and the JSON Paddle saved of it (pir_save_load.md) hold the same ops with
// the same types; the JSON, written for `trainable`, keeps the parameter flags in `A`/`OA`.
TEST(PaddleWrittenTest, FcPrintAndItsSavedJson) {
  StatusOr<Program> text = Load("save_load_doc_fc_2024.pir");
  StatusOr<Program> json = Load("save_load_doc_fc_2024.json");
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  ASSERT_TRUE(json.ok()) << json.status().ToString();
  EXPECT_EQ(OpNames(text->block()), OpNames(json->block()));
  std::vector<Operation*> t = text->block().ops();
  std::vector<Operation*> j = json->block().ops();
  ASSERT_EQ(t.size(), j.size());
  for (size_t i = 0; i < t.size(); ++i) {
    SCOPED_TRACE(t[i]->name());
    ASSERT_EQ(t[i]->num_results(), j[i]->num_results());
    EXPECT_EQ(t[i]->result(0)->type(), j[i]->result(0)->type());
    ASSERT_EQ(t[i]->num_operands(), j[i]->num_operands());
  }
  EXPECT_EQ(j[1]->attribute("parameter_name"), Attribute::String("fc_0.w_0"));
  EXPECT_EQ(j[1]->attribute("persistable"), t[1]->attribute("persistable"));
  EXPECT_EQ(j[1]->attribute("stop_gradient"), t[1]->attribute("stop_gradient"));
  EXPECT_EQ(j[1]->attribute("trainable"), t[1]->attribute("trainable"));
  EXPECT_EQ(j[2]->attribute("place"), t[2]->attribute("place"));  // [0,0,""]: Place(undefined:0)
  EXPECT_EQ(j[3]->operand(1), j[1]->result(0));                   // matmul (%2, %1)
  // The one place the two disagree: the print says value:(Double)1, the JSON an a_f32.
  EXPECT_EQ(t[6]->attribute("value"), Attribute::Double(1.0));
  EXPECT_EQ(j[6]->attribute("value"), Attribute::Float(1.0f));
  EXPECT_EQ(j[8]->attribute("col"), Attribute::Int32(0));
}

// Paddle's JSON as this project writes it back: the same document up to the order of each op's
// `A` list (Paddle writes the YAML signature's order, this project the names' order; readers look
// attributes up by name) and the empty `DA`/`QA` lists later serializers add to parameter ops.
nlohmann::json Normalized(nlohmann::json j) {
  if (j.is_object()) {
    for (const char* key : {"DA", "QA"}) {
      if (j.contains(key) && j[key].is_array() && j[key].empty()) j.erase(key);
    }
    for (auto& [key, value] : j.items()) value = Normalized(value);
    if (j.contains("A") && j["A"].is_array() && !j["A"].empty() && j["A"][0].is_object()) {
      std::sort(j["A"].begin(), j["A"].end(),
                [](const nlohmann::json& a, const nlohmann::json& b) { return a["N"] < b["N"]; });
    }
  } else if (j.is_array()) {
    for (auto& value : j) value = Normalized(value);
  }
  return j;
}

TEST(PaddleWrittenTest, SavedJsonWritesBackAsPaddleWroteIt) {
  const std::string paddle_json = Fixture("save_load_doc_fc_2024.json");
  StatusOr<Program> program = ReadPirJson(paddle_json, "fc.json");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  StatusOr<Program> via_text = ParseProgram(PrintProgram(*program), "fc.pir");
  ASSERT_TRUE(via_text.ok()) << via_text.status().ToString();
  EXPECT_EQ(Normalized(nlohmann::json::parse(WritePirJson(*via_text))),
            Normalized(nlohmann::json::parse(paddle_json)));
}

// Printed, the saved JSON is Paddle's own print of that program, but for the one attribute the
// two documents disagree on (full's value: the JSON's a_f32 prints (Float)1).
TEST(PaddleWrittenTest, SavedJsonPrintsAsPaddlePrintedIt) {
  StatusOr<Program> program = Load("save_load_doc_fc_2024.json");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  std::string paddle_print = Fixture("save_load_doc_fc_2024.pir");
  const std::string doubled = "value:(Double)1}";
  const size_t at = paddle_print.find(doubled);
  ASSERT_NE(at, std::string::npos);
  paddle_print.replace(at, doubled.size(), "value:(Float)1}");
  EXPECT_EQ(PrintProgram(*program), paddle_print);
}

TEST(PaddleWrittenTest, SplitOf2024) {
  StatusOr<Program> p = Load("special_ops_split_2024.pir");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  std::vector<Operation*> ops = p->block().ops();
  ASSERT_EQ(ops.size(), 5u);
  EXPECT_EQ(ops[1]->attribute("value"),
            Attribute::Array({Attribute::Int64(2), Attribute::Int64(1), Attribute::Int64(2)}));
  EXPECT_EQ(ops[2]->attribute("value"), Attribute::Double(1.0));
  ASSERT_EQ(ops[4]->num_results(), 3u);
  EXPECT_EQ(ops[4]->result(1)->type(), Type::DenseTensor(Type::F64(), {4, 1, 6}));
}

TEST(PaddleWrittenTest, Untyped30TakesTheTablesKinds) {
  StatusOr<Program> p = Load("xpu_adaptive_layernorm_3.0.pir");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  std::vector<Operation*> ops = p->block().ops();
  ASSERT_EQ(ops.size(), 14u);
  const Operation& norm = *ops[5];
  ASSERT_EQ(norm.name(), "pd_op.layer_norm");
  EXPECT_EQ(norm.attribute("begin_norm_axis"), Attribute::Int32(2));
  EXPECT_EQ(norm.attribute("epsilon"), Attribute::Float(1e-6f));
  EXPECT_EQ(norm.attribute("struct_name"), Attribute::String("/DiTBlockTwoStream/"));
  EXPECT_EQ(norm.result(1)->type(), Type::DenseTensor(Type::F32(), {2, 4096}));
  EXPECT_EQ(ops[6]->attribute("value"), Attribute::Array({Attribute::Int64(1)}));
  EXPECT_EQ(ops[8]->attribute("value"), Attribute::Double(1.0));  // full: Scalar(double)
  EXPECT_EQ(ops[9]->attribute("bias"), Attribute::Float(1.0f));   // scale: float bias
  EXPECT_EQ(ops[13]->operand(1), ops[12]->result(0));             // add (%1229, %1231)
}

}  // namespace
}  // namespace irm::newir
