// Tests of full, full_like, full_int_array and assign_value (creation.cc) for every dtype: values
// stated here by the conversion rules (truncate, saturate, wrap; float values chosen exact in
// every float dtype), the agreement of a constant with the cast of its float64 twin, and the
// errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "reference_runtime/kernels/data_kernels.h"
#include "reference_runtime/kernels/data_test_support.h"

namespace irm::rt {
namespace {

using testing::Attrs;
using testing::ExpectClose;
using testing::ExpectKernelError;
using testing::NumelOf;
using testing::RandomTensor;
using testing::RunKernel;
using testing::ToDoubles;

using Shape = std::vector<int64_t>;

// The value a dtype holds for v when v is exact in every float dtype (or not a float target).
double Held(double v, DType dtype) {
  switch (dtype) {
    case DType::kBool:
      return v != 0 ? 1 : 0;
    case DType::kInt8:
      return std::clamp(std::trunc(v), -128.0, 127.0);
    case DType::kUInt8:
      return std::clamp(std::trunc(v), 0.0, 255.0);
    case DType::kInt16:
      return std::clamp(std::trunc(v), -32768.0, 32767.0);
    case DType::kInt32:
      return std::clamp(std::trunc(v), -2147483648.0, 2147483647.0);
    case DType::kInt64:
      return std::trunc(v);
    default:
      return v;
  }
}

TEST(FullTest, FillsTheShapeForEveryDType) {
  for (DType dtype : data::kEveryDType) {
    for (const Shape& shape : std::vector<Shape>{{}, {0}, {2, 3}, {1, 1, 4}}) {
      for (double value : {-3.5, 2.75, 0.0, 384.0, -0.5}) {
        SCOPED_TRACE(std::string(DTypeName(dtype)) + ShapeToString(shape) + " value " +
                     std::to_string(value));
        std::vector<Tensor> out = RunKernel(
            "full", dtype, {}, Attrs({{"shape", shape}, {"value", value}, {"dtype", dtype}}), 1);
        EXPECT_EQ(out[0].dtype(), dtype);
        ExpectClose(out[0],
                    std::vector<double>(static_cast<size_t>(NumelOf(shape)), Held(value, dtype)),
                    shape, 0.0, "out");
      }
    }
  }
}

TEST(FullTest, AgreesWithCastOfTheFloat64Constant) {
  const double kNaN = std::numeric_limits<double>::quiet_NaN();
  const double kInf = std::numeric_limits<double>::infinity();
  for (double value : {0.1, -1e10, 1e10, 65519.99, kNaN, -kInf, 1 + std::ldexp(1.0, -11) + 1e-12}) {
    std::vector<Tensor> f64 =
        RunKernel("full", DType::kFloat64, {},
                  Attrs({{"shape", Shape{2}}, {"value", value}, {"dtype", DType::kFloat64}}), 1);
    for (DType dtype : data::kEveryDType) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " value " + std::to_string(value));
      std::vector<Tensor> direct = RunKernel(
          "full", dtype, {}, Attrs({{"shape", Shape{2}}, {"value", value}, {"dtype", dtype}}), 1);
      std::vector<Tensor> cast =
          RunKernel("cast", DType::kFloat64, {&f64[0]}, Attrs({{"dtype", dtype}}), 1);
      EXPECT_TRUE(direct[0].BitwiseEqual(cast[0]));
    }
  }
}

TEST(FullTest, KeepsInt64ValuesExactAndIgnoresTheInPlaceOperand) {
  const int64_t big = (int64_t{1} << 53) + 1;  // not a float64
  const Tensor output = RandomTensor(DType::kInt64, {5}, 1);
  std::vector<Tensor> out =
      RunKernel("full", DType::kInt64, {&output},
                Attrs({{"shape", Shape{2}}, {"value", big}, {"dtype", DType::kInt64}}), 1);
  ASSERT_EQ(out[0].shape(), Shape{2});
  EXPECT_EQ(out[0].data<int64_t>()[0], big);
  EXPECT_EQ(out[0].data<int64_t>()[1], big);
  std::vector<Tensor> from_bool =
      RunKernel("full", DType::kFloat32, {},
                Attrs({{"shape", Shape{1}}, {"value", true}, {"dtype", DType::kFloat32}}), 1);
  EXPECT_EQ(from_bool[0].data<float>()[0], 1.0f);
}

TEST(FullTest, RejectsAnotherDTypeAndBadShapes) {
  ExpectKernelError("full", DType::kFloat32, {},
                    Attrs({{"shape", Shape{2}}, {"value", 1.0}, {"dtype", DType::kInt64}}), 1,
                    "full: the dtype attribute says int64 but the float32 kernel was called");
  ExpectKernelError(
      "full", DType::kFloat32, {},
      Attrs({{"shape", Shape{2, -1}}, {"value", 1.0}, {"dtype", DType::kFloat32}}), 1,
      "full: shape [2, -1] is not a valid tensor shape (a negative dim, or too large)");
  ExpectKernelError("full", DType::kFloat32, {},
                    Attrs({{"shape", Shape{2}}, {"dtype", DType::kFloat32}}), 1,
                    "attribute 'value' is missing");
  ExpectKernelError("full", DType::kFloat32, {},
                    Attrs({{"shape", Shape{2}}, {"value", 1.0}, {"dtype", DType::kComplex64}}), 1,
                    "full: dtype complex64 is not a dtype the runtime computes with");
}

TEST(FullLikeTest, TakesXsShapeAndTheDTypeAttributeOrXs) {
  for (DType dtype : data::kEveryDType) {
    for (const Shape& shape : std::vector<Shape>{{}, {2, 3}, {0, 4}}) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + ShapeToString(shape));
      const Tensor x = RandomTensor(DType::kFloat32, shape, 1);
      std::vector<Tensor> out =
          RunKernel("full_like", dtype, {&x}, Attrs({{"value", 7.75}, {"dtype", dtype}}), 1);
      EXPECT_EQ(out[0].dtype(), dtype);
      const std::vector<double> expected(static_cast<size_t>(NumelOf(shape)), Held(7.75, dtype));
      ExpectClose(out[0], expected, shape, 0.0, "out");
      const Tensor same = RandomTensor(dtype, shape, 2, 0.0, 2.0);
      std::vector<Tensor> like =
          RunKernel("full_like", dtype, {&same}, Attrs({{"value", 7.75}}), 1);
      EXPECT_EQ(like[0].dtype(), dtype);
      ExpectClose(like[0], expected, shape, 0.0, "out (x's dtype)");
    }
  }
}

TEST(FullLikeTest, RejectsAKernelOfAnotherDType) {
  const Tensor x = RandomTensor(DType::kInt64, {2}, 1);
  ExpectKernelError("full_like", DType::kFloat32, {&x},
                    Attrs({{"value", 1.0}, {"dtype", DType::kInt32}}), 1,
                    "full_like: the dtype attribute says int32 but the float32 kernel was called");
  ExpectKernelError("full_like", DType::kFloat32, {&x}, Attrs({{"value", 1.0}}), 1,
                    "full_like: x's dtype (no dtype attribute) says int64 but the float32 kernel "
                    "was called");
}

TEST(FullIntArrayTest, HoldsTheValuesConvertedToTheDType) {
  const std::vector<int64_t> values = {3, -1, 300, 0};
  for (DType dtype : data::kEveryDType) {
    SCOPED_TRACE(DTypeName(dtype));
    std::vector<Tensor> out =
        RunKernel("full_int_array", dtype, {}, Attrs({{"value", values}, {"dtype", dtype}}), 1);
    // Integers wrap modulo 2^bits; every value is exact in every float dtype.
    std::vector<double> expected;
    for (int64_t v : values) {
      double e = static_cast<double>(v);
      if (dtype == DType::kBool) e = v != 0 ? 1 : 0;
      if (dtype == DType::kInt8) e = v == 300 ? 44 : e;
      if (dtype == DType::kUInt8) e = v == 300 ? 44 : v == -1 ? 255 : e;
      expected.push_back(e);
    }
    EXPECT_EQ(out[0].dtype(), dtype);
    ExpectClose(out[0], expected, {4}, 0.0, "out");
  }
  std::vector<Tensor> empty =
      RunKernel("full_int_array", DType::kInt64, {},
                Attrs({{"value", std::vector<int64_t>{}}, {"dtype", DType::kInt64}}), 1);
  EXPECT_EQ(empty[0].shape(), Shape{0});
  ExpectKernelError(
      "full_int_array", DType::kInt32, {}, Attrs({{"value", values}, {"dtype", DType::kInt64}}), 1,
      "full_int_array: the dtype attribute says int64 but the int32 kernel was called");
}

TEST(AssignValueTest, HoldsTheValuesInCOrderForEveryDType) {
  const std::vector<double> values = {1.5, -2.0, 0.0, 320.0, -0.5, 7.25};
  for (DType dtype : data::kEveryDType) {
    for (const Shape& shape : std::vector<Shape>{{2, 3}, {6}, {1, 6, 1}}) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + ShapeToString(shape));
      std::vector<Tensor> out =
          RunKernel("assign_value", dtype, {},
                    Attrs({{"shape", shape}, {"dtype", dtype}, {"values", values}}), 1);
      std::vector<double> expected;
      for (double v : values) expected.push_back(Held(v, dtype));
      EXPECT_EQ(out[0].dtype(), dtype);
      ExpectClose(out[0], expected, shape, 0.0, "out");
    }
  }
  std::vector<Tensor> scalar = RunKernel(
      "assign_value", DType::kFloat32, {},
      Attrs({{"shape", Shape{}}, {"dtype", DType::kFloat32}, {"values", std::vector<double>{2.5}}}),
      1);
  ExpectClose(scalar[0], {2.5}, {}, 0.0, "0-D out");
}

TEST(AssignValueTest, KeepsIntValuesExactAndIgnoresTheInPlaceOperand) {
  const int64_t big = (int64_t{1} << 53) + 1;
  const Tensor output = RandomTensor(DType::kInt64, {2}, 1);
  std::vector<Tensor> out = RunKernel("assign_value", DType::kInt64, {&output},
                                      Attrs({{"shape", Shape{2}},
                                             {"dtype", DType::kInt64},
                                             {"values", std::vector<int64_t>{big, -big}}}),
                                      1);
  EXPECT_EQ(out[0].data<int64_t>()[0], big);
  EXPECT_EQ(out[0].data<int64_t>()[1], -big);
}

TEST(AssignValueTest, RejectsACountThatIsNotTheShapes) {
  ExpectKernelError("assign_value", DType::kFloat32, {},
                    Attrs({{"shape", Shape{2, 3}},
                           {"dtype", DType::kFloat32},
                           {"values", std::vector<double>{1, 2, 3, 4, 5}}}),
                    1, "assign_value: 5 values for shape [2, 3] (6 elements)");
  ExpectKernelError("assign_value", DType::kFloat32, {},
                    Attrs({{"shape", Shape{1}}, {"dtype", DType::kFloat32}, {"values", 1.0}}), 1,
                    "attribute 'values' is a float, not a float array");
  ExpectKernelError(
      "assign_value", DType::kInt8, {},
      Attrs({{"shape", Shape{1}}, {"dtype", DType::kFloat32}, {"values", std::vector<double>{1}}}),
      1, "assign_value: the dtype attribute says float32 but the int8 kernel was called");
}

}  // namespace
}  // namespace irm::rt
