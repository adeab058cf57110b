// The prepared form of a legacy program, built once before the first step: for every op of every
// block, what it is (a kernel call through the binding table, or an op the executor runs itself),
// the vars it reads and writes in kernel order with where each lives (the declaring block, the
// persistable flag, whether the op writes a var it also reads), its static kernel attributes and
// the inputs whose tensors override attributes. Everything that can be checked without tensors is
// checked here, so a program that cannot run fails before any parameter is touched.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "oldir/program.h"
#include "reference_runtime/executor.h"
#include "reference_runtime/kernel.h"
#include "reference_runtime/legacy_bindings.h"

namespace irm::rt {

// A var an op reads or writes. An empty name is an absent optional input or an output nobody
// wants (the slot is missing, or holds @EMPTY@).
struct PlannedVar {
  std::string name;
  int declared_in = -1;  // the nearest block declaring it, from the op's block; -1: undeclared
  bool persistable = false;
  bool in_place = false;  // an output the op also reads (legacy in-place: Out is X)
};

struct PlannedTensorAttr {
  const TensorAttrRule* rule = nullptr;
  std::vector<PlannedVar> vars;
};

// kComm: a communication op (legacy_comm_ops.h), planned only for an executor with a CommContext.
enum class PlannedKind : uint8_t {
  kKernel,
  kFeed,
  kFetch,
  kConditionalBlock,
  kWhile,
  kNoOp,
  kComm,
};

// An output var as the observer reports it: `output` is the kernel output that writes it, -1 for
// a var no kernel output writes (transpose2's XShape, control-flow outputs).
struct ObservedVar {
  std::string name;
  int output = -1;
};

struct PlannedOp {
  PlannedKind kind = PlannedKind::kKernel;
  int block = 0;
  int index = 0;
  std::string type;
  Location location;  // file, block, op index and type

  // kKernel
  const LegacyBinding* binding = nullptr;
  std::string kernel;
  BoundKernel bound_kernel;  // `kernel` in the executor's registry (set by LegacyExecutor)
  KernelAttrs attrs;
  std::vector<PlannedVar> inputs;   // the flattened kernel inputs
  std::vector<PlannedVar> outputs;  // the flattened kernel outputs
  std::vector<PlannedTensorAttr> tensor_attrs;
  int64_t axis = -1;      // the legacy broadcast axis of elementwise and compare ops
  uint64_t identity = 0;  // OpIdentity of the first output's name (random ops' stream)

  // kFeed (the var in outputs[0], declared dtype and dims) and kFetch (the var in inputs[0])
  int64_t col = 0;
  DType feed_dtype = DType::kFloat32;
  std::vector<int64_t> feed_dims;

  // kConditionalBlock, kWhile: the sub-block and the vars deciding whether it runs (Cond, or
  // Input when is_scalar_condition is false; while's Condition).
  int sub_block = -1;
  bool scalar_condition = true;
  std::vector<PlannedVar> conditions;

  std::vector<ObservedVar> observed;  // every output var, in kernel order then the rest

  // Block 0: the vars this op is the last to mention, which no op of another block mentions;
  // Run drops them from the step's scope after the op (set by LegacyExecutor).
  std::vector<std::string> last_use_of;
};

struct LegacyPlan {
  std::vector<std::vector<PlannedOp>> blocks;  // by block position
  // Block 0's feed ops, by col; for a program without feed ops, its data vars (need_check_feed)
  // in declaration order, fed by name before block 0 runs (or found in the scope when not fed),
  // as Paddle's Executor.run(feed=...) feeds a program it was handed without feed ops.
  std::vector<FeedSpec> feeds;
  bool feeds_by_name = false;
  // The exclusive bound of each var an op reads as indices (ids, hard labels), fed or not: a
  // job that feeds a var another job reads as labels takes its bound from there.
  std::map<std::string, int64_t, std::less<>> index_bounds;
  std::vector<std::string> fetches;  // block 0's fetch ops' vars, by col
};

// Plans every op of every block. `file` names the program in the locations. Errors: kInvalid for
// a malformed op (a slot with the wrong number of vars, an attribute that does not convert, a
// sub-block out of range, a feed target that is not a declared dense tensor, two fetch ops of one
// column), kUnimplemented for an op type without a binding and, unless `multi_rank`, for
// communication ops.
StatusOr<LegacyPlan> PlanLegacyProgram(const oldir::Program& program, const std::string& file,
                                       bool multi_rank = false);

}  // namespace irm::rt
