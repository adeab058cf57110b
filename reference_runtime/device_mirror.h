// DeviceMirror: a copy of a tensor storage's bytes in device memory, held by the storage (tensor.h)
// so that a tensor a GPU kernel wrote stays on the device until the host reads it, and a host
// tensor uploaded once is reused by every later kernel. Abstract so that the runtime core needs no
// CUDA header: the CUDA backend implements it (cuda/device_tensor.h), tests fake it in host memory.
//
// A mirror's device bytes are written once, when it is made (a kernel's output, an upload), and
// never after: a host write drops the storage's mirror instead of updating it. So storages may
// share one mirror (an in-place write of a device result, Tensor::CopyBytesFrom) without aliasing
// bugs.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

#include "common/status.h"

namespace irm::rt {

class DeviceMirror {
 public:
  DeviceMirror() = default;
  virtual ~DeviceMirror() = default;  // frees the device memory
  DeviceMirror(const DeviceMirror&) = delete;
  DeviceMirror& operator=(const DeviceMirror&) = delete;

  // The device address of byte 0 of the storage.
  virtual const void* data() const = 0;
  // How many bytes the mirror holds (at least the storage's size).
  virtual size_t size() const = 0;
  // Copies the first `bytes` bytes to host memory `dst`, waiting for the device work that writes
  // them. An error is a device failure (a CUDA error), never bad input.
  virtual Status CopyToHost(void* dst, size_t bytes) const = 0;
  // Fills the first `bytes` bytes from host memory `src` (only while the mirror is being made).
  virtual Status CopyFromHost(const void* src, size_t bytes) = 0;
};

// Makes an uninitialised mirror of `bytes` bytes (the device's allocator, for an upload).
using DeviceMirrorMaker = std::function<StatusOr<std::unique_ptr<DeviceMirror>>(size_t bytes)>;

}  // namespace irm::rt
