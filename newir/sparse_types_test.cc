// Tests of Paddle's sparse tensor types (COO, CSR): structural equality and hashing, the text form
// Paddle prints plus our lossless extension, the JSON form with Paddle's ids and data layout, the
// diagnostics for malformed ones, and a program of catalog sparse ops that parses, verifies and
// converts text <-> JSON unchanged. Sparse ops are read, verified and written, never run.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "newir/parser.h"
#include "newir/pd_op_catalog.h"
#include "newir/pir_json.h"
#include "newir/printer.h"
#include "newir/structural_equal.h"
#include "newir/verifier.h"

namespace irm::newir {
namespace {

Type Dense(std::vector<int64_t> dims, Type dtype = Type::F32()) {
  return Type::DenseTensor(std::move(dtype), std::move(dims));
}

Type Coo(std::vector<int64_t> dims, std::vector<int64_t> nnz_dims, Type indices, Type elements,
         bool coalesced = false) {
  StatusOr<Type> t =
      Type::SparseCooTensor(Type::F32(), std::move(dims), std::move(nnz_dims), DataLayout::kNCHW,
                            std::move(indices), std::move(elements), coalesced);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? *t : Type();
}

Type Csr(std::vector<int64_t> dims, Type crows, Type cols, Type elements) {
  StatusOr<Type> t = Type::SparseCsrTensor(Type::F32(), std::move(dims), DataLayout::kNCHW,
                                           std::move(crows), std::move(cols), std::move(elements));
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? *t : Type();
}

// The type Paddle's program translator gives a 4x4 f32 SPARSE_COO var
// (paddle/fluid/ir_adaptor/translator/type_translator.cc, HandleSparseCooTensor).
Type TranslatorCoo4x4() { return Coo({4, 4}, {4, 4}, Dense({4, 4}), Dense({4, 4})); }

TEST(SparseTypesTest, AccessorsAndStructuralEquality) {
  const Type a = Coo({4, 4}, {3}, Dense({2, 3}, Type::I64()), Dense({3}));
  EXPECT_EQ(a.kind(), TypeKind::kSparseCooTensor);
  EXPECT_TRUE(a.IsSparse());
  EXPECT_EQ(a.dtype(), Type::F32());
  EXPECT_EQ(a.dims(), (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(a.non_zero_dims(), (std::vector<int64_t>{3}));
  EXPECT_EQ(a.non_zero_indices(), Dense({2, 3}, Type::I64()));
  EXPECT_EQ(a.non_zero_elements(), Dense({3}));
  EXPECT_FALSE(a.coalesced());
  EXPECT_TRUE(a.non_zero_crows().IsNull());

  // Built twice from the same parts: equal, same hash (type_storage.h hashes and compares every
  // field of SparseCooTensorTypeStorage).
  const Type b = Coo({4, 4}, {3}, Dense({2, 3}, Type::I64()), Dense({3}));
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.Hash(), b.Hash());
  EXPECT_NE(a, Coo({4, 4}, {4}, Dense({2, 3}, Type::I64()), Dense({3})));
  EXPECT_NE(a, Coo({4, 4}, {3}, Dense({2, 3}, Type::I32()), Dense({3})));
  EXPECT_NE(a, Coo({4, 4}, {3}, Dense({2, 3}, Type::I64()), Dense({3}), /*coalesced=*/true));
  EXPECT_NE(a, Dense({4, 4}));

  const Type c = Csr({4, 4}, Dense({5}, Type::I64()), Dense({3}, Type::I64()), Dense({3}));
  EXPECT_EQ(c.kind(), TypeKind::kSparseCsrTensor);
  EXPECT_EQ(c.non_zero_crows(), Dense({5}, Type::I64()));
  EXPECT_EQ(c.non_zero_cols(), Dense({3}, Type::I64()));
  EXPECT_EQ(c.non_zero_elements(), Dense({3}));
  EXPECT_TRUE(c.non_zero_indices().IsNull());
  EXPECT_EQ(c, Csr({4, 4}, Dense({5}, Type::I64()), Dense({3}, Type::I64()), Dense({3})));
  EXPECT_NE(c, Csr({4, 4}, Dense({5}, Type::I64()), Dense({4}, Type::I64()), Dense({3})));
  // The same dtype, dims and parts, the other kind.
  EXPECT_NE(Coo({4, 4}, {4, 4}, Dense({1}), Dense({1})),
            Csr({4, 4}, Dense({1}), Dense({1}), Dense({1})));
}

TEST(SparseTypesTest, PartsMustBeDenseTensors) {
  StatusOr<Type> t =
      Type::SparseCooTensor(Type::F32(), {4}, {4}, DataLayout::kNCHW, Type::I64(), Dense({4}));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(),
            "sparse tensor non_zero_indices type 'i64' is not a dense tensor");
  t = Type::SparseCsrTensor(Dense({2}), {4}, DataLayout::kNCHW, Dense({5}), Dense({3}), Dense({3}));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(),
            "sparse tensor element type 'builtin.tensor<2xf32>' is not a scalar type");
}

TEST(SparseTypesTest, PrintsPaddlesFormAndExtensions) {
  // op_dialect.cc PrintTypeImpl: `pd_op.sparsecootensor<` dims `x` dtype `>`.
  EXPECT_EQ(PrintType(TranslatorCoo4x4()), "pd_op.sparsecootensor<4x4xf32>");
  EXPECT_EQ(PrintType(Coo({4, 4}, {3}, Dense({2, 3}, Type::I64()), Dense({3}), true)),
            "pd_op.sparsecootensor<4x4xf32, non_zero_dims:[3], indices:builtin.tensor<2x3xi64>, "
            "elements:builtin.tensor<3xf32>, coalesced:true>");
  EXPECT_EQ(
      PrintType(Coo({4, 4}, {3}, Dense({2, 3}, Type::I64()), Dense({3})), TypeStyle::kCurrent),
      "pd_op.sparsecootensor<4x4xf32, non_zero_dims:[3], indices:tensor<2x3xi64>, "
      "elements:tensor<3xf32>>");
  EXPECT_EQ(PrintType(Csr({4, 4}, Dense({4, 4}), Dense({4, 4}), Dense({4, 4}))),
            "pd_op.sparsecsrtensor<4x4xf32>");
  EXPECT_EQ(PrintType(Csr({4, 4}, Dense({5}, Type::I64()), Dense({-1}, Type::I64()), Dense({-1}))),
            "pd_op.sparsecsrtensor<4x4xf32, crows:builtin.tensor<5xi64>, "
            "cols:builtin.tensor<-1xi64>, elements:builtin.tensor<-1xf32>>");
}

TEST(SparseTypesTest, ParsesPaddlesFormWithTranslatorDefaults) {
  StatusOr<Type> t = ParseType("pd_op.sparsecootensor<4x4xf32>");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(*t, TranslatorCoo4x4());
  t = ParseType("pd_op.sparsecootensor<f64>");  // 0-D, as Paddle prints no dims
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->dims(), std::vector<int64_t>{});
  EXPECT_EQ(t->non_zero_elements(), Dense({}, Type::F64()));
}

TEST(SparseTypesTest, TextRoundTrip) {
  const Type types[] = {
      TranslatorCoo4x4(),
      Coo({-1, 8}, {-1}, Dense({2, -1}, Type::I64()), Dense({-1}), true),
      *Type::SparseCooTensor(Type::F16(), {2, 3}, {2, 3}, DataLayout::kUndefined, Dense({2, 3}),
                             Dense({2, 3})),
      Csr({4, 4}, Dense({5}, Type::I32()), Dense({-1}, Type::I32()), Dense({-1})),
      Type::Vector({TranslatorCoo4x4(), Dense({2})}),
  };
  for (const Type& type : types) {
    for (TypeStyle style : {TypeStyle::kTyped, TypeStyle::kCurrent}) {
      const std::string text = PrintType(type, style);
      StatusOr<Type> back = ParseType(text);
      ASSERT_TRUE(back.ok()) << text << ": " << back.status().ToString();
      EXPECT_EQ(*back, type) << text;
    }
  }
}

std::string ParseError(const std::string& text) {
  StatusOr<Type> t = ParseType(text, "t.pir");
  return t.ok() ? "parsed" : t.status().ToString();
}

TEST(SparseTypesTest, MalformedTextIsLocated) {
  EXPECT_EQ(ParseError("pd_op."),
            "t.pir:1:1: error: 'pd_op.' is how Paddle prints a sparse CSR tensor type, without its "
            "dtype or dims; the type cannot be recovered from the text: read the program's JSON "
            "form instead");
  EXPECT_EQ(ParseError("pd_op.sparsecootensor<4x4xf32, indices:i64>"),
            "t.pir:1:40: error: sparse tensor indices type must be a dense tensor, not 'i64'");
  EXPECT_EQ(ParseError("pd_op.sparsecootensor<4x4xq7>"),
            "t.pir:1:27: error: unknown element type 'q7'");
  EXPECT_EQ(ParseError("pd_op.sparsecsrtensor<4x4xf32, indices:builtin.tensor<2xi64>>"),
            "t.pir:1:30: error: expected '>' to close 'pd_op.sparsecsrtensor' type, found ','");
  EXPECT_EQ(ParseError("pd_op.sparsecootensor<4xf32, coalesced:maybe>"),
            "t.pir:1:40: error: expected true or false after 'coalesced:', found 'maybe'");
}

// A 2.6/3.0-beta style program (Paddle's COO form; CSR in our spelling) of catalog sparse ops:
// dense -> COO, COO + COO, COO values, dense -> CSR.
constexpr const char* kSparseProgram = R"({
    (%0) = "pd_op.data" () {dtype:(pd_op.DataType)float32,name:"x",place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[4,4],stop_gradient:[true]} : () -> builtin.tensor<4x4xf32>
    (%1) = "pd_op.dense_to_coo_sp" (%0) {sparse_dim:(Int64)2,stop_gradient:[true]} : (builtin.tensor<4x4xf32>) -> pd_op.sparsecootensor<4x4xf32>
    (%2) = "pd_op.add_coo_coo_sp" (%1, %1) {stop_gradient:[true]} : (pd_op.sparsecootensor<4x4xf32>, pd_op.sparsecootensor<4x4xf32>) -> pd_op.sparsecootensor<4x4xf32, non_zero_dims:[-1], indices:builtin.tensor<2x-1xi64>, elements:builtin.tensor<-1xf32>, coalesced:true>
    (%3) = "pd_op.values_coo_sp" (%2) {stop_gradient:[true]} : (pd_op.sparsecootensor<4x4xf32, non_zero_dims:[-1], indices:builtin.tensor<2x-1xi64>, elements:builtin.tensor<-1xf32>, coalesced:true>) -> builtin.tensor<-1xf32>
    (%4) = "pd_op.dense_to_csr_sp" (%0) {stop_gradient:[true]} : (builtin.tensor<4x4xf32>) -> pd_op.sparsecsrtensor<4x4xf32, crows:builtin.tensor<5xi64>, cols:builtin.tensor<-1xi64>, elements:builtin.tensor<-1xf32>>
    () = "builtin.shadow_output" (%3) {output_name:"out"} : (builtin.tensor<-1xf32>) -> 
}
)";

TEST(SparseTypesTest, ProgramVerifiesAndConvertsLosslessly) {
  StatusOr<Program> program = ParseProgram(kSparseProgram, "sparse.pir");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  Status verified = VerifyProgram(*program);
  EXPECT_TRUE(verified.ok()) << verified.ToString();
  const std::string text = PrintProgram(*program);
  EXPECT_EQ(text, kSparseProgram);

  const std::string json = WritePirJson(*program);
  StatusOr<Program> back = ReadPirJson(json, "sparse.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(PrintProgram(*back), text);
  EXPECT_EQ(WritePirJson(*back), json);
}

// Two programs that differ only in a sparse type's part (here `coalesced`) are told apart.
TEST(SparseTypesTest, StructuralComparisonSeesEveryPart) {
  StatusOr<Program> a = ParseProgram(kSparseProgram, "a.pir");
  std::string text = kSparseProgram;
  const std::string from = ", coalesced:true";
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from)) {
    text.erase(at, from.size());
  }
  StatusOr<Program> b = ParseProgram(text, "b.pir");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(FindStructuralDifference(*a, *a).value_or(""), "");
  const std::string diff = FindStructuralDifference(*a, *b).value_or("");
  EXPECT_NE(diff.find("coalesced:true"), std::string::npos) << diff;
}

// sparse_ops.yaml add: `add_coo_dense{sparse_coo, dense -> sparse_coo}`; values:
// `values_coo{sparse_coo -> dense}`. Dense ops record no kinds.
TEST(SparseTypesTest, CatalogRecordsTheKernelDispatchKinds) {
  using K = CatalogTensorKind;
  const CatalogOp* add = FindPdOpCatalogOp("pd_op.add_coo_dense_sp");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->operand_kinds, (std::vector<K>{K::kSparseCoo, K::kDense}));
  EXPECT_EQ(add->result_kinds, (std::vector<K>{K::kSparseCoo}));
  const CatalogOp* values = FindPdOpCatalogOp("pd_op.values_csr_sp");
  ASSERT_NE(values, nullptr);
  EXPECT_EQ(values->operand_kinds, (std::vector<K>{K::kSparseCsr}));
  EXPECT_EQ(values->result_kinds, (std::vector<K>{K::kDense}));
  const CatalogOp* abs = FindPdOpCatalogOp("pd_op.abs");
  ASSERT_NE(abs, nullptr);
  EXPECT_TRUE(abs->operand_kinds.empty() && abs->result_kinds.empty());

  auto error = [](std::string_view text) {
    StatusOr<std::vector<CatalogOp>> ops = ParsePdOpCatalog(text, "c.inc");
    return ops.ok() ? std::string("parsed") : ops.status().ToString();
  };
  EXPECT_EQ(error("S a_sp|x,y|out||coo,dense>coo\n"), "parsed");
  EXPECT_EQ(error("S a_sp|x|out||coo>bsr\n"),
            "c.inc:1:19: error: unknown tensor kind 'bsr' (dense, coo or csr)");
  EXPECT_EQ(error("S a_sp|x|out||coo,coo>coo\n"),
            "c.inc:1:23: error: the tensor kinds do not match the operands and results");
}

// Paddle's generated VerifySig checks a sparse op's tensors against its kernel dispatch
// (op_gen.py parse_input_type_dict, op_verify_gen.py INPUT_TYPE_CHECK_TEMPLATE):
// add_coo_coo{sparse_coo, sparse_coo -> sparse_coo} in sparse_ops.yaml rejects a dense x.
TEST(SparseTypesTest, SparseOpFedADenseTensorDoesNotVerify) {
  std::string text = kSparseProgram;
  const std::string from = "\"pd_op.add_coo_coo_sp\" (%1, %1)";
  text.replace(text.find(from), from.size(), "\"pd_op.add_coo_coo_sp\" (%0, %1)");
  const std::string types = "(pd_op.sparsecootensor<4x4xf32>, pd_op.sparsecootensor<4x4xf32>)";
  text.replace(text.find(types), types.size(),
               "(builtin.tensor<4x4xf32>, pd_op.sparsecootensor<4x4xf32>)");
  StatusOr<Program> program = ParseProgram(text, "dense_in.pir");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  Status verified = VerifyProgram(*program);
  ASSERT_FALSE(verified.ok());
  EXPECT_NE(verified.ToString().find("op 2 (pd_op.add_coo_coo_sp): error: operand 0 ('x') must be "
                                     "a sparse COO tensor (the op's kernel dispatch), found "
                                     "builtin.tensor<4x4xf32>"),
            std::string::npos)
      << verified.ToString();

  // A result of the wrong kind too: values_coo{sparse_coo -> dense}.
  text = kSparseProgram;
  const std::string values = "-> builtin.tensor<-1xf32>\n    (%4)";
  text.replace(text.find(values), values.size(), "-> pd_op.sparsecootensor<-1xf32>\n    (%4)");
  const std::string output = "(%3) {output_name:\"out\"} : (builtin.tensor<-1xf32>)";
  text.replace(text.find(output), output.size(),
               "(%3) {output_name:\"out\"} : (pd_op.sparsecootensor<-1xf32>)");
  program = ParseProgram(text, "values.pir");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  verified = VerifyProgram(*program);
  ASSERT_FALSE(verified.ok());
  EXPECT_NE(verified.ToString().find("op 3 (pd_op.values_coo_sp): error: result 0 ('out') must be "
                                     "a dense tensor (the op's kernel "
                                     "dispatch), found pd_op.sparsecootensor<-1xf32>"),
            std::string::npos)
      << verified.ToString();
}

// The result type of the first op named `op_name` in a written document.
nlohmann::json ResultType(const std::string& json, const std::string& op_name) {
  const nlohmann::json doc = nlohmann::json::parse(json);
  for (const auto& op : doc["program"]["regions"][0]["blocks"][0]["ops"]) {
    if (op["#"] == op_name) return op["O"][0]["TT"];
  }
  return nullptr;
}

// Paddle's ids and data layout (serialize_utils.h serializeTypeToJsonIncludeWriteType for
// SparseCooTensorType and SparseCsrTensorType), written out by hand.
TEST(SparseTypesTest, JsonUsesPaddlesIdsAndLayout) {
  StatusOr<Program> program = ParseProgram(kSparseProgram, "sparse.pir");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  const std::string json = WritePirJson(*program);
  EXPECT_EQ(ResultType(json, "1.dense_to_coo_sp"), nlohmann::json::parse(R"(
    {"#": "1.t_sparse_coo_tensor", "D": [{"#": "0.t_f32"}, [4, 4], [4, 4], "NCHW",
      {"#": "0.t_dtensor", "D": [{"#": "0.t_f32"}, [4, 4], "NCHW", [], 0]},
      {"#": "0.t_dtensor", "D": [{"#": "0.t_f32"}, [4, 4], "NCHW", [], 0]}]})"));
  // coalesced, which Paddle does not write, as a seventh element when true.
  EXPECT_EQ(ResultType(json, "1.add_coo_coo_sp"), nlohmann::json::parse(R"(
    {"#": "1.t_sparse_coo_tensor", "D": [{"#": "0.t_f32"}, [4, 4], [-1], "NCHW",
      {"#": "0.t_dtensor", "D": [{"#": "0.t_i64"}, [2, -1], "NCHW", [], 0]},
      {"#": "0.t_dtensor", "D": [{"#": "0.t_f32"}, [-1], "NCHW", [], 0]}, true]})"));
  EXPECT_EQ(ResultType(json, "1.dense_to_csr_sp"), nlohmann::json::parse(R"(
    {"#": "1.t_sparse_csr_tensor", "D": [{"#": "0.t_f32"}, [4, 4], "NCHW",
      {"#": "0.t_dtensor", "D": [{"#": "0.t_i64"}, [5], "NCHW", [], 0]},
      {"#": "0.t_dtensor", "D": [{"#": "0.t_i64"}, [-1], "NCHW", [], 0]},
      {"#": "0.t_dtensor", "D": [{"#": "0.t_f32"}, [-1], "NCHW", [], 0]}]})"));
}

// A document in Paddle's layout with a sparse type written as Paddle writes it, with `D` edited.
std::string DocumentWithType(const std::string& type_json) {
  return R"({"base_code": {"magic": "pir", "trainable": true, "version": 1}, "program": {
    "regions": [{"#": "region_0", "blocks": [{"#": "block_0", "args": [], "ops": [
      {"#": "1.data", "A": [{"AT": {"#": "0.a_str", "D": "x"}, "N": "name"},
        {"AT": {"#": "1.a_intarray", "D": [4, 4]}, "N": "shape"},
        {"AT": {"#": "1.a_dtype", "D": "float32"}, "N": "dtype"},
        {"AT": {"#": "1.a_place", "D": [0, 0, ""]}, "N": "place"}], "I": [],
       "O": [{"%": 1, "TT": {"#": "0.t_dtensor", "D": [{"#": "0.t_f32"}, [4, 4], "NCHW", [], 0]}}],
       "OA": []},
      {"#": "1.dense_to_coo_sp", "A": [{"AT": {"#": "0.a_i64", "D": 2}, "N": "sparse_dim"}],
       "I": [{"%": 1}], "O": [{"%": 2, "TT": )" +
         type_json + R"(}], "OA": []}]}]}]}})";
}

TEST(SparseTypesTest, ReadsPaddleWrittenJson) {
  StatusOr<Program> program = ReadPirJson(DocumentWithType(R"(
    {"#": "1.t_sparse_coo_tensor", "D": [{"#": "0.t_f32"}, [4, 4], [4, 4], "NCHW",
      {"#": "0.t_dtensor", "D": [{"#": "0.t_f32"}, [4, 4], "NCHW", [], 0]},
      {"#": "0.t_dtensor", "D": [{"#": "0.t_f32"}, [4, 4], "NCHW", [], 0]}]})"),
                                          "p.json");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  EXPECT_EQ(program->block().back()->result(0)->type(), TranslatorCoo4x4());
  EXPECT_TRUE(VerifyProgram(*program).ok());
}

TEST(SparseTypesTest, MalformedJsonIsLocated) {
  auto error = [](const std::string& type_json) {
    StatusOr<Program> p = ReadPirJson(DocumentWithType(type_json), "p.json");
    return p.ok() ? std::string("read") : p.status().ToString();
  };
  const std::string at = "p.json: /program/regions/0/blocks/0/ops/1/O/0/TT";
  EXPECT_EQ(error(R"({"#": "1.t_sparse_coo_tensor", "D": [{"#": "0.t_f32"}, [4, 4], "NCHW"]})"),
            at + "/D: error: '1.t_sparse_coo_tensor' data must have 6 elements (dtype, dims, "
                 "non_zero_dims, layout, indices, elements), found 3");
  EXPECT_EQ(error(R"({"#": "1.t_sparse_csr_tensor", "D": [{"#": "0.t_f32"}, [4], "NCHW",
      {"#": "0.t_i64"}, {"#": "0.t_dtensor", "D": [{"#": "0.t_i64"}, [1], "NCHW", [], 0]},
      {"#": "0.t_dtensor", "D": [{"#": "0.t_f32"}, [1], "NCHW", [], 0]}]})"),
            at + "/D/3: error: a sparse tensor part must be a 0.t_dtensor type");
  EXPECT_EQ(error(R"({"#": "1.t_sparse_coo_tensor", "D": [{"#": "0.t_f32"}, [4], [4], "NCHW",
      {"#": "0.t_dtensor", "D": [{"#": "0.t_i64"}, [1], "NCHW", [], 0]},
      {"#": "0.t_dtensor", "D": [{"#": "0.t_f32"}, [1], "NCHW", [], 0]}, 1]})"),
            at + "/D/6: error: expected a boolean, found an integer");
}

}  // namespace
}  // namespace irm::newir
