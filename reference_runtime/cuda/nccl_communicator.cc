#include "reference_runtime/cuda/nccl_communicator.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nccl.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <thread>
#include <type_traits>

#include "reference_runtime/cuda/cuda_status.h"
#include "reference_runtime/cuda/device_buffer.h"
#include "reference_runtime/dtype_visit.h"
#include "reference_runtime/half.h"

namespace irm::rt::cuda {
namespace {

constexpr int kMaxDims = 16;
constexpr int64_t kHeaderMagic = 0x4e43434c;  // "NCCL"
// A message's header: magic, dtype, rank, dims.
using Header = std::array<int64_t, 3 + kMaxDims>;

Status NcclStatus(ncclResult_t result, std::string_view op, std::string_view what) {
  if (result == ncclSuccess || result == ncclInProgress) return Status::Ok();
  return Status(StatusCode::kInternal, Location{},
                fmt::format("nccl: {}: {} failed: {}", op, what, ncclGetErrorString(result)));
}

// The NCCL type that moves (and, where reducible, reduces) a dtype's elements, and how many NCCL
// elements one tensor element is (complex: two floats).
struct NcclType {
  ncclDataType_t type = ncclUint8;
  size_t per_element = 1;
};

NcclType NcclTypeOf(DType dtype) {
  switch (dtype) {
    case DType::kBool:
    case DType::kUInt8:
      return {ncclUint8, 1};
    case DType::kInt8:
      return {ncclInt8, 1};
    case DType::kInt16:
      return {ncclUint8, 2};  // moved as bytes; not reducible on NCCL
    case DType::kInt32:
      return {ncclInt32, 1};
    case DType::kInt64:
      return {ncclInt64, 1};
    case DType::kFloat16:
      return {ncclFloat16, 1};
    case DType::kBFloat16:
      return {ncclBfloat16, 1};
    case DType::kFloat32:
      return {ncclFloat32, 1};
    case DType::kFloat64:
      return {ncclFloat64, 1};
    case DType::kComplex64:
      return {ncclFloat32, 2};
    case DType::kComplex128:
      return {ncclFloat64, 2};
  }
  return {ncclUint8, DTypeSize(dtype)};
}

// The NCCL reduction of `op` on `dtype`; avg is a sum divided on the host afterwards (the
// reference's sum / N). kUnimplemented where NCCL cannot reduce the dtype as the reference does.
StatusOr<ncclRedOp_t> NcclOpOf(ReduceOp op, DType dtype, const char* call) {
  const bool complex = dtype == DType::kComplex64 || dtype == DType::kComplex128;
  if (dtype == DType::kInt16 || (complex && op != ReduceOp::kSum && op != ReduceOp::kAvg)) {
    return Status(StatusCode::kUnimplemented, Location{},
                  fmt::format("nccl: {} {} of {} is not supported", call, ReduceOpName(op),
                              DTypeName(dtype)));
  }
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg:
      return ncclSum;
    case ReduceOp::kMax:
      return ncclMax;
    case ReduceOp::kMin:
      return ncclMin;
    case ReduceOp::kProd:
      return ncclProd;
  }
  return ncclSum;
}

// t /= n element by element, as the reference's avg (integer division for integers; 16-bit floats
// in float32, rounded once).
void DivideInPlace(Tensor& t, int n) {
  VisitDType(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    T* data = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      if constexpr (std::is_same_v<T, Float16>) {
        data[i] = ToFloat16(ToFloat(data[i]) / static_cast<float>(n));
      } else if constexpr (std::is_same_v<T, BFloat16>) {
        data[i] = ToBFloat16(ToFloat(data[i]) / static_cast<float>(n));
      } else if constexpr (!std::is_same_v<T, bool>) {
        data[i] = static_cast<T>(data[i] / static_cast<T>(n));
      }
    }
  });
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& NcclDeterministicEnvironment() {
  // docs/runtime.md "GPU": the usual recipe for repeatable comparisons (ring, simple protocol, no
  // NVLink SHARP or CollNet) plus one channel, so the chunking of a buffer is fixed too.
  static const std::vector<std::pair<std::string, std::string>> environment = {
      {"NCCL_ALGO", "Ring"},        {"NCCL_PROTO", "Simple"},    {"NCCL_NVLS_ENABLE", "0"},
      {"NCCL_COLLNET_ENABLE", "0"}, {"NCCL_MIN_NCHANNELS", "1"}, {"NCCL_MAX_NCHANNELS", "1"},
  };
  return environment;
}

struct NcclCommunicator::Impl {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  bool aborted = false;
  int64_t collectives = 0;             // posted in this group
  std::map<int, int64_t> sent, taken;  // per peer (group rank): messages sent and received
};

NcclCommunicator::NcclCommunicator(NcclWorld* world, int ring_id, std::vector<int> ranks,
                                   int group_rank)
    : world_(world),
      ring_id_(ring_id),
      ranks_(std::move(ranks)),
      group_rank_(group_rank),
      impl_(std::make_unique<Impl>()) {}

NcclCommunicator::~NcclCommunicator() {
  if (impl_->comm != nullptr) {
    if (impl_->aborted) {
      // Already released by ncclCommAbort.
    } else {
      ncclCommDestroy(impl_->comm);
    }
  }
  if (impl_->stream != nullptr) cudaStreamDestroy(impl_->stream);
}

Status NcclCommunicator::DoAllReduce(Tensor& inout, ReduceOp op, const CallSite& site) {
  IRM_ASSIGN_OR_RETURN(ncclRedOp_t nccl_op, NcclOpOf(op, inout.dtype(), "all_reduce"));
  const NcclType type = NcclTypeOf(inout.dtype());
  const size_t count = static_cast<size_t>(inout.numel()) * type.per_element;
  const int self = GlobalRank(group_rank_);
  NcclWorldCall call{CommKind::kAllReduce, ring_id_, world_->GroupIndex(ring_id_), -1,
                     impl_->collectives++};
  world_->Post(self, call);
  if (count == 0) return Status::Ok();
  DeviceBuffer buffer;
  IRM_RETURN_IF_ERROR(buffer.Allocate(inout.nbytes(), "all_reduce"));
  IRM_RETURN_IF_ERROR(CudaStatus(cudaMemcpyAsync(buffer.get(), inout.raw(), inout.nbytes(),
                                                 cudaMemcpyHostToDevice, impl_->stream),
                                 "all_reduce", "staging the tensor"));
  IRM_RETURN_IF_ERROR(NcclStatus(ncclAllReduce(buffer.get(), buffer.get(), count, type.type,
                                               nccl_op, impl_->comm, impl_->stream),
                                 "all_reduce", "ncclAllReduce"));
  IRM_RETURN_IF_ERROR(Await(call, site));
  IRM_RETURN_IF_ERROR(
      CudaStatus(cudaMemcpy(inout.raw(), buffer.get(), inout.nbytes(), cudaMemcpyDeviceToHost),
                 "all_reduce", "copying the result back"));
  if (op == ReduceOp::kAvg) DivideInPlace(inout, size());
  return Status::Ok();
}

Status NcclCommunicator::DoBroadcast(Tensor& inout, int root, const CallSite& site) {
  const NcclType type = NcclTypeOf(inout.dtype());
  const size_t count = static_cast<size_t>(inout.numel()) * type.per_element;
  NcclWorldCall call{CommKind::kBroadcast, ring_id_, world_->GroupIndex(ring_id_), -1,
                     impl_->collectives++};
  world_->Post(GlobalRank(group_rank_), call);
  if (count == 0) return Status::Ok();
  DeviceBuffer buffer;
  IRM_RETURN_IF_ERROR(buffer.Allocate(inout.nbytes(), "broadcast"));
  IRM_RETURN_IF_ERROR(CudaStatus(cudaMemcpyAsync(buffer.get(), inout.raw(), inout.nbytes(),
                                                 cudaMemcpyHostToDevice, impl_->stream),
                                 "broadcast", "staging the tensor"));
  IRM_RETURN_IF_ERROR(NcclStatus(
      ncclBroadcast(buffer.get(), buffer.get(), count, type.type, root, impl_->comm, impl_->stream),
      "broadcast", "ncclBroadcast"));
  IRM_RETURN_IF_ERROR(Await(call, site));
  return CudaStatus(cudaMemcpy(inout.raw(), buffer.get(), inout.nbytes(), cudaMemcpyDeviceToHost),
                    "broadcast", "copying the result back");
}

Status NcclCommunicator::DoAllGather(const Tensor& in, Tensor* out, const CallSite& site) {
  std::vector<int64_t> shape = in.shape();
  if (shape.empty()) shape.push_back(1);
  shape[0] *= size();
  IRM_ASSIGN_OR_RETURN(Tensor gathered, Tensor::Zeros(in.dtype(), shape));
  const NcclType type = NcclTypeOf(in.dtype());
  const size_t count = static_cast<size_t>(in.numel()) * type.per_element;
  NcclWorldCall call{CommKind::kAllGather, ring_id_, world_->GroupIndex(ring_id_), -1,
                     impl_->collectives++};
  world_->Post(GlobalRank(group_rank_), call);
  if (count > 0) {
    DeviceBuffer send, receive;
    IRM_RETURN_IF_ERROR(send.Allocate(in.nbytes(), "all_gather"));
    IRM_RETURN_IF_ERROR(receive.Allocate(gathered.nbytes(), "all_gather"));
    IRM_RETURN_IF_ERROR(CudaStatus(
        cudaMemcpyAsync(send.get(), in.raw(), in.nbytes(), cudaMemcpyHostToDevice, impl_->stream),
        "all_gather", "staging the tensor"));
    IRM_RETURN_IF_ERROR(NcclStatus(
        ncclAllGather(send.get(), receive.get(), count, type.type, impl_->comm, impl_->stream),
        "all_gather", "ncclAllGather"));
    IRM_RETURN_IF_ERROR(Await(call, site));
    IRM_RETURN_IF_ERROR(CudaStatus(
        cudaMemcpy(gathered.raw(), receive.get(), gathered.nbytes(), cudaMemcpyDeviceToHost),
        "all_gather", "copying the result back"));
  }
  *out = std::move(gathered);
  return Status::Ok();
}

Status NcclCommunicator::DoReduceScatter(const Tensor& in, Tensor* out, ReduceOp op,
                                         const CallSite& site) {
  IRM_ASSIGN_OR_RETURN(ncclRedOp_t nccl_op, NcclOpOf(op, in.dtype(), "reduce_scatter"));
  std::vector<int64_t> shape = in.shape();
  shape[0] /= size();
  IRM_ASSIGN_OR_RETURN(Tensor part, Tensor::Zeros(in.dtype(), shape));
  const NcclType type = NcclTypeOf(in.dtype());
  const size_t count = static_cast<size_t>(part.numel()) * type.per_element;
  NcclWorldCall call{CommKind::kReduceScatter, ring_id_, world_->GroupIndex(ring_id_), -1,
                     impl_->collectives++};
  world_->Post(GlobalRank(group_rank_), call);
  if (count > 0) {
    DeviceBuffer send, receive;
    IRM_RETURN_IF_ERROR(send.Allocate(in.nbytes(), "reduce_scatter"));
    IRM_RETURN_IF_ERROR(receive.Allocate(part.nbytes(), "reduce_scatter"));
    IRM_RETURN_IF_ERROR(CudaStatus(
        cudaMemcpyAsync(send.get(), in.raw(), in.nbytes(), cudaMemcpyHostToDevice, impl_->stream),
        "reduce_scatter", "staging the tensor"));
    IRM_RETURN_IF_ERROR(NcclStatus(ncclReduceScatter(send.get(), receive.get(), count, type.type,
                                                     nccl_op, impl_->comm, impl_->stream),
                                   "reduce_scatter", "ncclReduceScatter"));
    IRM_RETURN_IF_ERROR(Await(call, site));
    IRM_RETURN_IF_ERROR(
        CudaStatus(cudaMemcpy(part.raw(), receive.get(), part.nbytes(), cudaMemcpyDeviceToHost),
                   "reduce_scatter", "copying the result back"));
    if (op == ReduceOp::kAvg) DivideInPlace(part, size());
  }
  *out = std::move(part);
  return Status::Ok();
}

Status NcclCommunicator::DoAllToAll(const Tensor& in, Tensor* out, const CallSite& site) {
  IRM_ASSIGN_OR_RETURN(Tensor result, Tensor::Zeros(in.dtype(), in.shape()));
  const NcclType type = NcclTypeOf(in.dtype());
  const size_t part_bytes = in.nbytes() / static_cast<size_t>(size());
  const size_t count =
      static_cast<size_t>(in.numel()) * type.per_element / static_cast<size_t>(size());
  NcclWorldCall call{CommKind::kAllToAll, ring_id_, world_->GroupIndex(ring_id_), -1,
                     impl_->collectives++};
  world_->Post(GlobalRank(group_rank_), call);
  if (count > 0) {
    DeviceBuffer send, receive;
    IRM_RETURN_IF_ERROR(send.Allocate(in.nbytes(), "all_to_all"));
    IRM_RETURN_IF_ERROR(receive.Allocate(in.nbytes(), "all_to_all"));
    IRM_RETURN_IF_ERROR(CudaStatus(
        cudaMemcpyAsync(send.get(), in.raw(), in.nbytes(), cudaMemcpyHostToDevice, impl_->stream),
        "all_to_all", "staging the tensor"));
    // Part j to rank j, rank j's part rank() into slot j: one group, so no pair waits on another.
    IRM_RETURN_IF_ERROR(NcclStatus(ncclGroupStart(), "all_to_all", "ncclGroupStart"));
    for (int j = 0; j < size(); ++j) {
      const size_t offset = part_bytes * static_cast<size_t>(j);
      ncclSend(send.bytes() + offset, count, type.type, j, impl_->comm, impl_->stream);
      ncclRecv(receive.bytes() + offset, count, type.type, j, impl_->comm, impl_->stream);
    }
    IRM_RETURN_IF_ERROR(NcclStatus(ncclGroupEnd(), "all_to_all", "ncclGroupEnd"));
    IRM_RETURN_IF_ERROR(Await(call, site));
    IRM_RETURN_IF_ERROR(
        CudaStatus(cudaMemcpy(result.raw(), receive.get(), result.nbytes(), cudaMemcpyDeviceToHost),
                   "all_to_all", "copying the result back"));
  }
  *out = std::move(result);
  return Status::Ok();
}

Status NcclCommunicator::DoSend(const Tensor& in, int peer, const CallSite& site) {
  Header header{};
  header[0] = kHeaderMagic;
  header[1] = static_cast<int64_t>(in.dtype());
  header[2] = in.rank();
  if (in.rank() > kMaxDims) {
    return Status(
        StatusCode::kUnimplemented, Location{},
        fmt::format("nccl: send of a tensor of {} dims (at most {})", in.rank(), kMaxDims));
  }
  for (int d = 0; d < in.rank(); ++d) header[3 + static_cast<size_t>(d)] = in.shape()[d];
  NcclWorldCall call{CommKind::kSend, ring_id_, world_->GroupIndex(ring_id_), GlobalRank(peer),
                     impl_->sent[peer]++};
  world_->Post(GlobalRank(group_rank_), call);
  DeviceBuffer head, payload;
  IRM_RETURN_IF_ERROR(head.Allocate(sizeof(Header), "send"));
  IRM_RETURN_IF_ERROR(payload.Allocate(in.nbytes(), "send"));
  IRM_RETURN_IF_ERROR(CudaStatus(cudaMemcpyAsync(head.get(), header.data(), sizeof(Header),
                                                 cudaMemcpyHostToDevice, impl_->stream),
                                 "send", "staging the header"));
  if (in.nbytes() > 0) {
    IRM_RETURN_IF_ERROR(CudaStatus(cudaMemcpyAsync(payload.get(), in.raw(), in.nbytes(),
                                                   cudaMemcpyHostToDevice, impl_->stream),
                                   "send", "staging the tensor"));
  }
  IRM_RETURN_IF_ERROR(
      NcclStatus(ncclSend(head.get(), sizeof(Header), ncclUint8, peer, impl_->comm, impl_->stream),
                 "send", "ncclSend"));
  if (in.nbytes() > 0) {
    IRM_RETURN_IF_ERROR(NcclStatus(
        ncclSend(payload.get(), in.nbytes(), ncclUint8, peer, impl_->comm, impl_->stream), "send",
        "ncclSend"));
  }
  return Await(call, site);
}

Status NcclCommunicator::DoRecv(Tensor* out, int peer, const CallSite& site) {
  const int from = GlobalRank(peer);
  const std::string name = site.op_type.empty() ? "recv" : site.op_type;
  NcclWorldCall call{CommKind::kRecv, ring_id_, world_->GroupIndex(ring_id_), from,
                     impl_->taken[peer]++};
  world_->Post(GlobalRank(group_rank_), call);
  DeviceBuffer head;
  IRM_RETURN_IF_ERROR(head.Allocate(sizeof(Header), "recv"));
  IRM_RETURN_IF_ERROR(
      NcclStatus(ncclRecv(head.get(), sizeof(Header), ncclUint8, peer, impl_->comm, impl_->stream),
                 "recv", "ncclRecv"));
  IRM_RETURN_IF_ERROR(Await(call, site));
  Header header{};
  IRM_RETURN_IF_ERROR(
      CudaStatus(cudaMemcpy(header.data(), head.get(), sizeof(Header), cudaMemcpyDeviceToHost),
                 "recv", "reading the header"));
  const bool valid = header[0] == kHeaderMagic && header[1] >= 0 &&
                     header[1] <= static_cast<int64_t>(DType::kComplex128) && header[2] >= 0 &&
                     header[2] <= kMaxDims;
  if (!valid) {
    const Status failed(
        StatusCode::kInternal, Location{},
        fmt::format("nccl: {} on rank {} got a malformed message header from "
                    "rank {} ({})",
                    name, GlobalRank(group_rank_), from, DescribeSite(ring_id_, site)));
    world_->Fail(failed);
    return failed;
  }
  const DType dtype = static_cast<DType>(header[1]);
  const std::vector<int64_t> shape(header.begin() + 3, header.begin() + 3 + header[2]);
  IRM_ASSIGN_OR_RETURN(Tensor message, Tensor::Zeros(dtype, shape));
  if (out->defined() && (out->dtype() != dtype || out->shape() != shape)) {
    // The payload is still on its way: the world fails, so the sender's wait ends too.
    const Status failed(
        StatusCode::kInvalidArgument, Location{},
        fmt::format("{} on rank {} expects {}[{}] but rank {} sent {}[{}] ({})", name,
                    GlobalRank(group_rank_), DTypeName(out->dtype()), fmt::join(out->shape(), ", "),
                    from, DTypeName(dtype), fmt::join(shape, ", "), DescribeSite(ring_id_, site)));
    world_->Fail(failed);
    return failed;
  }
  if (message.nbytes() > 0) {
    DeviceBuffer payload;
    IRM_RETURN_IF_ERROR(payload.Allocate(message.nbytes(), "recv"));
    IRM_RETURN_IF_ERROR(NcclStatus(
        ncclRecv(payload.get(), message.nbytes(), ncclUint8, peer, impl_->comm, impl_->stream),
        "recv", "ncclRecv"));
    IRM_RETURN_IF_ERROR(Await(call, site));
    IRM_RETURN_IF_ERROR(CudaStatus(
        cudaMemcpy(message.raw(), payload.get(), message.nbytes(), cudaMemcpyDeviceToHost), "recv",
        "copying the message back"));
  }
  if (out->defined()) {
    std::copy_n(static_cast<const char*>(message.raw()), message.nbytes(),
                static_cast<char*>(out->raw()));
  } else {
    *out = std::move(message);
  }
  return Status::Ok();
}

Status NcclCommunicator::DoBarrier(const CallSite& site) {
  NcclWorldCall call{CommKind::kBarrier, ring_id_, world_->GroupIndex(ring_id_), -1,
                     impl_->collectives++};
  world_->Post(GlobalRank(group_rank_), call);
  DeviceBuffer one;
  IRM_RETURN_IF_ERROR(one.Allocate(sizeof(int32_t), "barrier"));
  IRM_RETURN_IF_ERROR(CudaStatus(cudaMemsetAsync(one.get(), 0, sizeof(int32_t), impl_->stream),
                                 "barrier", "clearing the token"));
  IRM_RETURN_IF_ERROR(NcclStatus(
      ncclAllReduce(one.get(), one.get(), 1, ncclInt32, ncclSum, impl_->comm, impl_->stream),
      "barrier", "ncclAllReduce"));
  return Await(call, site);
}

Status NcclCommunicator::Await(const NcclWorldCall& call, const CallSite& site) {
  Impl& impl = *impl_;
  const Status status = world_->Await(
      GlobalRank(group_rank_), call, site,
      [&impl, kind = call.kind](bool* finished) -> Status {
        const cudaError_t state = cudaStreamQuery(impl.stream);
        *finished = state == cudaSuccess;
        if (state == cudaErrorNotReady) {
          cudaGetLastError();  // not an error: clear it
          return Status::Ok();
        }
        return CudaStatus(state, CommKindName(kind), "waiting for the stream");
      },
      [&impl]() -> Status {
        ncclResult_t async = ncclSuccess;
        const ncclResult_t asked = ncclCommGetAsyncError(impl.comm, &async);
        if (asked != ncclSuccess) return NcclStatus(asked, "watch", "ncclCommGetAsyncError");
        return NcclStatus(async, "watch", "an asynchronous NCCL error");
      });
  if (!status.ok()) Abort();
  return status;
}

void NcclCommunicator::Abort() {
  if (impl_->comm != nullptr && !impl_->aborted) {
    // Frees a kernel still waiting on a peer, so the GPU is usable again.
    ncclCommAbort(impl_->comm);
    impl_->aborted = true;
  }
}

// ---------------------------------------------------------------------------------------------

NcclWorld::NcclWorld(int world_size, std::vector<CommGroup> groups, NcclWorldOptions options)
    : world_size_(world_size),
      options_(std::move(options)),
      groups_(std::move(groups)),
      statuses_(static_cast<size_t>(world_size)),
      watchdog_(world_size),
      posted_(groups_.size()) {
  for (int r = 0; r < world_size; ++r) hosted_.push_back(r);
  std::sort(groups_.begin(), groups_.end(),
            [](const CommGroup& a, const CommGroup& b) { return a.ring_id < b.ring_id; });
  for (int r = 0; r < world_size; ++r) traces_.push_back(std::make_unique<CommTrace>());
  for (const CommGroup& group : groups_) {
    for (size_t i = 0; i < group.ranks.size(); ++i) {
      auto comm = std::unique_ptr<NcclCommunicator>(
          new NcclCommunicator(this, group.ring_id, group.ranks, static_cast<int>(i)));
      if (options_.trace) comm->set_trace(traces_[static_cast<size_t>(group.ranks[i])].get());
      comms_[{group.ranks[i], group.ring_id}] = std::move(comm);
    }
  }
}

NcclWorld::~NcclWorld() = default;

StatusOr<std::unique_ptr<NcclWorld>> NcclWorld::Create(int world_size,
                                                       std::vector<CommGroup> groups,
                                                       NcclWorldOptions options) {
  IRM_ASSIGN_OR_RETURN(groups, CheckCommGroups(world_size, std::move(groups)));
  const int gpus = VisibleGpuCount();
  if (gpus < world_size) {
    return Status(StatusCode::kInternal, Location{},
                  fmt::format("nccl: {} ranks need {} GPUs, one rank per GPU ({} visible{}); "
                              "NCCL refuses two ranks on one GPU: the device backend runs "
                              "several ranks on one",
                              world_size, world_size, gpus,
                              gpus == 0 ? ": " + NoGpuReason() : std::string()));
  }
  if (options.deterministic) {
    for (const auto& [name, value] : NcclDeterministicEnvironment()) {
      setenv(name.c_str(), value.c_str(), 1);
    }
  }
  std::unique_ptr<NcclWorld> world(new NcclWorld(world_size, std::move(groups), options));
  IRM_RETURN_IF_ERROR(world->Connect());
  return world;
}

int NcclWorld::GroupIndex(int ring_id) const {
  for (size_t g = 0; g < groups_.size(); ++g) {
    if (groups_[g].ring_id == ring_id) return static_cast<int>(g);
  }
  return 0;
}

Status NcclWorld::Connect() {
  std::vector<ncclUniqueId> ids(groups_.size());
  for (size_t g = 0; g < groups_.size(); ++g) {
    IRM_RETURN_IF_ERROR(NcclStatus(ncclGetUniqueId(&ids[g]), "init",
                                   fmt::format("ncclGetUniqueId for ring {}", groups_[g].ring_id)));
  }
  std::vector<Status> connected(static_cast<size_t>(world_size_));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world_size_; ++rank) {
    threads.emplace_back([this, rank, &ids, &connected] {
      Status& status = connected[static_cast<size_t>(rank)];
      status = CudaStatus(cudaSetDevice(rank), "init", fmt::format("selecting GPU {}", rank));
      // Ring order on every rank: ranks of overlapping groups never wait on each other in a cycle.
      for (size_t g = 0; g < groups_.size() && status.ok(); ++g) {
        const CommGroup& group = groups_[g];
        auto it = comms_.find({rank, group.ring_id});
        if (it == comms_.end()) continue;
        NcclCommunicator::Impl& impl = *it->second->impl_;
        status = CudaStatus(cudaStreamCreateWithFlags(&impl.stream, cudaStreamNonBlocking), "init",
                            "creating the rank's stream");
        if (!status.ok()) break;
        status = NcclStatus(
            ncclCommInitRank(&impl.comm, static_cast<int>(group.ranks.size()), ids[g],
                             it->second->rank()),
            "init", fmt::format("ncclCommInitRank of rank {} in ring {}", rank, group.ring_id));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const Status& status : connected) IRM_RETURN_IF_ERROR(status);
  return Status::Ok();
}

StatusOr<Communicator*> NcclWorld::For(int rank, int ring_id) {
  auto it = comms_.find({rank, ring_id});
  if (it != comms_.end()) return static_cast<Communicator*>(it->second.get());
  auto group = std::find_if(groups_.begin(), groups_.end(),
                            [&](const CommGroup& g) { return g.ring_id == ring_id; });
  if (group == groups_.end()) {
    return Status(StatusCode::kNotFound, Location{},
                  fmt::format("ring_id {} names no process group", ring_id));
  }
  return Status(StatusCode::kInvalidArgument, Location{},
                fmt::format("process group {} (ranks [{}]) does not hold rank {}", ring_id,
                            fmt::join(group->ranks, ", "), rank));
}

CommContext NcclWorld::Context(int rank) {
  CommContext context;
  context.rank = rank;
  context.communicator = [this, rank](int ring_id) { return For(rank, ring_id); };
  return context;
}

const CommTrace* NcclWorld::trace(int rank) const {
  if (!options_.trace || rank < 0 || rank >= world_size_) return nullptr;
  return traces_[static_cast<size_t>(rank)].get();
}

void NcclWorld::Post(int rank, const Call& call) {
  std::lock_guard<std::mutex> lock(mu_);
  if (call.kind == CommKind::kSend) {
    ++channels_[{call.ring_id, rank, call.peer}].first;
  } else if (call.kind == CommKind::kRecv) {
    ++channels_[{call.ring_id, call.peer, rank}].second;
  } else {
    ++posted_[static_cast<size_t>(call.group)][rank];
  }
}

std::vector<int> NcclWorld::WaitingFor(int rank, const Call& call) const {
  std::vector<int> waiting;
  auto count = [](const auto& map, const auto& key) -> int64_t {
    auto it = map.find(key);
    return it == map.end() ? 0 : it->second;
  };
  if (call.kind == CommKind::kSend) {
    auto it = channels_.find({call.ring_id, rank, call.peer});
    if (it == channels_.end() || it->second.second <= call.index) waiting.push_back(call.peer);
  } else if (call.kind == CommKind::kRecv) {
    auto it = channels_.find({call.ring_id, call.peer, rank});
    if (it == channels_.end() || it->second.first <= call.index) waiting.push_back(call.peer);
  } else {
    const std::map<int, int64_t>& posted = posted_[static_cast<size_t>(call.group)];
    for (int r : groups_[static_cast<size_t>(call.group)].ranks) {
      if (count(posted, r) <= call.index) waiting.push_back(r);
    }
  }
  return waiting;
}

void NcclWorld::Fail(Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  if (failed_.ok()) failed_ = std::move(status);
}

Status NcclWorld::Await(int rank, const Call& call, const CallSite& site,
                        const std::function<Status(bool*)>& done,
                        const std::function<Status()>& poll_error) {
  const auto start = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    PendingWait wait;
    wait.kind = call.kind;
    wait.ring_id = call.ring_id;
    wait.peer = call.peer;
    wait.site = site;
    wait.ready = [this, rank, call] { return WaitingFor(rank, call).empty(); };
    wait.waiting_for = [this, rank, call] { return WaitingFor(rank, call); };
    watchdog_.Block(rank, std::move(wait));
  }
  Status result;
  std::unique_lock<std::mutex> lock(mu_, std::defer_lock);
  while (true) {
    bool finished = false;
    Status status = done(&finished);
    if (status.ok() && !finished) status = poll_error();
    lock.lock();
    if (!status.ok()) {
      if (failed_.ok()) failed_ = status;
      result = status;
      break;
    }
    if (finished) break;
    if (!failed_.ok()) {
      result = failed_;
      break;
    }
    if (Status hang = watchdog_.Check(); !hang.ok()) {
      failed_ = hang;
      result = hang;
      break;
    }
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    if (waited > options_.timeout) {
      failed_ = watchdog_.TimedOut(rank, waited);
      result = failed_;
      break;
    }
    lock.unlock();
    std::this_thread::sleep_for(options_.poll);
  }
  watchdog_.Unblock(rank);
  return result;
}

Status NcclWorld::RunRanks(const std::function<Status(int rank)>& fn) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!failed_.ok()) {
      return Status(
          StatusCode::kInternal, Location{},
          fmt::format("nccl: the world is spent after a failed run: {}", failed_.message()));
    }
    watchdog_.Reset();
    for (std::map<int, int64_t>& posted : posted_) posted.clear();
    channels_.clear();
    for (auto& [key, comm] : comms_) {
      comm->impl_->collectives = 0;
      comm->impl_->sent.clear();
      comm->impl_->taken.clear();
    }
    std::fill(statuses_.begin(), statuses_.end(), Status::Ok());
    for (std::unique_ptr<CommTrace>& trace : traces_) trace->Clear();
  }
  std::vector<bool> own(static_cast<size_t>(world_size_), false);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world_size_; ++rank) {
    threads.emplace_back([this, &fn, &own, rank] {
      Status status = CudaStatus(cudaSetDevice(rank), "run", fmt::format("selecting GPU {}", rank));
      if (status.ok()) status = fn(rank);
      std::lock_guard<std::mutex> lock(mu_);
      watchdog_.Finish(rank);
      const size_t r = static_cast<size_t>(rank);
      if (!status.ok()) {
        // A rank failing on its own fails the world, so that its peers stop waiting.
        own[r] = failed_.ok();
        if (failed_.ok()) {
          failed_ = Status(StatusCode::kInternal, Location{},
                           fmt::format("rank {} failed: {}", rank, status.message()));
        }
      }
      statuses_[r] = std::move(status);
    });
  }
  for (std::thread& t : threads) t.join();
  bool failed = false;
  for (const Status& status : statuses_) failed = failed || !status.ok();
  if (failed) {
    // A failed run leaves no communicator waiting on a peer.
    for (auto& [key, comm] : comms_) comm->Abort();
  }
  for (size_t r = 0; r < statuses_.size(); ++r) {
    if (own[r]) return statuses_[r];
  }
  for (const Status& status : statuses_) {
    if (!status.ok()) return status;
  }
  return Status::Ok();
}

RankWorldFactory NcclWorld::Factory(NcclWorldOptions options) {
  return [options](int world_size, std::vector<CommGroup> groups,
                   const schedules::P2pModel&) -> StatusOr<std::unique_ptr<RankWorld>> {
    // NCCL's sends are its own: small messages return once buffered, large ones at the match.
    IRM_ASSIGN_OR_RETURN(std::unique_ptr<NcclWorld> world,
                         NcclWorld::Create(world_size, std::move(groups), options));
    return std::unique_ptr<RankWorld>(std::move(world));
  };
}

}  // namespace irm::rt::cuda
