// The new-IR communication ops as the PirExecutor binds them: the phi-style ops (pd_op.all_reduce
// with its reduce_type, all_gather, reduce_scatter, broadcast, all_to_all, p_send, p_recv,
// barrier), the tensor-parallel c_identity, c_split and c_concat, the vocabulary-parallel
// c_embedding and c_softmax_with_cross_entropy (and their grads), and the legacy-named forms
// Paddle's translator emits (c_allreduce_sum_, c_broadcast, send_v2, recv_v2, ...). A trailing `_`
// is the in-place form: the result is the operand's storage. Written from the pd_op signatures of
// newir/pd_op_dialect.cc, independently of the legacy side (docs/architecture.md, invariant 1): the
// two share only the Communicator and the tensor-parallel kernels.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "reference_runtime/comm/comm_context.h"
#include "reference_runtime/comm/tensor_parallel.h"
#include "reference_runtime/kernels/vocab_parallel.h"
#include "reference_runtime/pir_interpreter.h"

namespace irm::rt {
namespace {

std::optional<ReduceOp> LegacyNamedReduce(std::string_view op) {
  if (op == "c_allreduce_sum") return ReduceOp::kSum;
  if (op == "c_allreduce_max") return ReduceOp::kMax;
  if (op == "c_allreduce_min") return ReduceOp::kMin;
  if (op == "c_allreduce_prod") return ReduceOp::kProd;
  return std::nullopt;
}

// The vocabulary-parallel ops (kernels/vocab_parallel.h), with the operands and attributes of
// their pd_op signatures: c_embedding(weight, x; start_index, vocab_size),
// c_embedding_grad(weight, x, out_grad; start_index),
// c_softmax_with_cross_entropy(logits, label; ignore_index, ring_id, rank, nranks) and its grad
// (softmax, label, loss_grad; the same attributes).
bool IsVocabParallel(std::string_view op) {
  return op == "c_embedding" || op == "c_embedding_grad" || op == "c_softmax_with_cross_entropy" ||
         op == "c_softmax_with_cross_entropy_grad";
}

// Runs one of them on its operands and returns its results. Only the forward cross entropy
// communicates, over its ring_id's communicator, whose group rank and nranks must describe.
// Errors are unlocated.
StatusOr<std::vector<Tensor>> RunVocabParallel(std::string_view op,
                                               const std::vector<const Tensor*>& in,
                                               const KernelAttrs& attrs, const CommContext& comms,
                                               int index) {
  const auto attr = [&](std::string_view name, int64_t fallback) -> StatusOr<int64_t> {
    return attrs.GetOr<int64_t>(name, fallback);
  };
  if (in.size() < (op == "c_embedding" || op == "c_softmax_with_cross_entropy" ? 2u : 3u)) {
    return Status(StatusCode::kInvalid, Location{},
                  fmt::format("{} takes {} operands, has {}", op,
                              op == "c_embedding" || op == "c_softmax_with_cross_entropy" ? 2 : 3,
                              in.size()));
  }
  IRM_ASSIGN_OR_RETURN(const int64_t start_index, attr("start_index", 0));
  if (op == "c_embedding") {
    IRM_ASSIGN_OR_RETURN(const int64_t vocab_size, attr("vocab_size", -1));
    IRM_ASSIGN_OR_RETURN(Tensor out, CEmbedding(*in[0], *in[1], start_index, vocab_size));
    return std::vector<Tensor>{std::move(out)};
  }
  if (op == "c_embedding_grad") {
    IRM_ASSIGN_OR_RETURN(Tensor weight_grad, CEmbeddingGrad(*in[0], *in[1], *in[2], start_index));
    return std::vector<Tensor>{std::move(weight_grad)};
  }
  IRM_ASSIGN_OR_RETURN(const int64_t ignore_index, attr("ignore_index", -100));
  IRM_ASSIGN_OR_RETURN(const int64_t rank, attr("rank", 0));
  IRM_ASSIGN_OR_RETURN(const int64_t nranks, attr("nranks", 0));
  if (op == "c_softmax_with_cross_entropy_grad") {
    IRM_ASSIGN_OR_RETURN(Tensor logits_grad, CSoftmaxWithCrossEntropyGrad(
                                                 *in[0], *in[1], *in[2], ignore_index,
                                                 static_cast<int>(rank), static_cast<int>(nranks)));
    return std::vector<Tensor>{std::move(logits_grad)};
  }
  if (nranks < 1 || rank < 0 || rank >= nranks) {
    return Status(StatusCode::kInvalid, Location{},
                  fmt::format("rank {} is not in [0, nranks {})", rank, nranks));
  }
  IRM_ASSIGN_OR_RETURN(const int64_t ring_id, attr("ring_id", 0));
  IRM_ASSIGN_OR_RETURN(Communicator * comm, comms.communicator(static_cast<int>(ring_id)));
  if (nranks != comm->size() || rank != comm->rank()) {
    return Status(StatusCode::kInvalid, Location{},
                  fmt::format("rank {} of nranks {} is not this rank ({} of {}) of process group "
                              "{}",
                              rank, nranks, comm->rank(), comm->size(), ring_id));
  }
  const CallSite site = comms.Site("pd_op.c_softmax_with_cross_entropy", index);
  const RowAllReduce reduce = {
      .max = [&](Tensor& t) { return comm->AllReduce(t, ReduceOp::kMax, site); },
      .sum = [&](Tensor& t) { return comm->AllReduce(t, ReduceOp::kSum, site); }};
  IRM_ASSIGN_OR_RETURN(
      SoftmaxAndLoss result,
      CSoftmaxWithCrossEntropy(*in[0], *in[1], ignore_index, static_cast<int>(rank),
                               static_cast<int>(nranks), reduce));
  return std::vector<Tensor>{std::move(result.softmax), std::move(result.loss)};
}

}  // namespace

Status PirInterpreter::RunCommOp(const newir::Operation& op, const OpBinding& binding, int index) {
  std::string_view name = op.name();
  if (name.starts_with("pd_op.")) name.remove_prefix(6);
  const bool in_place = name.ends_with('_');
  if (in_place) name.remove_suffix(1);

  KernelAttrs attrs;
  IRM_RETURN_IF_ERROR(Locate(ConvertAttributes(op, binding, attrs), op, index));
  const auto int_attr = [&](std::string_view attr) -> int {
    StatusOr<int64_t> value = attrs.GetOr<int64_t>(attr, 0);
    return value.ok() ? static_cast<int>(*value) : 0;
  };
  if (IsVocabParallel(name)) {
    std::vector<const Tensor*> in;
    for (size_t i = 0; i < op.num_operands(); ++i) {
      IRM_ASSIGN_OR_RETURN(const Tensor* tensor, ReadTensor(op, index, i));
      in.push_back(tensor);
    }
    StatusOr<std::vector<Tensor>> results =
        RunVocabParallel(name, in, attrs, *options_.comm, index);
    if (!results.ok()) return Locate(results.status(), op, index);
    for (size_t i = 0; i < op.num_results() && i < results->size(); ++i) {
      Bind(op.result(i), std::move((*results)[i]));
    }
    return Status::Ok();
  }
  const int ring_id = int_attr("ring_id");
  StatusOr<Communicator*> found = options_.comm->communicator(ring_id);
  if (!found.ok()) return Locate(found.status(), op, index);
  Communicator& comm = **found;
  const CallSite site = options_.comm->Site(op.name(), index);

  const Tensor* x = nullptr;
  if (op.num_operands() > 0) {
    IRM_ASSIGN_OR_RETURN(x, ReadTensor(op, index, 0));
  }
  // The tensor an in-place form updates (the operand's storage), else a copy of the operand.
  const auto target = [&] { return in_place ? *x : x->Clone(); };
  const auto check_nranks = [&]() -> Status {
    // Checked only when the op says it: the dialect's defaults (0, 1) are placeholders.
    if (!op.HasAttribute("nranks") || int_attr("nranks") == comm.size()) return Status::Ok();
    return Fail(StatusCode::kInvalid, op, index,
                fmt::format("nranks {} is not the {} ranks of process group {}", int_attr("nranks"),
                            comm.size(), ring_id));
  };

  Tensor result;
  Status status;
  if (name == "all_reduce") {
    const int type = int_attr("reduce_type");
    if (type < 0 || type > static_cast<int>(ReduceOp::kAvg)) {
      return Fail(StatusCode::kInvalid, op, index,
                  fmt::format("reduce_type {} is not sum, max, min, prod or avg (0-4)", type));
    }
    result = target();
    status = comm.AllReduce(result, static_cast<ReduceOp>(type), site);
  } else if (std::optional<ReduceOp> reduce = LegacyNamedReduce(name)) {
    result = target();
    status = comm.AllReduce(result, *reduce, site);
  } else if (name == "broadcast" || name == "c_broadcast") {
    result = target();
    status = comm.Broadcast(result, int_attr("root"), site);
  } else if (name == "all_gather" || name == "c_allgather") {
    IRM_RETURN_IF_ERROR(check_nranks());
    status = comm.AllGather(*x, &result, site);
  } else if (name == "reduce_scatter" || name == "c_reducescatter") {
    IRM_RETURN_IF_ERROR(check_nranks());
    status = comm.ReduceScatter(*x, &result, ReduceOp::kSum, site);
  } else if (name == "all_to_all") {
    status = comm.AllToAll(*x, &result, site);
  } else if (name == "c_identity") {
    result = target();
  } else if (name == "c_split") {
    StatusOr<Tensor> part = SplitLastDim(*x, int_attr("rank"), int_attr("nranks"));
    if (!part.ok()) return Locate(part.status(), op, index);
    result = std::move(part).value();
  } else if (name == "c_concat") {
    IRM_RETURN_IF_ERROR(check_nranks());
    StatusOr<Tensor> whole = ConcatLastDim(comm, *x, site);
    if (!whole.ok()) return Locate(whole.status(), op, index);
    result = std::move(whole).value();
  } else if (name == "p_send" || name == "send_v2") {
    status = comm.Send(*x, int_attr("peer"), site);
  } else if (name == "p_recv" || name == "recv_v2") {
    // The shape: recv_v2's out_shape when given, else the result's type; a dynamic one (or a
    // dynamic_shape op) takes the message's.
    const newir::Type* type = op.num_results() > 0 ? &op.result(0)->type() : nullptr;
    StatusOr<std::vector<int64_t>> out_shape = attrs.GetOr<std::vector<int64_t>>("out_shape", {});
    std::vector<int64_t> shape;
    if (out_shape.ok() && !out_shape->empty()) {
      shape = *out_shape;
    } else if (type != nullptr && !type->IsNull()) {
      shape = type->dims();
    }
    StatusOr<bool> dynamic_shape = attrs.GetOr<bool>("dynamic_shape", false);
    const bool dynamic = (dynamic_shape.ok() && *dynamic_shape) ||
                         std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d < 0; });
    if (!dynamic) {
      // The dtype attribute, else (Undefined) the result's element type.
      std::optional<DType> fallback;
      if (type != nullptr && !type->IsNull()) fallback = DTypeOfElementType(type->dtype());
      StatusOr<DType> dtype = attrs.GetOr<DType>("dtype", fallback.value_or(DType::kFloat32));
      if (!dtype.ok()) return Locate(dtype.status(), op, index);
      StatusOr<Tensor> declared = Tensor::Zeros(*dtype, shape);
      if (!declared.ok()) return Locate(declared.status(), op, index);
      result = std::move(declared).value();
    }
    status = comm.Recv(&result, int_attr("peer"), site);
  } else if (name == "barrier") {
    status = comm.Barrier(site);
    if (x != nullptr) result = *x;
  } else {
    return Fail(StatusCode::kUnimplemented, op, index,
                fmt::format("no binding for communication op '{}'", op.name()));
  }
  if (!status.ok()) return Locate(status, op, index);
  if (op.num_results() > 0 && result.defined()) Bind(op.result(0), std::move(result));
  return Status::Ok();
}

}  // namespace irm::rt
