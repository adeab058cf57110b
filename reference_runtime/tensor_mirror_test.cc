// The residency protocol of Tensor (tensor.h, device_mirror.h) on a fake device: a mirror that
// keeps its "device" bytes in host memory and counts every copy, so that laziness, invalidation,
// views and threads are checked without a GPU.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "reference_runtime/device_fault.h"
#include "reference_runtime/device_mirror.h"
#include "reference_runtime/tensor.h"

namespace irm::rt {
namespace {

struct Counts {
  std::atomic<int> to_host{0};
  std::atomic<int> to_device{0};
  std::atomic<int> alive{0};  // mirrors not yet destroyed (their "device memory" not freed)
  std::atomic<int> made{0};   // mirrors made by FakeMaker
};

class FakeMirror final : public DeviceMirror {
 public:
  FakeMirror(std::vector<std::byte> bytes, Counts& counts)
      : bytes_(std::move(bytes)), counts_(counts) {
    ++counts_.alive;
  }
  ~FakeMirror() override { --counts_.alive; }
  const void* data() const override { return bytes_.data(); }
  size_t size() const override { return bytes_.size(); }
  Status CopyToHost(void* dst, size_t bytes) const override {
    if (fail_copy_back) return Status(StatusCode::kInternal, Location{}, "fake device lost");
    if (slow_copy_back) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::memcpy(dst, bytes_.data(), bytes);
    ++counts_.to_host;
    return Status::Ok();
  }
  Status CopyFromHost(const void* src, size_t bytes) override {
    std::memcpy(bytes_.data(), src, bytes);
    ++counts_.to_device;
    return Status::Ok();
  }
  bool fail_copy_back = false;
  bool slow_copy_back = false;

 private:
  std::vector<std::byte> bytes_;
  Counts& counts_;
};

// A fake device tensor's bytes: the floats given.
std::unique_ptr<FakeMirror> MirrorOf(const std::vector<float>& values, Counts& counts) {
  std::vector<std::byte> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return std::make_unique<FakeMirror>(std::move(bytes), counts);
}

Tensor OnFakeDevice(const std::vector<float>& values, std::vector<int64_t> shape, Counts& counts) {
  StatusOr<Tensor> t =
      Tensor::OnDevice(DType::kFloat32, std::move(shape), MirrorOf(values, counts));
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? *t : Tensor();
}

DeviceMirrorMaker FakeMaker(Counts& counts) {
  return [&counts](size_t bytes) -> StatusOr<std::unique_ptr<DeviceMirror>> {
    ++counts.made;
    return std::unique_ptr<DeviceMirror>(
        std::make_unique<FakeMirror>(std::vector<std::byte>(bytes), counts));
  };
}

std::vector<float> Floats(const Tensor& t) {
  const float* p = t.data<float>();
  return std::vector<float>(p, p + t.numel());
}

// The floats of a mirror's "device" bytes, from `offset` bytes on.
std::vector<float> DeviceFloats(const DeviceMirror& mirror, size_t offset, size_t count) {
  std::vector<float> out(count);
  std::memcpy(out.data(), static_cast<const std::byte*>(mirror.data()) + offset,
              count * sizeof(float));
  return out;
}

TEST(TensorMirrorTest, HostTensorsHaveNoMirror) {
  Tensor t = Tensor::FromVector<float>({1, 2}, {2});
  EXPECT_EQ(t.device_mirror(), nullptr);
  EXPECT_FALSE(t.device_current());
  EXPECT_TRUE(t.host_current());
  t.data<float>()[0] = 3;
  EXPECT_EQ(Floats(t), (std::vector<float>{3, 2}));
  EXPECT_FALSE(Tensor().device_current());
  EXPECT_FALSE(Tensor().host_current());
  // Device storage comes only through a mirror: a zero-filled device tensor is still refused.
  EXPECT_FALSE(Tensor::Zeros(DType::kFloat32, {2}, Device::kCuda).ok());
}

TEST(TensorMirrorTest, DeviceTensorHasNoHostBytesUntilRead) {
  Counts counts;
  const Tensor t = OnFakeDevice({1, 2, 3, 4, 5, 6}, {2, 3}, counts);
  EXPECT_TRUE(t.device_current());
  EXPECT_FALSE(t.host_current());
  EXPECT_EQ(t.device(), Device::kCpu);  // its home is the host: communicators take it as is
  EXPECT_EQ(t.Describe(), "float32[2, 3]");
  EXPECT_EQ(counts.to_host, 0);
  EXPECT_EQ(Floats(t), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(counts.to_host, 1);
  EXPECT_TRUE(t.host_current());
  EXPECT_TRUE(t.device_current());  // a read keeps the device copy
}

TEST(TensorMirrorTest, ManyReadsCopyBackOnce) {
  Counts counts;
  const Tensor t = OnFakeDevice({7, 8}, {2}, counts);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(t.data<float>()[1], 8.0f);
  EXPECT_EQ(t.ToHost().bytes.size(), 8u);
  EXPECT_TRUE(t.BitwiseEqual(Tensor::FromVector<float>({7, 8}, {2})));
  EXPECT_TRUE(t.SyncToHost().ok());
  EXPECT_EQ(counts.to_host, 1);
  EXPECT_EQ(counts.to_device, 0);
}

TEST(TensorMirrorTest, HostWriteDropsTheDeviceCopy) {
  Counts counts;
  Tensor t = OnFakeDevice({1, 2, 3}, {3}, counts);
  t.data<float>()[0] = 9;  // the other elements must come back first
  EXPECT_EQ(counts.to_host, 1);
  EXPECT_FALSE(t.device_current());
  EXPECT_EQ(t.device_mirror(), nullptr);
  EXPECT_EQ(counts.alive, 0);  // the device memory is freed
  EXPECT_EQ(Floats(t), (std::vector<float>{9, 2, 3}));
  EXPECT_EQ(counts.to_host, 1);
}

TEST(TensorMirrorTest, UploadOnceThenReuse) {
  Counts counts;
  Tensor t = Tensor::FromVector<float>({1, 2, 3, 4}, {4});
  ASSERT_TRUE(t.UploadToDevice(FakeMaker(counts)).ok());
  ASSERT_TRUE(t.UploadToDevice(FakeMaker(counts)).ok());
  EXPECT_EQ(counts.made, 1);
  EXPECT_EQ(counts.to_device, 1);
  EXPECT_TRUE(t.device_current());
  EXPECT_TRUE(t.host_current());
  std::shared_ptr<const DeviceMirror> mirror = t.device_mirror();
  ASSERT_NE(mirror, nullptr);
  EXPECT_EQ(DeviceFloats(*mirror, 0, 4), (std::vector<float>{1, 2, 3, 4}));
  // Reading the host copy of an uploaded tensor costs nothing.
  EXPECT_EQ(Floats(t), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(counts.to_host, 0);
  // A host write drops the upload; the next upload makes a new one with the new bytes.
  t.data<float>()[3] = 40;
  EXPECT_FALSE(t.device_current());
  ASSERT_TRUE(t.UploadToDevice(FakeMaker(counts)).ok());
  EXPECT_EQ(counts.to_device, 2);
  EXPECT_EQ(DeviceFloats(*t.device_mirror(), 0, 4), (std::vector<float>{1, 2, 3, 40}));
  // The first mirror is still what the reference taken before the write holds: mirrors are never
  // written after they are made.
  EXPECT_EQ(DeviceFloats(*mirror, 0, 4), (std::vector<float>{1, 2, 3, 4}));
}

TEST(TensorMirrorTest, SlicesShareOneUploadOfTheWholeStorage) {
  Counts counts;
  const Tensor t = Tensor::FromVector<float>({0, 1, 2, 3, 4, 5, 6, 7}, {4, 2});
  StatusOr<Tensor> rows = t.Slice(1, 3);
  StatusOr<Tensor> last = t.Slice(3, 4);
  ASSERT_TRUE(rows.ok() && last.ok());
  size_t asked = 0;
  const DeviceMirrorMaker maker = FakeMaker(counts);
  ASSERT_TRUE(rows->UploadToDevice([&](size_t bytes) {
                    asked = bytes;
                    return maker(bytes);
                  })
                  .ok());
  EXPECT_EQ(asked, 32u);  // the whole storage, not the slice's 16 bytes
  ASSERT_TRUE(last->UploadToDevice(maker).ok());
  ASSERT_TRUE(t.UploadToDevice(maker).ok());
  EXPECT_EQ(counts.to_device, 1);
  EXPECT_EQ(rows->byte_offset(), 8u);
  EXPECT_EQ(last->byte_offset(), 24u);
  EXPECT_EQ(rows->device_mirror().get(), t.device_mirror().get());
  EXPECT_EQ(DeviceFloats(*rows->device_mirror(), rows->byte_offset(), 4),
            (std::vector<float>{2, 3, 4, 5}));
}

TEST(TensorMirrorTest, ViewsOfADeviceTensorSeeItsBytes) {
  Counts counts;
  const Tensor t = OnFakeDevice({0, 1, 2, 3, 4, 5, 6, 7}, {4, 2}, counts);
  StatusOr<Tensor> rows = t.Slice(1, 3);
  StatusOr<Tensor> flat = t.Reshaped({8});
  ASSERT_TRUE(rows.ok() && flat.ok());
  EXPECT_TRUE(rows->device_current());
  EXPECT_FALSE(rows->host_current());
  EXPECT_EQ(Floats(*rows), (std::vector<float>{2, 3, 4, 5}));
  EXPECT_EQ(Floats(*flat), (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7}));
  StatusOr<Tensor> rows_flat = rows->Reshaped({2, 2});
  ASSERT_TRUE(rows_flat.ok());
  EXPECT_EQ(Floats(*rows_flat), (std::vector<float>{2, 3, 4, 5}));
  EXPECT_EQ(counts.to_host, 1);  // one copy back serves every view
}

TEST(TensorMirrorTest, WritingASliceInvalidatesTheWholeStorage) {
  Counts counts;
  const Tensor t = OnFakeDevice({0, 1, 2, 3}, {2, 2}, counts);
  StatusOr<Tensor> row = t.Slice(1, 2);
  ASSERT_TRUE(row.ok());
  row->data<float>()[0] = 20;
  EXPECT_FALSE(t.device_current());
  EXPECT_EQ(Floats(t), (std::vector<float>{0, 1, 20, 3}));
  EXPECT_EQ(counts.to_host, 1);
  EXPECT_EQ(counts.alive, 0);
}

TEST(TensorMirrorTest, CloneOfADeviceTensorSharesItsMirrorNotItsStorage) {
  Counts counts;
  const Tensor t = OnFakeDevice({1, 2, 3}, {3}, counts);
  Tensor copy = t.Clone();
  EXPECT_FALSE(copy.SharesStorageWith(t));
  EXPECT_TRUE(copy.device_current());
  EXPECT_EQ(counts.to_host, 0);
  EXPECT_EQ(counts.alive, 1);
  copy.data<float>()[0] = 100;
  EXPECT_EQ(counts.to_host, 1);
  EXPECT_EQ(Floats(copy), (std::vector<float>{100, 2, 3}));
  EXPECT_TRUE(t.device_current());  // the original keeps the mirror and its bytes
  EXPECT_EQ(Floats(t), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(counts.to_host, 2);
}

TEST(TensorMirrorTest, CloneOfASliceIsAHostCopy) {
  Counts counts;
  const Tensor t = OnFakeDevice({1, 2, 3, 4}, {4}, counts);
  StatusOr<Tensor> tail = t.Slice(2, 4);
  ASSERT_TRUE(tail.ok());
  const Tensor copy = tail->Clone();
  EXPECT_FALSE(copy.device_current());
  EXPECT_EQ(Floats(copy), (std::vector<float>{3, 4}));
  EXPECT_EQ(counts.to_host, 1);
}

TEST(TensorMirrorTest, BitwiseEqualReadsTheDeviceBytes) {
  Counts counts;
  const Tensor t = OnFakeDevice({1.5f, -2}, {2}, counts);
  EXPECT_TRUE(t.BitwiseEqual(Tensor::FromVector<float>({1.5f, -2}, {2})));
  EXPECT_FALSE(t.BitwiseEqual(Tensor::FromVector<float>({1.5f, 2}, {2})));
  EXPECT_FALSE(t.BitwiseEqual(Tensor::FromVector<float>({1.5f, -2}, {1, 2})));
  const Tensor u = OnFakeDevice({1.5f, -2}, {2}, counts);
  EXPECT_TRUE(u.BitwiseEqual(t));
}

TEST(TensorMirrorTest, CopyBytesFromADeviceTensorTakesItsMirror) {
  Counts counts;
  const Tensor src = OnFakeDevice({5, 6}, {2}, counts);
  Tensor dst = Tensor::FromVector<float>({0, 0}, {2});
  dst.CopyBytesFrom(src);
  EXPECT_EQ(counts.to_host, 0);
  EXPECT_TRUE(dst.device_current());
  EXPECT_FALSE(dst.host_current());
  EXPECT_EQ(dst.device_mirror().get(), src.device_mirror().get());
  EXPECT_EQ(Floats(dst), (std::vector<float>{5, 6}));
  EXPECT_EQ(counts.to_host, 1);
  // Once src's host bytes are current, they are copied too: no later copy back for dst.
  Tensor second = Tensor::FromVector<float>({0, 0}, {2});
  EXPECT_EQ(Floats(src), (std::vector<float>{5, 6}));
  EXPECT_EQ(counts.to_host, 2);
  second.CopyBytesFrom(src);
  EXPECT_TRUE(second.host_current());
  EXPECT_TRUE(second.device_current());
  EXPECT_EQ(Floats(second), (std::vector<float>{5, 6}));
  EXPECT_EQ(counts.to_host, 2);
}

TEST(TensorMirrorTest, CopyBytesFromIntoASliceGoesThroughTheHost) {
  Counts counts;
  Tensor whole = Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2});
  StatusOr<Tensor> row = whole.Slice(0, 1);
  ASSERT_TRUE(row.ok());
  const Tensor src = OnFakeDevice({7, 8}, {1, 2}, counts);
  row->CopyBytesFrom(src);
  EXPECT_FALSE(whole.device_current());
  EXPECT_EQ(Floats(whole), (std::vector<float>{7, 8, 3, 4}));
  EXPECT_EQ(counts.to_host, 1);
  // An overlapping copy within one storage (a kernel handing back a view of its target).
  StatusOr<Tensor> second = whole.Slice(1, 2);
  ASSERT_TRUE(second.ok());
  row->CopyBytesFrom(*second);
  EXPECT_EQ(Floats(whole), (std::vector<float>{3, 4, 3, 4}));
}

TEST(TensorMirrorTest, TwoThreadsReadingAtOnceCopyBackOnce) {
  for (int round = 0; round < 20; ++round) {
    Counts counts;
    std::vector<float> values(4096);
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
    std::unique_ptr<FakeMirror> mirror = MirrorOf(values, counts);
    mirror->slow_copy_back = round % 2 == 0;
    StatusOr<Tensor> made = Tensor::OnDevice(DType::kFloat32, {4096}, std::move(mirror));
    ASSERT_TRUE(made.ok());
    const Tensor t = *made;
    std::atomic<bool> go{false};
    double sums[2] = {0, 0};
    auto reader = [&t, &go](double* sum) {
      while (!go.load()) {
      }
      const float* p = t.data<float>();
      for (int64_t i = 0; i < t.numel(); ++i) *sum += p[i];
    };
    std::thread a(reader, &sums[0]);
    std::thread b(reader, &sums[1]);
    go = true;
    a.join();
    b.join();
    EXPECT_EQ(sums[0], 4095.0 * 4096.0 / 2.0);
    EXPECT_EQ(sums[1], 4095.0 * 4096.0 / 2.0);
    EXPECT_EQ(counts.to_host, 1);
  }
}

TEST(TensorMirrorTest, TwoThreadsUploadingAtOnceUploadOnce) {
  for (int round = 0; round < 20; ++round) {
    Counts counts;
    const Tensor t = Tensor::FromVector<int32_t>({1, 2, 3}, {3});
    const DeviceMirrorMaker maker = FakeMaker(counts);
    std::atomic<bool> go{false};
    Status results[2];
    auto uploader = [&t, &go, &maker](Status* result) {
      while (!go.load()) {
      }
      *result = t.UploadToDevice(maker);
    };
    std::thread a(uploader, &results[0]);
    std::thread b(uploader, &results[1]);
    go = true;
    a.join();
    b.join();
    EXPECT_TRUE(results[0].ok() && results[1].ok());
    EXPECT_EQ(counts.made, 1);
    EXPECT_EQ(counts.to_device, 1);
  }
}

TEST(TensorMirrorTest, OnDeviceChecksTheMirrorAndTheShape) {
  Counts counts;
  StatusOr<Tensor> small = Tensor::OnDevice(DType::kFloat32, {3}, MirrorOf({1, 2}, counts));
  ASSERT_FALSE(small.ok());
  EXPECT_EQ(small.status().message(),
            "a device copy of 8 bytes cannot hold a float32 tensor of shape [3] (12 bytes)");
  EXPECT_FALSE(Tensor::OnDevice(DType::kFloat32, {2}, nullptr).ok());
  StatusOr<Tensor> negative = Tensor::OnDevice(DType::kFloat32, {-1}, MirrorOf({1}, counts));
  ASSERT_FALSE(negative.ok());
  EXPECT_EQ(negative.status().code(), StatusCode::kInvalid);
  EXPECT_FALSE(Tensor::OnDevice(DType::kComplex64, {1}, MirrorOf({1, 2}, counts)).ok());
  EXPECT_EQ(counts.alive, 0);  // refused mirrors are freed
}

TEST(TensorMirrorTest, EmptyDeviceTensor) {
  Counts counts;
  const Tensor t = OnFakeDevice({}, {0, 3}, counts);
  EXPECT_EQ(t.numel(), 0);
  EXPECT_NE(t.raw(), nullptr);
  EXPECT_TRUE(t.ToHost().bytes.empty());
  EXPECT_TRUE(t.BitwiseEqual(Tensor::FromVector<float>({}, {0, 3})));
}

TEST(TensorMirrorTest, AFailedUploadLeavesTheTensorOnTheHost) {
  const Tensor t = Tensor::FromVector<float>({1}, {1});
  const Status refused = t.UploadToDevice([](size_t) -> StatusOr<std::unique_ptr<DeviceMirror>> {
    return Status(StatusCode::kInternal, Location{}, "out of device memory");
  });
  EXPECT_EQ(refused.message(), "out of device memory");
  EXPECT_FALSE(t.device_current());
  EXPECT_TRUE(Tensor().UploadToDevice(nullptr).code() == StatusCode::kInvalid);
}

// raw() cannot return a Status: a failed copy back leaves zeros on the host and waits as the
// pending device fault (device_fault.h), the first of several, until something reports it.
TEST(TensorMirrorTest, AFailedCopyBackIsAStatusOrThePendingDeviceFault) {
  ASSERT_TRUE(TakeDeviceFault().ok());
  Counts counts;
  std::unique_ptr<FakeMirror> mirror = MirrorOf({1, 2}, counts);
  mirror->fail_copy_back = true;
  StatusOr<Tensor> t = Tensor::OnDevice(DType::kFloat32, {2}, std::move(mirror));
  ASSERT_TRUE(t.ok());
  const Status synced = t->SyncToHost();
  EXPECT_EQ(synced.message(), "fake device lost");
  EXPECT_FALSE(t->host_current());
  EXPECT_TRUE(TakeDeviceFault().ok());  // SyncToHost reported it itself

  const Tensor& read_only = *t;
  const float* host = static_cast<const float*>(read_only.raw());
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host[0], 0.0f);
  EXPECT_EQ(host[1], 0.0f);
  EXPECT_TRUE(t->host_current());
  EXPECT_FALSE(t->device_current());  // the failed device copy is gone

  std::unique_ptr<FakeMirror> second = MirrorOf({3}, counts);
  second->fail_copy_back = true;
  StatusOr<Tensor> u = Tensor::OnDevice(DType::kFloat32, {1}, std::move(second));
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->data<float>()[0], 0.0f);  // a write access falls back alike

  const Status fault = TakeDeviceFault();
  EXPECT_EQ(fault.code(), StatusCode::kInternal);
  EXPECT_EQ(fault.message(), "fake device lost");
  ASSERT_FALSE(fault.diagnostic().notes.empty());
  EXPECT_EQ(fault.diagnostic().notes.back(),
            "copying a device-resident tensor back for a host read");
  EXPECT_TRUE(TakeDeviceFault().ok());  // taken once
}

}  // namespace
}  // namespace irm::rt
