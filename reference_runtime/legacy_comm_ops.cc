// The legacy communication ops (legacy_comm_ops.h): planning their slots and attributes, and
// LegacyExecutor::RunCommOp, which runs them on the rank's communicators.
#include "reference_runtime/legacy_comm_ops.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "reference_runtime/comm/comm_context.h"
#include "reference_runtime/comm/tensor_parallel.h"
#include "reference_runtime/kernels/vocab_parallel.h"
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

// The vocabulary-parallel ops (kernels/vocab_parallel.h) read and write their own slots, in the
// order their kernels take them (paddle/fluid/operators/ops_signature/c_embedding_sig.cc and
// c_softmax_with_cross_entropy_sig.cc).
struct VocabParallelSlots {
  std::string_view type;
  std::vector<std::string_view> inputs;
  std::vector<std::string_view> outputs;
};
const VocabParallelSlots* FindVocabParallelSlots(std::string_view type) {
  static const VocabParallelSlots kSlots[] = {
      {"c_embedding", {"W", "Ids"}, {"Out"}},
      {"c_embedding_grad", {"W", "Ids", "Out@GRAD"}, {"W@GRAD"}},
      {"c_softmax_with_cross_entropy", {"Logits", "Label"}, {"Softmax", "Loss"}},
      {"c_softmax_with_cross_entropy_grad", {"Softmax", "Label", "Loss@GRAD"}, {"Logits@GRAD"}},
  };
  for (const VocabParallelSlots& slots : kSlots) {
    if (slots.type == type) return &slots;
  }
  return nullptr;
}

// Every input slot holds one var; an output slot holds one var or none (not wanted). An output
// that names an input is written in place (Paddle's inplace inferers: Logits -> Softmax,
// Softmax -> Logits@GRAD).
Status PlanVocabParallelSlots(const oldir::Op& op, const VocabParallelSlots& slots,
                              const std::function<PlannedVar(const std::string&)>& resolve,
                              PlannedOp& planned) {
  std::vector<std::string> read;
  for (std::string_view slot : slots.inputs) {
    IRM_ASSIGN_OR_RETURN(std::optional<std::string> name, OneVar(op.Input(slot), slot));
    if (!name) {
      return Status(StatusCode::kInvalid, Location{},
                    fmt::format("input slot '{}' holds no var, needs 1", slot));
    }
    planned.inputs.push_back(resolve(*name));
    read.push_back(*name);
  }
  for (std::string_view slot : slots.outputs) {
    IRM_ASSIGN_OR_RETURN(std::optional<std::string> name, OneVar(op.Output(slot), slot));
    PlannedVar var = name ? resolve(*name) : PlannedVar{};
    var.in_place = name && std::find(read.begin(), read.end(), *name) != read.end();
    planned.outputs.push_back(std::move(var));
  }
  return Status::Ok();
}

}  // namespace

Status PlanLegacyCommOp(const oldir::Op& op,
                        const std::function<PlannedVar(const std::string&)>& resolve,
                        PlannedOp& planned) {
  const std::string& type = op.type();
  planned.kind = PlannedKind::kComm;
  if (const VocabParallelSlots* slots = FindVocabParallelSlots(type)) {
    IRM_RETURN_IF_ERROR(PlanVocabParallelSlots(op, *slots, resolve, planned));
    // c_embedding_op.cc and c_softmax_with_cross_entropy_op.cc's makers (the grad ops copy the
    // forward's attributes). nranks defaults to 0 there, which no rank is in: an error when run.
    struct Rule {
      const char* name;
      AttrValue fallback;
    };
    const Rule rules[] = {
        {"start_index", int64_t{0}}, {"vocab_size", int64_t{-1}}, {"ignore_index", int64_t{-100}},
        {"ring_id", int64_t{0}},     {"rank", int64_t{0}},        {"nranks", int64_t{0}}};
    for (const Rule& rule : rules) {
      StatusOr<AttrValue> value = LegacyAttrOr(op, rule.name, AttrKind::kInt, rule.fallback);
      if (!value.ok()) return value.status();
      planned.attrs.Set(rule.name, std::move(value).value());
    }
    return Status::Ok();
  }
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

namespace {

// Runs vocabulary-parallel op `op` on its inputs (in slot order) and returns its outputs (in slot
// order). Only the forward cross entropy communicates: over the communicator of its ring_id,
// whose group its rank and nranks must describe. Errors are unlocated.
StatusOr<std::vector<Tensor>> RunVocabParallel(const PlannedOp& op,
                                               const std::vector<const Tensor*>& in,
                                               const CommContext& context) {
  const auto attr = [&](std::string_view name) { return op.attrs.GetOr<int64_t>(name, 0).value(); };
  const int rank = static_cast<int>(attr("rank"));
  const int nranks = static_cast<int>(attr("nranks"));
  if (op.type == "c_embedding") {
    IRM_ASSIGN_OR_RETURN(Tensor out,
                         CEmbedding(*in[0], *in[1], attr("start_index"), attr("vocab_size")));
    return std::vector<Tensor>{std::move(out)};
  }
  if (op.type == "c_embedding_grad") {
    IRM_ASSIGN_OR_RETURN(Tensor w_grad,
                         CEmbeddingGrad(*in[0], *in[1], *in[2], attr("start_index")));
    return std::vector<Tensor>{std::move(w_grad)};
  }
  if (op.type == "c_softmax_with_cross_entropy_grad") {
    IRM_ASSIGN_OR_RETURN(
        Tensor logits_grad,
        CSoftmaxWithCrossEntropyGrad(*in[0], *in[1], *in[2], attr("ignore_index"), rank, nranks));
    return std::vector<Tensor>{std::move(logits_grad)};
  }
  if (nranks < 1 || rank < 0 || rank >= nranks) {
    return Status(StatusCode::kInvalid, Location{},
                  fmt::format("rank {} is not in [0, nranks {})", rank, nranks));
  }
  const int ring_id = static_cast<int>(attr("ring_id"));
  IRM_ASSIGN_OR_RETURN(Communicator * comm, context.communicator(ring_id));
  if (nranks != comm->size() || rank != comm->rank()) {
    return Status(StatusCode::kInvalid, Location{},
                  fmt::format("rank {} of nranks {} is not this rank ({} of {}) of process group "
                              "{}",
                              rank, nranks, comm->rank(), comm->size(), ring_id));
  }
  const CallSite site = context.Site(op.type, op.index);
  const RowAllReduce reduce = {
      .max = [&](Tensor& t) { return comm->AllReduce(t, ReduceOp::kMax, site); },
      .sum = [&](Tensor& t) { return comm->AllReduce(t, ReduceOp::kSum, site); }};
  IRM_ASSIGN_OR_RETURN(
      SoftmaxAndLoss result,
      CSoftmaxWithCrossEntropy(*in[0], *in[1], attr("ignore_index"), rank, nranks, reduce));
  return std::vector<Tensor>{std::move(result.softmax), std::move(result.loss)};
}

}  // namespace

Status LegacyExecutor::RunCommOp(const PlannedOp& op, RunState& state) const {
  const CommContext& context = *options_.comm;
  const auto fail = [&](const Status& status) {
    return LegacyOpError(op, status.code(), status.message());
  };
  if (FindVocabParallelSlots(op.type) != nullptr) {
    std::vector<const Tensor*> in;
    for (const PlannedVar& var : op.inputs) {
      IRM_ASSIGN_OR_RETURN(const Tensor* tensor, Read(op, var, state));
      in.push_back(tensor);
    }
    StatusOr<std::vector<Tensor>> results = RunVocabParallel(op, in, context);
    if (!results.ok()) return fail(results.status());
    for (size_t i = 0; i < op.outputs.size() && i < results->size(); ++i) {
      if (!op.outputs[i].name.empty()) Write(op.outputs[i], std::move((*results)[i]), state);
    }
    return Status::Ok();
  }
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
