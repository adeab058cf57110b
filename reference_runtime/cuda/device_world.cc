// DeviceWorld (device_world.h): the rounds and messages of the world's RankMatcher
// (comm/rank_matcher.h) with their data on the device: staged inputs, rank-order reductions and
// device copies on the ranks' streams.
#include "reference_runtime/cuda/device_world.h"

#include <fmt/format.h>

#include <string>
#include <utility>

#include "reference_runtime/cuda/collective_launch.h"
#include "reference_runtime/cuda/cuda_status.h"
#include "reference_runtime/cuda/device_buffer.h"
#include "reference_runtime/cuda/device_tensor.h"

namespace irm::rt::cuda {
namespace {

// `host` into a fresh device buffer on `stream`, waited for (the host memory is the caller's).
Status Stage(const Tensor& host, DeviceBuffer& buffer, cudaStream_t stream, std::string_view op) {
  IRM_RETURN_IF_ERROR(buffer.Allocate(host.nbytes(), op));
  if (host.nbytes() == 0) return Status::Ok();
  IRM_RETURN_IF_ERROR(CudaStatus(
      cudaMemcpyAsync(buffer.get(), host.raw(), host.nbytes(), cudaMemcpyHostToDevice, stream), op,
      "staging the tensor"));
  return CudaStatus(cudaStreamSynchronize(stream), op, "staging the tensor");
}

// `buffer`'s first host.nbytes() bytes into `host`, waited for.
Status FetchInto(const DeviceBuffer& buffer, Tensor& host, cudaStream_t stream,
                 std::string_view op) {
  if (host.nbytes() == 0) return Status::Ok();
  IRM_RETURN_IF_ERROR(CudaStatus(
      cudaMemcpyAsync(host.raw(), buffer.get(), host.nbytes(), cudaMemcpyDeviceToHost, stream), op,
      "copying the result back"));
  return CudaStatus(cudaStreamSynchronize(stream), op, "copying the result back");
}

Status Copy(void* to, const void* from, size_t bytes, cudaStream_t stream, std::string_view op) {
  if (bytes == 0) return Status::Ok();
  return CudaStatus(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, stream), op,
                    "a device copy");
}

}  // namespace

// One rank's share of a collective: its call, its host tensor (for the checks and messages), its
// staged input and the device buffer the round writes its result into.
struct DeviceWorld::Part {
  CommKind kind = CommKind::kBarrier;
  ReduceOp reduce = ReduceOp::kSum;
  int root = -1;
  CallSite site;
  const Tensor* host = nullptr;
  DeviceBuffer in;
  DeviceBuffer out;
};

struct DeviceWorld::Round : RankMatcher::Round {
  explicit Round(size_t n) : RankMatcher::Round(n), parts(n) {}
  std::vector<std::shared_ptr<Part>> parts;
};

struct DeviceWorld::Message : RankMatcher::Message {
  std::shared_ptr<DeviceBuffer> data;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  std::string description;  // the sent tensor, "float32[2, 3]"
};

class DeviceWorld::GroupComm final : public RankMatcher::GroupCommunicator {
 public:
  GroupComm(DeviceWorld* world, int group, int group_rank)
      : GroupCommunicator(world->matcher_, group, group_rank), world_(world) {}

 protected:
  Status DoAllReduce(Tensor& inout, ReduceOp op, const CallSite& site) override {
    auto part = MakePart(CommKind::kAllReduce, site, &inout);
    part->reduce = op;
    IRM_RETURN_IF_ERROR(Run(part, inout.nbytes()));
    return FetchInto(part->out, inout, Stream(), "all_reduce");
  }
  Status DoBroadcast(Tensor& inout, int root, const CallSite& site) override {
    auto part = MakePart(CommKind::kBroadcast, site, &inout);
    part->root = root;
    IRM_RETURN_IF_ERROR(Run(part, inout.nbytes()));
    return FetchInto(part->out, inout, Stream(), "broadcast");
  }
  Status DoAllGather(const Tensor& in, Tensor* out, const CallSite& site) override {
    std::vector<int64_t> shape = in.shape();
    if (shape.empty()) shape.push_back(1);
    shape[0] *= size();
    IRM_ASSIGN_OR_RETURN(Tensor result, Tensor::Zeros(in.dtype(), shape));
    auto part = MakePart(CommKind::kAllGather, site, &in);
    IRM_RETURN_IF_ERROR(Run(part, result.nbytes()));
    IRM_RETURN_IF_ERROR(FetchInto(part->out, result, Stream(), "all_gather"));
    *out = std::move(result);
    return Status::Ok();
  }
  Status DoReduceScatter(const Tensor& in, Tensor* out, ReduceOp op,
                         const CallSite& site) override {
    std::vector<int64_t> shape = in.shape();
    shape[0] /= size();
    IRM_ASSIGN_OR_RETURN(Tensor result, Tensor::Zeros(in.dtype(), shape));
    auto part = MakePart(CommKind::kReduceScatter, site, &in);
    part->reduce = op;
    IRM_RETURN_IF_ERROR(Run(part, result.nbytes()));
    IRM_RETURN_IF_ERROR(FetchInto(part->out, result, Stream(), "reduce_scatter"));
    *out = std::move(result);
    return Status::Ok();
  }
  Status DoAllToAll(const Tensor& in, Tensor* out, const CallSite& site) override {
    IRM_ASSIGN_OR_RETURN(Tensor result, Tensor::Zeros(in.dtype(), in.shape()));
    auto part = MakePart(CommKind::kAllToAll, site, &in);
    IRM_RETURN_IF_ERROR(Run(part, result.nbytes()));
    IRM_RETURN_IF_ERROR(FetchInto(part->out, result, Stream(), "all_to_all"));
    *out = std::move(result);
    return Status::Ok();
  }
  Status DoSend(const Tensor& in, int peer, const CallSite& site) override {
    return world_->Send(group(), group_rank(), in, peer, site);
  }
  Status DoRecv(Tensor* out, int peer, const CallSite& site) override {
    return world_->Recv(group(), group_rank(), out, peer, site);
  }
  Status DoBarrier(const CallSite& site) override {
    return world_->Collective(group(), group_rank(), MakePart(CommKind::kBarrier, site, nullptr));
  }

 private:
  cudaStream_t Stream() const {
    return world_->streams_[static_cast<size_t>(GlobalRank(group_rank()))];
  }
  static std::shared_ptr<Part> MakePart(CommKind kind, const CallSite& site, const Tensor* host) {
    auto part = std::make_shared<Part>();
    part->kind = kind;
    part->site = site;
    part->host = host;
    return part;
  }
  // Stages the input, makes room for `out_bytes` of result, and joins the round.
  Status Run(const std::shared_ptr<Part>& part, size_t out_bytes) {
    const char* name = CommKindName(part->kind);
    IRM_RETURN_IF_ERROR(Stage(*part->host, part->in, Stream(), name));
    IRM_RETURN_IF_ERROR(part->out.Allocate(out_bytes, name));
    return world_->Collective(group(), group_rank(), part);
  }

  DeviceWorld* world_;
};

// ---- the world ---------------------------------------------------------------------------------

StatusOr<std::unique_ptr<DeviceWorld>> DeviceWorld::Create(int world_size,
                                                           std::vector<CommGroup> groups,
                                                           DeviceWorldOptions options) {
  IRM_ASSIGN_OR_RETURN(groups, CheckCommGroups(world_size, std::move(groups)));
  for (const CommGroup& group : groups) {
    if (static_cast<int>(group.ranks.size()) > kMaxReduceRanks) {
      return Status(StatusCode::kInvalidArgument, Location{},
                    fmt::format("device world: process group {} has {} ranks, at most {}",
                                group.ring_id, group.ranks.size(), kMaxReduceRanks));
    }
  }
  if (VisibleGpuCount() == 0) {
    return Status(StatusCode::kInternal, Location{},
                  fmt::format("device world: no GPU can be used: {}", NoGpuReason()));
  }
  std::unique_ptr<DeviceWorld> world(
      new DeviceWorld(world_size, std::move(groups), std::move(options)));
  for (cudaStream_t& stream : world->streams_) {
    IRM_RETURN_IF_ERROR(CudaStatus(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
                                   "device world", "creating a rank's stream"));
  }
  return world;
}

DeviceWorld::DeviceWorld(int world_size, std::vector<CommGroup> groups, DeviceWorldOptions options)
    : streams_(static_cast<size_t>(world_size), nullptr),
      matcher_(world_size, std::move(groups), {options.timeout, options.trace, options.p2p},
               [this](int group, int group_rank) -> std::unique_ptr<Communicator> {
                 return std::make_unique<GroupComm>(this, group, group_rank);
               }) {
  for (int r = 0; r < world_size; ++r) hosted_.push_back(r);
}

DeviceWorld::~DeviceWorld() {
  for (cudaStream_t stream : streams_) {
    if (stream != nullptr) cudaStreamDestroy(stream);
  }
}

RankWorldFactory DeviceWorld::Factory(DeviceWorldOptions options) {
  return [options](int world_size, std::vector<CommGroup> groups,
                   const schedules::P2pModel& p2p) -> StatusOr<std::unique_ptr<RankWorld>> {
    DeviceWorldOptions with_p2p = options;
    with_p2p.p2p = p2p;
    IRM_ASSIGN_OR_RETURN(std::unique_ptr<DeviceWorld> world,
                         DeviceWorld::Create(world_size, std::move(groups), with_p2p));
    return std::unique_ptr<RankWorld>(std::move(world));
  };
}

// ---- collectives -------------------------------------------------------------------------------

Status DeviceWorld::Collective(int group_index, int group_rank, std::shared_ptr<Part> part) {
  std::unique_lock<std::mutex> lock(matcher_.mutex());
  const RankMatcher::Call call{part->kind, part->reduce, part->root, part->host, part->site};
  bool last = false;
  IRM_ASSIGN_OR_RETURN(std::shared_ptr<Round> round,
                       matcher_.Join<Round>(group_index, group_rank, call, &last));
  round->parts[static_cast<size_t>(group_rank)] = std::move(part);
  if (last) {
    Status status = matcher_.CheckCallsAgree(group_index, *round);
    if (status.ok()) {
      // The device work outside the lock: the other ranks of the round wait for `done`.
      lock.unlock();
      status = Complete(
          *round, streams_[static_cast<size_t>(matcher_.GlobalRank(group_index, group_rank))]);
      lock.lock();
    }
    round->status = status;
    round->done = true;
    matcher_.cv().notify_all();
    return status;
  }
  IRM_RETURN_IF_ERROR(
      matcher_.WaitForRound(lock, group_index, group_rank, round, [round] { return round->done; }));
  return round->status;
}

Status DeviceWorld::Complete(const Round& round, cudaStream_t stream) {
  const std::vector<std::shared_ptr<Part>>& parts = round.parts;
  const size_t n = parts.size();
  const Part& first = *parts[0];
  if (first.kind == CommKind::kBarrier) return Status::Ok();
  const char* name = CommKindName(first.kind);
  const DType dtype = first.host->dtype();
  const size_t bytes = first.host->nbytes();
  const size_t part_bytes = bytes / n;
  const int64_t numel = first.host->numel();
  RankBuffers inputs;
  inputs.count = static_cast<int>(n);
  auto reduce = [&](size_t offset, void* out, int64_t count) -> Status {
    IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(dtype));
    for (size_t r = 0; r < n; ++r) inputs.data[r] = parts[r]->in.bytes() + offset;
    return CudaStatus(
        LaunchRankOrderReduce(elem, static_cast<int>(first.reduce), inputs, out, count, stream),
        name, "the rank-order reduction");
  };
  switch (first.kind) {
    case CommKind::kAllReduce:
      // Computed once, copied to the others: every rank gets the same bits.
      if (numel > 0) {
        IRM_RETURN_IF_ERROR(reduce(0, first.out.get(), numel));
        for (size_t r = 1; r < n; ++r) {
          IRM_RETURN_IF_ERROR(Copy(parts[r]->out.get(), first.out.get(), bytes, stream, name));
        }
      }
      break;
    case CommKind::kReduceScatter:
      for (size_t r = 0; r < n && numel > 0; ++r) {
        IRM_RETURN_IF_ERROR(
            reduce(part_bytes * r, parts[r]->out.get(), numel / static_cast<int64_t>(n)));
      }
      break;
    case CommKind::kBroadcast: {
      const Part& root = *parts[static_cast<size_t>(first.root)];
      for (size_t r = 0; r < n; ++r) {
        IRM_RETURN_IF_ERROR(Copy(parts[r]->out.get(), root.in.get(), bytes, stream, name));
      }
      break;
    }
    case CommKind::kAllGather:
      for (size_t r = 0; r < n; ++r) {
        for (size_t j = 0; j < n; ++j) {
          IRM_RETURN_IF_ERROR(
              Copy(parts[r]->out.bytes() + bytes * j, parts[j]->in.get(), bytes, stream, name));
        }
      }
      break;
    case CommKind::kAllToAll:
      for (size_t r = 0; r < n; ++r) {
        for (size_t j = 0; j < n; ++j) {
          IRM_RETURN_IF_ERROR(Copy(parts[r]->out.bytes() + part_bytes * j,
                                   parts[j]->in.bytes() + part_bytes * r, part_bytes, stream,
                                   name));
        }
      }
      break;
    default:
      break;
  }
  return CudaStatus(cudaStreamSynchronize(stream), name, "completing the round");
}

// ---- point to point ----------------------------------------------------------------------------

Status DeviceWorld::Send(int group_index, int group_rank, const Tensor& in, int peer,
                         const CallSite& site) {
  const int rank = matcher_.GlobalRank(group_index, group_rank);
  // The message is a device copy of the tensor, made on the sender's stream before it is posted.
  auto message = std::make_shared<Message>();
  message->data = std::make_shared<DeviceBuffer>();
  IRM_RETURN_IF_ERROR(Stage(in, *message->data, streams_[static_cast<size_t>(rank)], "send"));
  message->dtype = in.dtype();
  message->shape = in.shape();
  message->description = in.Describe();
  return matcher_.Send(group_index, group_rank, peer, std::move(message), site);
}

Status DeviceWorld::Recv(int group_index, int group_rank, Tensor* out, int peer,
                         const CallSite& site) {
  std::unique_lock<std::mutex> lock(matcher_.mutex());
  IRM_ASSIGN_OR_RETURN(std::shared_ptr<RankMatcher::Message> taken,
                       matcher_.Take(lock, group_index, group_rank, peer, site));
  Message& message = static_cast<Message&>(*taken);
  Status status;
  if (out->defined() && (out->dtype() != message.dtype || out->shape() != message.shape)) {
    status = matcher_.MismatchedMessage(group_index, group_rank, peer, *out, site, message,
                                        message.description);
  } else {
    // The copies outside the lock; the sender (rendezvous) waits until the message is taken.
    lock.unlock();
    const cudaStream_t stream =
        streams_[static_cast<size_t>(matcher_.GlobalRank(group_index, group_rank))];
    Tensor fresh;
    if (!out->defined()) {
      StatusOr<Tensor> zeros = Tensor::Zeros(message.dtype, message.shape);
      status = zeros.status();
      if (zeros.ok()) fresh = std::move(zeros).value();
    }
    Tensor& received = out->defined() ? *out : fresh;
    DeviceBuffer mine;
    if (status.ok()) status = mine.Allocate(message.data->size(), "recv");
    if (status.ok()) {
      status = Copy(mine.get(), message.data->get(), message.data->size(), stream, "recv");
    }
    if (status.ok()) status = FetchInto(mine, received, stream, "recv");
    if (status.ok() && !out->defined()) *out = std::move(fresh);
    lock.lock();
  }
  matcher_.Release(message, status);
  return status;
}

}  // namespace irm::rt::cuda
