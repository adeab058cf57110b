// Communicator (communicator.h): the checks every backend shares and the trace recording around
// the backend's calls.
#include "reference_runtime/comm/communicator.h"

#include <utility>

#include <fmt/format.h>

#include "reference_runtime/comm/comm_trace.h"

namespace irm::rt {

const char* ReduceOpName(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return "sum";
    case ReduceOp::kMax:
      return "max";
    case ReduceOp::kMin:
      return "min";
    case ReduceOp::kProd:
      return "prod";
    case ReduceOp::kAvg:
      return "avg";
  }
  return "?";
}

const char* CommKindName(CommKind kind) {
  switch (kind) {
    case CommKind::kAllReduce:
      return "all_reduce";
    case CommKind::kBroadcast:
      return "broadcast";
    case CommKind::kAllGather:
      return "all_gather";
    case CommKind::kReduceScatter:
      return "reduce_scatter";
    case CommKind::kAllToAll:
      return "all_to_all";
    case CommKind::kSend:
      return "send";
    case CommKind::kRecv:
      return "recv";
    case CommKind::kBarrier:
      return "barrier";
  }
  return "?";
}

std::string DescribeSite(int ring_id, const CallSite& site) {
  std::string text = fmt::format("ring {}", ring_id);
  if (!site.job.empty()) {
    text += fmt::format(", job {}, micro-batch {}, step {}", site.job, site.micro_batch, site.step);
  }
  if (site.op_index >= 0) text += fmt::format(", op {}", site.op_index);
  return text;
}

namespace {

// The name a message gives the call: the op type when there is one.
std::string CallName(const char* call, const CallSite& site) {
  return site.op_type.empty() ? std::string(call) : site.op_type;
}

}  // namespace

Status Communicator::CheckRank(const char* call, const char* what, int value, bool self_ok,
                               const CallSite& site) const {
  if (value >= 0 && value < size() && (self_ok || value != rank())) return Status::Ok();
  const std::string why = value >= 0 && value < size()
                              ? std::string("is this rank")
                              : fmt::format("is not a rank of the group ({} ranks)", size());
  return Status(StatusCode::kInvalidArgument, Location{},
                fmt::format("{}: {} {} {} ({})", CallName(call, site), what, value, why,
                            DescribeSite(ring_id(), site)));
}

Status Communicator::CheckTensor(const char* call, const Tensor& t, const CallSite& site) const {
  if (t.defined() && t.device() == Device::kCpu) return Status::Ok();
  return Status(
      StatusCode::kInvalidArgument, Location{},
      fmt::format("{}: {} ({})", CallName(call, site),
                  t.defined() ? "the tensor is not on the CPU" : "the tensor is undefined",
                  DescribeSite(ring_id(), site)));
}

Status Communicator::CheckReducible(const char* call, const Tensor& t, ReduceOp op,
                                    const CallSite& site) const {
  if (t.dtype() != DType::kBool) return Status::Ok();
  return Status(StatusCode::kInvalidArgument, Location{},
                fmt::format("{}: a {} reduction does not take {} ({})", CallName(call, site),
                            ReduceOpName(op), t.Describe(), DescribeSite(ring_id(), site)));
}

Status Communicator::CheckDivisible(const char* call, const Tensor& t, const CallSite& site) const {
  if (t.rank() >= 1 && t.dim(0) % size() == 0) return Status::Ok();
  const std::string why = t.rank() == 0 ? "has no dim 0"
                                        : fmt::format(
                                              "has dim 0 of {}, which does not divide "
                                              "into {} equal parts",
                                              t.dim(0), size());
  return Status(StatusCode::kInvalidArgument, Location{},
                fmt::format("{}: {} {} ({})", CallName(call, site), t.Describe(), why,
                            DescribeSite(ring_id(), site)));
}

namespace {

void Record(CommTrace* trace, CommKind kind, int ring_id, int peer, const Tensor* t,
            std::optional<ReduceOp> reduce, const CallSite& site) {
  if (trace == nullptr) return;
  CommRecord record;
  record.kind = kind;
  record.ring_id = ring_id;
  record.peer = peer;
  if (t != nullptr && t->defined()) {
    record.count = t->numel();
    record.dtype = t->dtype();
  }
  record.reduce = reduce;
  record.site = site;
  trace->Add(std::move(record));
}

}  // namespace

Status Communicator::AllReduce(Tensor& inout, ReduceOp op, const CallSite& site) {
  IRM_RETURN_IF_ERROR(CheckTensor("all_reduce", inout, site));
  IRM_RETURN_IF_ERROR(CheckReducible("all_reduce", inout, op, site));
  Record(trace_, CommKind::kAllReduce, ring_id(), -1, &inout, op, site);
  return DoAllReduce(inout, op, site);
}

Status Communicator::Broadcast(Tensor& inout, int root, const CallSite& site) {
  IRM_RETURN_IF_ERROR(CheckTensor("broadcast", inout, site));
  IRM_RETURN_IF_ERROR(CheckRank("broadcast", "root", root, /*self_ok=*/true, site));
  Record(trace_, CommKind::kBroadcast, ring_id(), root, &inout, std::nullopt, site);
  return DoBroadcast(inout, root, site);
}

Status Communicator::AllGather(const Tensor& in, Tensor* out, const CallSite& site) {
  IRM_RETURN_IF_ERROR(CheckTensor("all_gather", in, site));
  if (in.rank() == 0) {
    return Status(
        StatusCode::kInvalidArgument, Location{},
        fmt::format("{}: {} has no dim 0 to gather along ({})", CallName("all_gather", site),
                    in.Describe(), DescribeSite(ring_id(), site)));
  }
  Record(trace_, CommKind::kAllGather, ring_id(), -1, &in, std::nullopt, site);
  return DoAllGather(in, out, site);
}

Status Communicator::ReduceScatter(const Tensor& in, Tensor* out, ReduceOp op,
                                   const CallSite& site) {
  IRM_RETURN_IF_ERROR(CheckTensor("reduce_scatter", in, site));
  IRM_RETURN_IF_ERROR(CheckReducible("reduce_scatter", in, op, site));
  IRM_RETURN_IF_ERROR(CheckDivisible("reduce_scatter", in, site));
  Record(trace_, CommKind::kReduceScatter, ring_id(), -1, &in, op, site);
  return DoReduceScatter(in, out, op, site);
}

Status Communicator::AllToAll(const Tensor& in, Tensor* out, const CallSite& site) {
  IRM_RETURN_IF_ERROR(CheckTensor("all_to_all", in, site));
  IRM_RETURN_IF_ERROR(CheckDivisible("all_to_all", in, site));
  Record(trace_, CommKind::kAllToAll, ring_id(), -1, &in, std::nullopt, site);
  return DoAllToAll(in, out, site);
}

Status Communicator::Send(const Tensor& in, int peer, const CallSite& site) {
  IRM_RETURN_IF_ERROR(CheckTensor("send", in, site));
  IRM_RETURN_IF_ERROR(CheckRank("send", "peer", peer, /*self_ok=*/false, site));
  Record(trace_, CommKind::kSend, ring_id(), peer, &in, std::nullopt, site);
  return DoSend(in, peer, site);
}

Status Communicator::Recv(Tensor* out, int peer, const CallSite& site) {
  if (out->defined()) IRM_RETURN_IF_ERROR(CheckTensor("recv", *out, site));
  IRM_RETURN_IF_ERROR(CheckRank("recv", "peer", peer, /*self_ok=*/false, site));
  const bool dynamic = !out->defined();
  Record(trace_, CommKind::kRecv, ring_id(), peer, out, std::nullopt, site);
  Status status = DoRecv(out, peer, site);
  // A recv into an undefined tensor learns the message's dtype and count only now.
  if (status.ok() && dynamic && trace_ != nullptr && !trace_->records().empty()) {
    CommRecord& last = trace_->mutable_records().back();
    last.count = out->numel();
    last.dtype = out->dtype();
  }
  return status;
}

Status Communicator::Barrier(const CallSite& site) {
  Record(trace_, CommKind::kBarrier, ring_id(), -1, nullptr, std::nullopt, site);
  return DoBarrier(site);
}

}  // namespace irm::rt
