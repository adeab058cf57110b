// Sharded initialisation through both executors on the real kernels (ExecutorOptions::shards): a
// legacy startup program (uniform_random / gaussian_random, as oldir/initializer.h writes them)
// and a new-IR one (pd_op.uniform / pd_op.gaussian with the legacy name recorded, then
// builtin.set_parameter) that initialise a shard of a parameter hold, bit for bit, the box of the
// serial initialiser's draw — column and row halves of [4, 6] and a box of a 3-D tensor, float32
// and float64 — and the two IRs agree with each other; the shard is found by the op's output name
// only; an output that does not fit its shard fails the op, naming the var.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "newir/parser.h"
#include "newir/verifier.h"
#include "oldir/builder.h"
#include "oldir/initializer.h"
#include "reference_runtime/kernels/shard_test_support.h"
#include "reference_runtime/legacy_executor.h"
#include "reference_runtime/pir_executor.h"

namespace irm::rt {
namespace {

using Shards = std::map<std::string, OutputShard, std::less<>>;

constexpr uint64_t kSeed = 2024;

struct InitCase {
  bool gaussian = false;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> serial;
  std::vector<int64_t> offsets;
  std::vector<int64_t> local;
};

std::string Describe(const InitCase& c) {
  return fmt::format("{} {} serial {} local {} at {}", c.gaussian ? "gaussian" : "uniform",
                     DTypeName(c.dtype), ShapeToString(c.serial), ShapeToString(c.local),
                     ShapeToString(c.offsets));
}

std::vector<InitCase> Cases() {
  std::vector<InitCase> cases;
  for (bool gaussian : {false, true}) {
    for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
      cases.push_back({gaussian, dtype, {4, 6}, {0, 3}, {4, 3}});
      cases.push_back({gaussian, dtype, {4, 6}, {0, 0}, {4, 3}});
      cases.push_back({gaussian, dtype, {4, 6}, {2, 0}, {2, 6}});
      cases.push_back({gaussian, dtype, {4, 6}, {0, 0}, {2, 6}});
      cases.push_back({gaussian, dtype, {3, 4, 5}, {1, 2, 1}, {2, 2, 3}});
    }
  }
  return cases;
}

oldir::Program LegacyStartup(const InitCase& c, const std::vector<int64_t>& shape) {
  oldir::ProgramBuilder startup;
  const oldir::Initializer init = c.gaussian ? oldir::Initializer::Normal(0.25f, 0.5f)
                                             : oldir::Initializer::Uniform(-0.5f, 0.75f);
  oldir::AppendInitializer(
      startup, "w",
      c.dtype == DType::kFloat64 ? oldir::proto::VarType::FP64 : oldir::proto::VarType::FP32, shape,
      init);
  return startup.Build();
}

StatusOr<Tensor> RunLegacy(const InitCase& c, const std::vector<int64_t>& shape, Shards shards) {
  const oldir::Program program = LegacyStartup(c, shape);
  ExecutorOptions options;
  options.seed = kSeed;
  options.file = "startup.pdmodel";
  options.shards = std::move(shards);
  LegacyExecutor executor(program, std::move(options));
  Scope scope;
  IRM_RETURN_IF_ERROR(executor.Run(scope, {}).status());
  return scope.Find("w")->Clone();
}

// The new-IR startup program the translator writes for the legacy one: the shape and the bounds
// as operands, the legacy name recorded on the random op, the result stored as the parameter.
std::string PirStartupText(const InitCase& c, const std::vector<int64_t>& shape) {
  const std::string element = c.dtype == DType::kFloat64 ? "f64" : "f32";
  const std::string type = fmt::format("tensor<{}x{}>", fmt::join(shape, "x"), element);
  const std::string shape_op = fmt::format(
      R"((%0) = "pd_op.full_int_array" () {{dtype:int64,place:Place(cpu),value:[{}]}} : () -> tensor<{}xi64>)",
      fmt::join(shape, ","), shape.size());
  std::string random;
  if (c.gaussian) {
    random = fmt::format(
        R"((%3) = "pd_op.gaussian" (%0) {{dtype:{},legacy_var_names:["w"],mean:0.25,place:Place(cpu),seed:0,std:0.5}} : (tensor<{}xi64>) -> {})",
        DTypeName(c.dtype), shape.size(), type);
  } else {
    random = fmt::format(
        R"((%3) = "pd_op.uniform" (%0, %1, %2) {{dtype:{},legacy_var_names:["w"],place:Place(cpu),seed:0}} : (tensor<{}xi64>, tensor<1xf32>, tensor<1xf32>) -> {})",
        DTypeName(c.dtype), shape.size(), type);
  }
  return fmt::format(R"({{
    {}
    (%1) = "pd_op.full" () {{dtype:float32,place:Place(cpu),shape:[1],value:-0.5}} : () -> tensor<1xf32>
    (%2) = "pd_op.full" () {{dtype:float32,place:Place(cpu),shape:[1],value:0.75}} : () -> tensor<1xf32>
    {}
    () = "builtin.set_parameter" (%3) {{parameter_name:"w"}} : ({}) ->
}})",
                     shape_op, random, type);
}

StatusOr<Tensor> RunPir(const InitCase& c, const std::vector<int64_t>& shape, Shards shards) {
  IRM_ASSIGN_OR_RETURN(newir::Program program,
                       newir::ParseProgram(PirStartupText(c, shape), "startup.pir"));
  IRM_RETURN_IF_ERROR(newir::VerifyProgram(program, {.file = "startup.pir"}));
  ExecutorOptions options;
  options.seed = kSeed;
  options.file = "startup.pir";
  options.shards = std::move(shards);
  PirExecutor executor(program, std::move(options));
  Scope scope;
  IRM_RETURN_IF_ERROR(executor.Run(scope, {}).status());
  return scope.Find("w")->Clone();
}

TEST(ShardedInitTest, LegacyShardIsTheBoxOfTheSerialInit) {
  for (const InitCase& c : Cases()) {
    SCOPED_TRACE(Describe(c));
    StatusOr<Tensor> serial = RunLegacy(c, c.serial, {});
    ASSERT_TRUE(serial.ok()) << serial.status().ToString();
    StatusOr<Tensor> shard = RunLegacy(c, c.local, {{"w", {c.serial, c.offsets}}});
    ASSERT_TRUE(shard.ok()) << shard.status().ToString();
    EXPECT_EQ(shard->shape(), c.local);
    EXPECT_EQ(shard->dtype(), c.dtype);
    EXPECT_TRUE(shard->BitwiseEqual(testing::BoxOf(*serial, c.offsets, c.local)));
  }
}

TEST(ShardedInitTest, PirShardIsTheBoxOfTheSerialInitAndEqualsTheLegacyShard) {
  for (const InitCase& c : Cases()) {
    SCOPED_TRACE(Describe(c));
    StatusOr<Tensor> serial = RunPir(c, c.serial, {});
    ASSERT_TRUE(serial.ok()) << serial.status().ToString();
    const Shards shards = {{"w", {c.serial, c.offsets}}};
    StatusOr<Tensor> shard = RunPir(c, c.local, shards);
    ASSERT_TRUE(shard.ok()) << shard.status().ToString();
    EXPECT_EQ(shard->shape(), c.local);
    EXPECT_TRUE(shard->BitwiseEqual(testing::BoxOf(*serial, c.offsets, c.local)));
    StatusOr<Tensor> legacy = RunLegacy(c, c.local, shards);
    ASSERT_TRUE(legacy.ok()) << legacy.status().ToString();
    EXPECT_TRUE(shard->BitwiseEqual(*legacy));
  }
}

// A shard of another var changes nothing: the serial numbers of w's own first elements.
TEST(ShardedInitTest, OnlyTheNamedVarIsSharded) {
  const InitCase c{false, DType::kFloat32, {4, 6}, {2, 3}, {2, 3}};
  const Shards other = {{"v", {c.serial, c.offsets}}};
  StatusOr<Tensor> plain = RunLegacy(c, c.local, {});
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  StatusOr<Tensor> legacy = RunLegacy(c, c.local, other);
  ASSERT_TRUE(legacy.ok()) << legacy.status().ToString();
  StatusOr<Tensor> pir = RunPir(c, c.local, other);
  ASSERT_TRUE(pir.ok()) << pir.status().ToString();
  EXPECT_TRUE(legacy->BitwiseEqual(*plain));
  EXPECT_TRUE(pir->BitwiseEqual(*plain));
  StatusOr<Tensor> sharded = RunLegacy(c, c.local, {{"w", {c.serial, c.offsets}}});
  ASSERT_TRUE(sharded.ok()) << sharded.status().ToString();
  EXPECT_FALSE(sharded->BitwiseEqual(*plain));
}

TEST(ShardedInitTest, AnOutputThatDoesNotFitItsShardFailsTheOpNamingTheVar) {
  const InitCase c{true, DType::kFloat32, {4, 6}, {0, 4}, {4, 3}};
  const Shards shards = {{"w", {c.serial, c.offsets}}};
  const Status legacy = RunLegacy(c, c.local, shards).status();
  EXPECT_EQ(legacy.code(), StatusCode::kInvalid);
  EXPECT_EQ(legacy.ToString(),
            "startup.pdmodel: block 0, op 0 (gaussian_random): error: gaussian: output 'w' [4, 3] "
            "is a shard of the serial tensor [4, 6] at offsets [0, 4], but dim 1 reaches 4 + 3 = "
            "7, past the serial dim 6");
  const Status pir = RunPir(c, c.local, {{"w", {{4, 6, 1}, {0, 0, 0}}}}).status();
  EXPECT_EQ(pir.code(), StatusCode::kInvalid);
  EXPECT_EQ(pir.ToString(),
            "startup.pir: op 3 (pd_op.gaussian): error: gaussian: output 'w' [4, 3] is a shard of "
            "the serial tensor [4, 6, 1] at offsets [0, 0, 0], but it has 2 dims, the serial "
            "tensor 3 and the offsets 3");
}

}  // namespace
}  // namespace irm::rt
