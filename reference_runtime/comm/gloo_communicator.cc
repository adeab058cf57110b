// GlooCommunicator (gloo_communicator.h): the Communicator calls on Gloo's collectives and
// unbound buffers, the element-wise reduce functions, and the message header of point to point.
#include "reference_runtime/comm/gloo_communicator.h"

#include <array>
#include <cstring>
#include <exception>
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

std::string SiteSuffix(int ring_id, const CallSite& site) {
  if (site.op_type.empty() && site.job.empty() && site.op_index < 0) return "";
  std::string text = "; at ";
  if (!site.op_type.empty()) text += site.op_type + ", ";
  return text + DescribeSite(ring_id, site);
}

}  // namespace

GlooCommunicator::GlooCommunicator(std::shared_ptr<gloo::Context> context, int ring_id,
                                   std::vector<int> ranks, std::chrono::milliseconds timeout)
    : context_(std::move(context)),
      ring_id_(ring_id),
      ranks_(std::move(ranks)),
      group_rank_(context_->rank),
      timeout_(timeout) {}

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
Status GlooCommunicator::Guard(const char* call, const std::string& waits_for, const CallSite& site,
                               F&& body) {
  std::string what;
  try {
    return body();
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
    what = "an unknown exception";
  }
  failed_ = true;
  const int rank = GlobalRank(group_rank_);
  if (what.find("Timed out") != std::string::npos) {
    timed_out_ = true;
    return Status(
        StatusCode::kInternal, Location{},
        fmt::format("gloo: {} on ring {} timed out after {} ms (rank {} waits for {}{})", call,
                    ring_id_, timeout_.count(), rank, waits_for, SiteSuffix(ring_id_, site)));
  }
  return Status(StatusCode::kInternal, Location{},
                fmt::format("gloo: {} on ring {} failed (rank {} waits for {}{}): {}", call,
                            ring_id_, rank, waits_for, SiteSuffix(ring_id_, site), what));
}

// ---- collectives ------------------------------------------------------------------------------

Status GlooCommunicator::DoAllReduce(Tensor& inout, ReduceOp op, const CallSite& site) {
  if (inout.numel() == 0) return Status::Ok();
  const uint32_t tag = NextTag();
  return Guard("all_reduce", WaitsForGroup(), site, [&]() -> Status {
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
  if (inout.nbytes() == 0) return Status::Ok();
  const uint32_t tag = NextTag();
  const std::string waits_for =
      root == group_rank_ ? WaitsForGroup() : fmt::format("root rank {}", GlobalRank(root));
  return Guard("broadcast", waits_for, site, [&]() -> Status {
    gloo::BroadcastOptions options(context_);
    options.setOutput(static_cast<char*>(inout.raw()), inout.nbytes());
    options.setRoot(root);
    options.setTag(tag);
    options.setTimeout(timeout_);
    gloo::broadcast(options);
    return Status::Ok();
  });
}

Status GlooCommunicator::DoAllGather(const Tensor& in, Tensor* out, const CallSite& site) {
  std::vector<int64_t> shape = in.shape();
  shape[0] *= size();
  Tensor gathered = Tensor::ZerosUnchecked(in.dtype(), shape);
  if (in.nbytes() > 0) {
    const uint32_t tag = NextTag();
    IRM_RETURN_IF_ERROR(Guard("all_gather", WaitsForGroup(), site, [&]() -> Status {
      gloo::AllgatherOptions options(context_);
      options.setInput(const_cast<char*>(static_cast<const char*>(in.raw())), in.nbytes());
      options.setOutput(static_cast<char*>(gathered.raw()), gathered.nbytes());
      options.setTag(tag);
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
  // All-reduce a copy, keep this rank's part: the same element results as a reduce-scatter
  // (Gloo has no new-style reduce_scatter).
  Tensor reduced = in.Clone();
  IRM_RETURN_IF_ERROR(DoAllReduce(reduced, op, site));
  const int64_t rows = in.dim(0) / size();
  IRM_ASSIGN_OR_RETURN(Tensor part, reduced.Slice(rows * rank(), rows * (rank() + 1)));
  *out = part.Clone();
  return Status::Ok();
}

Status GlooCommunicator::DoAllToAll(const Tensor& in, Tensor* out, const CallSite& site) {
  Tensor result = Tensor::ZerosUnchecked(in.dtype(), in.shape());
  if (in.nbytes() > 0) {
    const uint32_t tag = NextTag();
    IRM_RETURN_IF_ERROR(Guard("all_to_all", WaitsForGroup(), site, [&]() -> Status {
      gloo::AlltoallOptions options(context_);
      options.setInput(const_cast<char*>(static_cast<const char*>(in.raw())), in.nbytes());
      options.setOutput(static_cast<char*>(result.raw()), result.nbytes());
      options.setTag(tag);
      options.setTimeout(timeout_);
      gloo::alltoall(options);
      return Status::Ok();
    }));
  }
  *out = std::move(result);
  return Status::Ok();
}

Status GlooCommunicator::DoBarrier(const CallSite& site) {
  const uint32_t tag = NextTag();
  return Guard("barrier", WaitsForGroup(), site, [&]() -> Status {
    gloo::BarrierOptions options(context_);
    options.setTag(tag);
    options.setTimeout(timeout_);
    gloo::barrier(options);
    return Status::Ok();
  });
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
  const uint64_t sequence = sent_[peer]++;
  int64_t ack = 0;
  IRM_RETURN_IF_ERROR(Guard("send", fmt::format("rank {} to receive", to), site, [&]() -> Status {
    Header header;
    header.dtype = static_cast<int64_t>(in.dtype());
    header.rank = in.rank();
    for (int d = 0; d < in.rank(); ++d) header.dims[static_cast<size_t>(d)] = in.dim(d);
    auto header_buffer = context_->createUnboundBuffer(&header, sizeof(header));
    header_buffer->send(peer, MessageSlot(sequence, 0));
    std::unique_ptr<gloo::transport::UnboundBuffer> payload;
    if (in.nbytes() > 0) {
      payload = context_->createUnboundBuffer(const_cast<void*>(in.raw()), in.nbytes());
      payload->send(peer, MessageSlot(sequence, 1));
    }
    auto ack_buffer = context_->createUnboundBuffer(&ack, sizeof(ack));
    ack_buffer->recv(peer, MessageSlot(sequence, 2));
    header_buffer->waitSend(timeout_);
    if (payload != nullptr) payload->waitSend(timeout_);
    ack_buffer->waitRecv(timeout_);
    return Status::Ok();
  }));
  if (ack == 0) return Status::Ok();
  return Status(
      StatusCode::kInvalid, Location{},
      fmt::format("{} on rank {}: rank {} expects another dtype or shape than {} ({})", name,
                  GlobalRank(group_rank_), to, in.Describe(), DescribeSite(ring_id_, site)));
}

Status GlooCommunicator::DoRecv(Tensor* out, int peer, const CallSite& site) {
  const int from = GlobalRank(peer);
  const int self = GlobalRank(group_rank_);
  const std::string name = site.op_type.empty() ? "recv" : site.op_type;
  const uint64_t sequence = received_[peer]++;
  Header header;
  const std::string waits_for = fmt::format("rank {} to send", from);
  IRM_RETURN_IF_ERROR(Guard("recv", waits_for, site, [&]() -> Status {
    auto header_buffer = context_->createUnboundBuffer(&header, sizeof(header));
    header_buffer->recv(peer, MessageSlot(sequence, 0));
    header_buffer->waitRecv(timeout_);
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
  IRM_RETURN_IF_ERROR(Guard("recv", waits_for, site, [&]() -> Status {
    if (target.nbytes() > 0) {
      auto payload = context_->createUnboundBuffer(target.raw(), target.nbytes());
      payload->recv(peer, MessageSlot(sequence, 1));
      payload->waitRecv(timeout_);
    }
    auto ack_buffer = context_->createUnboundBuffer(&ack, sizeof(ack));
    ack_buffer->send(peer, MessageSlot(sequence, 2));
    ack_buffer->waitSend(timeout_);
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
