// What the data kernels (manipulation, indexing, creation, cast) share: visiting a dtype with its
// element type, registering one kernel for every runtime dtype, axis normalisation with the error
// every kernel words the same way, copying a box of elements between C-order tensors, making an
// output with a checked shape, and reading integer Scalar attributes that an executor may have
// read from a float constant.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/status.h"
#include "reference_runtime/dtype_visit.h"
#include "reference_runtime/kernel.h"
#include "reference_runtime/kernels/register.h"
#include "reference_runtime/tensor.h"

namespace irm::rt::data {

// The runtime's dtype list and visitor (dtype_visit.h), under the names the data kernels use.
using ::irm::rt::kEveryDType;
using ::irm::rt::VisitDType;

// Registers `fn` (which moves bytes and so does not care about the element type) for every
// runtime dtype on the CPU.
Status RegisterForEveryDType(KernelRegistry& registry, const std::string& name, KernelFn fn,
                             KernelSignature signature);

// Registers Kernel<T>::Run for the element type T of every runtime dtype.
template <template <typename> class Kernel>
Status RegisterTemplateForEveryDType(KernelRegistry& registry, const std::string& name,
                                     KernelSignature signature) {
  return RegisterForTypes<Kernel, bool, int8_t, uint8_t, int16_t, int32_t, int64_t, Float16,
                          BFloat16, float, double>(registry, name, signature);
}

int64_t Numel(const std::vector<int64_t>& shape);

// axis in [-rank, rank) as an index in [0, rank), or the error
// "<kernel>: <what> <axis> is out of range for <operand> <dtype[shape]>".
StatusOr<int> NormalizeAxis(int64_t axis, const Tensor& t, std::string_view kernel,
                            std::string_view what, std::string_view operand);

// A zero-filled output, or the error "<kernel>: <Tensor::Zeros's message>" for a shape that is
// negative or too large.
StatusOr<Tensor> MakeOutput(std::string_view kernel, DType dtype, std::vector<int64_t> shape);

// Copies the box of extents `box` starting at `src_start` in `src` (C order, shape `src_shape`)
// to `dst_start` in `dst` (shape `dst_shape`); all four vectors have the rank of the shapes, and
// the box fits both. Copies whole innermost rows at once.
void CopyBox(const std::byte* src, const std::vector<int64_t>& src_shape,
             const std::vector<int64_t>& src_start, std::byte* dst,
             const std::vector<int64_t>& dst_shape, const std::vector<int64_t>& dst_start,
             const std::vector<int64_t>& box, size_t item_size);

// An integer Scalar attribute (axis, num): an int, or a float holding an integer (an executor
// reads mutable Scalar operands from full's float `value`).
StatusOr<int64_t> IntScalarAttr(const KernelAttrs& attrs, std::string_view name);

// A numeric Scalar attribute (full's value): kept as an int when it is one, so that int64 values
// beyond 2^53 stay exact.
using Number = std::variant<int64_t, double>;
StatusOr<Number> NumberAttr(const KernelAttrs& attrs, std::string_view name);

// The attribute `name` as a dtype the runtime computes with, or an error.
StatusOr<DType> RuntimeDTypeAttr(const KernelAttrs& attrs, std::string_view name,
                                 std::string_view kernel);

}  // namespace irm::rt::data
