// The round-trip table: ≥ 40 programs that together use every type, attribute kind and dialect,
// each checked three ways. Text: parse(print(p)) is structurally p and prints to the same text, so
// print ∘ parse is the identity on canonical text. JSON: read(write(p)) is structurally p and
// writes the same document. Across forms: text -> JSON -> text gives back the same text.
// Structural equality (structural_equal.h) keeps the checks honest: a form that dropped something
// would still print identically after the first trip, but would no longer equal the original.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "newir/block.h"
#include "newir/builder.h"
#include "newir/parser.h"
#include "newir/pir_json.h"
#include "newir/printer.h"
#include "newir/structural_equal.h"

namespace irm::newir {
namespace {

Type T(std::vector<int64_t> dims, Type dtype = Type::F32()) {
  return Type::DenseTensor(std::move(dtype), std::move(dims));
}
Attribute Bools(std::vector<bool> values) {
  std::vector<Attribute> items;
  for (bool v : values) items.push_back(Attribute::Bool(v));
  return Attribute::Array(std::move(items));
}
Attribute Name(std::string name) { return Attribute::String(std::move(name)); }

ProcessMesh Mesh2x2() { return {{2, 2}, {0, 1, 2, 3}, {"dp", "mp"}}; }
TensorDistAttr Dist(std::vector<int64_t> dims_mapping, ProcessMesh mesh = Mesh2x2()) {
  return {std::move(mesh), std::move(dims_mapping), {}, std::nullopt};
}
Type DistT(std::vector<int64_t> dims, TensorDistAttr dist,
           std::optional<std::vector<int64_t>> local = {}) {
  return *Type::DistDenseTensor(T(std::move(dims)), std::move(dist), std::move(local));
}

// A pd_op.data op producing `type` and carrying `attrs`: most cases hang what they test on it.
Operation* Data(Builder& b, Type type, AttributeMap attrs = {}, std::string name = "x") {
  attrs.emplace("name", Name(std::move(name)));
  return b.Create("pd_op.data", {}, {std::move(type)}, std::move(attrs));
}

using BuildFn = std::function<void(Builder&)>;

struct Case {
  std::string name;
  BuildFn build;
  bool allow_unregistered = false;
};

// gtest prints a failing parameter with this instead of its bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

void Add(std::vector<Case>& cases, std::string name, BuildFn build) {
  cases.push_back({std::move(name), std::move(build)});
}

void AddScalarTypeCases(std::vector<Case>& cases) {
  const std::pair<const char*, Type> scalars[] = {
      {"BF16", Type::BF16()}, {"F16", Type::F16()},           {"F32", Type::F32()},
      {"F64", Type::F64()},   {"Bool", Type::Bool()},         {"I8", Type::I8()},
      {"U8", Type::U8()},     {"I16", Type::I16()},           {"I32", Type::I32()},
      {"I64", Type::I64()},   {"Index", Type::Index()},       {"C64", Type::C64()},
      {"C128", Type::C128()}, {"F8E4M3FN", Type::F8E4M3FN()}, {"F8E5M2", Type::F8E5M2()},
  };
  for (const auto& [name, scalar_type] : scalars) {
    // A copy: lambdas capturing structured bindings are C++20 that Clang 14 does not parse.
    const Type scalar = scalar_type;
    Add(cases, std::string("Dtype") + name, [scalar](Builder& b) {
      Operation* x = Data(b, T({2, 3}, scalar), {{"element_type", Attribute::TypeAttr(scalar)}});
      b.Create("pd_op.assign", {x->result(0)}, {T({2, 3}, scalar)});
    });
  }
}

void AddTensorTypeCases(std::vector<Case>& cases) {
  Add(cases, "DenseDims", [](Builder& b) {
    Data(b, T({-1, 3}), {}, "dynamic");
    Data(b, T({}), {}, "scalar");
    Data(b, T({0, 5}), {}, "empty");
    Data(b, T({1LL << 40, 1}), {}, "huge");
  });
  Add(cases, "DenseLayout", [](Builder& b) {
    Data(b, Type::DenseTensor(Type::F16(), {8, 4, 4, 3}, DataLayout::kNHWC));
    Data(b, Type::DenseTensor(Type::F32(), {2}, DataLayout::kUndefined), {}, "any");
  });
  Add(cases, "DenseLodOffset", [](Builder& b) {
    Data(b, Type::DenseTensor(Type::I64(), {5, 1}, DataLayout::kNCHW, {{0, 2, 5}}, 16));
  });
  Add(cases, "VectorCombineSplitSlice", [](Builder& b) {
    Operation* x = Data(b, T({2}), {}, "x");
    Operation* y = Data(b, T({3}, Type::I32()), {}, "y");
    Type vec = Type::Vector({T({2}), T({3}, Type::I32())});
    Operation* c = b.Create("builtin.combine", {x->result(0), y->result(0)}, {vec});
    b.Create("builtin.split", {c->result(0)}, {T({2}), T({3}, Type::I32())});
    b.Create("builtin.slice", {c->result(0)}, {T({3}, Type::I32())},
             {{"index", Attribute::Int32(1)}});
    b.Create("pd_op.concat",
             {c->result(0), b.Create("pd_op.full", {}, {T({1}, Type::I32())})->result(0)},
             {T({5})});
  });
  Add(cases, "NestedVectorType", [](Builder& b) {
    Data(b, T({1}),
         {{"nested",
           Attribute::TypeAttr(Type::Vector({Type::Vector({T({1})}), Type::Vector({})}))}});
  });
  Add(cases, "TensorArray", [](Builder& b) {
    Data(b, Type::DenseTensorArray(Type::F32(), {-1, 4}));
  });
  Add(cases, "SelectedRows", [](Builder& b) {
    Data(b, Type::SelectedRows(Type::F32(), {10, 20}));
  });
  Add(cases, "DistTensor", [](Builder& b) {
    Data(b, DistT({8, 6}, Dist({0, 1})));
    Data(b, DistT({8, 6}, Dist({-1, -1})), {}, "replicated");
  });
  Add(cases, "DistTensorPartialPlacements", [](Builder& b) {
    TensorDistAttr d = Dist({-1, 1});
    d.partial_status = {{0, ReduceType::kAvg}};
    d.placements =
        std::vector<Placement>{Placement::Partial(ReduceType::kAvg), Placement::Shard(1)};
    Data(b, DistT({4, 8}, d));
  });
  Add(cases, "DistTensorUnevenLocalDims", [](Builder& b) {
    Data(b, DistT({7, 4}, Dist({0, -1}), std::vector<int64_t>{4, 4}));
  });
}

void AddScalarAttributeCases(std::vector<Case>& cases) {
  Add(cases, "IntegerAttributes", [](Builder& b) {
    Data(b, T({1}),
         {{"t", Attribute::Bool(true)},
          {"f", Attribute::Bool(false)},
          {"i32_min", Attribute::Int32(std::numeric_limits<int32_t>::min())},
          {"i32_max", Attribute::Int32(std::numeric_limits<int32_t>::max())},
          {"i64_min", Attribute::Int64(std::numeric_limits<int64_t>::min())},
          {"i64_max", Attribute::Int64(std::numeric_limits<int64_t>::max())},
          {"i64_small", Attribute::Int64(3)}});
  });
  Add(cases, "FloatAttributes", [](Builder& b) {
    using L = std::numeric_limits<float>;
    Data(b, T({1}),
         {{"nan", Attribute::Float(L::quiet_NaN())},
          {"inf", Attribute::Float(L::infinity())},
          {"ninf", Attribute::Float(-L::infinity())},
          {"nzero", Attribute::Float(-0.0f)},
          {"denorm", Attribute::Float(L::denorm_min())},
          {"max", Attribute::Float(L::max())},
          {"tenth", Attribute::Float(0.1f)},
          {"whole", Attribute::Float(2.0f)}});
  });
  Add(cases, "DoubleAttributes", [](Builder& b) {
    using L = std::numeric_limits<double>;
    Data(b, T({1}),
         {{"nan", Attribute::Double(L::quiet_NaN())},
          {"inf", Attribute::Double(L::infinity())},
          {"ninf", Attribute::Double(-L::infinity())},
          {"nzero", Attribute::Double(-0.0)},
          {"denorm", Attribute::Double(L::denorm_min())},
          {"lowest", Attribute::Double(L::lowest())},
          {"tenth", Attribute::Double(0.1)},
          {"third", Attribute::Double(1.0 / 3.0)}});
  });
  Add(cases, "StringAttributes", [](Builder& b) {
    Data(b, T({1}),
         {{"empty", Name("")},
          {"quotes", Name("say \"hi\"")},
          {"backslash", Name("a\\b")},
          {"control", Name("line\nnext\ttab\x01")},
          {"utf8", Name("gr\xC3\xBC\xC3\x9F \xE4\xB8\xAD")},
          {"braces", Name("{x:[1,2]}, (y)")}});
  });
}

void AddCompositeAttributeCases(std::vector<Case>& cases) {
  Add(cases, "ArrayAttributes", [](Builder& b) {
    Data(b, T({1}),
         {{"empty", Attribute::Array({})},
          {"nested",
           Attribute::Array({Attribute::Array({Attribute::Int32(1)}), Attribute::Array({})})},
          {"mixed", Attribute::Array({Attribute::Int64(1), Name("a"), Attribute::Float(0.5f),
                                      Attribute::DataTypeAttr(DataType::kInt8)})},
          {"stop_gradient", Bools({true})}});
  });
  Add(cases, "TypeAttributes", [](Builder& b) {
    Data(b, T({1}),
         {{"tensor", Attribute::TypeAttr(T({-1, 2}, Type::BF16()))},
          {"vec", Attribute::TypeAttr(Type::Vector({T({1}), T({2}, Type::I8())}))},
          {"dist", Attribute::TypeAttr(DistT({4, 4}, Dist({1, -1})))},
          {"array", Attribute::TypeAttr(Type::DenseTensorArray(Type::I32(), {3}))}});
  });
  Add(cases, "IntArrayAttributes", [](Builder& b) {
    Data(b, T({1}),
         {{"empty", Attribute::IntArrayAttr({})},
          {"values", Attribute::IntArrayAttr({-1, 0, 1LL << 40})}});
  });
  Add(cases, "DataTypeAttributes", [](Builder& b) {
    AttributeMap attrs;
    const DataType all[] = {
        DataType::kUndefined, DataType::kBool,         DataType::kUInt8,     DataType::kInt8,
        DataType::kUInt16,    DataType::kInt16,        DataType::kUInt32,    DataType::kInt32,
        DataType::kUInt64,    DataType::kInt64,        DataType::kFloat32,   DataType::kFloat64,
        DataType::kComplex64, DataType::kComplex128,   DataType::kPstring,   DataType::kFloat16,
        DataType::kBFloat16,  DataType::kFloat8E4M3FN, DataType::kFloat8E5M2};
    int i = 0;
    for (DataType d : all) attrs.emplace("d" + std::to_string(i++), Attribute::DataTypeAttr(d));
    Data(b, T({1}), std::move(attrs));
  });
  Add(cases, "PlaceAttributes", [](Builder& b) {
    Place custom = Place::Of(AllocationType::kCustom, 1);
    custom.device_type = "npu";
    Data(b, T({1}),
         {{"cpu", Attribute::PlaceAttr(Place::Of(AllocationType::kCpu))},
          {"gpu0", Attribute::PlaceAttr(Place::Of(AllocationType::kGpu, 0))},
          {"gpu3", Attribute::PlaceAttr(Place::Of(AllocationType::kGpu, 3))},
          {"pinned", Attribute::PlaceAttr(Place::Of(AllocationType::kGpuPinned))},
          {"xpu", Attribute::PlaceAttr(Place::Of(AllocationType::kXpu, 1))},
          {"undefined", Attribute::PlaceAttr(Place{})},
          {"custom", Attribute::PlaceAttr(custom)}});
  });
  Add(cases, "DataLayoutAttributes", [](Builder& b) {
    Data(b, T({1}),
         {{"nchw", Attribute::DataLayoutAttr(DataLayout::kNCHW)},
          {"nhwc", Attribute::DataLayoutAttr(DataLayout::kNHWC)},
          {"any", Attribute::DataLayoutAttr(DataLayout::kUndefined)},
          {"ncdhw", Attribute::DataLayoutAttr(DataLayout::kNCDHW)}});
  });
  Add(cases, "ScalarAttributes", [](Builder& b) {
    Data(b, T({1}),
         {{"i64", Attribute::Scalar({DataType::kInt64, int64_t{-7}})},
          {"f32", Attribute::Scalar({DataType::kFloat32, 0.25})},
          {"f64_nan", Attribute::Scalar({DataType::kFloat64, std::nan("")})},
          {"flag", Attribute::Scalar({DataType::kBool, true})}});
  });
  Add(cases, "DistAttributes", [](Builder& b) {
    TensorDistAttr partial = Dist({-1, 0});
    partial.partial_status = {{1, ReduceType::kMax}};
    OperationDistAttr op_dist{
        Mesh2x2(),
        {Attribute::TensorDist(Dist({0, -1})),
         Attribute::Array({Attribute::TensorDist(Dist({-1})), Attribute::TensorDist(Dist({1}))}),
         Attribute()},
        {Attribute::TensorDist(partial)},
        2};
    Data(b, T({1}),
         {{"mesh", Attribute::ProcessMeshAttr(Mesh2x2())},
          {"mesh_no_names", Attribute::ProcessMeshAttr({{4}, {3, 2, 1, 0}, {}})},
          {"tensor_dist", Attribute::TensorDist(partial)},
          {"op_dist_attr", Attribute::OperationDist(op_dist)}});
  });
}

void AddStructureCases(std::vector<Case>& cases) {
  Add(cases, "Parameters", [](Builder& b) {
    Operation* w = b.Create("builtin.parameter", {}, {T({8, 2})},
                            {{"parameter_name", Name("w")},
                             {"persistable", Bools({true})},
                             {"stop_gradient", Bools({false})}});
    Operation* c = b.Create("builtin.constant", {}, {T({1})}, {{"value", Name("c")}});
    Operation* add = b.Create("pd_op.add", {w->result(0), c->result(0)}, {T({8, 2})});
    b.Create("builtin.set_parameter", {add->result(0)}, {}, {{"parameter_name", Name("w")}});
    b.Create("builtin.shadow_output", {add->result(0)}, {}, {{"output_name", Name("out")}});
  });
  Add(cases, "OptionalOperandLeftEmpty", [](Builder& b) {
    Operation* x = Data(b, T({4, 8}));
    Operation* bias = Data(b, T({8}), {}, "bias");
    b.Create("pd_op.layer_norm", {x->result(0), nullptr, bias->result(0)},
             {T({4, 8}), T({4}), T({4})},
             {{"begin_norm_axis", Attribute::Int32(1)}, {"epsilon", Attribute::Float(1e-5f)}});
  });
  Add(cases, "MultipleResultsPartlyUnused", [](Builder& b) {
    Operation* x = Data(b, T({4, 8}));
    Operation* shape =
        b.Create("pd_op.full_int_array", {}, {T({2}, Type::I64())},
                 {{"value", Attribute::Array({Attribute::Int64(8), Attribute::Int64(4)})}});
    b.Create("pd_op.reshape", {x->result(0), shape->result(0)}, {T({8, 4}), T({0, 4, 8})});
  });
  Add(cases, "IfWithBranches", [](Builder& b) {
    Operation* cond = Data(b, T({}, Type::Bool()), {}, "cond");
    Operation* x = Data(b, T({4}));
    Operation* op = b.Create("pd_op.if", {cond->result(0)}, {T({4})}, {}, 2);
    Builder then_b(op->region(0).AddBlock());
    Operation* r = then_b.Create("pd_op.relu", {x->result(0)}, {T({4})});
    then_b.Create("cf.yield", {r->result(0)}, {});
    Builder else_b(op->region(1).AddBlock());
    else_b.Create("cf.yield", {x->result(0)}, {});
    b.Create("pd_op.relu", {op->result(0)}, {T({4})});
  });
  Add(cases, "WhileLoop", [](Builder& b) {
    Operation* i = Data(b, T({1}, Type::I64()), {}, "i");
    Operation* limit = Data(b, T({1}, Type::I64()), {}, "limit");
    Operation* cond =
        b.Create("pd_op.less_than", {i->result(0), limit->result(0)}, {T({1}, Type::Bool())});
    Operation* loop =
        b.Create("pd_op.while", {cond->result(0), i->result(0)}, {T({1}, Type::I64())}, {}, 1);
    Block& body = loop->region(0).AddBlock();
    Value* iv = body.AddArgument(T({1}, Type::I64()));
    iv->SetAttribute("stop_gradient", Bools({true}));
    Builder bb(body);
    Operation* one =
        bb.Create("pd_op.full", {}, {T({1}, Type::I64())}, {{"value", Attribute::Double(1.0)}});
    Operation* next = bb.Create("pd_op.add", {iv, one->result(0)}, {T({1}, Type::I64())});
    Operation* again =
        bb.Create("pd_op.less_than", {next->result(0), limit->result(0)}, {T({1}, Type::Bool())});
    bb.Create("cf.yield", {again->result(0), next->result(0)}, {});
  });
  Add(cases, "IfInsideWhile", [](Builder& b) {
    Operation* c = Data(b, T({}, Type::Bool()), {}, "c");
    Operation* x = Data(b, T({2}));
    Operation* loop = b.Create("pd_op.while", {c->result(0), x->result(0)}, {T({2})}, {}, 1);
    Block& body = loop->region(0).AddBlock();
    Value* xv = body.AddArgument(T({2}));
    Builder bb(body);
    Operation* op = bb.Create("pd_op.if", {c->result(0)}, {T({2})}, {}, 2);
    Builder(op->region(0).AddBlock()).Create("cf.yield", {xv}, {});
    Builder eb(op->region(1).AddBlock());
    eb.Create("cf.yield", {eb.Create("pd_op.tanh", {xv}, {T({2})})->result(0)}, {});
    bb.Create("cf.yield", {c->result(0), op->result(0)}, {});
  });
  Add(cases, "DeepNesting", [](Builder& b) {
    Operation* c = Data(b, T({}, Type::Bool()), {}, "c");
    Block* block = b.block();
    for (int depth = 0; depth < 12; ++depth) {
      Builder at(*block);
      Operation* op = at.Create("pd_op.if", {c->result(0)}, {}, {}, 2);
      Builder(op->region(1).AddBlock()).Create("cf.yield", {}, {});
      block = &op->region(0).AddBlock();
    }
    Builder(*block).Create("cf.yield", {}, {});
  });
}

// Keyword arguments appear in no registered op's regions yet; an opaque op carries them.
void AddOpaqueCases(std::vector<Case>& cases) {
  cases.push_back({"BlockAndKeywordArguments",
                   [](Builder& b) {
                     Operation* op = b.Create("test.region_op", {}, {}, {}, 1);
                     Block& block = op->region(0).AddBlock();
                     Value* used = block.AddArgument(T({3}));
                     used->SetAttribute("stop_gradient", Bools({false}));
                     block.AddArgument(T({5}, Type::I32()));  // never read
                     Value* kw = *block.AddKwarg("scale", T({1}));
                     kw->SetAttribute("persistable", Bools({true}));
                     (void)block.AddKwarg("unused", T({}));
                     Builder in(block);
                     Operation* m = in.Create("pd_op.multiply", {used, kw}, {T({3})});
                     in.Create("cf.yield", {m->result(0)}, {});
                   },
                   true});
  cases.push_back({"UnregisteredOpWithEmptyRegion",
                   [](Builder& b) {
                     Operation* x = Data(b, T({2}));
                     Operation* op = b.Create("my_dialect.thing", {x->result(0)}, {T({2})},
                                              {{"k", Attribute::Int32(1)}}, 2);
                     Builder(op->region(0).AddBlock()).Create("cf.yield", {x->result(0)}, {});
                   },
                   true});
}

void AddDialectCases(std::vector<Case>& cases) {
  Add(cases, "CommunicationOps", [](Builder& b) {
    Operation* x = Data(b, T({4, 8}));
    Operation* ar =
        b.Create("pd_op.all_reduce", {x->result(0)}, {T({4, 8})},
                 {{"ring_id", Attribute::Int32(0)}, {"reduce_type", Attribute::Int32(0)}});
    Operation* sum =
        b.Create("pd_op.c_allreduce_sum_", {ar->result(0)}, {T({4, 8})},
                 {{"ring_id", Attribute::Int32(1)}, {"use_calc_stream", Attribute::Bool(true)}});
    Operation* ag = b.Create("pd_op.all_gather", {sum->result(0)}, {T({8, 8})},
                             {{"ring_id", Attribute::Int32(0)}, {"nranks", Attribute::Int32(2)}});
    b.Create("pd_op.send_v2", {ag->result(0)}, {},
             {{"peer", Attribute::Int32(1)}, {"ring_id", Attribute::Int32(2)}});
    b.Create("pd_op.recv_v2", {}, {T({8, 8})},
             {{"peer", Attribute::Int32(0)},
              {"out_shape", Attribute::Array({Attribute::Int32(8), Attribute::Int32(8)})}});
    b.Create("pd_op.p_send", {x->result(0)}, {}, {{"peer", Attribute::Int32(1)}});
    b.Create("pd_op.p_recv", {}, {T({4, 8})}, {{"peer", Attribute::Int32(1)}});
    b.Create("pd_op.barrier", {x->result(0)}, {T({4, 8})});
  });
  Add(cases, "DistOps", [](Builder& b) {
    Operation* x = Data(b, T({8, 8}));
    OperationDistAttr shard{Mesh2x2(), {}, {Attribute::TensorDist(Dist({0, -1}))}, -1};
    Operation* s = b.Create("dist_op.shard_tensor", {x->result(0)}, {DistT({8, 8}, Dist({0, -1}))},
                            {{"op_dist_attr", Attribute::OperationDist(shard)}});
    OperationDistAttr reshard{Mesh2x2(),
                              {Attribute::TensorDist(Dist({0, -1}))},
                              {Attribute::TensorDist(Dist({-1, 1}))},
                              0};
    Operation* r = b.Create("dist_op.reshard", {s->result(0)}, {DistT({8, 8}, Dist({-1, 1}))},
                            {{"op_dist_attr", Attribute::OperationDist(reshard)}});
    Operation* local = b.Create("dist_op.dtensor_to_local", {r->result(0)}, {T({8, 4})});
    b.Create("dist_op.dtensor_from_local", {local->result(0)}, {DistT({8, 8}, Dist({-1, 1}))});
  });
  Add(cases, "MlpTrainingStep", [](Builder& b) {
    Operation* x = Data(b, T({4, 8}), {{"stop_gradient", Bools({true})}});
    Operation* w = b.Create("builtin.parameter", {}, {T({8, 2})}, {{"parameter_name", Name("w")}});
    Operation* mm = b.Create(
        "pd_op.matmul", {x->result(0), w->result(0)}, {T({4, 2})},
        {{"transpose_x", Attribute::Bool(false)}, {"transpose_y", Attribute::Bool(false)}});
    Operation* relu = b.Create("pd_op.relu", {mm->result(0)}, {T({4, 2})});
    Operation* loss =
        b.Create("pd_op.mean", {relu->result(0)}, {T({})},
                 {{"axis", Attribute::IntArrayAttr({})}, {"keepdim", Attribute::Bool(false)}});
    Operation* seed = b.Create("pd_op.full", {}, {T({})}, {{"value", Attribute::Double(1.0)}});
    Operation* dmean = b.Create("pd_op.mean_grad", {relu->result(0), seed->result(0)}, {T({4, 2})},
                                {{"axis", Attribute::IntArrayAttr({})}});
    Operation* drelu =
        b.Create("pd_op.relu_grad", {relu->result(0), dmean->result(0)}, {T({4, 2})});
    Operation* grads = b.Create("pd_op.matmul_grad", {x->result(0), w->result(0), drelu->result(0)},
                                {T({4, 8}), T({8, 2})});
    Operation* lr = b.Create("pd_op.full", {}, {T({1})}, {{"value", Attribute::Double(0.1)}});
    b.Create("pd_op.sgd_", {w->result(0), lr->result(0), grads->result(1), nullptr},
             {T({8, 2}), T({8, 2})}, {{"multi_precision", Attribute::Bool(false)}});
    b.Create("builtin.shadow_output", {loss->result(0)}, {}, {{"output_name", Name("loss")}});
    b.Create("pd_op.fetch", {loss->result(0)}, {T({})},
             {{"col", Attribute::Int32(0)}, {"name", Name("loss")}});
  });
}

std::vector<Case> AllCases() {
  std::vector<Case> cases;
  Add(cases, "EmptyProgram", [](Builder&) {});
  AddScalarTypeCases(cases);
  AddTensorTypeCases(cases);
  AddScalarAttributeCases(cases);
  AddCompositeAttributeCases(cases);
  AddStructureCases(cases);
  AddDialectCases(cases);
  AddOpaqueCases(cases);
  return cases;
}

class RoundTripTest : public testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    Builder b(program_.block());
    GetParam().build(b);
    parse_options_.allow_unregistered = GetParam().allow_unregistered;
  }
  Program program_;
  ParseOptions parse_options_;
};

TEST_P(RoundTripTest, PrintParseIsTheIdentity) {
  const std::string text = PrintProgram(program_);
  StatusOr<Program> parsed = ParseProgram(text, "case.pir", parse_options_);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString() << "\n" << text;
  EXPECT_EQ(FindStructuralDifference(program_, *parsed).value_or("equal"), "equal") << text;
  EXPECT_EQ(PrintProgram(*parsed), text);
}

TEST_P(RoundTripTest, JsonWriteReadIsTheIdentity) {
  const std::string json = WritePirJson(program_);
  StatusOr<Program> read = ReadPirJson(json, "case.json");
  ASSERT_TRUE(read.ok()) << read.status().ToString() << "\n" << json;
  EXPECT_EQ(FindStructuralDifference(program_, *read).value_or("equal"), "equal") << json;
  EXPECT_EQ(WritePirJson(*read), json);
}

TEST_P(RoundTripTest, TextToJsonToTextIsTheIdentity) {
  const std::string text = PrintProgram(program_);
  StatusOr<Program> parsed = ParseProgram(text, "case.pir", parse_options_);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  StatusOr<Program> read = ReadPirJson(WritePirJson(*parsed), "case.json");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(PrintProgram(*read), text);
}

TEST(RoundTripTableTest, CoversAtLeastFortyPrograms) { EXPECT_GE(AllCases().size(), 40u); }

INSTANTIATE_TEST_SUITE_P(Programs, RoundTripTest, testing::ValuesIn(AllCases()),
                         [](const testing::TestParamInfo<Case>& info) { return info.param.name; });

}  // namespace
}  // namespace irm::newir
