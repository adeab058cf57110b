// The registry on its own (a local registry with test kernels): registration, look-up misses that
// say what exists, the signature check, attribute access.
#include "reference_runtime/kernel.h"

#include <gtest/gtest.h>

#include "reference_runtime/kernels/register.h"

namespace irm::rt {
namespace {

template <typename T>
struct Negate {
  static Status Run(KernelCall& call) {
    const Tensor& x = call.input(0);
    Tensor out = Tensor::ZerosUnchecked(x.dtype(), x.shape());
    for (int64_t i = 0; i < x.numel(); ++i) out.data<T>()[i] = -x.data<T>()[i];
    call.SetOutput(0, std::move(out));
    return Status::Ok();
  }
};

TEST(KernelRegistryTest, RegistersAndRunsByNameDTypeAndDevice) {
  KernelRegistry r;
  ASSERT_TRUE((RegisterForTypes<Negate, float, double>(r, "negate", {1, 1, 1})).ok());
  EXPECT_EQ((RegisterForTypes<Negate, float>(r, "negate", {1, 1, 1})).message(),
            "kernel 'negate' for float32 on cpu is registered twice");
  Tensor x = Tensor::FromVector<double>({1, -2}, {2});
  Tensor out;
  KernelCall call{.inputs = {&x}, .outputs = {&out}, .attrs = {}, .context = {}};
  ASSERT_TRUE(r.Run("negate", DType::kFloat64, call).ok());
  EXPECT_EQ(out.data<double>()[1], 2.0);
  EXPECT_EQ(r.Names(), std::vector<std::string>{"negate"});
  EXPECT_EQ(r.Lookup("negate", DType::kInt32, Device::kCpu).status().message(),
            "kernel 'negate' has no int32 version on cpu (it has: float32, float64)");
  EXPECT_EQ(r.Lookup("nope", DType::kInt32, Device::kCpu).status().message(),
            "there is no kernel 'nope' on cpu");
  KernelCall wrong{.inputs = {&x, &x}, .outputs = {&out}, .attrs = {}, .context = {}};
  EXPECT_EQ(r.Run("negate", DType::kFloat64, wrong).message(),
            "kernel 'negate' takes 1 inputs, got 2");
}

TEST(KernelRegistryTest, AttributesAreTyped) {
  KernelAttrs attrs;
  attrs.Set("axis", int64_t{-1});
  attrs.Set("perm", std::vector<int64_t>{1, 0});
  EXPECT_EQ(attrs.Get<int64_t>("axis").value(), -1);
  EXPECT_EQ(attrs.Get<double>("axis").status().message(),
            "attribute 'axis' is an int, not a float");
  EXPECT_EQ(attrs.Get<bool>("keepdim").status().message(), "attribute 'keepdim' is missing");
  EXPECT_EQ(attrs.GetOr<bool>("keepdim", true).value(), true);
  EXPECT_EQ(attrs.Get<std::vector<int64_t>>("perm").value(), (std::vector<int64_t>{1, 0}));
}

TEST(KernelRegistryTest, EveryKernelFamilyRegistersIntoAFreshRegistry) {
  // KernelRegistry::Global() stops the process on a failed registration (builtin_registry.h);
  // here the first failure is an ordinary test failure with its message.
  KernelRegistry r;
  const Status status = RegisterAllKernels(r);
  EXPECT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(r.Names(), KernelRegistry::Global().Names());
}

TEST(KernelRegistryTest, ACopyOfAttributesIsIndependentOfItsOriginal) {
  KernelAttrs bound;
  bound.Set("scale", 2.0);
  KernelAttrs step = bound;  // shares the table until one of them changes
  step.Set("scale", 3.0);
  step.Set("bias", 1.0);
  EXPECT_EQ(bound.Get<double>("scale").value(), 2.0);
  EXPECT_FALSE(bound.Has("bias"));
  EXPECT_EQ(step.Get<double>("scale").value(), 3.0);
  bound.Set("axis", int64_t{0});
  EXPECT_FALSE(step.Has("axis"));
  EXPECT_TRUE(KernelAttrs().values().empty());
}

TEST(KernelRegistryTest, ABoundKernelRunsAsTheRegistryDoes) {
  KernelRegistry r;
  ASSERT_TRUE((RegisterForTypes<Negate, float>(r, "negate", {1, 1, 1})).ok());
  const BoundKernel negate(r, "negate");
  Tensor x = Tensor::FromVector<float>({1, -2}, {2});
  Tensor out;
  KernelCall call{.inputs = {&x}, .outputs = {&out}, .attrs = {}, .context = {}};
  ASSERT_TRUE(negate.Run(DType::kFloat32, call).ok());
  EXPECT_EQ(out.data<float>()[1], 2.0f);
  // The same errors as an unbound call: a dtype without a kernel, a call the signature refuses.
  EXPECT_EQ(negate.Run(DType::kInt32, call).message(),
            "kernel 'negate' has no int32 version on cpu (it has: float32)");
  KernelCall wrong{.inputs = {&x, &x}, .outputs = {&out}, .attrs = {}, .context = {}};
  EXPECT_EQ(negate.Run(DType::kFloat32, wrong).message(), "kernel 'negate' takes 1 inputs, got 2");
  // A kernel registered after binding is still found, through the registry.
  const BoundKernel later(r, "negate_later");
  ASSERT_TRUE((RegisterForTypes<Negate, float>(r, "negate_later", {1, 1, 1})).ok());
  EXPECT_TRUE(later.Run(DType::kFloat32, call).ok());
}

}  // namespace
}  // namespace irm::rt
