// Test support for remove-other-ranks: a program that moves a value from one mesh to another (a
// pipeline's stage boundary), completed.
#pragma once

#include <gtest/gtest.h>

#include "newir/auto_parallel/reshard_test_support.h"
#include "newir/auto_parallel/spmd_completion.h"
#include "newir/auto_parallel/spmd_test_support.h"

namespace irm::newir::testing {

// x on mesh [0, 1] -> relu -> reshard to mesh [2, 3] -> relu -> fetch: the first relu is ranks 0
// and 1's work, the second and the fetch ranks 2 and 3's.
inline Program AcrossMeshes() {
  Program program;
  Builder b(program.block());
  const TensorDistAttr first = Layout({2}, {0, 1}, {-1, -1});
  const TensorDistAttr second = Layout({2}, {2, 3}, {-1, -1});
  const Type dense = Type::DenseTensor(Type::F32(), {3, 5});
  Value* x = Data(b, "x", {3, 5});
  Value* r1 = b.Create("pd_op.relu", {x}, {dense})->result(0);
  OperationDistAttr move;
  move.mesh = second.mesh;
  move.operands = {Attribute::TensorDist(first)};
  move.results = {Attribute::TensorDist(second)};
  Value* moved = b.Create("dist_op.reshard", {r1}, {DistF32({3, 5}, second, 2)},
                          {{"op_dist_attr", Attribute::OperationDist(move)}})
                     ->result(0);
  Value* r2 = b.Create("pd_op.relu", {moved}, {dense})->result(0);
  b.Create("pd_op.fetch", {r2}, {dense},
           {{"name", Attribute::String("out")}, {"col", Attribute::Int32(0)}});
  ShardInputs(program, {{"x", first}});
  StatusOr<SpmdCompletionResult> done = CompleteSpmd(program);
  EXPECT_TRUE(done.ok()) << done.status().ToString();
  return program;
}

}  // namespace irm::newir::testing
