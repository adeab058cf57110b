// Lowered reshards run on the reference runtime's thread world: each case builds one rank's
// program per rank (dtensor_from_local of the rank's piece, the reshard, dtensor_to_local),
// lowers it, makes it dense, and runs all ranks together. Every rank must fetch exactly its piece
// of the serial tensor under the destination layout, bit for bit; the pieces, and the serial
// tensor of a partial source (its addends summed in rank order), are computed here from the mesh
// positions, independently of the code under test. Sizes are odd wherever Paddle's uneven rule
// allows it.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "newir/auto_parallel/dist_to_dense.h"
#include "newir/auto_parallel/reshard_lowering.h"
#include "newir/auto_parallel/reshard_test_support.h"
#include "newir/printer.h"
#include "newir/verifier.h"
#include "reference_runtime/comm/comm_test_support.h"
#include "reference_runtime/comm_ops_test_support.h"
#include "reference_runtime/kernels/kernel_test_support.h"

namespace irm::newir {
namespace {

using testing::Layout;
using Dims = std::vector<int64_t>;

int64_t Count(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::vector<int64_t> Coordinate(const ProcessMesh& mesh, int64_t rank) {
  int64_t linear = 0;
  while (mesh.process_ids[linear] != rank) ++linear;
  std::vector<int64_t> at(mesh.shape.size());
  for (size_t d = mesh.shape.size(); d-- > 0;) {
    at[d] = linear % mesh.shape[d];
    linear /= mesh.shape[d];
  }
  return at;
}

bool InMesh(const ProcessMesh& mesh, int64_t rank) {
  return std::find(mesh.process_ids.begin(), mesh.process_ids.end(), rank) !=
         mesh.process_ids.end();
}

// `rank`'s block of a row-major tensor of `dims` under `layout`: along a dim sharded over a mesh
// dim of n ranks, position c holds [c * ceil(size/n), its end), the last position up to size.
rt::Tensor Block(const std::vector<float>& global, const Dims& dims, const TensorDistAttr& layout,
                 int64_t rank) {
  const std::vector<int64_t> at = Coordinate(layout.mesh, rank);
  Dims begin(dims.size(), 0), local = dims;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t m = layout.dims_mapping[i];
    if (m < 0) continue;
    const int64_t n = layout.mesh.shape[m];
    const int64_t piece = (dims[i] + n - 1) / n;
    begin[i] = at[m] * piece;
    local[i] = at[m] == n - 1 ? dims[i] - begin[i] : piece;
  }
  std::vector<double> values;
  for (int64_t k = 0; k < Count(local); ++k) {
    int64_t rest = k, flat = 0, stride = 1;
    std::vector<int64_t> index(dims.size());
    for (size_t i = dims.size(); i-- > 0;) {
      index[i] = rest % local[i] + begin[i];
      rest /= local[i];
    }
    for (size_t i = dims.size(); i-- > 0;) {
      flat += index[i] * stride;
      stride *= dims[i];
    }
    values.push_back(global[flat]);
  }
  return rt::testing::FromDoubles(values, local, DType::kFloat32);
}

// The k-th addend of a partial tensor; with 3 addends the sum depends on the order: (1e8 + 1)
// - 1e8 is 0 in float32, 1e8 + (1 - 1e8) is not.
std::vector<float> Addend(const Dims& dims, int64_t k) {
  std::vector<float> values(Count(dims));
  for (size_t i = 0; i < values.size(); ++i) {
    const float big = static_cast<float>(1e8) * static_cast<float>(i % 3 + 1);
    values[i] = k == 0 ? big : k == 1 ? static_cast<float>(i) * 0.25f + 1.0f : -big;
  }
  return values;
}

struct Case {
  std::string name;
  Dims dims;
  TensorDistAttr src, dst;
  int64_t world;
};

void RunCase(const Case& c) {
  SCOPED_TRACE(c.name);
  // The serial tensor and each rank's input: a partial source's addend is chosen by the rank's
  // coordinate along the partial mesh dim; the serial tensor is their rank-order sum.
  std::optional<int64_t> partial_dim;
  if (!c.src.partial_status.empty()) partial_dim = c.src.partial_status.begin()->first;
  TensorDistAttr src_pieces = c.src;
  src_pieces.partial_status.clear();
  std::vector<float> serial = partial_dim ? Addend(c.dims, 0) : Addend(c.dims, 1);
  if (partial_dim) {
    for (int64_t k = 1; k < c.src.mesh.shape[*partial_dim]; ++k) {
      const std::vector<float> next = Addend(c.dims, k);
      for (size_t i = 0; i < serial.size(); ++i) serial[i] = serial[i] + next[i];
    }
  }

  ProcessGroupTable groups(c.world);
  {
    Program plan = testing::ReshardProgram(c.dims, c.src, c.dst, 0);
    ASSERT_TRUE(PlanProcessGroups(plan, groups).ok());
  }
  std::vector<std::string> texts;
  std::vector<rt::FeedMap> feeds;
  for (int64_t rank = 0; rank < c.world; ++rank) {
    Program program = testing::ReshardProgram(c.dims, c.src, c.dst, rank);
    ProcessGroupTable copy = groups;
    StatusOr<size_t> lowered = LowerReshards(program, rank, copy);
    ASSERT_TRUE(lowered.ok()) << lowered.status().ToString();
    const Status dense = DistToDense(program, rank);
    ASSERT_TRUE(dense.ok()) << dense.ToString();
    const Status verified = VerifyProgram(program);
    ASSERT_TRUE(verified.ok()) << verified.ToString() << "\n" << PrintProgram(program);
    texts.push_back(PrintProgram(program));
    const int64_t holder = InMesh(c.src.mesh, rank) ? rank : c.src.mesh.process_ids.front();
    const std::vector<float> addend =
        partial_dim ? Addend(c.dims, Coordinate(c.src.mesh, holder)[*partial_dim]) : serial;
    feeds.push_back({{"x", Block(addend, c.dims, src_pieces, holder)}});
  }
  std::vector<rt::CommGroup> comm_groups;
  for (const auto& [ring, ranks] : groups.groups()) {
    comm_groups.push_back(
        {.ring_id = static_cast<int>(ring), .ranks = std::vector<int>(ranks.begin(), ranks.end())});
  }
  auto world = rt::testing::MakeWorld(static_cast<int>(c.world), comm_groups);
  ASSERT_NE(world, nullptr);
  const rt::testing::RankRuns runs = rt::testing::RunPir(*world, texts, feeds);
  ASSERT_TRUE(runs.status.ok()) << runs.status.ToString() << "\n" << texts[0];
  for (int64_t rank = 0; rank < c.world; ++rank) {
    if (!InMesh(c.dst.mesh, rank)) continue;
    const rt::Tensor want = Block(serial, c.dims, c.dst, rank);
    const rt::Tensor got = rt::testing::Fetched(runs, static_cast<int>(rank), "out");
    EXPECT_TRUE(got.BitwiseEqual(want))
        << "rank " << rank << "\n"
        << texts[rank] << "\ngot " << fmt::format("{}", rt::testing::ToDoubles(got)) << "\nwant "
        << fmt::format("{}", rt::testing::ToDoubles(want));
  }
}

TensorDistAttr Line(int64_t n, Dims mapping, std::map<int64_t, ReduceType> partial = {}) {
  Dims ids;
  for (int64_t i = 0; i < n; ++i) ids.push_back(i);
  return Layout({n}, ids, std::move(mapping), std::move(partial));
}
TensorDistAttr Grid(Dims mapping, std::map<int64_t, ReduceType> partial = {}) {
  return Layout({2, 2}, {0, 1, 2, 3}, std::move(mapping), std::move(partial));
}
const std::map<int64_t, ReduceType> kSum0 = {{0, ReduceType::kSum}};

TEST(ReshardRunTest, ReplicatedToShard) {
  RunCase({"r->s dim 0, 5 over 3", {5, 3}, Line(3, {-1, -1}), Line(3, {0, -1}), 3});
  RunCase({"r->s dim 1, 7 over 3", {3, 7}, Line(3, {-1, -1}), Line(3, {-1, 0}), 3});
}

TEST(ReshardRunTest, ShardToReplicated) {
  RunCase({"s->r dim 0, 9 over 2", {9, 4}, Line(2, {0, -1}), Line(2, {-1, -1}), 2});
  RunCase({"s->r dim 1, 9 over 2", {4, 9}, Line(2, {-1, 0}), Line(2, {-1, -1}), 2});
  RunCase({"s->r dim 1, 5 over 3", {7, 5}, Line(3, {-1, 0}), Line(3, {-1, -1}), 3});
  RunCase({"s->r dim 1, even", {3, 8}, Line(2, {-1, 0}), Line(2, {-1, -1}), 2});
}

TEST(ReshardRunTest, PartialToReplicatedSumsInRankOrder) {
  RunCase({"p->r, 3 ranks", {2, 3}, Line(3, {-1, -1}, kSum0), Line(3, {-1, -1}), 3});
}

TEST(ReshardRunTest, PartialToShard) {
  RunCase({"p->s dim 0, 3 over 2", {3, 7}, Line(2, {-1, -1}, kSum0), Line(2, {0, -1}), 2});
  RunCase({"p->s dim 1, 7 over 2", {3, 7}, Line(2, {-1, -1}, kSum0), Line(2, {-1, 0}), 2});
  RunCase({"p->s dim 0, 5 over 3", {5, 4}, Line(3, {-1, -1}, kSum0), Line(3, {0, -1}), 3});
}

TEST(ReshardRunTest, ShardToShard) {
  RunCase({"s->s 0 to 1", {4, 6, 3}, Line(2, {0, -1, -1}), Line(2, {-1, 0, -1}), 2});
  RunCase({"s->s 1 to 0", {4, 6, 3}, Line(2, {-1, 0, -1}), Line(2, {0, -1, -1}), 2});
  RunCase({"s->s 1 to 2", {3, 6, 4}, Line(2, {-1, 0, -1}), Line(2, {-1, -1, 0}), 2});
}

TEST(ReshardRunTest, CrossMesh) {
  RunCase({"s on [0,1] -> s on [2,3]",
           {5, 3},
           Layout({2}, {0, 1}, {0, -1}),
           Layout({2}, {2, 3}, {0, -1}),
           4});
  RunCase({"s on [0,1] -> r on [2,3]",
           {5, 3},
           Layout({2}, {0, 1}, {0, -1}),
           Layout({2}, {2, 3}, {-1, -1}),
           4});
}

TEST(ReshardRunTest, TwoDimMesh) {
  RunCase({"[S0,S1] -> R", {5, 7}, Grid({0, 1}), Grid({-1, -1}), 4});
  RunCase({"R -> [S1,S0]", {5, 7}, Grid({-1, -1}), Grid({1, 0}), 4});
  RunCase({"[S0,S1] -> [S1,S0]", {5, 7}, Grid({0, 1}), Grid({1, 0}), 4});
  RunCase({"P(0) rows on 1 -> cols on 0", {5, 7}, Grid({1, -1}, kSum0), Grid({-1, 0}), 4});
}

}  // namespace
}  // namespace irm::newir
