// Tests of the pd_op catalog (pd_op_catalog.h): every op of Paddle's op YAML at the catalog's
// commit is registered, counted by category against the generator's manifest and against the
// manifest's own scan of the YAML; the ops left out are listed with their reason; hand-written rows
// win over catalog lines; signatures checked by hand against the YAML; malformed catalog lines; and
// a sample of catalog ops built from their signatures that verify and round-trip through PIR JSON
// and the text form.
#include "newir/pd_op_catalog.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "common/file_io.h"
#include "newir/builder.h"
#include "newir/dialect.h"
#include "newir/parser.h"
#include "newir/pir_json.h"
#include "newir/printer.h"
#include "newir/structural_equal.h"
#include "newir/verifier.h"

namespace irm::newir {
namespace {

std::string SourceFile(const std::string& path) {
  const char* dir = std::getenv("IRM_SOURCE_DIR");
  const std::string root = dir != nullptr && *dir != '\0' ? dir : std::filesystem::current_path();
  StatusOr<std::string> text = ReadFile(root + "/" + path);
  EXPECT_TRUE(text.ok()) << text.status().ToString()
                         << " (run from the repository root or set IRM_SOURCE_DIR)";
  return text.ok() ? *text : std::string();
}

// newir/pd_op_catalog_manifest.txt, as scripts/gen_pd_op_catalog.py wrote it.
struct Manifest {
  std::map<std::string, int> scanned;  // YAML file -> `- op :` lines its text scan counted
  std::map<std::string, int> entries;  // YAML file -> entry and omit lines
  std::map<std::string, int> counts;   // category -> pd_op ops
  // The pd_op names (with `pd_op.`) of every entry, by category; a name ending in `_` is
  // counted as in place.
  std::map<std::string, std::vector<std::string>> names;
  std::vector<std::string> omitted;  // "file name: reason"
};

Manifest ReadManifest() {
  Manifest m;
  std::istringstream in(SourceFile("newir/pd_op_catalog_manifest.txt"));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string tag, file, name, category, list;
    words >> tag;
    if (tag == "source") {
      int n = 0;
      words >> file >> n;
      m.scanned[file] = n;
    } else if (tag == "entry") {
      words >> file >> name >> category >> list;
      ++m.entries[file];
      std::istringstream items(list);
      std::string item;
      while (std::getline(items, item, ',')) {
        m.names[item.back() == '_' ? "inplace" : category].push_back("pd_op." + item);
      }
    } else if (tag == "omit") {
      words >> file >> name >> category;
      std::string reason;
      std::getline(words, reason);
      ++m.entries[file];
      m.omitted.push_back(file + " " + name + ":" + reason);
    } else if (tag == "count") {
      int n = 0;
      words >> category >> n;
      m.counts[category] = n;
    }
  }
  return m;
}

TEST(PdOpCatalogTest, TheCatalogNamesItsPaddleCommit) {
  EXPECT_EQ(PdOpCatalogHeader(),
            "PaddlePaddle commit ccd49a3de4 (2025-02-17), paddle/phi/ops/yaml/");
  EXPECT_GT(PdOpCatalog().size(), 1400u);
}

// Every `- op :` / `- backward_op :` line of the nine YAML files the pd_op dialect is generated
// from (paddle/fluid/pir/dialect/CMakeLists.txt, op_yaml_files) is an entry or an omission.
TEST(PdOpCatalogTest, EveryYamlEntryIsAccountedFor) {
  const Manifest m = ReadManifest();
  ASSERT_EQ(m.scanned.size(), 9u);
  int total = 0;
  for (const auto& [file, n] : m.scanned) {
    EXPECT_EQ(m.entries.count(file) ? m.entries.at(file) : 0, n) << file;
    total += n;
  }
  // The nine files at ccd49a3de4 (`grep -c '^- \(op\|backward_op\) *:'`).
  EXPECT_EQ(total, 474 + 347 + 80 + 10 + 86 + 49 + 1 + 51 + 45);
  // Left out, with the reason: printed for whoever reads the log.
  for (const std::string& o : m.omitted) std::cout << "left out: " << o << "\n";
  ASSERT_EQ(m.omitted.size(), 1u);
  EXPECT_TRUE(m.omitted[0].starts_with("inconsistent/static_backward.yaml add_n_grad: op_gen.py"))
      << m.omitted[0];
}

TEST(PdOpCatalogTest, CountsByCategoryMatchTheManifestAndTheRegistry) {
  const Manifest m = ReadManifest();
  std::map<std::string, int> compiled;
  for (const CatalogOp& op : PdOpCatalog())
    ++compiled[std::string(CatalogCategoryName(op.category))];
  for (CatalogCategory category : kCatalogCategories) {
    const std::string name(CatalogCategoryName(category));
    SCOPED_TRACE(name);
    ASSERT_TRUE(m.counts.contains(name));
    EXPECT_EQ(compiled[name], m.counts.at(name));
    EXPECT_EQ(static_cast<int>(m.names.count(name) ? m.names.at(name).size() : 0),
              m.counts.at(name));
    // Registered, by a hand-written row or by the catalog.
    std::vector<std::string> missing;
    for (const std::string& op :
         m.names.count(name) ? m.names.at(name) : std::vector<std::string>{}) {
      if (OpRegistry::Global().Lookup(op) == nullptr) missing.push_back(op);
    }
    EXPECT_TRUE(missing.empty()) << missing.size() << " not registered, first " << missing[0];
  }
  // The totals at ccd49a3de4, as the generator reported them.
  EXPECT_EQ(m.counts.at("forward"), 549);
  EXPECT_EQ(m.counts.at("backward"), 402);
  EXPECT_EQ(m.counts.at("fused"), 88);
  EXPECT_EQ(m.counts.at("sparse"), 178);
  EXPECT_EQ(m.counts.at("inplace"), 272);
}

// The issue's first symptom: a 2023 pd_op.if program read pd_op.greater_equal.
TEST(PdOpCatalogTest, HandRowsKeepTheirHooksAndTheCatalogFillsTheRest) {
  const OpInfo* matmul = OpRegistry::Global().Lookup("pd_op.matmul");
  ASSERT_NE(matmul, nullptr);
  EXPECT_NE(matmul->verify, nullptr);
  EXPECT_EQ(matmul->summary, "matrix product");
  EXPECT_FALSE(IsPdOpCatalogOnly("pd_op.matmul"));
  const OpInfo* ge = OpRegistry::Global().Lookup("pd_op.greater_equal");
  ASSERT_NE(ge, nullptr);
  EXPECT_EQ(ge->verify, nullptr);
  EXPECT_TRUE(IsPdOpCatalogOnly("pd_op.greater_equal"));
  EXPECT_FALSE(IsPdOpCatalogOnly("pd_op.if"));  // a hand row, in no YAML
  EXPECT_FALSE(IsPdOpCatalogOnly("pd_op.no_such_op"));
  for (const std::string& hand : PdOpHandRowNames()) EXPECT_FALSE(IsPdOpCatalogOnly(hand)) << hand;
}

// Whatever registered an op first keeps it: the catalog asks the registry, not a list.
TEST(PdOpCatalogTest, RegistrationSkipsWhateverTheRegistryHolds) {
  OpRegistry r;
  OpInfo own{.name = "pd_op.abs", .summary = "a row of someone's own"};
  ASSERT_TRUE(r.Register(own).ok());
  std::vector<std::string> skipped;
  ASSERT_TRUE(RegisterPdOpCatalog(r, &skipped).ok());
  EXPECT_EQ(skipped, std::vector<std::string>{"pd_op.abs"});
  EXPECT_EQ(r.Lookup("pd_op.abs")->summary, "a row of someone's own");
  EXPECT_EQ(r.size(), PdOpCatalog().size());
  // The dialect registers its rows first: every row name is skipped by the catalog.
  OpRegistry full;
  ASSERT_TRUE(RegisterPdOpDialect(full).ok());
  EXPECT_GT(full.size(), PdOpCatalog().size());
}

const CatalogOp& Find(std::string_view name) {
  for (const CatalogOp& op : PdOpCatalog()) {
    if (op.info.name == name) return op;
  }
  ADD_FAILURE() << name << " is not in the catalog";
  static const CatalogOp kNone;
  return kNone;
}

std::string Slots(const OpInfo& info) {
  std::string out;
  for (const OperandSpec& o : info.operands) {
    out += o.name + (o.optional ? "?" : "") + (o.variadic ? "[]" : "") + (o.int_array ? "#" : "") +
           " ";
  }
  out += "->";
  for (const ResultSpec& r : info.results) {
    out += " " + r.name + (r.optional ? "?" : "") + (r.variadic ? "[]" : "");
  }
  return out;
}

// Signatures read by hand from paddle/phi/ops/yaml/ at ccd49a3de4 and op_gen.py's naming.
TEST(PdOpCatalogTest, SignaturesFollowTheYaml) {
  // ops.yaml one_hot(Tensor x, Scalar(int) num_classes); op_compat.yaml gives depth a
  // tensor_name, which op_gen.py applies to num_classes: an operand.
  EXPECT_EQ(Slots(Find("pd_op.one_hot").info), "x num_classes -> out");
  EXPECT_TRUE(Find("pd_op.one_hot").info.attributes.empty());
  // backward.yaml layer_norm_grad: optional scale and bias (and their grads are not optional).
  const CatalogOp& lng = Find("pd_op.layer_norm_grad");
  EXPECT_EQ(lng.category, CatalogCategory::kBackward);
  EXPECT_EQ(Slots(lng.info),
            "x scale? bias? mean variance out_grad -> x_grad scale_grad bias_grad");
  ASSERT_EQ(lng.info.attributes.size(), 2u);
  EXPECT_EQ(lng.info.attributes[0].default_value, Attribute::Float(1e-5f));
  EXPECT_EQ(lng.info.attributes[1].default_value, Attribute::Int32(1));
  // ops.yaml ones(IntArray shape, DataType dtype=DataType::FLOAT32, Place place=CPUPlace()).
  const OpInfo& ones = Find("pd_op.ones").info;
  ASSERT_EQ(ones.attributes.size(), 3u);
  EXPECT_TRUE(ones.attributes[0].required);
  EXPECT_EQ(ones.attributes[0].kind, AttrKind::kIntArray);
  EXPECT_EQ(ones.attributes[1].default_value, Attribute::DataTypeAttr(DataType::kFloat32));
  EXPECT_EQ(ones.attributes[2].default_value,
            Attribute::PlaceAttr(Place::Of(AllocationType::kCpu, 0)));
  // sparse_ops.yaml add: three kernel functions, so three ops named after them, with `_sp`.
  EXPECT_EQ(Find("pd_op.add_coo_dense_sp").category, CatalogCategory::kSparse);
  EXPECT_EQ(Find("pd_op.add_csr_csr_sp").category, CatalogCategory::kSparse);
  // ops.yaml adam_: in place, two kernels (adam, adam_dense_param_sparse_grad), side effect;
  // beta1/beta2/epsilon are mutable Scalars (op_compat.yaml): operands.
  const CatalogOp& adam = Find("pd_op.adam_dense_param_sparse_grad_");
  EXPECT_EQ(adam.category, CatalogCategory::kInplace);
  EXPECT_TRUE(adam.info.inplace);
  EXPECT_TRUE(adam.info.side_effect);
  EXPECT_EQ(adam.info.operands.back().name, "epsilon");
  // sparse_ops.yaml batch_norm_ (a name ending in `_`): `sp_` after it.
  EXPECT_EQ(Find("pd_op.batch_norm_sp_").category, CatalogCategory::kInplace);
  // ops.yaml sum: axis is a mutable IntArray (op_compat.yaml tensor_name).
  const OpInfo& sum = Find("pd_op.sum").info;
  EXPECT_EQ(Slots(sum), "x axis# -> out");
  // A Scalar attribute takes any kind; untyped text reads it as the Scalar's own kind.
  const OpInfo& full = Find("pd_op.full").info;
  ASSERT_NE(full.FindAttribute("value"), nullptr);
  EXPECT_EQ(full.FindAttribute("value")->kind, AttrKind::kNull);
  EXPECT_EQ(full.FindAttribute("value")->untyped_kind, AttrKind::kDouble);
}

TEST(PdOpCatalogTest, MalformedLinesAreLocated) {
  auto error = [](std::string_view text) {
    StatusOr<std::vector<CatalogOp>> ops = ParsePdOpCatalog(text, "cat");
    return ops.ok() ? std::string("parsed") : ops.status().ToString();
  };
  EXPECT_EQ(error("F a|x|out|\nX b|||\n"), "cat:2:1: error: unknown op category 'X'");
  EXPECT_EQ(error("FQ a|||\n"), "cat:1:1: error: unknown op flags 'FQ'");
  EXPECT_EQ(error("F a b|||\n"), "cat:1:3: error: expected an op name");
  EXPECT_EQ(error("F a|x|out|k:i33\n"), "cat:1:13: error: unknown attribute kind 'i33'");
  EXPECT_EQ(error("F a|x|out|k:b=3\n"),
            "cat:1:15: error: the default of 'k' takes a bool, found '3'");
  EXPECT_EQ(error("F a|x,|out|\n"), "cat:1:7: error: expected a slot name");
  EXPECT_EQ(error("F a|x|out\n"),
            "cat:1:10: error: expected '|' after the results, found end of line");
  EXPECT_EQ(error("# header\nF a|x?[]|o[]|k:ai64=[1,2];s:sf32\n"), "parsed");
}

// ---- Catalog ops in PIR JSON and text ---------------------------------------------------------

Type F32(std::vector<int64_t> dims) { return Type::DenseTensor(Type::F32(), std::move(dims)); }

Attribute ValueOfKind(AttrKind kind) {
  switch (kind) {
    case AttrKind::kBool:
      return Attribute::Bool(true);
    case AttrKind::kInt32:
      return Attribute::Int32(3);
    case AttrKind::kInt64:
      return Attribute::Int64(-4);
    case AttrKind::kFloat:
      return Attribute::Float(0.25f);
    case AttrKind::kDouble:
      return Attribute::Double(0.125);
    case AttrKind::kString:
      return Attribute::String("s");
    case AttrKind::kIntArray:
      return Attribute::IntArrayAttr({2, 3});
    case AttrKind::kDataType:
      return Attribute::DataTypeAttr(DataType::kInt64);
    case AttrKind::kPlace:
      return Attribute::PlaceAttr(Place::Of(AllocationType::kGpu, 0));
    case AttrKind::kDataLayout:
      return Attribute::DataLayoutAttr(DataLayout::kNHWC);
    default:
      return Attribute::Double(1.5);
  }
}

// The 2-element tensor type of `kind` (a sparse op's slot kind, pd_op_catalog.h KINDS).
Type TensorOfKind(CatalogTensorKind kind) {
  switch (kind) {
    case CatalogTensorKind::kSparseCoo:
      return *Type::SparseCooTensor(Type::F32(), {2}, {2}, DataLayout::kNCHW, F32({2}), F32({2}));
    case CatalogTensorKind::kSparseCsr:
      return *Type::SparseCsrTensor(Type::F32(), {2}, DataLayout::kNCHW, F32({2}), F32({2}),
                                    F32({2}));
    case CatalogTensorKind::kDense:
      break;
  }
  return F32({2});
}

// An op of `info` built from its signature alone: a data op for each plain operand (turned into
// a sparse tensor by dense_to_coo_sp / dense_to_csr_sp where the op's KINDS ask for one), a
// combine of two for a vector, a full_int_array for a mutable IntArray, nothing for an optional
// one; every attribute with its default, or a value of its kind.
void BuildFromSignature(const OpInfo& info, Builder& b, int& inputs) {
  static const std::vector<CatalogTensorKind> kNoKinds;
  const CatalogOp* entry = FindPdOpCatalogOp(info.name);
  const std::vector<CatalogTensorKind>& operand_kinds =
      entry != nullptr ? entry->operand_kinds : kNoKinds;
  const std::vector<CatalogTensorKind>& result_kinds =
      entry != nullptr ? entry->result_kinds : kNoKinds;
  auto kind_at = [](const std::vector<CatalogTensorKind>& kinds, size_t i) {
    return i < kinds.size() ? kinds[i] : CatalogTensorKind::kDense;
  };
  auto data = [&b, &inputs](Type type) {
    const std::string name = "in" + std::to_string(inputs++);
    return b
        .Create("pd_op.data", {}, {std::move(type)},
                {{"name", Attribute::String(name)},
                 {"shape", Attribute::IntArrayAttr({2})},
                 {"dtype", Attribute::DataTypeAttr(DataType::kFloat32)},
                 {"place", Attribute::PlaceAttr(Place{})}})
        ->result(0);
  };
  std::vector<Value*> operands;
  for (const OperandSpec& o : info.operands) {
    if (o.optional) {
      operands.push_back(nullptr);
    } else if (o.int_array) {
      operands.push_back(
          b.Create("pd_op.full_int_array", {}, {Type::DenseTensor(Type::I64(), {2})},
                   {{"value", Attribute::Array({Attribute::Int64(1), Attribute::Int64(2)})},
                    {"dtype", Attribute::DataTypeAttr(DataType::kInt64)},
                    {"place", Attribute::PlaceAttr(Place{})}})
              ->result(0));
    } else if (o.variadic) {
      Value* a = data(F32({2}));
      Value* c = data(F32({2}));
      operands.push_back(
          b.Create("builtin.combine", {a, c}, {Type::Vector({F32({2}), F32({2})})})->result(0));
    } else {
      Value* dense = data(F32({2}));
      const CatalogTensorKind kind = kind_at(operand_kinds, operands.size());
      if (kind == CatalogTensorKind::kSparseCoo) {
        dense = b.Create("pd_op.dense_to_coo_sp", {dense}, {TensorOfKind(kind)},
                         {{"sparse_dim", Attribute::Int64(1)}})
                    ->result(0);
      } else if (kind == CatalogTensorKind::kSparseCsr) {
        dense = b.Create("pd_op.dense_to_csr_sp", {dense}, {TensorOfKind(kind)})->result(0);
      }
      operands.push_back(dense);
    }
  }
  std::vector<Type> results;
  for (const ResultSpec& r : info.results) {
    const CatalogTensorKind kind = kind_at(result_kinds, results.size());
    results.push_back(r.variadic ? Type::Vector({F32({2}), F32({2})}) : TensorOfKind(kind));
  }
  AttributeMap attrs;
  for (const AttrSpec& a : info.attributes) {
    if (!a.default_value.IsNull()) {
      attrs[a.name] = a.default_value;
    } else if (a.kind == AttrKind::kArray) {
      attrs[a.name] = Attribute::Array({ValueOfKind(a.element_kind)});
    } else {
      attrs[a.name] = ValueOfKind(a.kind != AttrKind::kNull ? a.kind : a.untyped_kind);
    }
  }
  b.Create(info, operands, results, std::move(attrs));
}

// Every 50th catalog op, and the in-place and sparse ones among them, each in a program of its own.
TEST(PdOpCatalogTest, SampledOpsVerifyAndRoundTrip) {
  const std::vector<CatalogOp>& catalog = PdOpCatalog();
  std::set<CatalogCategory> categories;
  size_t sampled = 0;
  for (size_t i = 0; i < catalog.size(); i += 50) {
    const OpInfo* info = OpRegistry::Global().Lookup(catalog[i].info.name);
    ASSERT_NE(info, nullptr) << catalog[i].info.name;
    if (!IsPdOpCatalogOnly(info->name)) continue;  // a hand row: its own tests
    SCOPED_TRACE(info->name);
    categories.insert(catalog[i].category);
    ++sampled;
    Program program;
    Builder b(program.block());
    int inputs = 0;
    BuildFromSignature(*info, b, inputs);
    const Status verified = VerifyProgram(program);
    ASSERT_TRUE(verified.ok()) << verified.ToString() << "\n" << PrintProgram(program);

    const std::string json = WritePirJson(program);
    StatusOr<Program> back = ReadPirJson(json, "sample.json");
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(FindStructuralDifference(program, *back).value_or(""), "");
    EXPECT_TRUE(VerifyProgram(*back).ok());
    EXPECT_EQ(WritePirJson(*back), json);

    const std::string text = PrintProgram(program);
    StatusOr<Program> parsed = ParseProgram(text, "sample.pir");
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_EQ(FindStructuralDifference(program, *parsed).value_or(""), "");
    EXPECT_EQ(PrintProgram(*parsed), text);
  }
  EXPECT_GE(sampled, 25u);
  EXPECT_GE(categories.size(), 4u);
}

// A document in Paddle's JSON layout (paddle/fluid/pir/serialize_deserialize/, reference
// paddle-ir.md §2.2), written by hand: ops only the catalog registers, with their yaml attributes
// and result attributes, load and verify without --allow-unregistered, and write back the same.
TEST(PdOpCatalogTest, PaddleJsonOfCatalogOpsLoads) {
  const std::string tensor = R"({"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[4,8],"NCHW",[],0]})";
  const std::string flag =
      R"({"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"})";
  const std::string json =
      R"({"base_code":{"magic":"pir","trainable":true,"version":1},"program":{"regions":[)"
      R"({"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[)"
      R"({"#":"1.data","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},)"
      R"({"AT":{"#":"0.a_str","D":"x"},"N":"name"},{"AT":{"#":"1.a_place","D":[0,0,""]},"N":"place"},)"
      R"({"AT":{"#":"1.a_intarray","D":[4,8]},"N":"shape"}],"I":[],"O":[{"%":1,"TT":)" +
      tensor + R"(}],"OA":[)" + flag + R"(]},)" +
      R"({"#":"1.softplus","A":[{"AT":{"#":"0.a_f32","D":2.0},"N":"beta"},)"
      R"({"AT":{"#":"0.a_f32","D":20.0},"N":"threshold"}],"I":[{"%":1}],"O":[{"%":2,"TT":)" +
      tensor + R"(}],"OA":[)" + flag + R"(]},)" +
      R"({"#":"1.exp_","A":[],"I":[{"%":2}],"O":[{"%":3,"TT":)" + tensor + R"(}],"OA":[)" + flag +
      R"(]},)" + R"({"#":"1.exp_grad","A":[],"I":[{"%":3},{"%":1}],"O":[{"%":4,"TT":)" + tensor +
      R"(}],"OA":[)" + flag + R"(]},)" +
      R"({"#":"1.logsumexp","A":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_i32","D":1}]},"N":"axis"},)"
      R"({"AT":{"#":"0.a_bool","D":false},"N":"keepdim"},{"AT":{"#":"0.a_bool","D":false},)"
      R"("N":"reduce_all"}],"I":[{"%":4}],"O":[{"%":5,"TT":)"
      R"({"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[4],"NCHW",[],0]}}],"OA":[)" +
      flag + R"(]}]}]}]}})";
  StatusOr<Program> program = ReadPirJson(json, "catalog.json");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  std::vector<Operation*> ops = program->block().ops();
  ASSERT_EQ(ops.size(), 5u);
  for (const Operation* op : ops) EXPECT_NE(op->info(), nullptr) << op->name();
  EXPECT_EQ(ops[2]->name(), "pd_op.exp_");
  EXPECT_TRUE(ops[2]->info()->inplace);
  EXPECT_EQ(ops[4]->attribute("axis"), Attribute::Array({Attribute::Int32(1)}));
  const Status verified = VerifyProgram(*program);
  EXPECT_TRUE(verified.ok()) << verified.ToString();
  StatusOr<Program> again = ReadPirJson(WritePirJson(*program), "again.json");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(FindStructuralDifference(*program, *again).value_or(""), "");
  // A catalog op whose attribute has the wrong kind fails verification, by signature.
  std::string bad = json;
  bad.replace(bad.find(R"({"#":"0.a_f32","D":2.0})"), 23, R"({"#":"0.a_i32","D":2})");
  StatusOr<Program> wrong = ReadPirJson(bad, "bad.json");
  ASSERT_TRUE(wrong.ok()) << wrong.status().ToString();
  EXPECT_EQ(VerifyProgram(*wrong).ToString(),
            "op 1 (pd_op.softplus): error: attribute 'beta' must be float, found int32 value "
            "(Int32)2");
}

}  // namespace
}  // namespace irm::newir
