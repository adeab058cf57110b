// GlooCommunicator (gloo_communicator.h): the Communicator calls on Gloo's collectives and
// unbound buffers, the element-wise reduce functions, and the message header of point to point.
#include "reference_runtime/comm/gloo_communicator.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/context.h>
#include <gloo/transport/unbound_buffer.h>

#include "reference_runtime/comm/gloo_watch.h"
#include "reference_runtime/dtype_visit.h"
#include "reference_runtime/half.h"

namespace irm::rt {
namespace {

// ---- element-wise reduction, as reduce.cc computes it ------------------------------------------

template <typename A, ReduceOp kOp>
A Combine(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    // Wrap as the unsigned type does (defined; the two's-complement bits of the signed wrap).
    using U = std::common_type_t<std::make_unsigned_t<A>, unsigned int>;
    if constexpr (kOp == ReduceOp::kSum || kOp == ReduceOp::kAvg) {
      return static_cast<A>(static_cast<U>(a) + static_cast<U>(b));
    } else if constexpr (kOp == ReduceOp::kProd) {
      return static_cast<A>(static_cast<U>(a) * static_cast<U>(b));
    } else if constexpr (kOp == ReduceOp::kMax) {
      return a > b ? a : b;
    } else {
      return a < b ? a : b;
    }
  } else {
    if constexpr (kOp == ReduceOp::kSum || kOp == ReduceOp::kAvg) {
      return a + b;
    } else if constexpr (kOp == ReduceOp::kProd) {
      return a * b;
    } else if constexpr (kOp == ReduceOp::kMax) {
      if (a != a) return a;  // NaN stays NaN
      return a > b ? a : b;  // a NaN b is not smaller: it wins
    } else {
      if (a != a) return a;
      return a < b ? a : b;
    }
  }
}

// Gloo calls fn(c, a, b, n) with c possibly equal to a: each element is read before written.
template <typename A, ReduceOp kOp>
void ReduceLoop(void* c, const void* a, const void* b, size_t n) {
  A* out = static_cast<A*>(c);
  const A* x = static_cast<const A*>(a);
  const A* y = static_cast<const A*>(b);
  for (size_t i = 0; i < n; ++i) out[i] = Combine<A, kOp>(x[i], y[i]);
}

template <typename A>
gloo::AllreduceOptions::Func ReduceFunction(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg:
      return &ReduceLoop<A, ReduceOp::kSum>;
    case ReduceOp::kProd:
      return &ReduceLoop<A, ReduceOp::kProd>;
    case ReduceOp::kMax:
      return &ReduceLoop<A, ReduceOp::kMax>;
    case ReduceOp::kMin:
      return &ReduceLoop<A, ReduceOp::kMin>;
  }
  return &ReduceLoop<A, ReduceOp::kSum>;
}

// All-reduces `count` elements of A at `data` in place, then divides by N for kAvg.
template <typename A>
void AllReduceBuffer(const std::shared_ptr<gloo::Context>& context, A* data, size_t count,
                     ReduceOp op, uint32_t tag, std::chrono::milliseconds timeout) {
  gloo::AllreduceOptions options(context);
  options.setOutput(data, count);
  options.setReduceFunction(ReduceFunction<A>(op));
  options.setTag(tag);
  options.setTimeout(timeout);
  gloo::allreduce(options);
  if (op == ReduceOp::kAvg) {
    const A n = static_cast<A>(context->size);
    for (size_t i = 0; i < count; ++i) data[i] = static_cast<A>(data[i] / n);
  }
}

constexpr bool IsHalf(DType dtype) { return dtype == DType::kFloat16 || dtype == DType::kBFloat16; }

// ---- point-to-point message header ---------------------------------------------------------

constexpr int64_t kHeaderMagic = 0x69726d2d67303031;  // "irm-g001"
constexpr int kMaxDims = 16;

struct Header {
  int64_t magic = kHeaderMagic;
  int64_t dtype = 0;
  int64_t rank = 0;
  std::array<int64_t, kMaxDims> dims{};
};

// Slots of point-to-point messages: a prefix no Gloo collective uses, the per-pair sequence number
// and the part (0 header, 1 payload, 2 acknowledgement).
uint64_t MessageSlot(uint64_t sequence, uint64_t part) {
  return (uint64_t{0x40} << 56) | ((sequence & ((uint64_t{1} << 52) - 1)) << 2) | part;
}

// The slots of each collective's signature and (when signatures disagree) descriptions: prefixes
// no Gloo collective and no point-to-point message uses; the collective's own tag is its index.
constexpr uint64_t kSignaturePrefix = uint64_t{0x41} << 56;
constexpr uint64_t kDescriptionPrefix = uint64_t{0x42} << 56;
uint64_t ExchangeSlot(uint64_t prefix, int64_t index) {
  return prefix | (static_cast<uint64_t>(index) & ((uint64_t{1} << 56) - 1));
}
uint32_t DataTag(int64_t index) { return static_cast<uint32_t>(index); }

std::string SiteSuffix(int ring_id, const CallSite& site) {
  if (site.op_type.empty() && site.job.empty() && site.op_index < 0) return "";
  std::string text = "; at ";
  if (!site.op_type.empty()) text += site.op_type + ", ";
  return text + DescribeSite(ring_id, site);
}

// "all_reduce sum float32[2, 3] (c_allreduce_sum, ring 0, job forward, ...)": a call as the
// thread world's mismatch report names it.
std::string DescribeCall(CommKind kind, ReduceOp op, int root, const Tensor* t,
                         const CallSite& site, int ring_id) {
  std::string text = CommKindName(kind);
  if (kind == CommKind::kAllReduce || kind == CommKind::kReduceScatter) {
    text += fmt::format(" {}", ReduceOpName(op));
  }
  if (kind == CommKind::kBroadcast) text += fmt::format(" from root {}", root);
  if (t != nullptr) text += " " + t->Describe();
  std::string where = DescribeSite(ring_id, site);
  if (!site.op_type.empty()) where = site.op_type + ", " + where;
  return fmt::format("{} ({})", text, where);
}

constexpr size_t kSignatureWords = 6 + kMaxDims;
constexpr size_t kDescriptionBytes = 512;

}  // namespace

// A posted message and the buffers Gloo reads and writes until its acknowledgement.
struct GlooCommunicator::Message {
  uint64_t sequence = 0;
  Header header;
  std::vector<char> copy;  // buffered: the tensor's bytes (the sender may reuse its tensor)
  int64_t ack = 0;
  std::unique_ptr<gloo::transport::UnboundBuffer> header_buffer, payload, ack_buffer;
  CallSite site;
  std::string described;  // the tensor, for a mismatch reported later
};

GlooCommunicator::GlooCommunicator(std::shared_ptr<gloo::Context> context, int ring_id,
                                   std::vector<int> ranks, std::chrono::milliseconds timeout,
                                   schedules::P2pModel p2p, GlooWatch* watch)
    : context_(std::move(context)),
      ring_id_(ring_id),
      ranks_(std::move(ranks)),
      group_rank_(context_->rank),
      timeout_(timeout),
      p2p_(p2p),
      watch_(watch) {}

GlooCommunicator::~GlooCommunicator() = default;

void GlooCommunicator::Close() {
  try {
    context_->closeConnections();
  } catch (const std::exception&) {
    // Closing is best effort: the peers then time out instead of failing at once.
  }
}

std::string GlooCommunicator::WaitsForGroup() const {
  return fmt::format("the other ranks of process group {} (ranks [{}])", ring_id_,
                     fmt::join(ranks_, ", "));
}

template <typename F>
Status GlooCommunicator::Guard(const char* call, CommKind kind, int peer, int64_t index,
                               const std::string& waits_for, const CallSite& site, F&& body) {
  const int rank = GlobalRank(group_rank_);
  if (watch_ != nullptr) {
    watch_->Block(rank,
                  GlooCallState{.kind = kind,
                                .ring_id = ring_id_,
                                .peer = peer,
                                .index = index,
                                .name = site.op_type.empty() ? CommKindName(kind) : site.op_type,
                                .where = DescribeSite(ring_id_, site)});
  }
  std::string what;
  try {
    Status status = body();
    if (watch_ != nullptr) watch_->Unblock(rank);
    return status;
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
    what = "an unknown exception";
  }
  failed_ = true;
  const bool timed_out = what.find("Timed out") != std::string::npos;
  timed_out_ = timed_out;
  // The world's hang explains the failure better than Gloo's words for it (a closed connection
  // or a timeout): it names every rank's pending call.
  std::optional<std::string> hang;
  std::string everyone;
  if (watch_ != nullptr) {
    hang = watch_->Diagnose(timed_out);
    if (!hang.has_value() && timed_out) everyone = "; every rank: " + watch_->DescribeAll();
    watch_->Unblock(rank);
  }
  if (hang.has_value()) return Status(StatusCode::kInternal, Location{}, *hang);
  if (timed_out) {
    return Status(
        StatusCode::kInternal, Location{},
        fmt::format("gloo: {} on ring {} timed out after {} ms (rank {} waits for {}{}){}", call,
                    ring_id_, timeout_.count(), rank, waits_for, SiteSuffix(ring_id_, site),
                    everyone));
  }
  return Status(StatusCode::kInternal, Location{},
                fmt::format("gloo: {} on ring {} failed (rank {} waits for {}{}): {}", call,
                            ring_id_, rank, waits_for, SiteSuffix(ring_id_, site), what));
}

void GlooCommunicator::AbortWaits() {
  std::lock_guard<std::mutex> lock(abort_mu_);
  aborted_ = true;
  if (waiting_on_ == nullptr) return;
  // The flag stays set in the buffer: a wait that starts after this call returns at once.
  if (waiting_to_send_) {
    waiting_on_->abortWaitSend();
  } else {
    waiting_on_->abortWaitRecv();
  }
}

void GlooCommunicator::Wait(gloo::transport::UnboundBuffer& buffer, bool send) {
  {
    std::lock_guard<std::mutex> lock(abort_mu_);
    if (aborted_) throw std::runtime_error("the wait was aborted");
    waiting_on_ = &buffer;
    waiting_to_send_ = send;
  }
  const bool done = send ? buffer.waitSend(timeout_) : buffer.waitRecv(timeout_);
  {
    std::lock_guard<std::mutex> lock(abort_mu_);
    waiting_on_ = nullptr;
  }
  if (!done) throw std::runtime_error("the wait was aborted");
}

Status GlooCommunicator::ExchangeWithGroup(CommKind kind, int64_t index, uint64_t prefix,
                                           const void* mine, size_t bytes, void* all,
                                           const CallSite& site) {
  return Guard(CommKindName(kind), kind, -1, index, WaitsForGroup(), site, [&]() -> Status {
    char* out = static_cast<char*>(all);
    std::memcpy(out + static_cast<size_t>(group_rank_) * bytes, mine, bytes);
    const uint64_t slot = ExchangeSlot(prefix, index);
    std::vector<std::unique_ptr<gloo::transport::UnboundBuffer>> sends, recvs;
    for (int r = 0; r < size(); ++r) {
      if (r == group_rank_) continue;
      sends.push_back(context_->createUnboundBuffer(const_cast<void*>(mine), bytes));
      sends.back()->send(r, slot);
      recvs.push_back(context_->createUnboundBuffer(out + static_cast<size_t>(r) * bytes, bytes));
      recvs.back()->recv(r, slot);
    }
    for (auto& buffer : recvs) Wait(*buffer, false);
    for (auto& buffer : sends) Wait(*buffer, true);
    return Status::Ok();
  });
}

Status GlooCommunicator::AgreeOnCall(CommKind kind, const Tensor* tensor, ReduceOp op, int root,
                                     const CallSite& site, int64_t index) {
  // The parts the thread world compares: kind, reduction, root, dtype and element count, and the
  // shape where the result is built from the other ranks' tensors.
  std::array<int64_t, kSignatureWords> mine{};
  mine[0] = static_cast<int64_t>(kind);
  if (kind == CommKind::kAllReduce || kind == CommKind::kReduceScatter) {
    mine[1] = static_cast<int64_t>(op);
  }
  if (kind == CommKind::kBroadcast) mine[2] = root;
  if (tensor != nullptr) {
    mine[3] = static_cast<int64_t>(tensor->dtype());
    mine[4] = tensor->numel();
    if (kind == CommKind::kAllGather || kind == CommKind::kAllToAll ||
        kind == CommKind::kReduceScatter) {
      const int dims = std::min(tensor->rank(), kMaxDims);
      mine[5] = tensor->rank();
      for (int d = 0; d < dims; ++d) mine[6 + static_cast<size_t>(d)] = tensor->dim(d);
    }
  }
  const size_t n = static_cast<size_t>(size());
  std::vector<int64_t> all(kSignatureWords * n);
  IRM_RETURN_IF_ERROR(ExchangeWithGroup(kind, index, kSignaturePrefix, mine.data(), sizeof(mine),
                                        all.data(), site));
  bool agree = true;
  for (size_t r = 0; r < n && agree; ++r) {
    agree =
        std::equal(mine.begin(), mine.end(), all.begin() + static_cast<ptrdiff_t>(r * mine.size()));
  }
  if (agree) return Status::Ok();
  // Every rank saw the same signatures, so every rank is here: exchange the calls' descriptions
  // to name them all.
  std::array<char, kDescriptionBytes> text{};
  const std::string described = DescribeCall(kind, op, root, tensor, site, ring_id_);
  std::copy_n(described.begin(), std::min(described.size(), text.size() - 1), text.begin());
  std::vector<char> texts(kDescriptionBytes * n);
  IRM_RETURN_IF_ERROR(ExchangeWithGroup(kind, index, kDescriptionPrefix, text.data(), text.size(),
                                        texts.data(), site));
  std::vector<std::string> calls;
  for (size_t r = 0; r < n; ++r) {
    const char* begin = texts.data() + r * kDescriptionBytes;
    calls.push_back(fmt::format("rank {} calls {}", ranks_[r],
                                std::string(begin, strnlen(begin, kDescriptionBytes))));
  }
  return Status(StatusCode::kInvalid, Location{},
                fmt::format("mismatched collective calls in process group {}: {}", ring_id_,
                            fmt::join(calls, "; ")));
}

// ---- collectives ------------------------------------------------------------------------------

Status GlooCommunicator::DoAllReduce(Tensor& inout, ReduceOp op, const CallSite& site) {
  const int64_t index = NextCollective();
  IRM_RETURN_IF_ERROR(AgreeOnCall(CommKind::kAllReduce, &inout, op, -1, site, index));
  return ReduceInPlace(inout, op, site, index);
}

Status GlooCommunicator::ReduceInPlace(Tensor& inout, ReduceOp op, const CallSite& site,
                                       int64_t index) {
  if (inout.numel() == 0) return Status::Ok();
  const uint32_t tag = DataTag(index);
  return Guard("all_reduce", CommKind::kAllReduce, -1, index, WaitsForGroup(), site,
               [&]() -> Status {
                 const size_t count = static_cast<size_t>(inout.numel());
                 if (IsHalf(inout.dtype())) {
                   // Reduced in float32 and rounded once, as the reference reduction does.
                   std::vector<float> wide(count);
                   VisitDType(inout.dtype(), [&](auto zero) {
                     using T = decltype(zero);
                     if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
                       const T* src = inout.data<T>();
                       for (size_t i = 0; i < count; ++i) wide[i] = ToFloat(src[i]);
                       AllReduceBuffer<float>(context_, wide.data(), count, op, tag, timeout_);
                       T* dst = inout.data<T>();
                       for (size_t i = 0; i < count; ++i) {
                         if constexpr (std::is_same_v<T, Float16>) {
                           dst[i] = ToFloat16(wide[i]);
                         } else {
                           dst[i] = ToBFloat16(wide[i]);
                         }
                       }
                     }
                   });
                   return Status::Ok();
                 }
                 VisitDType(inout.dtype(), [&](auto zero) {
                   using T = decltype(zero);
                   if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
                     AllReduceBuffer<T>(context_, inout.data<T>(), count, op, tag, timeout_);
                   }
                 });
                 return Status::Ok();
               });
}

Status GlooCommunicator::DoBroadcast(Tensor& inout, int root, const CallSite& site) {
  const int64_t index = NextCollective();
  IRM_RETURN_IF_ERROR(AgreeOnCall(CommKind::kBroadcast, &inout, ReduceOp::kSum, root, site, index));
  if (inout.nbytes() == 0) return Status::Ok();
  const std::string waits_for =
      root == group_rank_ ? WaitsForGroup() : fmt::format("root rank {}", GlobalRank(root));
  return Guard("broadcast", CommKind::kBroadcast, -1, index, waits_for, site, [&]() -> Status {
    gloo::BroadcastOptions options(context_);
    options.setOutput(static_cast<char*>(inout.raw()), inout.nbytes());
    options.setRoot(root);
    options.setTag(DataTag(index));
    options.setTimeout(timeout_);
    gloo::broadcast(options);
    return Status::Ok();
  });
}

Status GlooCommunicator::DoAllGather(const Tensor& in, Tensor* out, const CallSite& site) {
  const int64_t index = NextCollective();
  IRM_RETURN_IF_ERROR(AgreeOnCall(CommKind::kAllGather, &in, ReduceOp::kSum, -1, site, index));
  std::vector<int64_t> shape = in.shape();
  shape[0] *= size();
  Tensor gathered = Tensor::ZerosUnchecked(in.dtype(), shape);
  if (in.nbytes() > 0) {
    IRM_RETURN_IF_ERROR(Guard(
        "all_gather", CommKind::kAllGather, -1, index, WaitsForGroup(), site, [&]() -> Status {
          gloo::AllgatherOptions options(context_);
          options.setInput(const_cast<char*>(static_cast<const char*>(in.raw())), in.nbytes());
          options.setOutput(static_cast<char*>(gathered.raw()), gathered.nbytes());
          options.setTag(DataTag(index));
          options.setTimeout(timeout_);
          gloo::allgather(options);
          return Status::Ok();
        }));
  }
  *out = std::move(gathered);
  return Status::Ok();
}

Status GlooCommunicator::DoReduceScatter(const Tensor& in, Tensor* out, ReduceOp op,
                                         const CallSite& site) {
  const int64_t index = NextCollective();
  IRM_RETURN_IF_ERROR(AgreeOnCall(CommKind::kReduceScatter, &in, op, -1, site, index));
  // All-reduce a copy, keep this rank's part: the same element results as a reduce-scatter
  // (Gloo has no new-style reduce_scatter).
  Tensor reduced = in.Clone();
  IRM_RETURN_IF_ERROR(ReduceInPlace(reduced, op, site, index));
  const int64_t rows = in.dim(0) / size();
  IRM_ASSIGN_OR_RETURN(Tensor part, reduced.Slice(rows * rank(), rows * (rank() + 1)));
  *out = part.Clone();
  return Status::Ok();
}

Status GlooCommunicator::DoAllToAll(const Tensor& in, Tensor* out, const CallSite& site) {
  const int64_t index = NextCollective();
  IRM_RETURN_IF_ERROR(AgreeOnCall(CommKind::kAllToAll, &in, ReduceOp::kSum, -1, site, index));
  Tensor result = Tensor::ZerosUnchecked(in.dtype(), in.shape());
  if (in.nbytes() > 0) {
    IRM_RETURN_IF_ERROR(
        Guard("all_to_all", CommKind::kAllToAll, -1, index, WaitsForGroup(), site, [&]() -> Status {
          gloo::AlltoallOptions options(context_);
          options.setInput(const_cast<char*>(static_cast<const char*>(in.raw())), in.nbytes());
          options.setOutput(static_cast<char*>(result.raw()), result.nbytes());
          options.setTag(DataTag(index));
          options.setTimeout(timeout_);
          gloo::alltoall(options);
          return Status::Ok();
        }));
  }
  *out = std::move(result);
  return Status::Ok();
}

Status GlooCommunicator::DoBarrier(const CallSite& site) {
  // The signature's all-gather is itself a barrier: every rank has arrived once it completes.
  return AgreeOnCall(CommKind::kBarrier, nullptr, ReduceOp::kSum, -1, site, NextCollective());
}

// ---- point to point ---------------------------------------------------------------------------

Status GlooCommunicator::DoSend(const Tensor& in, int peer, const CallSite& site) {
  const int to = GlobalRank(peer);
  const std::string name = site.op_type.empty() ? "send" : site.op_type;
  if (in.rank() > kMaxDims) {
    return Status(StatusCode::kInvalidArgument, Location{},
                  fmt::format("{}: {} has {} dims; the gloo backend sends at most {} ({})", name,
                              in.Describe(), in.rank(), kMaxDims, DescribeSite(ring_id_, site)));
  }
  const bool buffered = p2p_.mode == schedules::P2pMode::kBuffered;
  std::deque<std::unique_ptr<Message>>& queue = in_flight_[peer];
  // Buffered: room for this message first (the channel holds fewer than K unacknowledged ones).
  while (buffered && queue.size() >= static_cast<size_t>(std::max(p2p_.depth, 1))) {
    IRM_RETURN_IF_ERROR(AwaitOldest(peer));
  }
  auto message = std::make_unique<Message>();
  Message& m = *message;
  m.sequence = sent_[peer]++;
  m.site = site;
  m.described = in.Describe();
  IRM_RETURN_IF_ERROR(Guard(
      "send", CommKind::kSend, to, 0, fmt::format("rank {} to receive", to), site, [&]() -> Status {
        m.header.dtype = static_cast<int64_t>(in.dtype());
        m.header.rank = in.rank();
        for (int d = 0; d < in.rank(); ++d) m.header.dims[static_cast<size_t>(d)] = in.dim(d);
        m.header_buffer = context_->createUnboundBuffer(&m.header, sizeof(m.header));
        m.header_buffer->send(peer, MessageSlot(m.sequence, 0));
        if (in.nbytes() > 0) {
          void* bytes = const_cast<void*>(in.raw());
          if (buffered) {
            const char* begin = static_cast<const char*>(in.raw());
            m.copy.assign(begin, begin + in.nbytes());
            bytes = m.copy.data();
          }
          m.payload = context_->createUnboundBuffer(bytes, in.nbytes());
          m.payload->send(peer, MessageSlot(m.sequence, 1));
        }
        m.ack_buffer = context_->createUnboundBuffer(&m.ack, sizeof(m.ack));
        m.ack_buffer->recv(peer, MessageSlot(m.sequence, 2));
        return Status::Ok();
      }));
  queue.push_back(std::move(message));
  if (buffered) return Status::Ok();
  return AwaitOldest(peer);  // rendezvous: this message's acknowledgement
}

Status GlooCommunicator::AwaitOldest(int peer) {
  std::deque<std::unique_ptr<Message>>& queue = in_flight_[peer];
  std::unique_ptr<Message> message = std::move(queue.front());
  queue.pop_front();
  const int to = GlobalRank(peer);
  IRM_RETURN_IF_ERROR(Guard("send", CommKind::kSend, to, 0, fmt::format("rank {} to receive", to),
                            message->site, [&]() -> Status {
                              Wait(*message->header_buffer, true);
                              if (message->payload != nullptr) Wait(*message->payload, true);
                              Wait(*message->ack_buffer, false);
                              return Status::Ok();
                            }));
  if (message->ack == 0) return Status::Ok();
  const std::string name = message->site.op_type.empty() ? "send" : message->site.op_type;
  return Status(StatusCode::kInvalid, Location{},
                fmt::format("{} on rank {}: rank {} expects another dtype or shape than {} ({})",
                            name, GlobalRank(group_rank_), to, message->described,
                            DescribeSite(ring_id_, message->site)));
}

Status GlooCommunicator::Flush() {
  for (auto& [peer, queue] : in_flight_) {
    while (!queue.empty()) IRM_RETURN_IF_ERROR(AwaitOldest(peer));
  }
  return Status::Ok();
}

Status GlooCommunicator::DoRecv(Tensor* out, int peer, const CallSite& site) {
  const int from = GlobalRank(peer);
  const int self = GlobalRank(group_rank_);
  const std::string name = site.op_type.empty() ? "recv" : site.op_type;
  const uint64_t sequence = received_[peer]++;
  Header header;
  const std::string waits_for = fmt::format("rank {} to send", from);
  IRM_RETURN_IF_ERROR(Guard("recv", CommKind::kRecv, from, 0, waits_for, site, [&]() -> Status {
    auto header_buffer = context_->createUnboundBuffer(&header, sizeof(header));
    header_buffer->recv(peer, MessageSlot(sequence, 0));
    Wait(*header_buffer, false);
    return Status::Ok();
  }));
  const bool dtype_in_range = header.dtype >= 0 && header.dtype <= 255;
  const DType dtype = static_cast<DType>(dtype_in_range ? header.dtype : 0);
  if (header.magic != kHeaderMagic || header.rank < 0 || header.rank > kMaxDims ||
      !dtype_in_range || !IsRuntimeDType(dtype)) {
    failed_ = true;
    return Status(StatusCode::kInternal, Location{},
                  fmt::format("gloo: {} on rank {} got a malformed message header from rank {} "
                              "({})",
                              name, self, from, DescribeSite(ring_id_, site)));
  }
  std::vector<int64_t> shape(header.dims.begin(), header.dims.begin() + header.rank);
  StatusOr<Tensor> message = Tensor::Zeros(dtype, shape);
  if (!message.ok()) {
    failed_ = true;
    return Status(
        StatusCode::kInternal, Location{},
        fmt::format("gloo: {} on rank {} got a malformed message header from rank {} "
                    "({}): {}",
                    name, self, from, DescribeSite(ring_id_, site), message.status().message()));
  }
  const bool mismatch = out->defined() && (out->dtype() != dtype || out->shape() != shape);
  // A defined, matching `out` receives in place; otherwise the fresh tensor takes the payload
  // (drained even on a mismatch, so that the pair's stream stays in step).
  Tensor& target = out->defined() && !mismatch ? *out : message.value();
  int64_t ack = mismatch ? 1 : 0;
  IRM_RETURN_IF_ERROR(Guard("recv", CommKind::kRecv, from, 0, waits_for, site, [&]() -> Status {
    if (target.nbytes() > 0) {
      auto payload = context_->createUnboundBuffer(target.raw(), target.nbytes());
      payload->recv(peer, MessageSlot(sequence, 1));
      Wait(*payload, false);
    }
    auto ack_buffer = context_->createUnboundBuffer(&ack, sizeof(ack));
    ack_buffer->send(peer, MessageSlot(sequence, 2));
    Wait(*ack_buffer, true);
    return Status::Ok();
  }));
  if (mismatch) {
    return Status(StatusCode::kInvalid, Location{},
                  fmt::format("{} on rank {} expects {} from rank {} ({}), but rank {} sends {}",
                              name, self, out->Describe(), from, DescribeSite(ring_id_, site), from,
                              message.value().Describe()));
  }
  if (!out->defined()) *out = std::move(message).value();
  return Status::Ok();
}

}  // namespace irm::rt
