// Tests of set_value, set_value_with_tensor and set_value_with_tensor_grad (set_value.cc) against
// a naive float64 reference written here from Paddle's slice rules (index lists per axis, as
// Python's range), for every dtype the forwards serve; the grad also against central differences;
// and the exact message of every error.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "reference_runtime/kernels/data_test_support.h"

namespace irm::rt {
namespace {

using testing::Attrs;
using testing::DataInput;
using testing::ExpectClose;
using testing::ExpectFiniteDifferenceGrad;
using testing::ExpectKernelError;
using testing::FlatIndex;
using testing::ForEachIndex;
using testing::FromDoubles;
using testing::NumelOf;
using testing::RandomTensor;
using testing::RunKernel;
using testing::ToDoubles;

using Shape = std::vector<int64_t>;

struct Case {
  Shape x, axes, starts, ends, steps, decrease, none, values;
};

const std::vector<Case> kCases = {
    // Two axes, a negative start, an end past the dim, a step of 2.
    {{4, 5}, {0, 1}, {1, -4}, {3, 100}, {1, 2}, {}, {}, {2, 2}},
    // A backward walk through element 0 (end -1), with a negative start.
    {{6}, {0}, {-1}, {-1}, {-2}, {}, {}, {3}},
    // A backward walk with a negative end below -1 (counts from the end).
    {{7}, {0}, {5}, {-7}, {-1}, {}, {}, {5}},
    // A decreased axis: the values lack it.
    {{3, 4}, {0}, {1}, {2}, {1}, {0}, {}, {4}},
    // Values broadcast along the sliced axis and the leading one.
    {{2, 3, 4}, {1}, {0}, {3}, {2}, {}, {}, {4}},
    {{2, 3, 4}, {1}, {0}, {3}, {2}, {}, {}, {2, 1, 4}},
    // Size-1 dims, a negative step, a 0-D value.
    {{1, 3, 1}, {1}, {2}, {0}, {-1}, {}, {}, {}},
    // A none axis inserts a 1 into the values' shape.
    {{3, 4}, {0}, {0}, {3}, {1}, {}, {1}, {3, 1, 4}},
    // An empty slice (start == end) takes a broadcast value and changes nothing.
    {{4}, {0}, {2}, {2}, {1}, {}, {}, {1}},
    // No axes: the whole tensor; a step larger than the dim.
    {{2, 3}, {}, {}, {}, {}, {}, {}, {2, 3}},
    {{5, 2}, {0}, {1}, {5}, {10}, {}, {}, {1, 2}},
};

KernelAttrs CaseAttrs(const Case& c) {
  return Attrs({{"axes", c.axes},
                {"starts", c.starts},
                {"ends", c.ends},
                {"steps", c.steps},
                {"decrease_axes", c.decrease},
                {"none_axes", c.none}});
}

// The indices one axis walks, written as Python's range over Paddle's normalised bounds.
Shape AxisIndices(int64_t dim, int64_t start, int64_t end, int64_t step) {
  Shape out;
  if (step > 0) {
    start = std::clamp(start < 0 ? start + dim : start, int64_t{0}, dim);
    end = std::clamp(end < 0 ? end + dim : end, int64_t{0}, dim);
    for (int64_t i = start; i < end; i += step) out.push_back(i);
  } else {
    start = std::clamp(start < 0 ? start + dim : start, int64_t{0}, dim - 1);
    if (end < -1) end += dim;
    end = std::clamp(end, int64_t{-1}, dim);
    for (int64_t i = start; i > end; i += step) out.push_back(i);
  }
  return out;
}

// Per dim of x, the indices of the slice.
std::vector<Shape> SliceIndices(const Case& c) {
  std::vector<Shape> lists;
  for (int64_t d : c.x) {
    Shape all(static_cast<size_t>(d));
    for (int64_t i = 0; i < d; ++i) all[static_cast<size_t>(i)] = i;
    lists.push_back(all);
  }
  for (size_t i = 0; i < c.axes.size(); ++i) {
    const size_t a = static_cast<size_t>(c.axes[i] < 0 ? c.axes[i] + std::ssize(c.x) : c.axes[i]);
    lists[a] = AxisIndices(c.x[a], c.starts[i], c.ends[i], c.steps[i]);
  }
  return lists;
}

// The slice index j (one entry per dim of x) as an index of the values' shape: decreased dims
// dropped, a 0 for every none axis (at its place among the slice's dims), right-aligned against
// the values' rank and 0 where the values have a 1.
Shape ValueIndex(const Case& c, const Shape& j) {
  Shape full;
  for (size_t k = 0; k <= j.size(); ++k) {
    for (int64_t n : c.none) {
      if (n == static_cast<int64_t>(k) || (k == j.size() && n > static_cast<int64_t>(k))) {
        full.push_back(0);
      }
    }
    if (k == j.size()) break;
    if (std::find(c.decrease.begin(), c.decrease.end(), static_cast<int64_t>(k)) ==
        c.decrease.end()) {
      full.push_back(j[k]);
    }
  }
  Shape v(c.values.size());
  for (size_t k = 0; k < v.size(); ++k) {
    const size_t from = full.size() - v.size() + k;
    v[k] = c.values[k] == 1 ? 0 : full[from];
  }
  return v;
}

// out = x with out[slice j] = values[ValueIndex(j)]. `hit` marks the written elements.
std::vector<double> NaiveSetValue(const Case& c, const std::vector<double>& x,
                                  const std::vector<double>& values,
                                  std::vector<bool>* hit = nullptr) {
  std::vector<double> out = x;
  if (hit) hit->assign(x.size(), false);
  const std::vector<Shape> lists = SliceIndices(c);
  Shape counts;
  for (const Shape& l : lists) counts.push_back(std::ssize(l));
  ForEachIndex(counts, [&](const Shape& j, int64_t) {
    Shape at(j.size());
    for (size_t k = 0; k < j.size(); ++k) at[k] = lists[k][static_cast<size_t>(j[k])];
    const size_t dst = static_cast<size_t>(FlatIndex(at, c.x));
    out[dst] = values[static_cast<size_t>(FlatIndex(ValueIndex(c, j), c.values))];
    if (hit) (*hit)[dst] = true;
  });
  return out;
}

const DType kForwardDTypes[] = {DType::kBool,     DType::kInt32,   DType::kInt64,  DType::kFloat16,
                                DType::kBFloat16, DType::kFloat32, DType::kFloat64};

TEST(SetValueWithTensorTest, MatchesTheNaiveReferenceForEveryDType) {
  uint64_t seed = 1;
  for (DType dtype : kForwardDTypes) {
    for (const Case& c : kCases) {
      SCOPED_TRACE(fmt::format("{} x {}", DTypeName(dtype), ShapeToString(c.x)));
      const Tensor x = DataInput(dtype, c.x, ++seed);
      const Tensor values = DataInput(dtype, c.values, ++seed);
      const std::vector<Tensor> out =
          RunKernel("set_value_with_tensor", dtype, {&x, &values}, CaseAttrs(c), 1);
      ASSERT_EQ(out.size(), 1u);
      // Only bytes move: exact.
      ExpectClose(out[0], NaiveSetValue(c, ToDoubles(x), ToDoubles(values)), c.x, 0.0, "out");
    }
  }
}

TEST(SetValueWithTensorTest, LeavesXUntouched) {
  const Case& c = kCases[0];
  const Tensor x = DataInput(DType::kFloat32, c.x, 3);
  const std::vector<double> before = ToDoubles(x);
  const Tensor values = DataInput(DType::kFloat32, c.values, 4);
  RunKernel("set_value_with_tensor", DType::kFloat32, {&x, &values}, CaseAttrs(c), 1);
  EXPECT_EQ(ToDoubles(x), before);
}

// Values exact in every forward dtype; bool gets 0/1.
std::vector<double> ConstantValues(DType dtype, int64_t n) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) {
    v.push_back(dtype == DType::kBool ? static_cast<double>(i % 2) : static_cast<double>(3 - i));
  }
  return v;
}

TEST(SetValueTest, WritesTheAttributeValuesForEveryDType) {
  uint64_t seed = 100;
  for (DType dtype : kForwardDTypes) {
    for (const Case& c : kCases) {
      SCOPED_TRACE(fmt::format("{} x {}", DTypeName(dtype), ShapeToString(c.x)));
      const Tensor x = DataInput(dtype, c.x, ++seed);
      const std::vector<double> values = ConstantValues(dtype, NumelOf(c.values));
      KernelAttrs attrs = CaseAttrs(c);
      attrs.Set("shape", c.values);
      attrs.Set("values", values);
      const std::vector<Tensor> out = RunKernel("set_value", dtype, {&x}, attrs, 1);
      ASSERT_EQ(out.size(), 1u);
      ExpectClose(out[0], NaiveSetValue(c, ToDoubles(x), values), c.x, 0.0, "out");
    }
  }
}

TEST(SetValueTest, ValuesAreCastToXsDTypeAndIntsStayExact) {
  // [4] slice 1:3 of float32 and int64; 2.75 truncates to 2 in int64 (cast's rules).
  const Case c{{4}, {0}, {1}, {3}, {1}, {}, {}, {2}};
  KernelAttrs attrs = CaseAttrs(c);
  attrs.Set("shape", Shape{2});
  attrs.Set("values", std::vector<double>{2.75, -1.0});
  const Tensor xf = FromDoubles({0, 0, 0, 0}, {4}, DType::kFloat32);
  ExpectClose(RunKernel("set_value", DType::kFloat32, {&xf}, attrs, 1).at(0), {0, 2.75, -1, 0}, {4},
              0.0, "float32");
  const Tensor xi = FromDoubles({0, 0, 0, 0}, {4}, DType::kInt64);
  ExpectClose(RunKernel("set_value", DType::kInt64, {&xi}, attrs, 1).at(0), {0, 2, -1, 0}, {4}, 0.0,
              "int64");
  // An int array keeps int64 values beyond 2^53 exact.
  const int64_t big = (int64_t{1} << 60) + 1;
  attrs.Set("values", std::vector<int64_t>{big, -big});
  const std::vector<Tensor> out = RunKernel("set_value", DType::kInt64, {&xi}, attrs, 1);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data<int64_t>()[1], big);
  EXPECT_EQ(out[0].data<int64_t>()[2], -big);
  EXPECT_EQ(out[0].data<int64_t>()[3], 0);
}

// ---- the grad ----------------------------------------------------------------------------------

TEST(SetValueWithTensorGradTest, MatchesTheNaiveReferenceAndFiniteDifferences) {
  uint64_t seed = 500;
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    for (const Case& c : kCases) {
      SCOPED_TRACE(fmt::format("{} x {}", DTypeName(dtype), ShapeToString(c.x)));
      const Tensor out_grad = RandomTensor(dtype, c.x, ++seed);
      const Tensor values = RandomTensor(dtype, c.values, ++seed);
      const std::vector<Tensor> grads =
          RunKernel("set_value_with_tensor_grad", dtype, {&values, &out_grad}, CaseAttrs(c), 2);
      ASSERT_EQ(grads.size(), 2u);
      const std::vector<double> w = ToDoubles(out_grad);
      // x_grad: w where the slice did not write; values_grad: the sum of w over the elements
      // each value was written to.
      std::vector<bool> hit;
      NaiveSetValue(c, w, std::vector<double>(static_cast<size_t>(NumelOf(c.values)), 0.0), &hit);
      std::vector<double> x_grad = w;
      for (size_t i = 0; i < hit.size(); ++i) {
        if (hit[i]) x_grad[i] = 0;
      }
      ExpectClose(grads[0], x_grad, c.x, 0.0, "x_grad");
      std::vector<double> values_grad(static_cast<size_t>(NumelOf(c.values)), 0.0);
      for (size_t k = 0; k < values_grad.size(); ++k) {
        std::vector<double> one(values_grad.size(), 0.0);
        one[k] = 1.0;
        std::vector<double> marker = NaiveSetValue(c, std::vector<double>(w.size(), 0.0), one);
        for (size_t i = 0; i < w.size(); ++i) values_grad[k] += marker[i] * w[i];
      }
      ExpectClose(grads[1], values_grad, c.values, testing::ToleranceFor(dtype), "values_grad");
      if (dtype == DType::kFloat64) {
        const std::vector<double> x = ToDoubles(RandomTensor(dtype, c.x, ++seed));
        const std::vector<double> v = ToDoubles(values);
        ExpectFiniteDifferenceGrad(
            [&](const std::vector<double>& p) { return NaiveSetValue(c, p, v); }, x, w, grads[0],
            c.x, "x_grad");
        ExpectFiniteDifferenceGrad(
            [&](const std::vector<double>& p) { return NaiveSetValue(c, x, p); }, v, w, grads[1],
            c.values, "values_grad");
      }
    }
  }
}

TEST(SetValueWithTensorGradTest, AnUnwantedOutputIsSkipped) {
  const Case& c = kCases[0];
  const Tensor out_grad = RandomTensor(DType::kFloat32, c.x, 7);
  const Tensor values = RandomTensor(DType::kFloat32, c.values, 8);
  KernelCall call;
  call.inputs = {&values, &out_grad};
  Tensor values_grad;
  call.outputs = {nullptr, &values_grad};
  call.attrs = CaseAttrs(c);
  ASSERT_TRUE(
      KernelRegistry::Global().Run("set_value_with_tensor_grad", DType::kFloat32, call).ok());
  EXPECT_EQ(values_grad.shape(), c.values);
}

// ---- errors ------------------------------------------------------------------------------------

TEST(SetValueTest, ErrorsNameTheProblem) {
  const Tensor x = DataInput(DType::kFloat32, {2, 3}, 9);
  const Tensor values = DataInput(DType::kFloat32, {2}, 10);
  auto attrs = [](Shape axes, Shape starts, Shape ends, Shape steps, Shape decrease = {}) {
    return Attrs({{"axes", axes},
                  {"starts", starts},
                  {"ends", ends},
                  {"steps", steps},
                  {"decrease_axes", decrease},
                  {"none_axes", Shape{}}});
  };
  const std::string k = "set_value_with_tensor";
  ExpectKernelError(k, DType::kFloat32, {&x, &values}, attrs({1}, {0}, {2}, {0}), 1,
                    "set_value_with_tensor: the step on axis 1 is 0");
  ExpectKernelError(k, DType::kFloat32, {&x, &values}, attrs({2}, {0}, {2}, {1}), 1,
                    "set_value_with_tensor: axis 2 is out of range for x float32[2, 3]");
  ExpectKernelError(k, DType::kFloat32, {&x, &values}, attrs({1, -1}, {0, 0}, {2, 2}, {1, 1}), 1,
                    "set_value_with_tensor: axis 1 appears twice in axes [1, -1]");
  ExpectKernelError(k, DType::kFloat32, {&x, &values}, attrs({1}, {0}, {2}, {}), 1,
                    "set_value_with_tensor: axes [1], starts [0], ends [2] and steps [] differ in "
                    "length");
  ExpectKernelError(k, DType::kFloat32, {&x, &values}, attrs({1}, {2}, {1}, {1}), 1,
                    "set_value_with_tensor: on axis 1 end 1 is before start 2 with step 1");
  ExpectKernelError(k, DType::kFloat32, {&x, &values}, attrs({1}, {0}, {2}, {-1}), 1,
                    "set_value_with_tensor: on axis 1 start 0 is before end 2 with step -1");
  ExpectKernelError(k, DType::kFloat32, {&x, &values}, attrs({1}, {0}, {2}, {1}, {1}), 1,
                    "set_value_with_tensor: decrease_axes 1 cannot be removed: the slice has 2 "
                    "elements there, not 1");
  ExpectKernelError(k, DType::kFloat32, {&x, &values}, attrs({1}, {0}, {3}, {1}), 1,
                    "set_value_with_tensor: values float32[2] does not broadcast to the slice's "
                    "shape [2, 3]");
  const Tensor doubles = DataInput(DType::kFloat64, {2}, 11);
  ExpectKernelError(k, DType::kFloat32, {&x, &doubles}, attrs({1}, {0}, {2}, {1}), 1,
                    "values is float64, expected float32");

  KernelAttrs constant = attrs({1}, {0}, {2}, {1});
  constant.Set("shape", Shape{3});
  constant.Set("values", std::vector<double>{1, 2});
  ExpectKernelError("set_value", DType::kFloat32, {&x}, constant, 1,
                    "set_value: 2 values for shape [3] (3 elements)");
  constant.Set("values", std::vector<int64_t>{1, 2});
  ExpectKernelError("set_value", DType::kFloat32, {&x}, constant, 1,
                    "set_value: 2 values for shape [3] (3 elements)");
  constant.Set("shape", Shape{3});
  constant.Set("values", std::vector<double>{1, 2, 3});
  ExpectKernelError("set_value", DType::kFloat32, {&x}, constant, 1,
                    "set_value: values float32[3] does not broadcast to the slice's shape [2, 2]");

  constant.Set("shape", Shape{2});
  constant.Set("values", std::vector<double>{1, 2});
  ExpectKernelError("set_value", DType::kFloat32, {&x, &values}, constant, 1,
                    "set_value: takes its values from attributes, not from a tensor");

  const Tensor out_grad = DataInput(DType::kFloat32, {2, 3}, 12);
  ExpectKernelError("set_value_with_tensor_grad", DType::kFloat32, {&values, &out_grad},
                    attrs({0}, {0}, {2}, {1}), 2,
                    "set_value_with_tensor_grad: values float32[2] does not broadcast to the "
                    "slice's shape [2, 3]");
  ExpectKernelError("set_value_with_tensor_grad", DType::kFloat32, {&values, &out_grad},
                    attrs({0}, {0}, {2}, {0}), 2,
                    "set_value_with_tensor_grad: the step on axis 0 is 0");
}

}  // namespace
}  // namespace irm::rt
