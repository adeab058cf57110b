#include "reference_runtime/cuda/device_world.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "reference_runtime/cuda/collective_launch.h"
#include "reference_runtime/cuda/cuda_status.h"
#include "reference_runtime/cuda/device_buffer.h"
#include "reference_runtime/cuda/device_tensor.h"

namespace irm::rt::cuda {
namespace {

// "all_reduce sum float32[4, 8] (c_allreduce_sum, ring 0, ...)": the thread backend's words.
std::string DescribeCall(CommKind kind, ReduceOp reduce, int root, const Tensor* t,
                         const CallSite& site, int ring_id) {
  std::string text = CommKindName(kind);
  if (kind == CommKind::kAllReduce || kind == CommKind::kReduceScatter) {
    text += fmt::format(" {}", ReduceOpName(reduce));
  }
  if (kind == CommKind::kBroadcast) text += fmt::format(" from root {}", root);
  if (t != nullptr) text += " " + t->Describe();
  std::string where = DescribeSite(ring_id, site);
  if (!site.op_type.empty()) where = site.op_type + ", " + where;
  return fmt::format("{} ({})", text, where);
}

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

struct DeviceWorld::Round {
  explicit Round(size_t n) : parts(n), joined(n, false) {}
  std::vector<std::shared_ptr<Part>> parts;
  std::vector<bool> joined;
  size_t arrived = 0;
  bool done = false;
  Status status;
};

struct DeviceWorld::Message {
  std::shared_ptr<DeviceBuffer> data;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  std::string description;  // the sent tensor, "float32[2, 3]"
  int sender = -1;
  CallSite site;
  int64_t sequence = 0;
  bool taken = false;
  Status status;
};

class DeviceWorld::GroupComm final : public Communicator {
 public:
  GroupComm(DeviceWorld* world, int group, int group_rank)
      : world_(world), group_(group), group_rank_(group_rank) {}

  int rank() const override { return group_rank_; }
  int size() const override { return static_cast<int>(spec().ranks.size()); }
  int ring_id() const override { return spec().ring_id; }
  int GlobalRank(int group_rank) const override {
    return spec().ranks[static_cast<size_t>(group_rank)];
  }

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
    return world_->Send(group_, group_rank_, in, peer, site);
  }
  Status DoRecv(Tensor* out, int peer, const CallSite& site) override {
    return world_->Recv(group_, group_rank_, out, peer, site);
  }
  Status DoBarrier(const CallSite& site) override {
    return world_->Collective(group_, group_rank_, MakePart(CommKind::kBarrier, site, nullptr));
  }

 private:
  const CommGroup& spec() const { return world_->groups_[static_cast<size_t>(group_)].spec; }
  cudaStream_t Stream() const {
    return world_->streams_[static_cast<size_t>(GlobalRank(group_rank_))];
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
    return world_->Collective(group_, group_rank_, part);
  }

  DeviceWorld* world_;
  const int group_;
  const int group_rank_;
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
    : world_size_(world_size),
      options_(std::move(options)),
      streams_(static_cast<size_t>(world_size), nullptr),
      watchdog_(world_size),
      woken_(static_cast<size_t>(world_size), false),
      statuses_(static_cast<size_t>(world_size)) {
  for (int r = 0; r < world_size; ++r) hosted_.push_back(r);
  if (options_.trace) {
    for (int r = 0; r < world_size; ++r) traces_.push_back(std::make_unique<CommTrace>());
  }
  for (CommGroup& spec : groups) {
    Group group;
    group.next_round.assign(spec.ranks.size(), 0);
    group.spec = std::move(spec);
    groups_.push_back(std::move(group));
  }
  for (size_t g = 0; g < groups_.size(); ++g) {
    const CommGroup& spec = groups_[g].spec;
    for (size_t i = 0; i < spec.ranks.size(); ++i) {
      comms_.push_back(std::make_unique<GroupComm>(this, static_cast<int>(g), static_cast<int>(i)));
      if (options_.trace) {
        comms_.back()->set_trace(traces_[static_cast<size_t>(spec.ranks[i])].get());
      }
      comm_index_[{spec.ranks[i], spec.ring_id}] = comms_.back().get();
    }
  }
}

DeviceWorld::~DeviceWorld() {
  for (cudaStream_t stream : streams_) {
    if (stream != nullptr) cudaStreamDestroy(stream);
  }
}

StatusOr<Communicator*> DeviceWorld::For(int rank, int ring_id) {
  auto it = comm_index_.find({rank, ring_id});
  if (it != comm_index_.end()) return static_cast<Communicator*>(it->second);
  auto group = std::find_if(groups_.begin(), groups_.end(),
                            [&](const Group& g) { return g.spec.ring_id == ring_id; });
  if (group == groups_.end()) {
    return Status(StatusCode::kNotFound, Location{},
                  fmt::format("ring_id {} names no process group", ring_id));
  }
  return Status(StatusCode::kInvalidArgument, Location{},
                fmt::format("process group {} (ranks [{}]) does not hold rank {}", ring_id,
                            fmt::join(group->spec.ranks, ", "), rank));
}

CommContext DeviceWorld::Context(int rank) {
  CommContext context;
  context.rank = rank;
  context.communicator = [this, rank](int ring_id) { return For(rank, ring_id); };
  return context;
}

const CommTrace* DeviceWorld::trace(int rank) const {
  if (!options_.trace || rank < 0 || rank >= world_size_) return nullptr;
  return traces_[static_cast<size_t>(rank)].get();
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

Status DeviceWorld::RunRanks(const std::function<Status(int rank)>& fn) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    abort_ = Status::Ok();
    watchdog_.Reset();
    mailboxes_.clear();
    for (Group& group : groups_) {
      group.rounds.clear();
      std::fill(group.next_round.begin(), group.next_round.end(), 0);
    }
    std::fill(woken_.begin(), woken_.end(), false);
    std::fill(statuses_.begin(), statuses_.end(), Status::Ok());
    for (std::unique_ptr<CommTrace>& trace : traces_) trace->Clear();
  }
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(world_size_));
  for (int rank = 0; rank < world_size_; ++rank) {
    threads.emplace_back([this, &fn, rank] {
      Status status = fn(rank);
      std::lock_guard<std::mutex> lock(mu_);
      const size_t r = static_cast<size_t>(rank);
      if (status.ok() && abort_.ok()) status = UnreceivedBy(rank);
      watchdog_.Finish(rank);
      if (!status.ok() && !woken_[r]) {
        Abort(Status(StatusCode::kInternal, Location{},
                     fmt::format("rank {} failed: {}", rank, status.message())));
      }
      statuses_[r] = std::move(status);
      CheckHang();
    });
  }
  for (std::thread& t : threads) t.join();
  for (size_t r = 0; r < statuses_.size(); ++r) {
    if (!statuses_[r].ok() && !woken_[r]) return statuses_[r];
  }
  for (const Status& status : statuses_) {
    if (!status.ok()) return status;
  }
  return Status::Ok();
}

void DeviceWorld::Abort(Status status) {
  if (!abort_.ok()) return;
  abort_ = std::move(status);
  cv_.notify_all();
}

void DeviceWorld::CheckHang() {
  if (!abort_.ok()) return;
  Status hang = watchdog_.Check();
  if (!hang.ok()) Abort(std::move(hang));
}

Status DeviceWorld::Aborted(int rank) {
  woken_[static_cast<size_t>(rank)] = true;
  return abort_;
}

Status DeviceWorld::Wait(std::unique_lock<std::mutex>& lock, int rank, PendingWait wait) {
  std::function<bool()> ready = wait.ready;
  watchdog_.Block(rank, std::move(wait));
  CheckHang();
  auto deadline = std::chrono::steady_clock::now() + options_.timeout;
  while (!ready() && abort_.ok()) {
    if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && !ready() && abort_.ok()) {
      Abort(watchdog_.TimedOut(rank, options_.timeout));
    }
  }
  watchdog_.Unblock(rank);
  if (ready()) return Status::Ok();
  return Aborted(rank);
}

// ---- collectives -------------------------------------------------------------------------------

Status DeviceWorld::Collective(int group_index, int group_rank, std::shared_ptr<Part> part) {
  std::unique_lock<std::mutex> lock(mu_);
  Group& group = groups_[static_cast<size_t>(group_index)];
  const int rank = group.spec.ranks[static_cast<size_t>(group_rank)];
  if (!abort_.ok()) return Aborted(rank);
  const int64_t index = group.next_round[static_cast<size_t>(group_rank)]++;
  std::shared_ptr<Round>& slot = group.rounds[index];
  if (slot == nullptr) slot = std::make_shared<Round>(group.spec.ranks.size());
  std::shared_ptr<Round> round = slot;
  const CallSite site = part->site;
  const CommKind kind = part->kind;
  round->parts[static_cast<size_t>(group_rank)] = std::move(part);
  round->joined[static_cast<size_t>(group_rank)] = true;
  if (++round->arrived == group.spec.ranks.size()) {
    group.rounds.erase(index);
    Status status = CheckCallsAgree(group, *round);
    if (status.ok()) {
      // The device work outside the lock: the other ranks of the round wait for `done`.
      lock.unlock();
      status = Complete(*round, streams_[static_cast<size_t>(rank)]);
      lock.lock();
    }
    round->status = status;
    round->done = true;
    cv_.notify_all();
    return status;
  }
  PendingWait wait;
  wait.kind = kind;
  wait.ring_id = group.spec.ring_id;
  wait.site = site;
  wait.ready = [round] { return round->done; };
  const std::vector<int> ranks = group.spec.ranks;
  wait.waiting_for = [round, ranks] {
    std::vector<int> absent;
    for (size_t i = 0; i < ranks.size(); ++i) {
      if (!round->joined[i]) absent.push_back(ranks[i]);
    }
    return absent;
  };
  IRM_RETURN_IF_ERROR(Wait(lock, rank, std::move(wait)));
  return round->status;
}

Status DeviceWorld::CheckCallsAgree(const Group& group, const Round& round) const {
  const size_t n = round.parts.size();
  const Part& first = *round.parts[0];
  bool agree = true;
  for (size_t i = 1; i < n && agree; ++i) {
    const Part& c = *round.parts[i];
    agree = c.kind == first.kind;
    if (agree && (c.kind == CommKind::kAllReduce || c.kind == CommKind::kReduceScatter)) {
      agree = c.reduce == first.reduce;
    }
    if (agree && c.kind == CommKind::kBroadcast) agree = c.root == first.root;
    if (agree && c.kind != CommKind::kBarrier) {
      agree = first.host->dtype() == c.host->dtype() && first.host->numel() == c.host->numel();
      if (agree && (c.kind == CommKind::kAllGather || c.kind == CommKind::kAllToAll ||
                    c.kind == CommKind::kReduceScatter)) {
        agree = first.host->shape() == c.host->shape();
      }
    }
  }
  if (agree) return Status::Ok();
  std::vector<std::string> calls;
  for (size_t i = 0; i < n; ++i) {
    const Part& c = *round.parts[i];
    calls.push_back(fmt::format(
        "rank {} calls {}", group.spec.ranks[i],
        DescribeCall(c.kind, c.reduce, c.root, c.kind == CommKind::kBarrier ? nullptr : c.host,
                     c.site, group.spec.ring_id)));
  }
  return Status(StatusCode::kInvalid, Location{},
                fmt::format("mismatched collective calls in process group {}: {}",
                            group.spec.ring_id, fmt::join(calls, "; ")));
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
  const bool buffered = options_.p2p.mode == schedules::P2pMode::kBuffered;
  const CommGroup& spec = groups_[static_cast<size_t>(group_index)].spec;
  const int rank = spec.ranks[static_cast<size_t>(group_rank)];
  const int to = spec.ranks[static_cast<size_t>(peer)];
  // The message is a device copy of the tensor, made on the sender's stream before it is posted.
  auto message = std::make_shared<Message>();
  message->data = std::make_shared<DeviceBuffer>();
  IRM_RETURN_IF_ERROR(Stage(in, *message->data, streams_[static_cast<size_t>(rank)], "send"));
  message->dtype = in.dtype();
  message->shape = in.shape();
  message->description = in.Describe();
  std::unique_lock<std::mutex> lock(mu_);
  if (!abort_.ok()) return Aborted(rank);
  message->sender = rank;
  message->site = site;
  Channel& channel = mailboxes_[{spec.ring_id, rank, to}];
  message->sequence = channel.sent++;
  channel.messages.push_back(message);
  cv_.notify_all();
  const int64_t depth = buffered ? options_.p2p.depth : 0;
  const auto delivered = [message, &channel, depth] {
    return message->taken || message->sequence - channel.taken < depth;
  };
  if (buffered && watchdog_.Finished(to)) {
    channel.messages.pop_back();
    --channel.sent;
    return Unreceived(to, {DescribeMessage(*message, spec.ring_id)});
  }
  if (delivered()) return Status::Ok();
  PendingWait wait;
  wait.kind = CommKind::kSend;
  wait.ring_id = spec.ring_id;
  wait.peer = to;
  wait.site = site;
  wait.ready = delivered;
  wait.waiting_for = [to] { return std::vector<int>{to}; };
  IRM_RETURN_IF_ERROR(Wait(lock, rank, std::move(wait)));
  return message->taken ? message->status : Status::Ok();
}

Status DeviceWorld::Recv(int group_index, int group_rank, Tensor* out, int peer,
                         const CallSite& site) {
  std::unique_lock<std::mutex> lock(mu_);
  const CommGroup& spec = groups_[static_cast<size_t>(group_index)].spec;
  const int rank = spec.ranks[static_cast<size_t>(group_rank)];
  const int from = spec.ranks[static_cast<size_t>(peer)];
  if (!abort_.ok()) return Aborted(rank);
  Channel& channel = mailboxes_[{spec.ring_id, from, rank}];
  if (channel.messages.empty()) {
    PendingWait wait;
    wait.kind = CommKind::kRecv;
    wait.ring_id = spec.ring_id;
    wait.peer = from;
    wait.site = site;
    wait.ready = [&channel] { return !channel.messages.empty(); };
    wait.waiting_for = [from] { return std::vector<int>{from}; };
    IRM_RETURN_IF_ERROR(Wait(lock, rank, std::move(wait)));
  }
  std::shared_ptr<Message> message = channel.messages.front();
  channel.messages.pop_front();
  ++channel.taken;
  Status status;
  if (out->defined() && (out->dtype() != message->dtype || out->shape() != message->shape)) {
    const std::string name = site.op_type.empty() ? "recv" : site.op_type;
    const std::string sender = message->site.op_type.empty() ? "send" : message->site.op_type;
    status = Status(StatusCode::kInvalid, Location{},
                    fmt::format("{} on rank {} expects {} from rank {} ({}), but rank {} sends {} "
                                "({})",
                                name, rank, out->Describe(), from, DescribeSite(spec.ring_id, site),
                                from, message->description,
                                sender + ", " + DescribeSite(spec.ring_id, message->site)));
  } else {
    // The copies outside the lock; the sender (rendezvous) waits until the message is taken.
    lock.unlock();
    const cudaStream_t stream = streams_[static_cast<size_t>(rank)];
    Tensor fresh;
    if (!out->defined()) {
      StatusOr<Tensor> zeros = Tensor::Zeros(message->dtype, message->shape);
      status = zeros.status();
      if (zeros.ok()) fresh = std::move(zeros).value();
    }
    Tensor& received = out->defined() ? *out : fresh;
    DeviceBuffer mine;
    if (status.ok()) status = mine.Allocate(message->data->size(), "recv");
    if (status.ok()) {
      status = Copy(mine.get(), message->data->get(), message->data->size(), stream, "recv");
    }
    if (status.ok()) status = FetchInto(mine, received, stream, "recv");
    if (status.ok() && !out->defined()) *out = std::move(fresh);
    lock.lock();
  }
  message->status = status;
  message->taken = true;
  cv_.notify_all();
  return status;
}

std::string DeviceWorld::DescribeMessage(const Message& message, int ring_id) {
  const std::string name = message.site.op_type.empty() ? "send" : message.site.op_type;
  return fmt::format("{} from rank {} ({})", name, message.sender,
                     DescribeSite(ring_id, message.site));
}

Status DeviceWorld::Unreceived(int rank, const std::vector<std::string>& messages) {
  return Status(
      StatusCode::kInternal, Location{},
      fmt::format("rank {} finished without receiving {} buffered message{}: {}", rank,
                  messages.size(), messages.size() == 1 ? "" : "s", fmt::join(messages, "; ")));
}

Status DeviceWorld::UnreceivedBy(int rank) const {
  if (options_.p2p.mode != schedules::P2pMode::kBuffered) return Status::Ok();
  std::vector<std::string> lost;
  for (const auto& [key, channel] : mailboxes_) {
    const int ring_id = std::get<0>(key);
    const int receiver = std::get<2>(key);
    if (receiver != rank) continue;
    for (const std::shared_ptr<Message>& message : channel.messages) {
      if (message->sequence - channel.taken < options_.p2p.depth) {
        lost.push_back(DescribeMessage(*message, ring_id));
      }
    }
  }
  if (lost.empty()) return Status::Ok();
  return Unreceived(rank, lost);
}

}  // namespace irm::rt::cuda
