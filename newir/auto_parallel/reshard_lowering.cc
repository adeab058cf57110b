// The ops of each reshard step, per rank (reshard_lowering.h). Each Emit* follows the
// *_reshard_func.py of its kind in python/paddle/distributed/auto_parallel/static/reshard_funcs/
// (index commits 0ab6998c, a883f87f), op for op; where Paddle reads a global size the code reads
// the step's global dims, and shapes it passes to reshape are the rank's local ones.
#include "newir/auto_parallel/reshard_lowering.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <optional>

#include "newir/attributes.h"
#include "newir/auto_parallel/reshard_plan.h"
#include "newir/auto_parallel/shard_layout.h"
#include "newir/builder.h"
#include "newir/rewriter.h"

namespace irm::newir {
namespace {

using Kind = ReshardStep::Kind;

// The name a diagnostic gives a value: the legacy variable it came from when the translator
// recorded one, else its producer and result index.
std::string ValueName(const Value& value) {
  if (const Operation* op = value.defining_op()) {
    const Attribute names = op->attribute("legacy_var_names");
    if (const AttributeSpan* list = names.AsArray();
        list != nullptr && value.index() < list->size()) {
      if (const std::string_view* name = (*list)[value.index()].AsString();
          name != nullptr && !name->empty()) {
        return std::string(*name);
      }
    }
    return fmt::format("result {} of {}", value.index(), op->name());
  }
  return "a block argument";
}

Status AtReshard(const Operation& op, const Status& why) {
  Location location = LocationOf(op);
  if (op.num_operands() > 0 && op.operand(0) != nullptr) location.var = ValueName(*op.operand(0));
  return Status(why.code(), std::move(location), why.message());
}

std::vector<Attribute> Int64Items(const std::vector<int64_t>& values) {
  std::vector<Attribute> items;
  for (int64_t v : values) items.push_back(Attribute::Int64(v));
  return items;
}

// Builds one reshard's ops before it, for one rank.
class StepEmitter {
 public:
  StepEmitter(Operation& reshard, ProcessGroupTable& groups, DataType dtype, Type element)
      : builder_(), groups_(groups), dtype_(dtype), element_(std::move(element)) {
    builder_.SetInsertionPoint(reshard);
  }

  Type Dense(const std::vector<int64_t>& dims) const { return Type::DenseTensor(element_, dims); }

  Value* Full(const std::vector<int64_t>& shape, double value, DataType dtype, Type element) {
    return builder_
        .Create("pd_op.full", {}, {Type::DenseTensor(std::move(element), shape)},
                {{"shape", Attribute::IntArrayFrom(shape)},
                 {"value", Attribute::Double(value)},
                 {"dtype", Attribute::DataTypeAttr(dtype)},
                 {"place", Attribute::PlaceAttr(Place::Of(AllocationType::kUndefined))}})
        ->result(0);
  }
  // A mutable int attribute (an axis) as Paddle's builders make it: a 1-element int32 full.
  Value* Axis(int64_t axis) {
    return Full({1}, static_cast<double>(axis), DataType::kInt32, Type::I32());
  }
  Value* IntArray(const std::vector<int64_t>& values) {
    return builder_
        .Create("pd_op.full_int_array", {},
                {Type::DenseTensor(Type::I64(), {static_cast<int64_t>(values.size())})},
                {{"value", Attribute::Array(Int64Items(values))},
                 {"dtype", Attribute::DataTypeAttr(DataType::kInt64)},
                 {"place", Attribute::PlaceAttr(Place::Of(AllocationType::kUndefined))}})
        ->result(0);
  }
  Value* Zeros(const std::vector<int64_t>& shape) { return Full(shape, 0.0, dtype_, element_); }
  // Zeros of `like`'s dims (`dims`) but `count` long along `axis`. A full needs static dims: with
  // a dynamic one the zeros are made like `like` (full_like, repeated and sliced to `count`).
  Value* ZerosAlong(Value* like, const std::vector<int64_t>& dims, int64_t axis, int64_t count) {
    std::vector<int64_t> pad = dims;
    pad[static_cast<size_t>(axis)] = count;
    if (std::all_of(pad.begin(), pad.end(), [](int64_t d) { return d >= 0; })) return Zeros(pad);
    const int64_t length = dims[static_cast<size_t>(axis)];
    Value* zero = Full({1}, 0.0, DataType::kFloat32, Type::F32());
    Value* zeros =
        builder_
            .Create("pd_op.full_like", {like, zero}, {Dense(dims)},
                    {{"dtype", Attribute::DataTypeAttr(dtype_)},
                     {"place", Attribute::PlaceAttr(Place::Of(AllocationType::kUndefined))}})
            ->result(0);
    const int64_t copies = (count + length - 1) / length;
    std::vector<int64_t> repeated = dims;
    repeated[static_cast<size_t>(axis)] = copies * length;
    if (copies > 1) {
      Value* parts = Combine(std::vector<Value*>(static_cast<size_t>(copies), zeros));
      zeros = builder_.Create("pd_op.concat", {parts, Axis(axis)}, {Dense(repeated)})->result(0);
    }
    if (copies * length == count) return zeros;
    return builder_
        .Create("pd_op.slice", {zeros, IntArray({0}), IntArray({count})}, {Dense(pad)},
                {{"axes", Attribute::Array(Int64Items({axis}))},
                 {"infer_flags", Attribute::Array(Int64Items({1}))},
                 {"decrease_axis", Attribute::Array({})}})
        ->result(0);
  }
  Value* Combine(const std::vector<Value*>& values) {
    std::vector<Type> types;
    for (Value* v : values) types.push_back(v->type());
    return builder_.Create("builtin.combine", values, {Type::Vector(std::move(types))})->result(0);
  }
  std::vector<Value*> Split(Value* vector) {
    return builder_.Create("builtin.split", {vector}, vector->type().elements())->results();
  }
  // concat of `parts` (a vector value) along axis.
  Value* Concat(Value* parts, int64_t axis, const std::vector<int64_t>& out) {
    Value* axis_value = Axis(axis);
    return builder_.Create("pd_op.concat", {parts, axis_value}, {Dense(out)})->result(0);
  }
  Value* Transpose(Value* x, const std::vector<int64_t>& perm, std::vector<int64_t>& dims) {
    std::vector<Attribute> items;
    std::vector<int64_t> out(dims.size());
    for (size_t i = 0; i < perm.size(); ++i) {
      items.push_back(Attribute::Int32(static_cast<int32_t>(perm[i])));
      out[i] = dims[perm[i]];
    }
    dims = out;
    return builder_
        .Create("pd_op.transpose", {x}, {Dense(dims)}, {{"perm", Attribute::Array(items)}})
        ->result(0);
  }
  // reshape keeps the 3.0 form with xshape ([0] + the input's dims, as Paddle's InferMeta).
  Value* Reshape(Value* x, const std::vector<int64_t>& shape) {
    Value* shape_value = IntArray(shape);
    std::vector<int64_t> xshape = x->type().dims();
    xshape.insert(xshape.begin(), 0);
    return builder_.Create("pd_op.reshape", {x, shape_value}, {Dense(shape), Dense(xshape)})
        ->result(0);
  }
  Value* ShareData(Value* x, const std::vector<int64_t>& dims) {
    return builder_.Create("pd_op.share_data_", {x}, {Dense(dims)})->result(0);
  }
  Operation* Collective(std::string_view name, Value* x, const std::vector<int64_t>& out,
                        AttributeMap attrs) {
    return builder_.Create(name, {x}, {Dense(out)}, std::move(attrs));
  }
  Attribute Ring(const std::vector<int64_t>& group) {
    return Attribute::Int32(static_cast<int32_t>(groups_.RingOf(group)));
  }

  // x (local dims `dims`) through one step; `dims` becomes the result's.
  StatusOr<Value*> Emit(const ReshardStep& step, Value* x, std::vector<int64_t>& dims);

 private:
  Value* RToS(const ReshardStep& step, Value* x, std::vector<int64_t>& dims);
  Value* SToR(const ReshardStep& step, Value* x, std::vector<int64_t>& dims);
  Value* PToS(const ReshardStep& step, Value* x, std::vector<int64_t>& dims);
  Value* SToS(const ReshardStep& step, Value* x, std::vector<int64_t>& dims);

  Builder builder_;
  ProcessGroupTable& groups_;
  DataType dtype_;
  Type element_;
};

int64_t PieceLength(int64_t size, int64_t n) { return (size + n - 1) / n; }

// r_to_s_reshard_func.py: one rank keeps its piece (share_data_ on a 1-rank mesh); the last rank
// takes the rest of an uneven dim.
Value* StepEmitter::RToS(const ReshardStep& step, Value* x, std::vector<int64_t>& dims) {
  const int64_t n = static_cast<int64_t>(step.group.size());
  if (n == 1) return ShareData(x, dims);
  const int64_t size = step.global_dims[step.axis];
  if (size < 0) {
    // A dynamic dim, taken to be split evenly (reshard_plan.cc): slice bounds are not known, so
    // the rank takes its piece of an even split_with_num.
    const std::vector<Type> piece_types(n, Dense(dims));
    Value* pieces =
        builder_
            .Create("pd_op.split_with_num", {x, Axis(step.axis)}, {Type::Vector(piece_types)},
                    {{"num", Attribute::Int32(static_cast<int32_t>(n))}})
            ->result(0);
    return Split(pieces)[step.position];
  }
  const int64_t piece = PieceLength(size, n);
  const int64_t start = step.position * piece;
  const int64_t end = step.position == n - 1 ? size : start + piece;
  Value* starts = IntArray({start});
  Value* ends = IntArray({end});
  dims[step.axis] = end - start;
  return builder_
      .Create("pd_op.slice", {x, starts, ends}, {Dense(dims)},
              {{"axes", Attribute::Array(Int64Items({step.axis}))},
               {"infer_flags", Attribute::Array(Int64Items({1}))},
               {"decrease_axis", Attribute::Array({})}})
      ->result(0);
}

// s_to_r_reshard_func.py: all_gather stacks the pieces along dim 0; another axis, or an uneven
// dim (the last rank pads its piece with zeros first), is put back by split_with_num + concat
// (and a split that drops the padding).
Value* StepEmitter::SToR(const ReshardStep& step, Value* x, std::vector<int64_t>& dims) {
  const int64_t n = static_cast<int64_t>(step.group.size());
  if (n == 1) return ShareData(x, dims);
  const int64_t axis = step.axis;
  const int64_t size = step.global_dims[axis];
  const int64_t piece = PieceLength(size, n);
  // A dynamic dim is taken to be split evenly (reshard_plan.cc): no padding.
  const int64_t padding = size < 0 ? 0 : piece * n - size;
  if (padding != 0 && step.position == n - 1) {
    Value* pad = ZerosAlong(x, dims, axis, padding);
    Value* axis_value = Axis(axis);
    Value* parts = Combine({x, pad});
    dims[axis] = piece;
    x = builder_.Create("pd_op.concat", {parts, axis_value}, {Dense(dims)})->result(0);
  }
  std::vector<int64_t> gathered = dims;
  if (gathered[0] >= 0) gathered[0] *= n;
  Value* all = Collective("pd_op.all_gather", x, gathered,
                          {{"ring_id", Ring(step.group)},
                           {"nranks", Attribute::Int32(static_cast<int32_t>(n))}})
                   ->result(0);
  if (axis == 0 && padding == 0) {
    dims = gathered;
    return all;
  }
  Value* split_axis = Axis(0);
  const std::vector<Type> piece_types(n, Dense(dims));
  Value* pieces =
      builder_
          .Create("pd_op.split_with_num", {all, split_axis}, {Type::Vector(piece_types)},
                  {{"num", Attribute::Int32(static_cast<int32_t>(n))}})
          ->result(0);
  std::vector<int64_t> whole = dims;
  whole[axis] = size;
  if (padding == 0) {
    dims = whole;
    return Concat(pieces, axis, whole);
  }
  std::vector<Value*> parts = Split(pieces);
  Value* sections = IntArray({piece - padding, padding});
  Value* last_axis = Axis(axis);
  std::vector<int64_t> kept = dims;
  kept[axis] = piece - padding;
  std::vector<int64_t> dropped = dims;
  dropped[axis] = padding;
  Value* last = builder_
                    .Create("pd_op.split", {parts.back(), sections, last_axis},
                            {Type::Vector({Dense(kept), Dense(dropped)})})
                    ->result(0);
  parts.back() = Split(last)[0];
  dims = whole;
  Value* concat_axis = Axis(axis);
  Value* joined = Combine(parts);
  return builder_.Create("pd_op.concat", {joined, concat_axis}, {Dense(whole)})->result(0);
}

// p_to_s_reshard_func.py: reduce_scatter splits dim 0, so another axis is transposed there and
// back; an uneven dim is padded with zeros on every rank and the last rank splits the padding
// off its piece.
Value* StepEmitter::PToS(const ReshardStep& step, Value* x, std::vector<int64_t>& dims) {
  const int64_t n = static_cast<int64_t>(step.group.size());
  const int64_t axis = step.axis;
  std::vector<int64_t> perm(dims.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[0], perm[axis]);
  if (axis != 0) x = Transpose(x, perm, dims);
  const int64_t size = step.global_dims[axis];
  const int64_t piece = PieceLength(size, n);
  const int64_t padding = piece * n - size;
  if (padding != 0) {
    Value* pad = ZerosAlong(x, dims, 0, padding);
    Value* axis_value = Axis(0);
    Value* parts = Combine({x, pad});
    dims[0] = piece * n;
    x = builder_.Create("pd_op.concat", {parts, axis_value}, {Dense(dims)})->result(0);
  }
  dims[0] = piece;
  x = Collective(
          "pd_op.reduce_scatter", x, dims,
          {{"ring_id", Ring(step.group)}, {"nranks", Attribute::Int32(static_cast<int32_t>(n))}})
          ->result(0);
  if (padding != 0 && step.position == n - 1) {
    Value* sections = IntArray({piece - padding, padding});
    Value* split_axis = Axis(0);
    std::vector<int64_t> kept = dims;
    kept[0] = piece - padding;
    std::vector<int64_t> dropped = dims;
    dropped[0] = padding;
    Value* halves = builder_
                        .Create("pd_op.split", {x, sections, split_axis},
                                {Type::Vector({Dense(kept), Dense(dropped)})})
                        ->result(0);
    x = Split(halves)[0];
    dims = kept;
  }
  if (axis != 0) x = Transpose(x, perm, dims);
  return x;
}

// s_to_s_reshard_func.py: all_to_all sends the i-th block of dim 0 to rank i, so the new shard
// axis is first cut into blocks moved to dim 0 (reshape, transpose, reshape), and the blocks
// received along dim 0 are moved back to the old shard axis.
Value* StepEmitter::SToS(const ReshardStep& step, Value* x, std::vector<int64_t>& dims) {
  const int64_t n = static_cast<int64_t>(step.group.size());
  const int64_t out_axis = step.axis;
  const int64_t in_axis = step.in_axis;
  if (out_axis != 0) {
    std::vector<int64_t> blocks = dims;
    blocks[out_axis] /= n;
    blocks.insert(blocks.begin() + out_axis, n);
    x = Reshape(x, blocks);
    std::vector<int64_t> perm = {out_axis};
    for (int64_t i = 0; i < static_cast<int64_t>(blocks.size()); ++i) {
      if (i != out_axis) perm.push_back(i);
    }
    x = Transpose(x, perm, blocks);
    std::vector<int64_t> merged(blocks.begin() + 1, blocks.end());
    merged[0] *= n;
    x = Reshape(x, merged);
    dims = merged;
  } else {
    x = ShareData(x, dims);
  }
  x = Collective("pd_op.all_to_all", x, dims, {{"ring_id", Ring(step.group)}})->result(0);
  if (in_axis != 0) {
    std::vector<int64_t> blocks = dims;
    blocks[0] /= n;
    blocks.insert(blocks.begin(), n);
    x = Reshape(x, blocks);
    std::vector<int64_t> perm;
    for (int64_t i = 1; i < static_cast<int64_t>(blocks.size()); ++i) perm.push_back(i);
    perm.insert(perm.begin() + in_axis, 0);
    x = Transpose(x, perm, blocks);
    std::vector<int64_t> merged = blocks;
    merged[in_axis] *= merged[in_axis + 1];
    merged.erase(merged.begin() + in_axis + 1);
    x = Reshape(x, merged);
    dims = merged;
  }
  return x;
}

StatusOr<Value*> StepEmitter::Emit(const ReshardStep& step, Value* x, std::vector<int64_t>& dims) {
  switch (step.kind) {
    case Kind::kPToR:
      return Collective("pd_op.all_reduce", x, dims,
                        {{"ring_id", Ring(step.group)},
                         {"reduce_type", Attribute::Int32(static_cast<int32_t>(step.reduce))}})
          ->result(0);
    case Kind::kPToS:
      return PToS(step, x, dims);
    case Kind::kRToS:
      return RToS(step, x, dims);
    case Kind::kSToR:
      return SToR(step, x, dims);
    case Kind::kSToS:
      return SToS(step, x, dims);
    case Kind::kSend:
      builder_.Create("pd_op.send_v2", {x}, {},
                      {{"ring_id", Ring(step.group)},
                       {"peer", Attribute::Int32(1)},
                       {"use_calc_stream", Attribute::Bool(true)},
                       {"dynamic_shape", Attribute::Bool(false)}});
      return x;
    case Kind::kRecv: {
      IRM_ASSIGN_OR_RETURN(dims, LocalDimsOn(step.global_dims, step.received, step.group[1]));
      return builder_
          .Create("pd_op.recv_v2", {}, {Dense(dims)},
                  {{"out_shape", Attribute::Array(Int64Items(dims))},
                   {"dtype", Attribute::DataTypeAttr(dtype_)},
                   {"peer", Attribute::Int32(0)},
                   {"ring_id", Ring(step.group)},
                   {"use_calc_stream", Attribute::Bool(true)},
                   {"dynamic_shape", Attribute::Bool(false)}})
          ->result(0);
    }
  }
  return x;
}

// The reshards of `program`, nested ones included, in program order.
std::vector<Operation*> Reshards(const Program& program) {
  std::vector<Operation*> found;
  program.module().Walk([&](Operation* op) {
    if (op->name() == "dist_op.reshard") found.push_back(op);
  });
  return found;
}

struct ReshardTypes {
  const TensorDistAttr* src = nullptr;
  const TensorDistAttr* dst = nullptr;
  std::vector<int64_t> global;
};

StatusOr<ReshardTypes> TypesOf(const Operation& op) {
  if (op.num_operands() != 1 || op.operand(0) == nullptr || op.num_results() != 1) {
    return AtReshard(op, Status(StatusCode::kInvalid, Location{},
                                "dist_op.reshard takes one operand and has one result"));
  }
  ReshardTypes types;
  types.src = op.operand(0)->type().dist_attr();
  types.dst = op.result(0)->type().dist_attr();
  if (types.src == nullptr || types.dst == nullptr) {
    return AtReshard(
        op, Status(StatusCode::kInvalid, Location{},
                   fmt::format("dist_op.reshard needs pd_dist.tensor types, found "
                               "{} -> {}",
                               op.operand(0)->type().ToString(), op.result(0)->type().ToString())));
  }
  types.global = op.result(0)->type().dims();
  return types;
}

void CollectProcessIds(const ProcessMesh& mesh, int64_t& largest) {
  for (int64_t id : mesh.process_ids) largest = std::max(largest, id);
}

void CollectFromType(const Type& type, int64_t& largest) {
  if (const TensorDistAttr* dist = type.dist_attr()) CollectProcessIds(dist->mesh, largest);
  for (const Type& element : type.elements()) CollectFromType(element, largest);
}

// Gives the last value of a lowering the reshard's result type; an element of a builtin.split
// changes in the vector it comes from too, so that the split still matches it.
void SetResultType(Value& value, const Type& type) {
  Operation* producer = value.defining_op();
  if (producer != nullptr && producer->name() == "builtin.split" && producer->num_operands() == 1) {
    Value* vector = producer->operand(0);
    std::vector<Type> elements = vector->type().elements();
    if (value.index() < elements.size()) {
      elements[value.index()] = type;
      vector->set_type(Type::Vector(std::move(elements)));
    }
  }
  value.set_type(type);
}

// The ops a reshard became run in its place in the schedule: they take its op_role and chunk_id
// (a pipeline's reshard carries its reader's, spmd_completion.h), except that a send, which runs
// on the stage of the value it sends, takes the chunk of that value's producer (Paddle's
// complete_chunk_id gives the send_v2 of a stage boundary the chunk of the op before it).
void TagLoweredOps(const Operation& reshard, const Operation* before) {
  const bool role = reshard.HasAttribute("op_role");
  const bool chunk = reshard.HasAttribute("chunk_id");
  if (!role && !chunk) return;
  Operation* op = before != nullptr ? before->next() : reshard.parent_block()->front();
  for (; op != nullptr && op != &reshard; op = op->next()) {
    if (role && !op->HasAttribute("op_role"))
      op->SetAttribute("op_role", reshard.attribute("op_role"));
    if (!chunk || op->HasAttribute("chunk_id")) continue;
    const Operation* producer = op->name() == "pd_op.send_v2" && op->num_operands() == 1
                                    ? op->operand(0)->defining_op()
                                    : nullptr;
    op->SetAttribute("chunk_id", producer != nullptr && producer->HasAttribute("chunk_id")
                                     ? producer->attribute("chunk_id")
                                     : reshard.attribute("chunk_id"));
  }
}

}  // namespace

int64_t WorldSizeOf(const Program& program) {
  int64_t largest = -1;
  program.module().Walk([&](Operation* op) {
    for (size_t i = 0; i < op->num_results(); ++i) CollectFromType(op->result(i)->type(), largest);
    if (const OperationDistAttr* dist = op->attribute("op_dist_attr").AsOperationDist()) {
      CollectProcessIds(dist->mesh, largest);
    }
  });
  return largest + 1;
}

Status PlanProcessGroups(const Program& program, ProcessGroupTable& groups) {
  for (Operation* op : Reshards(program)) {
    IRM_ASSIGN_OR_RETURN(ReshardTypes types, TypesOf(*op));
    std::vector<int64_t> ranks = types.src->mesh.process_ids;
    ranks.insert(ranks.end(), types.dst->mesh.process_ids.begin(),
                 types.dst->mesh.process_ids.end());
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    for (int64_t rank : ranks) {
      StatusOr<std::vector<ReshardStep>> steps =
          PlanReshard(types.global, *types.src, *types.dst, rank);
      if (!steps.ok()) return AtReshard(*op, steps.status());
      for (const ReshardStep& step : *steps) groups.RingOf(step.group);
    }
  }
  return Status::Ok();
}

StatusOr<size_t> LowerReshards(Program& program, int64_t rank, ProcessGroupTable& groups) {
  const std::vector<Operation*> reshards = Reshards(program);
  for (Operation* op : reshards) {
    IRM_ASSIGN_OR_RETURN(ReshardTypes types, TypesOf(*op));
    StatusOr<std::vector<ReshardStep>> steps =
        PlanReshard(types.global, *types.src, *types.dst, rank);
    if (!steps.ok()) return AtReshard(*op, steps.status());
    Value* x = op->operand(0);
    const Type& out_type = op->result(0)->type();
    const std::optional<DataType> dtype = DataTypeOfElement(out_type.dtype());
    if (!dtype) {
      return AtReshard(
          *op, Status(StatusCode::kInvalid, Location{},
                      fmt::format("no reshard of {} elements", out_type.dtype().ToString())));
    }
    Operation* before = op->prev();
    StepEmitter emitter(*op, groups, *dtype, out_type.dtype());
    std::vector<int64_t> dims;
    if (MeshCoordinate(types.src->mesh, rank)) {
      StatusOr<std::vector<int64_t>> local = LocalDimsOn(types.global, *types.src, rank);
      if (!local.ok()) return AtReshard(*op, local.status());
      dims = *std::move(local);
    }
    bool sent_away = false;
    for (const ReshardStep& step : *steps) {
      StatusOr<Value*> next = emitter.Emit(step, x, dims);
      if (!next.ok()) return AtReshard(*op, next.status());
      x = *next;
      sent_away = step.kind == Kind::kSend;
    }
    if (!MeshCoordinate(types.dst->mesh, rank) || sent_away) {
      if (op->result(0)->use_empty()) {
        TagLoweredOps(*op, before);
        IRM_RETURN_IF_ERROR(EraseOp(op));
        continue;
      }
      StatusOr<std::vector<int64_t>> first =
          LocalDimsOn(types.global, *types.dst, types.dst->mesh.process_ids.front());
      if (!first.ok()) return AtReshard(*op, first.status());
      x = emitter.Zeros(*first);
    }
    if (x == op->operand(0)) x = emitter.ShareData(x, dims);
    SetResultType(*x, out_type);
    TagLoweredOps(*op, before);
    IRM_RETURN_IF_ERROR(ReplaceOp(op, {x}));
  }
  return reshards.size();
}

}  // namespace irm::newir
