// Tests of new-IR attributes: bitwise float equality, structural equality and the typed print form.
#include "newir/attributes.h"

#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <unordered_set>

#include <gtest/gtest.h>

#include "newir/ir_pool.h"

namespace irm::newir {
namespace {

// An Array attribute's elements, copied out of its storage.
std::vector<Attribute> Elements(const Attribute& array) {
  return std::vector<Attribute>(array.AsArray()->begin(), array.AsArray()->end());
}

TEST(AttributesTest, ScalarsPrintTyped) {
  EXPECT_EQ(Attribute::Bool(true).ToString(), "true");
  EXPECT_EQ(Attribute::Bool(false).ToString(), "false");
  EXPECT_EQ(Attribute::Int32(0).ToString(), "(Int32)0");
  EXPECT_EQ(Attribute::Int64(-7).ToString(), "(Int64)-7");
  EXPECT_EQ(Attribute::Float(0.5f).ToString(), "(Float)0.5");
  EXPECT_EQ(Attribute::Float(0.1f).ToString(), "(Float)0.1");
  EXPECT_EQ(Attribute::Double(1.0).ToString(), "(Double)1");
  EXPECT_EQ(Attribute::Double(1e-300).ToString(), "(Double)1e-300");
  EXPECT_EQ(Attribute::String("a\"b\\c").ToString(), R"("a\"b\\c")");
  EXPECT_EQ(Attribute().ToString(), "<#AttrNull>");
}

TEST(AttributesTest, SpecialFloatsAreKeptAndCompareByBits) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(Attribute::Double(nan), Attribute::Double(nan));
  EXPECT_EQ(Attribute::Float(std::nanf("")), Attribute::Float(std::nanf("")));
  EXPECT_NE(Attribute::Double(0.0), Attribute::Double(-0.0));
  EXPECT_EQ(Attribute::Double(nan).ToString(), "(Double)nan");
  EXPECT_EQ(Attribute::Double(inf).ToString(), "(Double)inf");
  EXPECT_EQ(Attribute::Float(-std::numeric_limits<float>::infinity()).ToString(), "(Float)-inf");
  EXPECT_TRUE(std::isnan(*Attribute::Double(nan).AsDouble()));
  EXPECT_EQ(Attribute::Scalar({DataType::kFloat64, nan}),
            Attribute::Scalar({DataType::kFloat64, nan}));
}

TEST(AttributesTest, KindsDistinguishEqualLookingValues) {
  EXPECT_NE(Attribute::Int32(1), Attribute::Int64(1));
  EXPECT_NE(Attribute::Float(1), Attribute::Double(1));
  EXPECT_NE(Attribute::IntArrayAttr({1, 2}),
            Attribute::Array({Attribute::Int64(1), Attribute::Int64(2)}));
  EXPECT_EQ(Attribute::Int32(1).kind(), AttrKind::kInt32);
  EXPECT_EQ(Attribute::Int32(1).AsInt64(), nullptr);
  ASSERT_NE(Attribute::Int32(1).AsInt32(), nullptr);
  EXPECT_EQ(*Attribute::Int32(1).AsInt32(), 1);
  std::unordered_set<Attribute> set = {Attribute::String("x"), Attribute::String("x"),
                                       Attribute::String("y")};
  EXPECT_EQ(set.size(), 2u);
}

TEST(AttributesTest, ArraysAndTypes) {
  Attribute a = Attribute::Array({Attribute::Bool(false), Attribute::Bool(true)});
  EXPECT_EQ(a.ToString(), "[false,true]");
  EXPECT_EQ(a, Attribute::Array({Attribute::Bool(false), Attribute::Bool(true)}));
  EXPECT_NE(a, Attribute::Array({Attribute::Bool(false)}));
  EXPECT_EQ(Attribute::Array({}).ToString(), "[]");
  Attribute t = Attribute::TypeAttr(Type::DenseTensor(Type::F32(), {2}));
  EXPECT_EQ(t.ToString(), "builtin.tensor<2xf32>");
  EXPECT_EQ(t, Attribute::TypeAttr(Type::DenseTensor(Type::F32(), {2})));
}

TEST(AttributesTest, PdOpValueAttributesPrint) {
  EXPECT_EQ(Attribute::IntArrayAttr({-1, 30}).ToString(), "(pd_op.IntArray)[-1,30]");
  EXPECT_EQ(Attribute::DataTypeAttr(DataType::kFloat32).ToString(), "(pd_op.DataType)float32");
  EXPECT_EQ(Attribute::DataTypeAttr(DataType::kBFloat16).ToString(), "(pd_op.DataType)bfloat16");
  EXPECT_EQ(Attribute::DataTypeAttr(DataType::kUndefined).ToString(), "(pd_op.DataType)Undefined");
  EXPECT_EQ(DataTypeFromName("int64"), DataType::kInt64);
  EXPECT_FALSE(DataTypeFromName("int65").has_value());
  EXPECT_EQ(Attribute::PlaceAttr(Place::Of(AllocationType::kCpu)).ToString(),
            "(pd_op.Place)Place(cpu)");
  EXPECT_EQ(Attribute::PlaceAttr(Place::Of(AllocationType::kGpu, 0)).ToString(),
            "(pd_op.Place)Place(gpu:0)");
  EXPECT_EQ(Attribute::PlaceAttr(Place::Of(AllocationType::kUndefined, 0)).ToString(),
            "(pd_op.Place)Place(undefined:0)");
  EXPECT_EQ(Attribute::PlaceAttr(Place::Of(AllocationType::kGpuPinned)).ToString(),
            "(pd_op.Place)Place(gpu_pinned)");
  EXPECT_NE(Attribute::PlaceAttr(Place::Of(AllocationType::kGpu, 0)),
            Attribute::PlaceAttr(Place::Of(AllocationType::kGpu, 1)));
  EXPECT_EQ(Attribute::DataLayoutAttr(DataLayout::kNCHW).ToString(), "(pd_op.DataLayout)NCHW");
  EXPECT_EQ(Attribute::Scalar({DataType::kInt64, int64_t{3}}).ToString(), "(pd_op.Scalar:int64)3");
  EXPECT_NE(Attribute::Scalar({DataType::kInt64, int64_t{3}}),
            Attribute::Scalar({DataType::kInt32, int64_t{3}}));
}

TEST(AttributesTest, DistAttributes) {
  ProcessMesh mesh{{2, 2}, {0, 1, 2, 3}, {"x", "y"}};
  // Paddle does not print dim names; the canonical text adds them (printer.h).
  EXPECT_EQ(Attribute::ProcessMeshAttr(mesh).ToString(),
            "mesh_shape:[2,2],process_ids:[0,1,2,3],dim_names:[\"x\",\"y\"]");
  ProcessMesh renamed = mesh;
  renamed.dim_names = {"dp", "mp"};
  EXPECT_NE(Attribute::ProcessMeshAttr(mesh), Attribute::ProcessMeshAttr(renamed));
  mesh.dim_names.clear();
  EXPECT_EQ(Attribute::ProcessMeshAttr(mesh).ToString(), "mesh_shape:[2,2],process_ids:[0,1,2,3]");

  TensorDistAttr td{
      mesh, {0, 1, -1}, {}, std::vector<Placement>{Placement::Shard(0), Placement::Shard(1)}};
  Attribute tda = Attribute::TensorDist(td);
  EXPECT_EQ(tda.ToString(),
            "mesh_shape:[2,2],process_ids:[0,1,2,3],dims_mappings:[0,1,-1], "
            "placements:[Shard(dim=0), Shard(dim=1)]");
  TensorDistAttr partial = td;
  partial.placements.reset();
  partial.dims_mapping = {-1, -1, -1};
  partial.partial_status = {{0, ReduceType::kSum}, {1, ReduceType::kAvg}};
  EXPECT_EQ(Attribute::TensorDist(partial).ToString(),
            "mesh_shape:[2,2],process_ids:[0,1,2,3],dims_mappings:[-1,-1,-1], "
            "partial(0,SUM),partial(1,AVG)");
  EXPECT_NE(Attribute::TensorDist(partial), tda);

  OperationDistAttr od;
  od.mesh = mesh;
  od.operands = {Attribute()};
  od.results = {tda};
  Attribute oda = Attribute::OperationDist(od);
  EXPECT_EQ(oda.ToString(),
            "{mesh:{shape:[2,2],process_ids:[0,1,2,3]},operand(0):{<#AttrNull>},"
            "result(0):{mesh_shape:[2,2],process_ids:[0,1,2,3],dims_mappings:[0,1,-1], "
            "placements:[Shard(dim=0), Shard(dim=1)]},chunk_id:-1}");
  OperationDistAttr chunked = od;
  chunked.chunk_id = 2;
  EXPECT_NE(Attribute::OperationDist(chunked), oda);
  EXPECT_EQ(Attribute::OperationDist(od), oda);
  EXPECT_STREQ(ReduceTypeName(ReduceType::kProd), "PRODUCT");
  EXPECT_EQ(ReduceTypeFromInt(6), ReduceType::kAll);
  EXPECT_FALSE(ReduceTypeFromInt(7).has_value());
}

// Small values share interned storage, larger ones are allocated: both kinds must compare, hash
// and read back alike, at the edges of the interned ranges too.
TEST(AttributesTest, InternedAndAllocatedValuesAgree) {
  for (int64_t v : {-9, -8, 0, 1, 256, 1024, 1025, 1 << 20}) {
    const auto i32 = static_cast<int32_t>(v);
    EXPECT_EQ(Attribute::Int32(i32), Attribute::Int32(i32)) << v;
    EXPECT_EQ(Attribute::Int32(i32).Hash(), Attribute::Int32(i32).Hash()) << v;
    EXPECT_EQ(*Attribute::Int32(i32).AsInt32(), i32);
    EXPECT_EQ(*Attribute::Int64(v).AsInt64(), v);
    EXPECT_NE(Attribute::Int32(i32), Attribute::Int64(v)) << v;
    EXPECT_NE(Attribute::Int32(i32), Attribute::Int32(i32 + 1)) << v;
  }
  EXPECT_EQ(Attribute::Int32(1024).ToString(), "(Int32)1024");
  EXPECT_EQ(Attribute::Int64(1025).ToString(), "(Int64)1025");
  EXPECT_EQ(*Attribute::Bool(true).AsBool(), true);
  EXPECT_NE(Attribute::Bool(true), Attribute::Bool(false));
  EXPECT_EQ(Attribute::String(""), Attribute::String(std::string()));
  EXPECT_NE(Attribute::String(""), Attribute::String(" "));
  EXPECT_EQ(Attribute::String("").ToString(), "\"\"");
  EXPECT_EQ(*Attribute::DataTypeAttr(DataType::kFloat8E5M2).AsDataType(), DataType::kFloat8E5M2);
  EXPECT_EQ(Attribute::DataLayoutAttr(DataLayout::kStrided).ToString(),
            "(pd_op.DataLayout)STRIDED");
  const Place gpu1 = Place::Of(AllocationType::kGpu, 1);
  const Place cpu = Place::Of(AllocationType::kCpu);
  EXPECT_EQ(*Attribute::PlaceAttr(gpu1).AsPlace(), gpu1);
  EXPECT_EQ(*Attribute::PlaceAttr(cpu).AsPlace(), cpu);
  EXPECT_EQ(Attribute::PlaceAttr(Place{}).ToString(), "(pd_op.Place)Place(undefined:0)");
  EXPECT_NE(Attribute::PlaceAttr(cpu), Attribute::PlaceAttr(Place::Of(AllocationType::kCpu, 1)));
  Place custom{AllocationType::kCpu, 0, "npu"};
  EXPECT_EQ(Attribute::PlaceAttr(custom).AsPlace()->device_type, "npu");
  EXPECT_NE(Attribute::PlaceAttr(custom), Attribute::PlaceAttr(cpu));
}

// Arrays of up to 4 bools are interned by their bit pattern, IntArrays of no or one small int by
// value: each one must still hold its own elements in order, and equal (and hash) like an equal
// one that is not interned.
TEST(AttributesTest, InternedBoolArraysKeepTheirElements) {
  for (size_t n = 1; n <= 5; ++n) {
    for (size_t bits = 0; bits < (size_t{1} << n); ++bits) {
      std::vector<Attribute> items;
      std::string expected = "[";
      for (size_t i = 0; i < n; ++i) {
        const bool b = ((bits >> i) & 1) != 0;
        items.push_back(Attribute::Bool(b));
        expected += (i > 0 ? "," : "") + std::string(b ? "true" : "false");
      }
      expected += "]";
      const Attribute array = Attribute::Array(items);
      ASSERT_NE(array.AsArray(), nullptr);
      EXPECT_EQ(Elements(array), items) << expected;
      EXPECT_EQ(array.ToString(), expected);
      EXPECT_EQ(array, Attribute::Array(items));
      EXPECT_EQ(array.Hash(), Attribute::Array(items).Hash());
    }
  }
  // Not all bools: not interned, still equal by content.
  for (const std::vector<int64_t>& ints :
       std::vector<std::vector<int64_t>>{{}, {-9}, {-8}, {0}, {1}, {1024}, {1025}, {1, 2}}) {
    const Attribute a = Attribute::IntArrayAttr(ints);
    EXPECT_EQ(a.AsIntArray()->values, ints);
    EXPECT_EQ(a, Attribute::IntArrayAttr(ints));
    EXPECT_EQ(a.Hash(), Attribute::IntArrayAttr(ints).Hash());
  }
  EXPECT_NE(Attribute::IntArrayAttr({1}), Attribute::IntArrayAttr({1, 1}));
  EXPECT_NE(Attribute::IntArrayAttr({}), Attribute::IntArrayAttr({0}));
  const std::vector<Attribute> mixed = {Attribute::Bool(true), Attribute::Int32(1)};
  EXPECT_EQ(Elements(Attribute::Array(mixed)), mixed);
  EXPECT_NE(Attribute::Array(mixed),
            Attribute::Array({Attribute::Bool(true), Attribute::Bool(true)}));
  EXPECT_NE(Attribute::Array({Attribute::Bool(true)}),
            Attribute::Array({Attribute::Bool(true), Attribute::Bool(false)}));
}

// Arrays of empty strings (the legacy names of results made from attributes) are interned up to
// four, and ArrayFrom / IntArrayFrom, which look interned values up from a view, make the same
// values as Array / IntArrayAttr from a vector — interned or not.
TEST(AttributesTest, ArraysFromViewsAndEmptyStringArraysAgree) {
  for (size_t n = 1; n <= 6; ++n) {
    const std::vector<Attribute> empties(n, Attribute::String(""));
    const Attribute array = Attribute::Array(empties);
    ASSERT_NE(array.AsArray(), nullptr);
    EXPECT_EQ(Elements(array), empties) << n;
    EXPECT_EQ(array, Attribute::ArrayFrom(empties)) << n;
    EXPECT_EQ(array.Hash(), Attribute::ArrayFrom(empties).Hash()) << n;
    std::vector<Attribute> one_named = empties;
    one_named[n - 1] = Attribute::String("x");
    EXPECT_NE(Attribute::Array(one_named), array) << n;
    EXPECT_EQ(Elements(Attribute::ArrayFrom(one_named)), one_named) << n;
  }
  const std::vector<Attribute> mixed = {Attribute::Bool(false), Attribute::String("")};
  EXPECT_EQ(Attribute::ArrayFrom(mixed).ToString(), "[false,\"\"]");
  EXPECT_EQ(Attribute::ArrayFrom({}), Attribute::Array({}));
  for (const std::vector<int64_t>& ints :
       std::vector<std::vector<int64_t>>{{}, {-9}, {0}, {1}, {1025}, {1, 2}}) {
    EXPECT_EQ(Attribute::IntArrayFrom(ints), Attribute::IntArrayAttr(ints));
    EXPECT_EQ(Attribute::IntArrayFrom(ints).AsIntArray()->values, ints);
  }
}

// Floats and doubles made again may share a recent storage: whatever evicts whom, each value
// comes back as itself, bit for bit (-0.0 and 0.0 apart, NaN payloads kept).
TEST(AttributesTest, RecentFloatsComeBackBitForBit) {
  std::vector<double> values = {0.0, -0.0, 1.0, 0.9, 1e-8, std::nan("1"), std::nan("2")};
  for (int i = 0; i < 500; ++i) values.push_back(i * 0.125);
  for (int round = 0; round < 2; ++round) {
    for (double v : values) {
      const Attribute d = Attribute::Double(v);
      EXPECT_EQ(std::bit_cast<uint64_t>(*d.AsDouble()), std::bit_cast<uint64_t>(v)) << v;
      const auto f = static_cast<float>(v);
      EXPECT_EQ(std::bit_cast<uint32_t>(*Attribute::Float(f).AsFloat()),
                std::bit_cast<uint32_t>(f));
      EXPECT_EQ(d, Attribute::Double(v));
    }
  }
  EXPECT_NE(Attribute::Double(0.0), Attribute::Double(-0.0));
}

// Dist values live out of line: equality and hashing still go by content, not by address.
TEST(AttributesTest, DistValuesCompareByContent) {
  const ProcessMesh mesh{{2}, {0, 1}, {}};
  EXPECT_EQ(Attribute::ProcessMeshAttr(mesh), Attribute::ProcessMeshAttr(mesh));
  EXPECT_EQ(Attribute::ProcessMeshAttr(mesh).Hash(), Attribute::ProcessMeshAttr(mesh).Hash());
  EXPECT_EQ(*Attribute::ProcessMeshAttr(mesh).AsProcessMesh(), mesh);
  const TensorDistAttr td{mesh, {0, -1}, {}, std::nullopt};
  EXPECT_EQ(Attribute::TensorDist(td), Attribute::TensorDist(td));
  EXPECT_EQ(*Attribute::TensorDist(td).AsTensorDist(), td);
  EXPECT_EQ(Attribute::TensorDist(td).AsProcessMesh(), nullptr);
  EXPECT_EQ(Attribute::Int32(0).AsTensorDist(), nullptr);
  EXPECT_EQ(Attribute::TensorDist(td).kind(), AttrKind::kTensorDist);
}

// Strings and arrays keep their contents in the attribute's own storage: copies share it, and it
// stays valid as long as any copy does, whatever the size (past the pools' largest block too).
TEST(AttributesTest, StringsAndArraysOutliveTheAttributeTheyWereMadeFrom) {
  for (size_t length : {1, 15, 16, 100, 1000, 1024, 5000}) {
    std::string text(length, 'x');
    text.front() = 'a';
    text.back() = 'z';
    Attribute copy;
    {
      const Attribute original = Attribute::String(text);
      copy = original;
      EXPECT_EQ(*original.AsString(), text);
    }
    ASSERT_NE(copy.AsString(), nullptr);
    EXPECT_EQ(*copy.AsString(), text) << length;
    EXPECT_EQ(copy, Attribute::String(text));
    EXPECT_EQ(copy.Hash(), Attribute::String(text).Hash());
    EXPECT_NE(copy, Attribute::String(text + "!"));
  }
  std::vector<Attribute> names;
  for (int i = 0; i < 12; ++i) names.push_back(Attribute::String("linear_" + std::to_string(i)));
  Attribute moved_to;
  {
    Attribute array = Attribute::Array(names);
    const Attribute& self = array;
    array = self;  // self-assignment keeps it
    moved_to = std::move(array);
    EXPECT_TRUE(array.IsNull());  // NOLINT(bugprone-use-after-move): a move leaves null
  }
  names.clear();
  ASSERT_NE(moved_to.AsArray(), nullptr);
  ASSERT_EQ(moved_to.AsArray()->size(), 12u);
  EXPECT_EQ(*(*moved_to.AsArray())[11].AsString(), "linear_11");
  EXPECT_EQ(moved_to.ToString(), Attribute::ArrayFrom(*moved_to.AsArray()).ToString());
}

// Dropping the last reference gives a storage back to the pools: making and dropping the same
// attributes again carves nothing new (a storage that was never freed would).
TEST(AttributesTest, DroppedAttributesGoBackToThePools) {
  auto make_and_drop = [] {
    std::vector<Attribute> made;
    for (int i = 0; i < 4000; ++i) {
      made.push_back(Attribute::String("layer_norm_" + std::to_string(i) + ".tmp_0@GRAD"));
      made.push_back(Attribute::Array({made.back(), Attribute::Int64(1 << 20), made.back()}));
      made.push_back(Attribute::Int32(100000 + i));
    }
  };
  make_and_drop();
  const size_t carved = detail::PoolSlabBytes();
  for (int round = 0; round < 5; ++round) make_and_drop();
  EXPECT_EQ(detail::PoolSlabBytes(), carved);
}

// Reference counts are atomic: threads copying and dropping one attribute leave it intact.
TEST(AttributesTest, CopiesOnManyThreadsKeepTheStorage) {
  const Attribute shared =
      Attribute::Array({Attribute::String("embedding_0.w_0"), Attribute::Double(0.5)});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&shared] {
      for (int i = 0; i < 20000; ++i) {
        std::vector<Attribute> copies(4, shared);
        Attribute moved = std::move(copies.back());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(*(*shared.AsArray())[0].AsString(), "embedding_0.w_0");
  EXPECT_EQ(shared,
            Attribute::Array({Attribute::String("embedding_0.w_0"), Attribute::Double(0.5)}));
}

}  // namespace
}  // namespace irm::newir
