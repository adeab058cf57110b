// SplitLastDim and ConcatLastDim (tensor_parallel.h).
#include "reference_runtime/comm/tensor_parallel.h"

#include <cstring>

#include <fmt/format.h>

namespace irm::rt {
namespace {

// Copies rows of `width` bytes from `src` (stride `src_stride`) to `dst` (stride `dst_stride`).
void CopyRows(const char* src, size_t src_stride, char* dst, size_t dst_stride, int64_t rows,
              size_t width) {
  for (int64_t r = 0; r < rows; ++r) {
    std::memcpy(dst + static_cast<size_t>(r) * dst_stride,
                src + static_cast<size_t>(r) * src_stride, width);
  }
}

}  // namespace

StatusOr<Tensor> SplitLastDim(const Tensor& x, int rank, int nranks) {
  const auto invalid = [](std::string message) {
    return Status(StatusCode::kInvalidArgument, Location{}, std::move(message));
  };
  if (nranks < 1 || rank < 0 || rank >= nranks) {
    return invalid(fmt::format("rank {} is not in [0, nranks {})", rank, nranks));
  }
  if (x.rank() == 0 || x.shape().back() % nranks != 0) {
    return invalid(
        fmt::format("the last dim of {} does not divide into {} parts", x.Describe(), nranks));
  }
  const int64_t cols = x.shape().back();
  const int64_t part = cols / nranks;
  const int64_t rows = cols == 0 ? 0 : x.numel() / cols;
  std::vector<int64_t> shape = x.shape();
  shape.back() = part;
  Tensor out = Tensor::ZerosUnchecked(x.dtype(), shape);
  const size_t size = DTypeSize(x.dtype());
  if (part > 0) {
    CopyRows(static_cast<const char*>(x.raw()) + static_cast<size_t>(rank * part) * size,
             static_cast<size_t>(cols) * size, static_cast<char*>(out.raw()),
             static_cast<size_t>(part) * size, rows, static_cast<size_t>(part) * size);
  }
  return out;
}

StatusOr<Tensor> ConcatLastDim(Communicator& comm, const Tensor& x, const CallSite& site) {
  if (x.rank() == 0) {
    return Status(StatusCode::kInvalidArgument, Location{},
                  fmt::format("{} has no last dim to concatenate along", x.Describe()));
  }
  // Gathered along dim 0 as a [1, numel] row per rank, then interleaved along the last dim.
  IRM_ASSIGN_OR_RETURN(Tensor row, x.Reshaped({1, x.numel()}));
  Tensor gathered;
  IRM_RETURN_IF_ERROR(comm.AllGather(row, &gathered, site));
  const int n = comm.size();
  const int64_t cols = x.shape().back();
  const int64_t rows = cols == 0 ? 0 : x.numel() / cols;
  std::vector<int64_t> shape = x.shape();
  shape.back() = cols * n;
  Tensor out = Tensor::ZerosUnchecked(x.dtype(), shape);
  const size_t size = DTypeSize(x.dtype());
  const size_t width = static_cast<size_t>(cols) * size;
  for (int r = 0; r < n && cols > 0; ++r) {
    CopyRows(static_cast<const char*>(gathered.raw()) + static_cast<size_t>(r) * x.nbytes(), width,
             static_cast<char*>(out.raw()) + static_cast<size_t>(r) * width,
             width * static_cast<size_t>(n), rows, width);
  }
  return out;
}

}  // namespace irm::rt
