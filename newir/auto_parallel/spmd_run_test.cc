// Completed programs run on the reference runtime's thread world against the serial program:
// the two-layer forward of spmd_test_support.h, made distributed by shard_tensor annotations,
// goes through SPMD completion, reshard lowering and dist-to-dense for each rank; every rank must
// fetch exactly the serial output. Each rank is fed its piece of the serial inputs, cut here from
// the layouts (pieces of ceil(size/n), the last one the rest), independently of the code under
// test. The inputs are small multiples of 1/4, so every sum is exact and the order a collective
// adds in cannot change a bit: equality is bitwise.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <functional>

#include "newir/auto_parallel/dist_to_dense.h"
#include "newir/auto_parallel/reshard_lowering.h"
#include "newir/auto_parallel/reshard_test_support.h"
#include "newir/auto_parallel/spmd_completion.h"
#include "newir/auto_parallel/spmd_test_support.h"
#include "newir/printer.h"
#include "newir/verifier.h"
#include "reference_runtime/comm/comm_test_support.h"
#include "reference_runtime/comm_ops_test_support.h"
#include "reference_runtime/kernels/kernel_test_support.h"

namespace irm::newir {
namespace {

using testing::Layout;
using Dims = std::vector<int64_t>;
using Layouts = std::map<std::string, TensorDistAttr>;

// Serial values of an input: multiples of 1/4 in [-0.5, 0.5], different per input.
std::vector<double> Values(const Dims& dims, int salt) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<double> values;
  for (int64_t i = 0; i < n; ++i) values.push_back(static_cast<double>((i * 3 + salt) % 5 - 2) / 4);
  return values;
}

struct Input {
  Dims dims;
  DType dtype = DType::kFloat32;
  std::vector<double> values;
};
using Inputs = std::map<std::string, Input>;

// Rows or columns [begin, end) of a row-major 1-D or 2-D tensor along `dim`.
rt::Tensor Piece(const Input& input, int64_t dim, int64_t begin, int64_t end) {
  const Dims& dims = input.dims;
  const int64_t rows = dims.size() == 2 ? dims[0] : 1;
  const int64_t cols = dims.back();
  std::vector<double> out;
  Dims shape = dims;
  shape[dim] = end - begin;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t along = dims.size() == 2 && dim == 0 ? r : c;
      if (along >= begin && along < end) out.push_back(input.values[r * cols + c]);
    }
  }
  return rt::testing::FromDoubles(out, shape, input.dtype);
}

// `rank`'s piece of an input laid out over a 1-D mesh of n ranks 0..n-1.
rt::Tensor PieceOn(const Input& input, const TensorDistAttr* layout, int64_t rank) {
  if (layout != nullptr) {
    for (size_t d = 0; d < input.dims.size(); ++d) {
      if (layout->dims_mapping[d] < 0) continue;
      const int64_t n = layout->mesh.shape[0];
      const int64_t piece = (input.dims[d] + n - 1) / n;
      const int64_t begin = rank * piece;
      const int64_t end = rank == n - 1 ? input.dims[d] : begin + piece;
      return Piece(input, static_cast<int64_t>(d), begin, end);
    }
  }
  return rt::testing::FromDoubles(input.values, input.dims, input.dtype);
}

// Runs `serial_program()` on one rank and, annotated with `layouts`, completed, lowered and made
// dense, on `world_size` ranks; every rank must fetch each of `fetches` as the serial run does:
// bit for bit when `tolerance` is 0, else within it element by element.
void RunAgainstSerial(const std::string& name, const std::function<Program()>& serial_program,
                      const std::function<Program()>& distributed_program, const Inputs& inputs,
                      const Layouts& layouts, int64_t world_size,
                      const std::vector<std::string>& fetches, double tolerance);

void RunAgainstSerial(const std::string& name, const std::function<Program()>& serial_program,
                      const Inputs& inputs, const Layouts& layouts, int64_t world_size,
                      const std::vector<std::string>& fetches, double tolerance) {
  RunAgainstSerial(name, serial_program, serial_program, inputs, layouts, world_size, fetches,
                   tolerance);
}

// As above, but the distributed side starts from `distributed_program` (before the shard_tensor
// annotations of `layouts`), which computes the same fetches another way.
void RunAgainstSerial(const std::string& name, const std::function<Program()>& serial_program,
                      const std::function<Program()>& distributed_program, const Inputs& inputs,
                      const Layouts& layouts, int64_t world_size,
                      const std::vector<std::string>& fetches, double tolerance) {
  SCOPED_TRACE(name);
  rt::FeedMap serial_feed;
  for (const auto& [input, values] : inputs) serial_feed[input] = PieceOn(values, nullptr, 0);
  auto one = rt::testing::MakeWorld(1);
  ASSERT_NE(one, nullptr);
  const rt::testing::RankRuns serial =
      rt::testing::RunPir(*one, {PrintProgram(serial_program())}, {serial_feed});
  ASSERT_TRUE(serial.status.ok()) << serial.status.ToString();

  auto completed = [&]() {
    Program program = distributed_program();
    testing::ShardInputs(program, layouts);
    StatusOr<SpmdCompletionResult> done = CompleteSpmd(program);
    EXPECT_TRUE(done.ok()) << done.status().ToString();
    const Status verified = VerifyProgram(program);
    EXPECT_TRUE(verified.ok()) << verified.ToString() << "\n" << PrintProgram(program);
    return program;
  };
  ProcessGroupTable groups(world_size);
  {
    const Program plan = completed();
    ASSERT_TRUE(PlanProcessGroups(plan, groups).ok());
  }
  std::vector<std::string> texts;
  std::vector<rt::FeedMap> feeds;
  for (int64_t rank = 0; rank < world_size; ++rank) {
    Program program = completed();
    ProcessGroupTable copy = groups;
    StatusOr<size_t> lowered = LowerReshards(program, rank, copy);
    ASSERT_TRUE(lowered.ok()) << lowered.status().ToString();
    const Status dense = DistToDense(program, rank);
    ASSERT_TRUE(dense.ok()) << dense.ToString();
    const Status verified = VerifyProgram(program);
    ASSERT_TRUE(verified.ok()) << verified.ToString() << "\n" << PrintProgram(program);
    texts.push_back(PrintProgram(program));
    rt::FeedMap feed;
    for (const auto& [input, values] : inputs) {
      auto it = layouts.find(input);
      feed[input] = PieceOn(values, it == layouts.end() ? nullptr : &it->second, rank);
    }
    feeds.push_back(std::move(feed));
  }
  std::vector<rt::CommGroup> comm_groups;
  for (const auto& [ring, ranks] : groups.groups()) {
    comm_groups.push_back(
        {.ring_id = static_cast<int>(ring), .ranks = std::vector<int>(ranks.begin(), ranks.end())});
  }
  auto world = rt::testing::MakeWorld(static_cast<int>(world_size), comm_groups);
  ASSERT_NE(world, nullptr);
  const rt::testing::RankRuns runs = rt::testing::RunPir(*world, texts, feeds);
  ASSERT_TRUE(runs.status.ok()) << runs.status.ToString() << "\n" << texts[0];
  for (const std::string& fetch : fetches) {
    const rt::Tensor want = rt::testing::Fetched(serial, 0, fetch);
    const std::vector<double> want_values = rt::testing::ToDoubles(want);
    for (int64_t rank = 0; rank < world_size; ++rank) {
      const rt::Tensor got = rt::testing::Fetched(runs, static_cast<int>(rank), fetch);
      const std::vector<double> got_values = rt::testing::ToDoubles(got);
      if (tolerance == 0) {
        EXPECT_TRUE(got.BitwiseEqual(want))
            << fetch << " on rank " << rank << "\n"
            << texts[rank] << "\ngot " << fmt::format("{}", got_values) << "\nwant "
            << fmt::format("{}", want_values);
        continue;
      }
      ASSERT_EQ(got.shape(), want.shape()) << fetch << " on rank " << rank;
      for (size_t i = 0; i < want_values.size(); ++i) {
        EXPECT_NEAR(got_values[i], want_values[i], tolerance)
            << fetch << " element " << i << " on rank " << rank;
      }
    }
  }
}

// The two-layer forward with inputs of small multiples of 1/4: every sum is exact.
void RunForward(const std::string& name, int64_t batch, const Layouts& layouts,
                int64_t world_size) {
  const std::map<std::string, Dims> dims = {
      {"x", {batch, 6}}, {"w1", {6, 8}}, {"b1", {8}}, {"w2", {8, 6}}, {"b2", {6}}};
  Inputs inputs;
  int salt = 0;
  for (const auto& [input, d] : dims) {
    inputs[input] = Input{d, DType::kFloat32, Values(d, salt++)};
  }
  RunAgainstSerial(
      name, [batch] { return testing::TwoLayerForward(batch); }, inputs, layouts, world_size,
      {"out"}, 0);
}

TensorDistAttr Line(int64_t n, Dims mapping) {
  Dims ids;
  for (int64_t i = 0; i < n; ++i) ids.push_back(i);
  return Layout({n}, ids, std::move(mapping));
}

TEST(SpmdRunTest, MegatronColumnThenRowParallelMatchesSerial) {
  // TP2: the row matmul's Partial sum is all-reduced before the bias add.
  RunForward("tp2", 4, {{"w1", Line(2, {-1, 0})}, {"b1", Line(2, {0})}, {"w2", Line(2, {0, -1})}},
             2);
}

TEST(SpmdRunTest, MegatronOnThreeRanksWithUnevenPieces) {
  // 8 hidden units over 3 ranks: pieces of 3, 3 and 2.
  RunForward("tp3", 4, {{"w1", Line(3, {-1, 0})}, {"b1", Line(3, {0})}, {"w2", Line(3, {0, -1})}},
             3);
}

TEST(SpmdRunTest, DataParallelOddBatchMatchesSerial) {
  // DP2 on a batch of 5: rank 0 holds 3 rows, rank 1 2; the fetch gathers them.
  RunForward("dp2", 5, {{"x", Line(2, {0, -1})}}, 2);
}

// One SGD step of the zoo mlp as the translator makes it (`ir-migrate build mlp --depth 2`, then
// `translate`), with a static batch of 6 and the parameters and learning rate fed as pd_op.data
// instead of builtin.parameter, so that each rank can be fed its values; the updated parameters
// are fetched too.
constexpr const char* kMlpTrainStep = R"pir({
    (%0) = "pd_op.data" () {dtype:(pd_op.DataType)float32,name:"linear_0.w_0",place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[4,8]} : () -> builtin.tensor<4x8xf32>
    (%1) = "pd_op.data" () {dtype:(pd_op.DataType)float32,name:"linear_0.b_0",place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[8]} : () -> builtin.tensor<8xf32>
    (%2) = "pd_op.data" () {dtype:(pd_op.DataType)float32,name:"linear_1.w_0",place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[8,3]} : () -> builtin.tensor<8x3xf32>
    (%3) = "pd_op.data" () {dtype:(pd_op.DataType)float32,name:"linear_1.b_0",place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[3]} : () -> builtin.tensor<3xf32>
    (%4) = "pd_op.data" () {dtype:(pd_op.DataType)float32,name:"learning_rate_0",place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[1]} : () -> builtin.tensor<1xf32>
    (%5) = "pd_op.data" () {dtype:(pd_op.DataType)int64,name:"label",place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[6,1]} : () -> builtin.tensor<6x1xi64>
    (%6) = "pd_op.data" () {dtype:(pd_op.DataType)float32,name:"x",place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[6,4]} : () -> builtin.tensor<6x4xf32>
    (%7) = "pd_op.matmul" (%6, %0) {transpose_x:false,transpose_y:false} : (builtin.tensor<6x4xf32>, builtin.tensor<4x8xf32>) -> builtin.tensor<6x8xf32>
    (%8) = "pd_op.add" (%7, %1) {} : (builtin.tensor<6x8xf32>, builtin.tensor<8xf32>) -> builtin.tensor<6x8xf32>
    (%9) = "pd_op.relu" (%8) {} : (builtin.tensor<6x8xf32>) -> builtin.tensor<6x8xf32>
    (%10) = "pd_op.matmul" (%9, %2) {transpose_x:false,transpose_y:false} : (builtin.tensor<6x8xf32>, builtin.tensor<8x3xf32>) -> builtin.tensor<6x3xf32>
    (%11) = "pd_op.add" (%10, %3) {} : (builtin.tensor<6x3xf32>, builtin.tensor<3xf32>) -> builtin.tensor<6x3xf32>
    (%12, %13) = "pd_op.cross_entropy_with_softmax" (%11, %5) {axis:(Int32)-1,ignore_index:(Int32)-100,numeric_stable_mode:true,soft_label:false,use_softmax:true} : (builtin.tensor<6x3xf32>, builtin.tensor<6x1xi64>) -> builtin.tensor<6x3xf32>, builtin.tensor<6x1xf32>
    (%14) = "pd_op.mean_all" (%13) {} : (builtin.tensor<6x1xf32>) -> builtin.tensor<f32>
    (%15) = "pd_op.full" () {dtype:(pd_op.DataType)float32,place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[],value:(Double)1} : () -> builtin.tensor<f32>
    (%16) = "pd_op.mean_all_grad" (%13, %15) {} : (builtin.tensor<6x1xf32>, builtin.tensor<f32>) -> builtin.tensor<6x1xf32>
    (%17) = "pd_op.cross_entropy_with_softmax_grad" (%5, %12, %16) {axis:(Int32)-1,ignore_index:(Int32)-100,numeric_stable_mode:true,soft_label:false,use_softmax:true} : (builtin.tensor<6x1xi64>, builtin.tensor<6x3xf32>, builtin.tensor<6x1xf32>) -> builtin.tensor<6x3xf32>
    (%18, %19) = "pd_op.add_grad" (%10, %3, %17) {axis:(Int32)-1} : (builtin.tensor<6x3xf32>, builtin.tensor<3xf32>, builtin.tensor<6x3xf32>) -> builtin.tensor<6x3xf32>, builtin.tensor<3xf32>
    (%20, %21) = "pd_op.matmul_grad" (%9, %2, %18) {transpose_x:false,transpose_y:false} : (builtin.tensor<6x8xf32>, builtin.tensor<8x3xf32>, builtin.tensor<6x3xf32>) -> builtin.tensor<6x8xf32>, builtin.tensor<8x3xf32>
    (%22) = "pd_op.relu_grad" (%9, %20) {} : (builtin.tensor<6x8xf32>, builtin.tensor<6x8xf32>) -> builtin.tensor<6x8xf32>
    (%23, %24) = "pd_op.add_grad" (%7, %1, %22) {axis:(Int32)-1} : (builtin.tensor<6x8xf32>, builtin.tensor<8xf32>, builtin.tensor<6x8xf32>) -> builtin.tensor<6x8xf32>, builtin.tensor<8xf32>
    (%25, %26) = "pd_op.matmul_grad" (%6, %0, %23) {transpose_x:false,transpose_y:false} : (builtin.tensor<6x4xf32>, builtin.tensor<4x8xf32>, builtin.tensor<6x8xf32>) -> <<NULL TYPE>>, builtin.tensor<4x8xf32>
    (%27, %28) = "pd_op.sgd_" (%1, %4, %24, <<NULL VALUE>>) {multi_precision:false} : (builtin.tensor<8xf32>, builtin.tensor<1xf32>, builtin.tensor<8xf32>, <<NULL TYPE>>) -> builtin.tensor<8xf32>, <<NULL TYPE>>
    (%29, %30) = "pd_op.sgd_" (%0, %4, %26, <<NULL VALUE>>) {multi_precision:false} : (builtin.tensor<4x8xf32>, builtin.tensor<1xf32>, builtin.tensor<4x8xf32>, <<NULL TYPE>>) -> builtin.tensor<4x8xf32>, <<NULL TYPE>>
    (%31, %32) = "pd_op.sgd_" (%3, %4, %19, <<NULL VALUE>>) {multi_precision:false} : (builtin.tensor<3xf32>, builtin.tensor<1xf32>, builtin.tensor<3xf32>, <<NULL TYPE>>) -> builtin.tensor<3xf32>, <<NULL TYPE>>
    (%33, %34) = "pd_op.sgd_" (%2, %4, %21, <<NULL VALUE>>) {multi_precision:false} : (builtin.tensor<8x3xf32>, builtin.tensor<1xf32>, builtin.tensor<8x3xf32>, <<NULL TYPE>>) -> builtin.tensor<8x3xf32>, <<NULL TYPE>>
    (%35) = "pd_op.fetch" (%14) {col:(Int32)0,name:"mean_0.tmp_0"} : (builtin.tensor<f32>) -> builtin.tensor<f32>
    () = "builtin.shadow_output" (%14) {output_name:"mean_0.tmp_0"} : (builtin.tensor<f32>) ->
    (%40) = "pd_op.fetch" (%29) {col:(Int32)1,name:"linear_0.w_0"} : (builtin.tensor<4x8xf32>) -> builtin.tensor<4x8xf32>
    (%41) = "pd_op.fetch" (%27) {col:(Int32)2,name:"linear_0.b_0"} : (builtin.tensor<8xf32>) -> builtin.tensor<8xf32>
    (%42) = "pd_op.fetch" (%33) {col:(Int32)3,name:"linear_1.w_0"} : (builtin.tensor<8x3xf32>) -> builtin.tensor<8x3xf32>
    (%43) = "pd_op.fetch" (%31) {col:(Int32)4,name:"linear_1.b_0"} : (builtin.tensor<3xf32>) -> builtin.tensor<3xf32>
}
)pir";

Inputs MlpTrainInputs() {
  Inputs inputs;
  inputs["x"] = {{6, 4}, DType::kFloat32, Values({6, 4}, 0)};
  inputs["linear_0.w_0"] = {{4, 8}, DType::kFloat32, Values({4, 8}, 1)};
  inputs["linear_0.b_0"] = {{8}, DType::kFloat32, Values({8}, 2)};
  inputs["linear_1.w_0"] = {{8, 3}, DType::kFloat32, Values({8, 3}, 3)};
  inputs["linear_1.b_0"] = {{3}, DType::kFloat32, Values({3}, 4)};
  inputs["learning_rate_0"] = {{1}, DType::kFloat32, {0.5}};
  inputs["label"] = {{6, 1}, DType::kInt64, {0, 2, 1, 1, 0, 2}};
  return inputs;
}

const std::vector<std::string> kMlpFetches = {"mean_0.tmp_0", "linear_0.w_0", "linear_0.b_0",
                                              "linear_1.w_0", "linear_1.b_0"};

TEST(SpmdRunTest, DataParallelMlpTrainingStepMatchesSerial) {
  // DP2: the batch (x and label) split over 2 ranks; the loss is a Partial(avg) all-reduced for
  // the fetch; mean_all_grad gathers the loss (ReductionGradInferSpmd asks for it replicated);
  // every weight and bias grad is a Partial(sum) all-reduced before its sgd_. Sums run in another
  // order than the serial ones: the reordered tier.
  RunAgainstSerial(
      "dp2 mlp step", [] { return rt::testing::ParsePir(kMlpTrainStep); }, MlpTrainInputs(),
      {{"x", Line(2, {0, -1})}, {"label", Line(2, {0, -1})}}, 2, kMlpFetches, 1e-6);
}

TEST(SpmdRunTest, TensorParallelMlpTrainingStepMatchesSerial) {
  // TP2: linear_0 by columns, linear_1 by rows (its output all-reduced before the bias add); the
  // grads keep the parameters' layouts, so each rank updates its own shard (gathered for the
  // fetches).
  RunAgainstSerial(
      "tp2 mlp step", [] { return rt::testing::ParsePir(kMlpTrainStep); }, MlpTrainInputs(),
      {{"linear_0.w_0", Line(2, {-1, 0})},
       {"linear_0.b_0", Line(2, {0})},
       {"linear_1.w_0", Line(2, {0, -1})}},
      2, kMlpFetches, 1e-6);
}

// x [4, 6] split into two [4, 3] column blocks (split_with_num), swapped (concat), and rows
// 1..3 taken (slice): "out" [2, 6].
Program SplitConcatSlice() {
  Program program;
  Builder b(program.block());
  Value* x = testing::Data(b, "x", {4, 6});
  auto int_constant = [&b](int64_t value) -> Value* {
    return b
        .Create("pd_op.full", {}, {Type::DenseTensor(Type::I32(), {1})},
                {{"shape", Attribute::IntArrayFrom(std::vector<int64_t>{1})},
                 {"value", Attribute::Double(static_cast<double>(value))},
                 {"dtype", Attribute::DataTypeAttr(DataType::kInt32)},
                 {"place", Attribute::PlaceAttr(Place::Of(AllocationType::kCpu))}})
        ->result(0);
  };
  auto ints = [&b](int64_t value) -> Value* {
    return b
        .Create("pd_op.full_int_array", {}, {Type::DenseTensor(Type::I64(), {1})},
                {{"value", Attribute::Array({Attribute::Int64(value)})},
                 {"dtype", Attribute::DataTypeAttr(DataType::kInt64)},
                 {"place", Attribute::PlaceAttr(Place::Of(AllocationType::kCpu))}})
        ->result(0);
  };
  const Type block = Type::DenseTensor(Type::F32(), {4, 3});
  const Type pieces_type = Type::Vector({block, block});
  Value* pieces = b.Create("pd_op.split_with_num", {x, int_constant(1)}, {pieces_type},
                           {{"num", Attribute::Int32(2)}})
                      ->result(0);
  std::vector<Value*> blocks = b.Create("builtin.split", {pieces}, {block, block})->results();
  Value* swapped = b.Create("builtin.combine", {blocks[1], blocks[0]}, {pieces_type})->result(0);
  const Type whole = Type::DenseTensor(Type::F32(), {4, 6});
  Value* joined = b.Create("pd_op.concat", {swapped, int_constant(1)}, {whole})->result(0);
  const Type rows = Type::DenseTensor(Type::F32(), {2, 6});
  Value* middle = b.Create("pd_op.slice", {joined, ints(1), ints(3)}, {rows},
                           {{"axes", Attribute::Array({Attribute::Int64(0)})},
                            {"infer_flags", Attribute::Array({Attribute::Int64(1)})},
                            {"decrease_axis", Attribute::Array({})}})
                      ->result(0);
  b.Create("pd_op.fetch", {middle}, {rows},
           {{"name", Attribute::String("out")}, {"col", Attribute::Int32(0)}});
  return program;
}

TEST(SpmdRunTest, SplitConcatAndSliceOfAShardedTensorMatchSerial) {
  // Sharded by columns, the split axis is gathered first (split.cc) and everything after is
  // replicated; sharded by rows, the rows stay sharded through split and concat and are
  // gathered for the slice (slice.cc).
  Inputs inputs;
  inputs["x"] = {{4, 6}, DType::kFloat32, Values({4, 6}, 0)};
  for (const TensorDistAttr& layout : {Line(2, {-1, 0}), Line(2, {0, -1})}) {
    RunAgainstSerial(
        "split concat slice " + layout.ToString(), [] { return SplitConcatSlice(); }, inputs,
        {{"x", layout}}, 2, {"out"}, 0);
  }
}

// local_map (python/paddle/distributed/auto_parallel/local_map.py): a function written for dense
// tensors runs on each rank's local pieces between dtensor_to_local and dtensor_from_local, whose
// outputs are re-wrapped with the given placements. `region` builds the dense ops from the local
// tensors of x and w (typed with rank 0's local dims) and returns the local result, which
// dtensor_from_local wraps as `out_layout` of `out_dims`; the fetch reads the wrapped value.
// `x_wanted`, when set, is the layout dtensor_to_local asks of x (in_placements with
// reshard_inputs).
Program LocalMapProgram(const Dims& x_dims, const Dims& x_local, const Dims& w_dims,
                        const Dims& w_local, const TensorDistAttr& out_layout, const Dims& out_dims,
                        const Dims& out_local,
                        const std::function<Value*(Builder&, Value*, Value*)>& region,
                        const std::optional<TensorDistAttr>& x_wanted = std::nullopt) {
  Program program;
  Builder b(program.block());
  Value* x = testing::Data(b, "x", x_dims);
  Value* w = testing::Data(b, "w", w_dims);
  testing::Data(b, "b", {out_dims.back()});
  AttributeMap x_attrs;
  if (x_wanted) {
    OperationDistAttr asked;
    asked.mesh = x_wanted->mesh;
    asked.operands = {Attribute::TensorDist(*x_wanted)};
    asked.results = {Attribute::TensorDist(*x_wanted)};
    x_attrs.emplace("op_dist_attr", Attribute::OperationDist(std::move(asked)));
  }
  Value* lx = b.Create("dist_op.dtensor_to_local", {x}, {Type::DenseTensor(Type::F32(), x_local)},
                       std::move(x_attrs))
                  ->result(0);
  Value* lw = b.Create("dist_op.dtensor_to_local", {w}, {Type::DenseTensor(Type::F32(), w_local)})
                  ->result(0);
  Value* local = region(b, lx, lw);
  StatusOr<Type> out_type =
      Type::DistDenseTensor(Type::DenseTensor(Type::F32(), out_dims), out_layout, out_local);
  EXPECT_TRUE(out_type.ok()) << out_type.status().ToString();
  Value* out = b.Create("dist_op.dtensor_from_local", {local}, {*out_type})->result(0);
  const Type whole = Type::DenseTensor(Type::F32(), out_dims);
  Value* result = out;
  if (!out_layout.partial_status.empty()) {
    // A Partial sum is completed by the next op: the bias add asks for it replicated.
    Value* bias = nullptr;
    for (Operation* op : program.block().ops()) {
      const std::string_view* name = op->attribute("name").AsString();
      if (op->name() == "pd_op.data" && name != nullptr && *name == "b") bias = op->result(0);
    }
    result = b.Create("pd_op.add", {out, bias}, {whole})->result(0);
  }
  b.Create("pd_op.fetch", {result}, {whole},
           {{"name", Attribute::String("out")}, {"col", Attribute::Int32(0)}});
  return program;
}

const AttributeMap kNoTranspose = {{"transpose_x", Attribute::Bool(false)},
                                   {"transpose_y", Attribute::Bool(false)}};

Inputs LocalMapInputs() {
  Inputs inputs;
  inputs["x"] = {{4, 6}, DType::kFloat32, Values({4, 6}, 0)};
  inputs["w"] = {{6, 8}, DType::kFloat32, Values({6, 8}, 1)};
  inputs["b"] = {{8}, DType::kFloat32, Values({8}, 2)};
  return inputs;
}

// The serial function: relu(x @ w) (+ b with `bias`).
Program SerialLocalMapFunction(bool bias) {
  Program program;
  Builder b(program.block());
  Value* x = testing::Data(b, "x", {4, 6});
  Value* w = testing::Data(b, "w", {6, 8});
  Value* bv = testing::Data(b, "b", {8});
  const Type out = Type::DenseTensor(Type::F32(), {4, 8});
  Value* h = b.Create("pd_op.matmul", {x, w}, {out}, kNoTranspose)->result(0);
  Value* r = bias ? b.Create("pd_op.add", {h, bv}, {out})->result(0)
                  : b.Create("pd_op.relu", {h}, {out})->result(0);
  b.Create("pd_op.fetch", {r}, {out},
           {{"name", Attribute::String("out")}, {"col", Attribute::Int32(0)}});
  return program;
}

TEST(LocalMapRunTest, ADenseFunctionOnBatchShardsIsRewrappedAndGathered) {
  // local_map(relu(x @ w), out_placements=[Shard(0)]) with x Shard(0), w Replicate(): each rank
  // multiplies its 2 rows; the fetch gathers the Shard(0) result (s->r all_gather).
  RunAgainstSerial(
      "local_map shard", [] { return SerialLocalMapFunction(false); },
      [] {
        return LocalMapProgram(
            {4, 6}, {2, 6}, {6, 8}, {6, 8}, Line(2, {0, -1}), {4, 8}, {2, 8},
            [](Builder& b, Value* x, Value* w) {
              const Type t = Type::DenseTensor(Type::F32(), {2, 8});
              Value* h = b.Create("pd_op.matmul", {x, w}, {t}, kNoTranspose)->result(0);
              return b.Create("pd_op.relu", {h}, {t})->result(0);
            });
      },
      LocalMapInputs(), {{"x", Line(2, {0, -1})}, {"w", Line(2, {-1, -1})}}, 2, {"out"}, 0);
}

TEST(LocalMapRunTest, APartialOutputIsSummedByTheNextOp) {
  // x by columns, w by rows: each rank's local product is a partial sum, wrapped as Partial(sum)
  // (out_placements=[Partial()]); the bias add asks for it replicated: one all_reduce.
  TensorDistAttr partial = Line(2, {-1, -1});
  partial.partial_status[0] = ReduceType::kSum;
  RunAgainstSerial(
      "local_map partial", [] { return SerialLocalMapFunction(true); },
      [partial] {
        return LocalMapProgram(
            {4, 6}, {4, 3}, {6, 8}, {3, 8}, partial, {4, 8}, {4, 8},
            [](Builder& b, Value* x, Value* w) {
              const Type t = Type::DenseTensor(Type::F32(), {4, 8});
              return b.Create("pd_op.matmul", {x, w}, {t}, kNoTranspose)->result(0);
            });
      },
      LocalMapInputs(), {{"x", Line(2, {-1, 0})}, {"w", Line(2, {0, -1})}}, 2, {"out"}, 0);
}

TEST(LocalMapRunTest, InPlacementsReshardTheInputFirst) {
  // x arrives replicated but the region asks for Shard(0) (in_placements with reshard_inputs):
  // completion reshards it (r->s keeps the rank's rows) before dtensor_to_local.
  RunAgainstSerial(
      "local_map reshard_inputs", [] { return SerialLocalMapFunction(false); },
      [] {
        return LocalMapProgram(
            {4, 6}, {2, 6}, {6, 8}, {6, 8}, Line(2, {0, -1}), {4, 8}, {2, 8},
            [](Builder& b, Value* x, Value* w) {
              const Type t = Type::DenseTensor(Type::F32(), {2, 8});
              Value* h = b.Create("pd_op.matmul", {x, w}, {t}, kNoTranspose)->result(0);
              return b.Create("pd_op.relu", {h}, {t})->result(0);
            },
            Line(2, {0, -1}));
      },
      LocalMapInputs(), {{"x", Line(2, {-1, -1})}, {"w", Line(2, {-1, -1})}}, 2, {"out"}, 0);
}

}  // namespace
}  // namespace irm::newir
