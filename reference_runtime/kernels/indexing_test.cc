// Tests of slice, embedding and tril/triu (indexing.cc) and their grads against naive float64
// references written here, for every dtype each supports; grads also against central differences.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "reference_runtime/kernels/data_kernels.h"
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
using testing::NumelOf;
using testing::RandomTensor;
using testing::RunKernel;
using testing::ToDoubles;

using Shape = std::vector<int64_t>;

const DType kFloatDTypes[] = {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64};

// ---- slice -------------------------------------------------------------------------------------

struct SliceCase {
  Shape x, axes, starts, ends, decrease, out_shape;
};

const std::vector<SliceCase> kSliceCases = {
    {{4, 5}, {0, 1}, {1, -3}, {3, 100}, {}, {2, 3}},
    {{4, 5}, {1}, {-100}, {-1}, {}, {4, 4}},
    {{3, 4, 2}, {-1, 0}, {1, 2}, {2, 3}, {0, 2}, {4}},
    {{2, 3}, {0, 1}, {1, 2}, {2, 3}, {0, 1}, {}},
    {{4}, {0}, {3}, {1}, {}, {0}},
    {{1, 3}, {0}, {0}, {1}, {}, {1, 3}},
    {{2, 3, 4}, {}, {}, {}, {}, {2, 3, 4}},
    {{5, 2}, {0}, {-2}, {5}, {}, {2, 2}},
};

KernelAttrs SliceAttrs(const SliceCase& c) {
  return Attrs({{"axes", c.axes},
                {"starts", c.starts},
                {"ends", c.ends},
                {"infer_flags", Shape(c.axes.size(), -1)},  // unknown at build time: ignored
                {"decrease_axis", c.decrease}});
}

// The naive slice: per sliced axis, start and end count from the end when negative and are
// clamped to [0, dim]; out[i] = x[start + i] over the box; decreased dims only change the shape.
std::vector<double> NaiveSlice(const std::vector<double>& x, const SliceCase& c, Shape* box,
                               Shape* start) {
  *box = c.x;
  *start = Shape(c.x.size(), 0);
  for (size_t i = 0; i < c.axes.size(); ++i) {
    const size_t a = static_cast<size_t>(c.axes[i] < 0 ? c.axes[i] + std::ssize(c.x) : c.axes[i]);
    const int64_t dim = c.x[a];
    int64_t s = c.starts[i] < 0 ? c.starts[i] + dim : c.starts[i];
    int64_t e = c.ends[i] < 0 ? c.ends[i] + dim : c.ends[i];
    s = std::min(std::max(s, int64_t{0}), dim);
    e = std::min(std::max(e, int64_t{0}), dim);
    (*start)[a] = s;
    (*box)[a] = e > s ? e - s : 0;
  }
  std::vector<double> out;
  ForEachIndex(*box, [&](const Shape& i, int64_t) {
    Shape j = i;
    for (size_t k = 0; k < j.size(); ++k) j[k] += (*start)[k];
    out.push_back(x[static_cast<size_t>(FlatIndex(j, c.x))]);
  });
  return out;
}

TEST(SliceTest, MatchesTheNaiveSliceForEveryDType) {
  for (DType dtype : data::kEveryDType) {
    for (const SliceCase& c : kSliceCases) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " " + ShapeToString(c.x) + " starts " +
                   ShapeToString(c.starts));
      const Tensor x = DataInput(dtype, c.x, 71);
      std::vector<Tensor> out = RunKernel("slice", dtype, {&x}, SliceAttrs(c), 1);
      Shape box, start;
      EXPECT_EQ(out[0].dtype(), dtype);
      ExpectClose(out[0], NaiveSlice(ToDoubles(x), c, &box, &start), c.out_shape, 0.0, "out");
    }
  }
}

TEST(SliceGradTest, PutsOutGradIntoTheSlice) {
  for (DType dtype : data::kEveryDType) {
    for (const SliceCase& c : kSliceCases) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " " + ShapeToString(c.x) + " starts " +
                   ShapeToString(c.starts));
      const Tensor input = DataInput(dtype, c.x, 72);
      const Tensor out_grad = DataInput(dtype, c.out_shape, 73);
      std::vector<Tensor> g = RunKernel("slice_grad", dtype, {&input, &out_grad}, SliceAttrs(c), 1);
      // Scatter out_grad through the naive slice's source indices.
      std::vector<double> index(static_cast<size_t>(NumelOf(c.x)));
      for (size_t i = 0; i < index.size(); ++i) index[i] = static_cast<double>(i);
      Shape box, start;
      const std::vector<double> source = NaiveSlice(index, c, &box, &start);
      const std::vector<double> og = ToDoubles(out_grad);
      std::vector<double> expected(index.size(), 0.0);
      for (size_t i = 0; i < source.size(); ++i) expected[static_cast<size_t>(source[i])] = og[i];
      EXPECT_EQ(g[0].dtype(), dtype);
      ExpectClose(g[0], expected, c.x, 0.0, "input_grad");
      if (dtype == DType::kFloat64) {
        ExpectFiniteDifferenceGrad(
            [&](const std::vector<double>& v) { return NaiveSlice(v, c, &box, &start); },
            ToDoubles(input), og, g[0], c.x, "input_grad (finite differences)");
      }
    }
  }
}

TEST(SliceGradTest, AcceptsOutGradThatKeepsTheDecreasedDims) {
  const SliceCase c = kSliceCases[2];  // out [4], box [1, 4, 1]
  const Tensor input = RandomTensor(DType::kFloat32, c.x, 1);
  const Tensor out_grad = RandomTensor(DType::kFloat32, {1, 4, 1}, 2);
  const Tensor flat = out_grad.Clone().Reshaped({4}).value();
  std::vector<Tensor> kept =
      RunKernel("slice_grad", DType::kFloat32, {&input, &out_grad}, SliceAttrs(c), 1);
  std::vector<Tensor> decreased =
      RunKernel("slice_grad", DType::kFloat32, {&input, &flat}, SliceAttrs(c), 1);
  EXPECT_TRUE(kept[0].BitwiseEqual(decreased[0]));
}

TEST(SliceTest, RejectsBadAxesAndDecreases) {
  const Tensor x = RandomTensor(DType::kFloat32, {2, 3}, 1);
  auto expect = [&](Shape axes, Shape starts, Shape ends, Shape decrease,
                    const std::string& message) {
    ExpectKernelError(
        "slice", DType::kFloat32, {&x},
        Attrs({{"axes", axes}, {"starts", starts}, {"ends", ends}, {"decrease_axis", decrease}}), 1,
        message);
  };
  expect({0, 1}, {0}, {1, 2}, {},
         "slice: axes [0, 1], starts [0] and ends [1, 2] differ in length");
  expect({2}, {0}, {1}, {}, "slice: axis 2 is out of range for input float32[2, 3]");
  expect({1, -1}, {0, 0}, {1, 1}, {}, "slice: axis 1 appears twice in axes [1, -1]");
  expect({1}, {0}, {2}, {1},
         "slice: decrease_axis 1 cannot be removed: the slice has 2 elements there, not 1");
  expect({0}, {0}, {1}, {3}, "slice: decrease_axis 3 is out of range for input float32[2, 3]");
  expect({0}, {0}, {1}, {0, 0}, "slice: axis 0 appears twice in decrease_axis [0, 0]");
  const Tensor out_grad = RandomTensor(DType::kFloat32, {2, 2}, 2);
  ExpectKernelError("slice_grad", DType::kFloat32, {&x, &out_grad},
                    Attrs({{"axes", Shape{1}}, {"starts", Shape{0}}, {"ends", Shape{3}}}), 1,
                    "slice_grad: out_grad float32[2, 2] does not have the slice's shape [2, 3]");
}

// ---- embedding ---------------------------------------------------------------------------------

// Ids in [0, rows) of dtype int32 or int64.
Tensor Ids(DType dtype, const Shape& shape, int64_t rows, uint64_t seed) {
  return RandomTensor(dtype, shape, seed, 0.0, static_cast<double>(rows));
}

std::vector<double> NaiveEmbedding(const std::vector<double>& ids, const std::vector<double>& w,
                                   int64_t width, int64_t padding_idx) {
  std::vector<double> out;
  for (double id : ids) {
    for (int64_t j = 0; j < width; ++j) {
      out.push_back(static_cast<int64_t>(id) == padding_idx
                        ? 0.0
                        : w[static_cast<size_t>(static_cast<int64_t>(id) * width + j)]);
    }
  }
  return out;
}

TEST(EmbeddingTest, GathersRowsForEveryDType) {
  for (DType dtype : data::kEveryDType) {
    for (DType id_dtype : {DType::kInt32, DType::kInt64}) {
      for (const Shape& shape : std::vector<Shape>{{6}, {2, 3}, {}, {1, 1}, {0}}) {
        for (int64_t padding_idx : {int64_t{-1}, int64_t{2}}) {
          SCOPED_TRACE(std::string(DTypeName(dtype)) + " ids " + DTypeName(id_dtype) +
                       ShapeToString(shape) + " padding " + std::to_string(padding_idx));
          const Tensor x = Ids(id_dtype, shape, 5, 81);
          const Tensor weight = DataInput(dtype, {5, 3}, 82);
          std::vector<Tensor> out = RunKernel("embedding", dtype, {&x, &weight},
                                              Attrs({{"padding_idx", padding_idx}}), 1);
          Shape out_shape = shape;
          out_shape.push_back(3);
          EXPECT_EQ(out[0].dtype(), dtype);
          ExpectClose(out[0], NaiveEmbedding(ToDoubles(x), ToDoubles(weight), 3, padding_idx),
                      out_shape, 0.0, "out");
        }
      }
    }
  }
}

// The naive gradient: row r of weight_grad sums the out_grad rows whose id is r.
std::vector<double> NaiveEmbeddingGrad(const std::vector<double>& ids,
                                       const std::vector<double>& og, int64_t rows, int64_t width,
                                       int64_t padding_idx) {
  std::vector<double> g(static_cast<size_t>(rows * width), 0.0);
  for (size_t i = 0; i < ids.size(); ++i) {
    const auto id = static_cast<int64_t>(ids[i]);
    if (id == padding_idx) continue;
    for (int64_t j = 0; j < width; ++j) {
      g[static_cast<size_t>(id * width + j)] +=
          og[i * static_cast<size_t>(width) + static_cast<size_t>(j)];
    }
  }
  return g;
}

TEST(EmbeddingGradTest, SumsTheRowsOfEachId) {
  for (DType dtype : kFloatDTypes) {
    for (const Shape& shape : std::vector<Shape>{{12}, {3, 4}, {}, {1}}) {
      for (int64_t padding_idx : {int64_t{-1}, int64_t{1}}) {
        SCOPED_TRACE(std::string(DTypeName(dtype)) + ShapeToString(shape) + " padding " +
                     std::to_string(padding_idx));
        const Tensor x = Ids(DType::kInt64, shape, 4, 83);
        const Tensor weight = RandomTensor(dtype, {4, 3}, 84);
        Shape out_shape = shape;
        out_shape.push_back(3);
        const Tensor out_grad = RandomTensor(dtype, out_shape, 85);
        std::vector<Tensor> g = RunKernel("embedding_grad", dtype, {&x, &weight, &out_grad},
                                          Attrs({{"padding_idx", padding_idx}}), 1);
        EXPECT_EQ(g[0].dtype(), dtype);
        ExpectClose(g[0], NaiveEmbeddingGrad(ToDoubles(x), ToDoubles(out_grad), 4, 3, padding_idx),
                    {4, 3}, testing::ToleranceFor(dtype), "weight_grad");
        if (dtype == DType::kFloat64) {
          ExpectFiniteDifferenceGrad(
              [&](const std::vector<double>& w) {
                return NaiveEmbedding(ToDoubles(x), w, 3, padding_idx);
              },
              ToDoubles(weight), ToDoubles(out_grad), g[0], {4, 3},
              "weight_grad (finite differences)");
        }
      }
    }
  }
}

TEST(EmbeddingGradTest, AddsInTheOrderTheIdsAppear) {
  // (1e8 + -1e8) + 1 = 1 in float32; any other order gives 0.
  const Tensor x = Tensor::FromVector<int32_t>({0, 0, 0}, {3});
  const Tensor weight = Tensor::ZerosUnchecked(DType::kFloat32, {1, 1});
  const Tensor out_grad = Tensor::FromVector<float>({1e8f, -1e8f, 1.0f}, {3, 1});
  std::vector<Tensor> g =
      RunKernel("embedding_grad", DType::kFloat32, {&x, &weight, &out_grad}, {}, 1);
  EXPECT_EQ(g[0].data<float>()[0], 1.0f);
}

TEST(EmbeddingTest, RejectsBadIdsAndTables) {
  const Tensor weight = RandomTensor(DType::kFloat32, {5, 4}, 1);
  const Tensor out_of_range = Tensor::FromVector<int64_t>({0, 4, 1, 7}, {2, 2});
  const Tensor negative = Tensor::FromVector<int32_t>({-1}, {1});
  const Tensor float_ids = RandomTensor(DType::kFloat32, {2}, 2);
  const Tensor ids = Tensor::FromVector<int64_t>({0, 1}, {2});
  const Tensor flat_weight = RandomTensor(DType::kFloat32, {5}, 3);
  ExpectKernelError("embedding", DType::kFloat32, {&out_of_range, &weight}, {}, 1,
                    "embedding: x[3] = 7 is outside [0, 5), the rows of weight float32[5, 4]");
  ExpectKernelError("embedding", DType::kFloat32, {&negative, &weight}, {}, 1,
                    "embedding: x[0] = -1 is outside [0, 5), the rows of weight float32[5, 4]");
  ExpectKernelError("embedding", DType::kFloat32, {&float_ids, &weight}, {}, 1,
                    "embedding: ids x must be int32 or int64, not float32");
  ExpectKernelError("embedding", DType::kFloat32, {&ids, &flat_weight}, {}, 1,
                    "embedding: weight float32[5] must be 2-D [rows, width]");
  ExpectKernelError("embedding", DType::kFloat32, {&ids, &weight},
                    Attrs({{"padding_idx", int64_t{5}}}), 1,
                    "embedding: padding_idx 5 is outside [0, 5) and is not -1 (none)");
  const Tensor out_grad = RandomTensor(DType::kFloat32, {2, 3}, 4);
  ExpectKernelError("embedding_grad", DType::kFloat32, {&ids, &weight, &out_grad}, {}, 1,
                    "embedding_grad: out_grad float32[2, 3] should be float32[2, 4] (x's shape, "
                    "then the width of weight float32[5, 4])");
  ExpectKernelError("embedding_grad", DType::kFloat32, {&out_of_range, &weight, &out_grad}, {}, 1,
                    "embedding_grad: x[3] = 7 is outside [0, 5), the rows of weight float32[5, 4]");
}

// ---- tril / triu -------------------------------------------------------------------------------

// Keeps (i, j) of every matrix of the last two dims when j - i <= diagonal (lower) or >= (upper).
std::vector<double> NaiveTriangle(const std::vector<double>& x, const Shape& shape,
                                  int64_t diagonal, bool lower) {
  std::vector<double> out(x.size());
  ForEachIndex(shape, [&](const Shape& idx, int64_t flat) {
    const int64_t i = idx[idx.size() - 2], j = idx[idx.size() - 1];
    // Compared in double: the test's diagonals reach the int64 limits.
    const double d = static_cast<double>(j) - static_cast<double>(i);
    const bool keep =
        lower ? d <= static_cast<double>(diagonal) : d >= static_cast<double>(diagonal);
    out[static_cast<size_t>(flat)] = keep ? x[static_cast<size_t>(flat)] : 0.0;
  });
  return out;
}

const std::vector<Shape> kMatrixShapes = {{3, 4}, {2, 3, 3}, {1, 1},
                                          {4, 2}, {2, 0, 3}, {2, 1, 2, 5}};
const std::vector<int64_t> kDiagonals = {
    -1, 0, 1, 5, -10, std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};

TEST(TriangleTest, TrilAndTriuMatchTheNaiveMaskForEveryDType) {
  for (DType dtype : data::kEveryDType) {
    for (const Shape& shape : kMatrixShapes) {
      for (int64_t diagonal : kDiagonals) {
        for (bool lower : {true, false}) {
          const char* name = lower ? "tril" : "triu";
          SCOPED_TRACE(std::string(name) + " " + DTypeName(dtype) + ShapeToString(shape) +
                       " diagonal " + std::to_string(diagonal));
          const Tensor x = DataInput(dtype, shape, 91);
          std::vector<Tensor> out =
              RunKernel(name, dtype, {&x}, Attrs({{"diagonal", diagonal}}), 1);
          EXPECT_EQ(out[0].dtype(), dtype);
          ExpectClose(out[0], NaiveTriangle(ToDoubles(x), shape, diagonal, lower), shape, 0.0,
                      "out");
          const std::string grad_name = std::string(name) + "_grad";
          std::vector<Tensor> g =
              RunKernel(grad_name, dtype, {&x}, Attrs({{"diagonal", diagonal}}), 1);
          ExpectClose(g[0], NaiveTriangle(ToDoubles(x), shape, diagonal, lower), shape, 0.0,
                      "x_grad");
          if (dtype == DType::kFloat64) {
            const Tensor w = RandomTensor(dtype, shape, 92);
            std::vector<Tensor> gw =
                RunKernel(grad_name, dtype, {&w}, Attrs({{"diagonal", diagonal}}), 1);
            ExpectFiniteDifferenceGrad(
                [&](const std::vector<double>& v) {
                  return NaiveTriangle(v, shape, diagonal, lower);
                },
                ToDoubles(RandomTensor(dtype, shape, 93)), ToDoubles(w), gw[0], shape,
                "x_grad (finite differences)");
          }
        }
      }
    }
  }
}

TEST(TriangleTest, ForwardDiagonalDefaultsToZero) {
  const Tensor x = RandomTensor(DType::kFloat32, {3, 3}, 1);
  std::vector<Tensor> out = RunKernel("tril", DType::kFloat32, {&x}, {}, 1);
  ExpectClose(out[0], NaiveTriangle(ToDoubles(x), {3, 3}, 0, true), {3, 3}, 0.0, "out");
  ExpectKernelError("tril_grad", DType::kFloat32, {&x}, {}, 1, "attribute 'diagonal' is missing");
}

TEST(TriangleTest, RejectsFewerThanTwoDims) {
  const Tensor v = RandomTensor(DType::kFloat32, {3}, 1);
  ExpectKernelError("tril", DType::kFloat32, {&v}, {}, 1,
                    "tril: x float32[3] needs at least 2 dims");
  ExpectKernelError("triu_grad", DType::kFloat32, {&v}, Attrs({{"diagonal", int64_t{0}}}), 1,
                    "triu_grad: out_grad float32[3] needs at least 2 dims");
}

}  // namespace
}  // namespace irm::rt
