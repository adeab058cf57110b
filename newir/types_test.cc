// Tests of new-IR types: equality and hashing by structure, printing, and dist local dims.
#include "newir/types.h"

#include <unordered_set>

#include <gtest/gtest.h>

namespace irm::newir {
namespace {

TEST(TypesTest, ScalarsPrintTheirPaddleNames) {
  const std::pair<Type, const char*> cases[] = {
      {Type::BF16(), "bf16"},     {Type::F16(), "f16"},
      {Type::F32(), "f32"},       {Type::F64(), "f64"},
      {Type::Bool(), "b"},        {Type::I8(), "i8"},
      {Type::U8(), "u8"},         {Type::I16(), "i16"},
      {Type::I32(), "i32"},       {Type::I64(), "i64"},
      {Type::Index(), "index"},   {Type::C64(), "c64"},
      {Type::C128(), "c128"},     {Type::F8E4M3FN(), "f8e4m3fn"},
      {Type::F8E5M2(), "f8e5m2"},
  };
  for (const auto& [type, name] : cases) {
    EXPECT_EQ(type.ToString(), name);
    std::optional<Type> back = Type::ScalarFromName(name);
    ASSERT_TRUE(back.has_value()) << name;
    EXPECT_EQ(*back, type) << name;
  }
  EXPECT_EQ(Type::ScalarFromName("bool"), Type::Bool());
  EXPECT_FALSE(Type::ScalarFromName("f31").has_value());
  EXPECT_EQ(Type().ToString(), "<<NULL TYPE>>");
  EXPECT_TRUE(Type().IsNull());
  EXPECT_TRUE(Type::F8E5M2().IsFloat());
  EXPECT_FALSE(Type::I64().IsFloat());
  EXPECT_TRUE(Type::Index().IsInteger());
}

TEST(TypesTest, DenseTensorPrintsTypedAndCurrentForms) {
  Type t = Type::DenseTensor(Type::F32(), {2, 3});
  EXPECT_EQ(t.ToString(), "builtin.tensor<2x3xf32>");
  EXPECT_EQ(t.ToString(TypeStyle::kCurrent), "tensor<2x3xf32>");
  EXPECT_EQ(Type::DenseTensor(Type::F32(), {}).ToString(), "builtin.tensor<f32>");
  EXPECT_EQ(Type::DenseTensor(Type::F32(), {}).ToString(TypeStyle::kCurrent), "tensor<f32>");
  EXPECT_EQ(Type::DenseTensor(Type::I64(), {-1, 30}).ToString(), "builtin.tensor<-1x30xi64>");
  EXPECT_EQ(Type::DenseTensor(Type::Bool(), {4}).ToString(), "builtin.tensor<4xb>");
}

TEST(TypesTest, EqualityIsStructural) {
  Type a = Type::DenseTensor(Type::F32(), {2, 3});
  Type b = Type::DenseTensor(Type::F32(), {2, 3});
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.Hash(), b.Hash());
  EXPECT_NE(a, Type::DenseTensor(Type::F32(), {3, 2}));
  EXPECT_NE(a, Type::DenseTensor(Type::F16(), {2, 3}));
  EXPECT_NE(a, Type::DenseTensor(Type::F32(), {2, 3}, DataLayout::kNHWC));
  EXPECT_NE(a, Type::DenseTensor(Type::F32(), {2, 3}, DataLayout::kNCHW, {{0, 2}}));
  EXPECT_NE(a, Type::DenseTensor(Type::F32(), {2, 3}, DataLayout::kNCHW, {}, 4));
  EXPECT_NE(a, Type::SelectedRows(Type::F32(), {2, 3}));
  EXPECT_NE(a, Type());
  std::unordered_set<Type> set = {a, b, Type::F32(), Type::F32()};
  EXPECT_EQ(set.size(), 2u);
}

TEST(TypesTest, CompositeTypesPrint) {
  Type v = Type::Vector({Type::DenseTensor(Type::F32(), {2}), Type::DenseTensor(Type::I64(), {})});
  EXPECT_EQ(v.ToString(), "vec[builtin.tensor<2xf32>,builtin.tensor<i64>]");
  EXPECT_EQ(v.ToString(TypeStyle::kCurrent), "vec[tensor<2xf32>,tensor<i64>]");
  EXPECT_EQ(Type::Vector({}).ToString(), "vec[]");
  EXPECT_EQ(v.elements().size(), 2u);
  EXPECT_EQ(Type::DenseTensorArray(Type::F32(), {}).ToString(), "pd_op.tensor_array<f32>");
  EXPECT_EQ(Type::SelectedRows(Type::F32(), {10, 20}).ToString(), "pd_op.selectedrows<10x20xf32>");
  EXPECT_NE(Type::Vector({Type::F32()}), Type::Vector({Type::F32(), Type::F32()}));
}

TensorDistAttr Dist(std::vector<int64_t> mesh_shape, std::vector<int64_t> mapping) {
  TensorDistAttr d;
  d.mesh.shape = std::move(mesh_shape);
  int64_t n = 1;
  for (int64_t s : d.mesh.shape) n *= s;
  for (int64_t i = 0; i < n; ++i) d.mesh.process_ids.push_back(i);
  d.dims_mapping = std::move(mapping);
  return d;
}

TEST(TypesTest, DistTensorComputesLocalDims) {
  // 8x6 sharded: dim 0 over mesh dim 1 (size 4), dim 1 over mesh dim 0 (size 2) -> 2x3.
  Type dense = Type::DenseTensor(Type::F32(), {8, 6});
  StatusOr<Type> t = Type::DistDenseTensor(dense, Dist({2, 4}, {1, 0}));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->local_dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t->dims(), (std::vector<int64_t>{8, 6}));
  EXPECT_EQ(t->dense(), dense);
  EXPECT_EQ(t->dtype(), Type::F32());
  EXPECT_EQ(t->ToString(),
            "pd_dist.tensor<8x6xf32, mesh_shape:[2,4],process_ids:[0,1,2,3,4,5,6,7],"
            "dims_mappings:[1,0]>");
  // Replicated and dynamic dims keep their global size.
  StatusOr<Type> r =
      Type::DistDenseTensor(Type::DenseTensor(Type::F32(), {-1, 5}), Dist({2}, {0, -1}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->local_dims(), (std::vector<int64_t>{-1, 5}));
}

TEST(TypesTest, DistTensorPrintsPartialAndPlacements) {
  TensorDistAttr d = Dist({2}, {-1, -1});
  d.partial_status[0] = ReduceType::kSum;
  d.placements = std::vector<Placement>{Placement::Partial(ReduceType::kSum)};
  StatusOr<Type> t = Type::DistDenseTensor(Type::DenseTensor(Type::F32(), {8, 8}), d);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->ToString(),
            "pd_dist.tensor<8x8xf32, mesh_shape:[2],process_ids:[0,1],dims_mappings:[-1,-1], "
            "partial(0,SUM), placements:[Partial(reduce_type=SUM)]>");
}

TEST(TypesTest, DistTensorNeedsExplicitLocalDimsWhenNotDivisible) {
  Type dense = Type::DenseTensor(Type::F32(), {7, 4});
  StatusOr<Type> t = Type::DistDenseTensor(dense, Dist({2}, {0, -1}));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(),
            "dim 0 (size 7) is not divisible by mesh dim 0 (size 2); give the local dims");
  StatusOr<Type> e = Type::DistDenseTensor(dense, Dist({2}, {0, -1}), std::vector<int64_t>{4, 4});
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->local_dims(), (std::vector<int64_t>{4, 4}));
  // Recorded local dims are part of the type's identity.
  StatusOr<Type> f = Type::DistDenseTensor(dense, Dist({2}, {0, -1}), std::vector<int64_t>{3, 4});
  ASSERT_TRUE(f.ok());
  EXPECT_NE(*e, *f);
}

TEST(TypesTest, DistTensorRejectsBadDistAttrs) {
  Type dense = Type::DenseTensor(Type::F32(), {8, 8});
  EXPECT_EQ(Type::DistDenseTensor(dense, Dist({2}, {0})).status().message(),
            "dims_mapping has 1 entries but the tensor has rank 2");
  EXPECT_EQ(Type::DistDenseTensor(dense, Dist({2}, {0, 1})).status().message(),
            "dims_mapping[1] = 1 is not a mesh dim (mesh rank 1)");
  TensorDistAttr both = Dist({2}, {0, -1});
  both.partial_status[0] = ReduceType::kMax;
  EXPECT_EQ(Type::DistDenseTensor(dense, both).status().message(),
            "mesh dim 0 is both partial and sharding tensor dim 0");
  EXPECT_EQ(Type::DistDenseTensor(Type::F32(), Dist({2}, {})).status().message(),
            "dist tensor type wraps 'f32', not a dense tensor");
  EXPECT_EQ(
      Type::DistDenseTensor(dense, Dist({2}, {0, -1}), std::vector<int64_t>{4}).status().message(),
      "local dims have 1 entries but the tensor has rank 2");
}

TEST(TypesTest, DataLayoutNames) {
  EXPECT_STREQ(DataLayoutName(DataLayout::kUndefined), "Undefined(AnyLayout)");
  EXPECT_EQ(DataLayoutFromName("NHWC"), DataLayout::kNHWC);
  EXPECT_EQ(DataLayoutFromName("Undefined(AnyLayout)"), DataLayout::kUndefined);
  EXPECT_FALSE(DataLayoutFromName("nchw").has_value());
}

}  // namespace
}  // namespace irm::newir
