// Test support for SPMD completion: a serial two-layer forward (x @ w1 + b1, then @ w2 + b2,
// fetched as "out") whose inputs and parameters are all pd_op.data feeds, and the annotation that
// makes some of them distributed (a dist_op.shard_tensor after the data op, as Paddle's
// shard_tensor API puts one after a parameter).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "newir/attributes.h"
#include "newir/auto_parallel/shard_layout.h"
#include "newir/builder.h"
#include "newir/program.h"

namespace irm::newir::testing {

inline Value* Data(Builder& b, const std::string& name, const std::vector<int64_t>& dims) {
  const Type type = Type::DenseTensor(Type::F32(), dims);
  return b
      .Create("pd_op.data", {}, {type},
              {{"name", Attribute::String(name)},
               {"shape", Attribute::IntArrayFrom(dims)},
               {"dtype", Attribute::DataTypeAttr(DataType::kFloat32)},
               {"place", Attribute::PlaceAttr(Place::Of(AllocationType::kCpu))}})
      ->result(0);
}

// x [batch, 6], w1 [6, 8], b1 [8], w2 [8, 6], b2 [6]; out [batch, 6].
inline Program TwoLayerForward(int64_t batch) {
  Program program;
  Builder b(program.block());
  Value* x = Data(b, "x", {batch, 6});
  Value* w1 = Data(b, "w1", {6, 8});
  Value* b1 = Data(b, "b1", {8});
  Value* w2 = Data(b, "w2", {8, 6});
  Value* b2 = Data(b, "b2", {6});
  const AttributeMap no_transpose = {{"transpose_x", Attribute::Bool(false)},
                                     {"transpose_y", Attribute::Bool(false)}};
  const Type hidden = Type::DenseTensor(Type::F32(), {batch, 8});
  const Type output = Type::DenseTensor(Type::F32(), {batch, 6});
  Value* h = b.Create("pd_op.matmul", {x, w1}, {hidden}, no_transpose)->result(0);
  Value* a = b.Create("pd_op.add", {h, b1}, {hidden})->result(0);
  Value* r = b.Create("pd_op.relu", {a}, {hidden})->result(0);
  Value* o = b.Create("pd_op.matmul", {r, w2}, {output}, no_transpose)->result(0);
  Value* out = b.Create("pd_op.add", {o, b2}, {output})->result(0);
  b.Create("pd_op.fetch", {out}, {output},
           {{"name", Attribute::String("out")}, {"col", Attribute::Int32(0)}});
  return program;
}

// Puts a dist_op.shard_tensor of the given layout after each pd_op.data named in `layouts`, and
// makes every reader of the data read the distributed tensor.
inline void ShardInputs(Program& program, const std::map<std::string, TensorDistAttr>& layouts) {
  for (Operation* op : program.block().ops()) {
    if (op->name() != "pd_op.data") continue;
    const std::string_view* name = op->attribute("name").AsString();
    ASSERT_NE(name, nullptr);
    auto it = layouts.find(std::string(*name));
    if (it == layouts.end()) continue;
    Value* dense = op->result(0);
    // The local dims recorded are the first process's (the largest piece of an uneven dim).
    StatusOr<std::vector<int64_t>> local =
        LocalDimsOn(dense->type().dims(), it->second, it->second.mesh.process_ids.front());
    ASSERT_TRUE(local.ok()) << local.status().ToString();
    StatusOr<Type> type = Type::DistDenseTensor(dense->type(), it->second, *local);
    ASSERT_TRUE(type.ok()) << type.status().ToString();
    OperationDistAttr dist;
    dist.mesh = it->second.mesh;
    dist.results = {Attribute::TensorDist(it->second)};
    Builder b(program.block());
    b.SetInsertionPointAfter(*op);
    Operation* shard = b.Create("dist_op.shard_tensor", {dense}, {*type},
                                {{"op_dist_attr", Attribute::OperationDist(dist)}});
    dense->ReplaceAllUsesWith(shard->result(0));
    shard->SetOperand(0, dense);
  }
}

}  // namespace irm::newir::testing
