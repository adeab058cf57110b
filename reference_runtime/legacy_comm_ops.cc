// The legacy communication ops (legacy_comm_ops.h): planning their slots and attributes, and
// LegacyExecutor::RunCommOp, which runs them on the rank's communicators.
#include "reference_runtime/legacy_comm_ops.h"

#include <optional>
#include <utility>

#include <fmt/format.h>

#include "reference_runtime/comm/comm_context.h"
#include "reference_runtime/comm/tensor_parallel.h"
#include "reference_runtime/legacy_bindings.h"
#include "reference_runtime/legacy_executor.h"

namespace irm::rt {
namespace {

// The ops that read X, and those that write Out; barrier may do either or neither.
bool ReadsX(std::string_view type) { return type != "recv_v2"; }
bool WritesOut(std::string_view type) { return type != "send_v2"; }

std::optional<ReduceOp> AllReduceOf(std::string_view type) {
  if (type == "c_allreduce_sum") return ReduceOp::kSum;
  if (type == "c_allreduce_max") return ReduceOp::kMax;
  if (type == "c_allreduce_min") return ReduceOp::kMin;
  if (type == "c_allreduce_prod") return ReduceOp::kProd;
  return std::nullopt;
}

// The slot's one var name; none when the slot is absent or empty, an error when it holds more.
StatusOr<std::optional<std::string>> OneVar(const oldir::Op::Names* names, std::string_view slot) {
  if (names == nullptr || names->empty()) return std::optional<std::string>();
  if (names->size() > 1) {
    return Status(StatusCode::kInvalid, Location{},
                  fmt::format("slot '{}' holds {} vars, takes 1", slot, names->size()));
  }
  const std::string& name = *names->begin();
  if (name == oldir::kEmptyVarName) return std::optional<std::string>();
  return std::optional<std::string>(name);
}

}  // namespace

Status PlanLegacyCommOp(const oldir::Op& op,
                        const std::function<PlannedVar(const std::string&)>& resolve,
                        PlannedOp& planned) {
  const std::string& type = op.type();
  planned.kind = PlannedKind::kComm;
  IRM_ASSIGN_OR_RETURN(std::optional<std::string> x, OneVar(op.Input("X"), "X"));
  IRM_ASSIGN_OR_RETURN(std::optional<std::string> out, OneVar(op.Output("Out"), "Out"));
  if (ReadsX(type)) {
    if (!x && type != "barrier") {
      return Status(StatusCode::kInvalid, Location{}, "input slot 'X' holds no var, needs 1");
    }
    planned.inputs.push_back(x ? resolve(*x) : PlannedVar{});
  }
  if (WritesOut(type)) {
    if (!out && type == "recv_v2") {
      return Status(StatusCode::kInvalid, Location{}, "output slot 'Out' holds no var, needs 1");
    }
    PlannedVar var = out ? resolve(*out) : PlannedVar{};
    var.in_place = out && x && *out == *x;
    planned.outputs.push_back(std::move(var));
  }
  // Paddle's op makers' defaults (c_*_op.cc, send_v2_op.cc, recv_v2_op.cc); nranks only when
  // given, so that a missing one is not checked against the group.
  struct Rule {
    const char* name;
    AttrKind kind;
    AttrValue fallback;
  };
  const Rule rules[] = {
      {"ring_id", AttrKind::kInt, int64_t{0}},
      {"root", AttrKind::kInt, int64_t{0}},
      {"rank", AttrKind::kInt, int64_t{0}},
      {"nranks", AttrKind::kInt, int64_t{1}},
      {"peer", AttrKind::kInt, int64_t{0}},
      {"out_shape", AttrKind::kInts, std::vector<int64_t>{}},
      {"dtype", AttrKind::kDType, DType::kFloat32},
      {"dynamic_shape", AttrKind::kBool, false},
  };
  for (const Rule& rule : rules) {
    if (std::string_view(rule.name) == "nranks" && !op.HasAttr("nranks")) continue;
    StatusOr<AttrValue> value = LegacyAttrOr(op, rule.name, rule.kind, rule.fallback);
    if (!value.ok()) return value.status();
    planned.attrs.Set(rule.name, std::move(value).value());
  }
  return Status::Ok();
}

Status LegacyExecutor::RunCommOp(const PlannedOp& op, RunState& state) const {
  const CommContext& context = *options_.comm;
  const auto fail = [&](const Status& status) {
    return LegacyOpError(op, status.code(), status.message());
  };
  const auto int_attr = [&](std::string_view name) {
    return static_cast<int>(op.attrs.GetOr<int64_t>(name, 0).value());
  };
  const int ring_id = int_attr("ring_id");
  StatusOr<Communicator*> found = context.communicator(ring_id);
  if (!found.ok()) return fail(found.status());
  Communicator& comm = **found;
  const CallSite site = context.Site(op.type, op.index);

  const Tensor* x = nullptr;
  if (!op.inputs.empty() && !op.inputs[0].name.empty()) {
    IRM_ASSIGN_OR_RETURN(x, Read(op, op.inputs[0], state));
  }
  const PlannedVar* out =
      op.outputs.empty() || op.outputs[0].name.empty() ? nullptr : &op.outputs[0];
  const auto check_nranks = [&]() -> Status {
    if (!op.attrs.Has("nranks") || int_attr("nranks") == comm.size()) return Status::Ok();
    return LegacyOpError(op, StatusCode::kInvalid,
                         fmt::format("nranks {} is not the {} ranks of process group {}",
                                     int_attr("nranks"), comm.size(), ring_id));
  };

  Tensor result;
  Status status;
  const std::string& type = op.type;
  if (std::optional<ReduceOp> reduce = AllReduceOf(type)) {
    result = x->Clone();
    status = comm.AllReduce(result, *reduce, site);
  } else if (type == "c_broadcast") {
    result = x->Clone();
    status = comm.Broadcast(result, int_attr("root"), site);
  } else if (type == "c_allgather") {
    IRM_RETURN_IF_ERROR(check_nranks());
    status = comm.AllGather(*x, &result, site);
  } else if (type == "c_reducescatter") {
    IRM_RETURN_IF_ERROR(check_nranks());
    status = comm.ReduceScatter(*x, &result, ReduceOp::kSum, site);
  } else if (type == "c_identity") {
    result = x->Clone();  // the identity forward; its grad is the all-reduce
  } else if (type == "c_split") {
    StatusOr<Tensor> part = SplitLastDim(*x, int_attr("rank"), int_attr("nranks"));
    if (!part.ok()) return fail(part.status());
    result = std::move(part).value();
  } else if (type == "c_concat") {
    IRM_RETURN_IF_ERROR(check_nranks());
    StatusOr<Tensor> whole = ConcatLastDim(comm, *x, site);
    if (!whole.ok()) return fail(whole.status());
    result = std::move(whole).value();
  } else if (type == "send_v2") {
    status = comm.Send(*x, int_attr("peer"), site);
  } else if (type == "recv_v2") {
    // dynamic_shape: the message says the shape; else out_shape and dtype declare it.
    if (!op.attrs.GetOr<bool>("dynamic_shape", false).value()) {
      StatusOr<Tensor> declared =
          Tensor::Zeros(op.attrs.GetOr<DType>("dtype", DType::kFloat32).value(),
                        op.attrs.GetOr<std::vector<int64_t>>("out_shape", {}).value());
      if (!declared.ok()) {
        return LegacyOpError(op, StatusCode::kInvalid,
                             fmt::format("out_shape: {}", declared.status().message()));
      }
      result = std::move(declared).value();
    }
    status = comm.Recv(&result, int_attr("peer"), site);
  } else if (type == "barrier") {
    status = comm.Barrier(site);
    if (x != nullptr) result = x->Clone();
  } else {
    return LegacyOpError(op, StatusCode::kUnimplemented,
                         fmt::format("no binding for legacy communication op '{}'", type));
  }
  if (!status.ok()) return fail(status);
  if (out != nullptr && result.defined()) Write(*out, std::move(result), state);
  return Status::Ok();
}

}  // namespace irm::rt
