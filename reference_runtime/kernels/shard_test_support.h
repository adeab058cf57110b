// Test support for sharded random initialisation (kernels/random.cc, KernelContext::shard): the
// box of a serial tensor that a shard holds, copied out bit for bit, so that tests compare a
// shard's draw with the slice of the serial draw.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "reference_runtime/tensor.h"

namespace irm::rt::testing {

// The elements [offsets, offsets + dims) of `serial`, as a tensor of shape `dims` and the same
// dtype. Each element's serial position comes from its local multi-index by division (not by the
// runtime's incremental walk), so that the two compute it independently.
inline Tensor BoxOf(const Tensor& serial, const std::vector<int64_t>& offsets,
                    const std::vector<int64_t>& dims) {
  Tensor box = Tensor::ZerosUnchecked(serial.dtype(), dims);
  const size_t width = DTypeSize(serial.dtype());
  const auto* from = static_cast<const unsigned char*>(serial.raw());
  auto* to = static_cast<unsigned char*>(box.raw());
  for (int64_t i = 0; i < box.numel(); ++i) {
    int64_t rest = i;
    int64_t serial_index = 0;
    int64_t serial_stride = 1;
    for (size_t d = dims.size(); d-- > 0;) {
      const int64_t local = rest % dims[d];
      rest /= dims[d];
      serial_index += (offsets[d] + local) * serial_stride;
      serial_stride *= serial.dim(static_cast<int>(d));
    }
    std::memcpy(to + static_cast<size_t>(i) * width,
                from + static_cast<size_t>(serial_index) * width, width);
  }
  return box;
}

}  // namespace irm::rt::testing
