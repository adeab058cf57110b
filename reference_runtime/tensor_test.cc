// Tensors: zero-filled creation with checked shapes, views that share storage, clones that do not,
// and the exchange with the file form.
#include "reference_runtime/tensor.h"

#include <gtest/gtest.h>

namespace irm::rt {
namespace {

TEST(TensorTest, ZerosAreZeroAndShapesAreChecked) {
  StatusOr<Tensor> t = Tensor::Zeros(DType::kFloat32, {2, 3});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->numel(), 6);
  EXPECT_EQ(t->nbytes(), 24u);
  EXPECT_EQ(t->Describe(), "float32[2, 3]");
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t->data<float>()[i], 0.0f);
  EXPECT_EQ(Tensor::Zeros(DType::kFloat32, {2, -1}).status().message(),
            "shape [2, -1] is not a valid tensor shape (a negative dim, or too large)");
  EXPECT_EQ(Tensor::Zeros(DType::kComplex64, {1}).status().message(),
            "dtype complex64 is not supported by the runtime");
  EXPECT_EQ(Tensor::Zeros(DType::kFloat32, {}).value().numel(), 1);  // 0-D
  EXPECT_EQ(Tensor::Zeros(DType::kFloat32, {0, 4}).value().numel(), 0);
}

TEST(TensorTest, SlicesAndReshapesShareStorage) {
  Tensor t = Tensor::FromVector<float>({0, 1, 2, 3, 4, 5}, {3, 2});
  Tensor rows = t.Slice(1, 3).value();
  EXPECT_EQ(rows.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(rows.data<float>()[0], 2.0f);
  rows.data<float>()[0] = 20.0f;
  EXPECT_EQ(t.data<float>()[2], 20.0f);
  EXPECT_TRUE(rows.SharesStorageWith(t));
  Tensor flat = t.Reshaped({6}).value();
  EXPECT_EQ(flat.data<float>()[2], 20.0f);
  EXPECT_EQ(t.Slice(2, 4).status().message(), "rows [2, 4) are outside float32 [3, 2]");
  EXPECT_EQ(t.Reshaped({4}).status().message(),
            "cannot view [3, 2] (6 elements) as [4] (4 elements)");
  Tensor copy = t.Clone();
  EXPECT_FALSE(copy.SharesStorageWith(t));
  EXPECT_TRUE(copy.BitwiseEqual(t));
  copy.data<float>()[0] = 9.0f;
  EXPECT_FALSE(copy.BitwiseEqual(t));
}

TEST(TensorTest, HostRoundTrip) {
  Tensor t = Tensor::FromVector<int64_t>({1, -2, 3}, {3});
  HostTensor host = t.ToHost();
  EXPECT_EQ(host.dtype, DType::kInt64);
  EXPECT_EQ(host.shape, (std::vector<int64_t>{3}));
  StatusOr<Tensor> back = Tensor::FromHost(host);
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->BitwiseEqual(t));
  host.bytes.pop_back();
  EXPECT_EQ(Tensor::FromHost(host).status().message(),
            "a int64 [3] tensor needs 24 bytes but 23 were given");
  // A slice's host form holds only its rows.
  Tensor m = Tensor::FromVector<double>({1, 2, 3, 4}, {2, 2});
  EXPECT_EQ(m.Slice(1, 2).value().ToHost().bytes.size(), 16u);
}

}  // namespace
}  // namespace irm::rt
