// The `canonicalize` pass: folds ops that compute their input unchanged, making their readers read
// the input and erasing them, then erases the ops that became dead (dce's rules, limited to the
// producers of what was erased: dead code that was there before stays for `dce`). The folds:
//   * pd_op.scale by 1 with bias 0 (the factor is an operand fed by pd_op.full in the pd_op table;
//     the older attribute form `scale` is read too). x * 1 + 0 turns -0 into +0, which no parity
//     comparison can see;
//   * pd_op.cast to the dtype the input already has;
//   * pd_op.reshape to the same static shape (no -1), its xshape result unused;
//   * pd_op.assign (a copy: under SSA the copy and the original hold the same values as long as
//     nothing writes either in place), and an assign of an assign reads the first one's input.
// A fold needs the result type to equal the input type exactly (so the program stays verifiable),
// the op not in place, its op_dist_attr (when set) giving the input and the result the same
// distribution, and none of these: a persistable result, a result read by pd_op.fetch or
// builtin.shadow_output (the op is what names the output), a result or an input read by an in-place
// or unregistered op (the in-place op would then write the original, or see it written).
// Fold-and-erase rounds repeat until one changes nothing, at most max-iterations times.
#include <fmt/format.h>

#include <optional>
#include <unordered_set>
#include <vector>

#include "newir/op_info.h"
#include "newir/rewriter.h"
#include "newir/transforms/passes.h"

namespace irm::newir {
namespace {

// The element type a cast's dtype attribute names; nullopt for dtypes with no scalar type here.
std::optional<TypeKind> ScalarKindOf(DataType dtype) {
  switch (dtype) {
    case DataType::kBool:
      return TypeKind::kBool;
    case DataType::kUInt8:
      return TypeKind::kU8;
    case DataType::kInt8:
      return TypeKind::kI8;
    case DataType::kInt16:
      return TypeKind::kI16;
    case DataType::kInt32:
      return TypeKind::kI32;
    case DataType::kInt64:
      return TypeKind::kI64;
    case DataType::kFloat32:
      return TypeKind::kF32;
    case DataType::kFloat64:
      return TypeKind::kF64;
    case DataType::kComplex64:
      return TypeKind::kC64;
    case DataType::kComplex128:
      return TypeKind::kC128;
    case DataType::kFloat16:
      return TypeKind::kF16;
    case DataType::kBFloat16:
      return TypeKind::kBF16;
    case DataType::kFloat8E4M3FN:
      return TypeKind::kF8E4M3FN;
    case DataType::kFloat8E5M2:
      return TypeKind::kF8E5M2;
    default:
      return std::nullopt;
  }
}

// A numeric attribute (int, float or Scalar) as a double; nullopt for anything else.
std::optional<double> NumericValue(const Attribute& attr) {
  if (const float* f = attr.AsFloat()) return *f;
  if (const double* d = attr.AsDouble()) return *d;
  if (const int32_t* i = attr.AsInt32()) return *i;
  if (const int64_t* i = attr.AsInt64()) return static_cast<double>(*i);
  if (const ScalarValue* s = attr.AsScalar()) {
    if (const double* d = std::get_if<double>(&s->value)) return *d;
    if (const int64_t* i = std::get_if<int64_t>(&s->value)) return static_cast<double>(*i);
  }
  return std::nullopt;
}

bool IsNumber(const Attribute& attr, double expected) {
  std::optional<double> value = NumericValue(attr);
  return value.has_value() && *value == expected;
}

// scale's factor: the value of the pd_op.full feeding operand 1, else the attribute `scale`.
bool ScalesByOne(const Operation& op) {
  if (op.num_operands() >= 2 && op.operand(1) != nullptr) {
    const Operation* full = op.operand(1)->defining_op();
    return full != nullptr && full->name() == "pd_op.full" && IsNumber(full->attribute("value"), 1);
  }
  return IsNumber(op.attribute("scale"), 1);
}

bool HasStaticDims(const Type& type) {
  for (int64_t dim : type.dims()) {
    if (dim < 0) return false;
  }
  return true;
}

// The input `op` passes through unchanged, when it is one of the folds; null otherwise.
Value* IdentityInput(const Operation& op) {
  if (op.num_operands() == 0 || op.num_results() == 0) return nullptr;
  Value* x = op.operand(0);
  if (x == nullptr || op.result(0)->type() != x->type()) return nullptr;
  const std::string& name = op.name();
  if (name == "pd_op.scale") {
    const Attribute bias = op.attribute("bias");
    if (op.num_results() != 1 || !ScalesByOne(op) || (bias && !IsNumber(bias, 0))) return nullptr;
  } else if (name == "pd_op.cast") {
    const DataType* dtype = op.attribute("dtype").AsDataType();
    if (op.num_results() != 1 || dtype == nullptr) return nullptr;
    std::optional<TypeKind> kind = ScalarKindOf(*dtype);
    if (!kind.has_value() || x->type().dtype().kind() != *kind) return nullptr;
  } else if (name == "pd_op.reshape") {
    const bool xshape_unused =
        op.num_results() == 1 || (op.num_results() == 2 && op.result(1)->use_empty());
    if (!xshape_unused || !HasStaticDims(x->type())) return nullptr;
  } else if (name == "pd_op.assign") {
    if (op.num_results() != 1) return nullptr;
  } else {
    return nullptr;
  }
  return x;
}

// Whether op_dist_attr (when set) lays out the input (operand 0) and the result differently.
bool DistAttrsConflict(const Operation& op) {
  const OperationDistAttr* dist = op.attribute("op_dist_attr").AsOperationDist();
  if (dist == nullptr || dist->operands.empty() || dist->results.empty()) return false;
  return dist->operands[0] != dist->results[0];
}

bool IsPersistableResult(const Operation& op, size_t index) {
  const AttributeSpan* flags = op.attribute("persistable").AsArray();
  if (flags == nullptr || index >= flags->size()) return false;
  const bool* flag = (*flags)[index].AsBool();
  return flag != nullptr && *flag;
}

bool WritesOrUnknown(const Operation& reader) {
  return reader.info() == nullptr || reader.info()->inplace;
}

// Whether an op other than `except` that may write its inputs (in place, or unregistered) reads
// `value`.
bool ReadByWriter(const Value& value, const Operation* except) {
  for (OpOperand* use = value.first_use(); use != nullptr; use = use->next_use()) {
    if (use->owner() != except && WritesOrUnknown(*use->owner())) return true;
  }
  return false;
}

bool ReadByOutput(const Value& value) {
  for (OpOperand* use = value.first_use(); use != nullptr; use = use->next_use()) {
    const std::string& reader = use->owner()->name();
    if (reader == "pd_op.fetch" || reader == "builtin.shadow_output") return true;
  }
  return false;
}

// Whether the readers of op's result may read `input` instead, op aside.
bool MayForward(const Operation& op, const Value& input) {
  if (op.info() == nullptr || op.info()->inplace || DistAttrsConflict(op)) return false;
  const Value& result = *op.result(0);
  return !IsPersistableResult(op, 0) && !ReadByOutput(result) && !ReadByWriter(result, nullptr) &&
         !ReadByWriter(input, &op);
}

class CanonicalizePass : public Pass {
 public:
  CanonicalizePass(int64_t max_iterations, bool test_convergence)
      : max_iterations_(max_iterations), test_convergence_(test_convergence) {}

  std::string_view name() const override { return "canonicalize"; }

  StatusOr<IrChange> Run(Program& program) override {
    IrChange change = IrChange::kUnchanged;
    for (int64_t round = 0; round < max_iterations_; ++round) {
      IRM_ASSIGN_OR_RETURN(bool changed, RunRound(program));
      if (!changed) return change;
      change = IrChange::kChanged;
    }
    if (test_convergence_) {
      return Status(StatusCode::kInternal, Location{},
                    fmt::format("canonicalize changed the IR in each of its {} iteration(s) and "
                                "did not reach a fixpoint",
                                max_iterations_));
    }
    return change;
  }

 private:
  // One sweep of folds over every op, then the erasure of what became dead.
  StatusOr<bool> RunRound(Program& program) {
    std::vector<Operation*> ops;
    program.module().Walk([&](Operation* op) {
      if (op != &program.module()) ops.push_back(op);
    });
    std::unordered_set<const Operation*> became_dead;
    bool changed = false;
    // Only the op at hand is erased in the loop, so the later pointers in `ops` stay valid.
    for (Operation* op : ops) {
      if (ShortenAssignChain(*op, became_dead)) changed = true;
      Value* input = IdentityInput(*op);
      if (input == nullptr || !MayForward(*op, *input)) continue;
      for (size_t i = 0; i < op->num_operands(); ++i) {
        if (Value* v = op->operand(i); v != nullptr && v->defining_op() != nullptr) {
          became_dead.insert(v->defining_op());
        }
      }
      IRM_RETURN_IF_ERROR(ReplaceOp(op, OpResultsReplacement(*op, input)));
      changed = true;
    }
    IRM_ASSIGN_OR_RETURN(size_t erased, EraseDeadOps(program.block(), &became_dead));
    return changed || erased > 0;
  }

  // `input` for result 0; reshape's unused xshape result is dropped with the op.
  static std::vector<Value*> OpResultsReplacement(const Operation& op, Value* input) {
    std::vector<Value*> values(op.num_results(), nullptr);
    values[0] = input;
    return values;
  }

  // assign(assign(x)) -> assign(x) when neither x nor the middle value is read by a writer.
  static bool ShortenAssignChain(Operation& op, std::unordered_set<const Operation*>& became_dead) {
    if (op.name() != "pd_op.assign" || op.num_operands() != 1 || op.operand(0) == nullptr) {
      return false;
    }
    Value* middle = op.operand(0);
    Operation* inner = middle->defining_op();
    if (inner == nullptr || inner->name() != "pd_op.assign" || inner->num_operands() != 1) {
      return false;
    }
    Value* x = inner->operand(0);
    if (x == nullptr || x->type() != middle->type() || inner->info() == nullptr ||
        DistAttrsConflict(*inner) || ReadByWriter(*middle, nullptr) || ReadByWriter(*x, inner)) {
      return false;
    }
    op.SetOperand(0, x);
    became_dead.insert(inner);
    return true;
  }

  int64_t max_iterations_;
  bool test_convergence_;
};

}  // namespace

Status RegisterCanonicalizePass(PassRegistry& registry) {
  return registry.Register(
      {.name = "canonicalize",
       .summary = "folds ops that pass their input through unchanged (scale by 1, cast to the same "
                  "dtype, reshape to the same shape, assign) and erases what became dead",
       .options = {{.name = "max-iterations",
                    .default_value = int64_t{10},
                    .help = "fold-and-erase rounds at most",
                    .min = 1},
                   {.name = "test-convergence",
                    .default_value = false,
                    .help = "fail when the last round still changed the IR"}},
       .factory = [](const PassOptions& options) {
         return std::make_unique<CanonicalizePass>(options.GetInt("max-iterations"),
                                                   options.GetBool("test-convergence"));
       }});
}

}  // namespace irm::newir
