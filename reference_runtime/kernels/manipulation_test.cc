// Tests of the shape kernels (manipulation.cc) against naive float64 references written here, for
// every dtype each supports; grads also against central differences of the naive forward.
#include <gtest/gtest.h>

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

// ---- reshape -----------------------------------------------------------------------------------

TEST(ReshapeTest, FollowsPaddleRulesForEveryDType) {
  struct Case {
    Shape x, shape, expected;
  };
  const std::vector<Case> cases = {{{2, 3, 4}, {0, -1}, {2, 12}},
                                   {{2, 3, 4}, {-1}, {24}},
                                   {{4, 3, 2}, {2, 0, -1}, {2, 3, 4}},
                                   {{1, 6}, {3, 1, 2}, {3, 1, 2}},
                                   {{}, {1, 1}, {1, 1}},
                                   {{1}, {}, {}},
                                   {{0, 3}, {3, -1}, {3, 0}},
                                   {{2, 3}, {0, 0, 1}, {2, 3, 1}}};
  for (DType dtype : data::kEveryDType) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " " + ShapeToString(c.x) + " -> " +
                   ShapeToString(c.shape));
      const Tensor x = DataInput(dtype, c.x, 11);
      std::vector<Tensor> out = RunKernel("reshape", dtype, {&x}, Attrs({{"shape", c.shape}}), 2);
      EXPECT_EQ(out[0].dtype(), dtype);
      ExpectClose(out[0], ToDoubles(x), c.expected, 0.0, "out");  // C order is unchanged
      EXPECT_FALSE(out[0].SharesStorageWith(x));
      Shape xshape = {0};
      xshape.insert(xshape.end(), c.x.begin(), c.x.end());
      EXPECT_EQ(out[1].shape(), xshape);
      EXPECT_EQ(out[1].dtype(), dtype);
      EXPECT_EQ(out[1].numel(), 0);
    }
  }
}

TEST(ReshapeTest, RejectsShapesThatDoNotFit) {
  const Tensor x = RandomTensor(DType::kFloat32, {2, 3}, 1);
  const Tensor empty = RandomTensor(DType::kFloat32, {0, 3}, 1);
  auto expect = [&](const Tensor& in, Shape shape, const std::string& message) {
    ExpectKernelError("reshape", DType::kFloat32, {&in}, Attrs({{"shape", shape}}), 2, message);
  };
  expect(x, {-1, -1}, "reshape: shape [-1, -1] has more than one -1");
  expect(x, {2, -3}, "reshape: shape [2, -3] has dim -3 (only -1, to infer, may be negative)");
  expect(x, {6, 1, 0},
         "reshape: shape [6, 1, 0] copies dim 2 of x float32[2, 3], which has 2 dims");
  expect(x, {4, 2}, "reshape: cannot reshape x float32[2, 3] (6 elements) to [4, 2] (8 elements)");
  expect(
      x, {4, -1},
      "reshape: cannot reshape x float32[2, 3] (6 elements) to [4, -1]: 6 is not a multiple of 4");
  expect(
      empty, {0, -1},
      "reshape: cannot infer the -1 of [0, -1] for x float32[0, 3]: the other dims multiply to 0");
}

TEST(ReshapeGradTest, GivesOutGradTheShapeOfX) {
  for (DType dtype : data::kEveryDType) {
    const Tensor xshape = Tensor::ZerosUnchecked(dtype, {0, 2, 1, 3});
    const Tensor out_grad = DataInput(dtype, {3, 2}, 5);
    std::vector<Tensor> g = RunKernel("reshape_grad", dtype, {&xshape, &out_grad}, {}, 1);
    EXPECT_EQ(g[0].dtype(), dtype);
    ExpectClose(g[0], ToDoubles(out_grad), {2, 1, 3}, 0.0, DTypeName(dtype));
  }
  // Against finite differences of the naive forward (reshape keeps the C order).
  const Tensor x = RandomTensor(DType::kFloat64, {2, 1, 3}, 2);
  const Tensor w = RandomTensor(DType::kFloat64, {3, 2}, 3);
  const Tensor xshape = Tensor::ZerosUnchecked(DType::kFloat64, {0, 2, 1, 3});
  std::vector<Tensor> g = RunKernel("reshape_grad", DType::kFloat64, {&xshape, &w}, {}, 1);
  ExpectFiniteDifferenceGrad([](const std::vector<double>& v) { return v; }, ToDoubles(x),
                             ToDoubles(w), g[0], {2, 1, 3}, "x_grad");
}

TEST(ReshapeGradTest, RejectsABadCarrierOrCount) {
  const Tensor out_grad = RandomTensor(DType::kFloat32, {4}, 1);
  const Tensor not_carrier = RandomTensor(DType::kFloat32, {2, 3}, 1);
  const Tensor carrier = Tensor::ZerosUnchecked(DType::kFloat32, {0, 2, 3});
  ExpectKernelError("reshape_grad", DType::kFloat32, {&not_carrier, &out_grad}, {}, 1,
                    "reshape_grad: xshape float32[2, 3] is not a shape carrier [0, x dims...]");
  ExpectKernelError("reshape_grad", DType::kFloat32, {&carrier, &out_grad}, {}, 1,
                    "reshape_grad: out_grad float32[4] has 4 elements, x has 6 (xshape "
                    "float32[0, 2, 3])");
}

// ---- transpose ---------------------------------------------------------------------------------

// out[i] = x[j] with j[perm[k]] = i[k].
std::vector<double> NaiveTranspose(const std::vector<double>& x, const Shape& shape,
                                   const Shape& perm) {
  const size_t rank = shape.size();
  Shape p(perm);
  for (int64_t& a : p) a = a < 0 ? a + static_cast<int64_t>(rank) : a;
  Shape out_shape;
  for (int64_t a : p) out_shape.push_back(shape[static_cast<size_t>(a)]);
  std::vector<double> out(x.size());
  ForEachIndex(out_shape, [&](const Shape& i, int64_t flat) {
    Shape j(rank);
    for (size_t k = 0; k < rank; ++k) j[static_cast<size_t>(p[k])] = i[k];
    out[static_cast<size_t>(flat)] = x[static_cast<size_t>(FlatIndex(j, shape))];
  });
  return out;
}

struct PermCase {
  Shape x, perm;
};
const std::vector<PermCase> kPermCases = {
    {{2, 3, 4}, {2, 0, 1}}, {{1, 5}, {1, 0}}, {{2, 1, 3, 2}, {3, 1, 0, 2}}, {{}, {}}, {{3}, {0}},
    {{2, 3}, {-1, 0}},      {{0, 2}, {1, 0}}, {{2, 3, 4}, {0, 1, 2}}};

Shape Permuted(const Shape& shape, const Shape& perm) {
  Shape out;
  for (int64_t a : perm)
    out.push_back(shape[static_cast<size_t>(a < 0 ? a + std::ssize(shape) : a)]);
  return out;
}

TEST(TransposeTest, MatchesTheNaivePermutationForEveryDType) {
  for (DType dtype : data::kEveryDType) {
    for (const PermCase& c : kPermCases) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " " + ShapeToString(c.x));
      const Tensor x = DataInput(dtype, c.x, 21);
      std::vector<Tensor> out = RunKernel("transpose", dtype, {&x}, Attrs({{"perm", c.perm}}), 1);
      EXPECT_EQ(out[0].dtype(), dtype);
      ExpectClose(out[0], NaiveTranspose(ToDoubles(x), c.x, c.perm), Permuted(c.x, c.perm), 0.0,
                  "out");
    }
  }
}

TEST(TransposeGradTest, InvertsThePermutation) {
  for (DType dtype : data::kEveryDType) {
    for (const PermCase& c : kPermCases) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " " + ShapeToString(c.x));
      const Shape out_shape = Permuted(c.x, c.perm);
      const Tensor out_grad = DataInput(dtype, out_shape, 22);
      std::vector<Tensor> g =
          RunKernel("transpose_grad", dtype, {&out_grad}, Attrs({{"perm", c.perm}}), 1);
      // x_grad[j] = out_grad[i] where out[i] = x[j]: scatter through the naive forward's indices.
      std::vector<double> index(static_cast<size_t>(NumelOf(c.x)));
      for (size_t i = 0; i < index.size(); ++i) index[i] = static_cast<double>(i);
      const std::vector<double> source = NaiveTranspose(index, c.x, c.perm);
      const std::vector<double> og = ToDoubles(out_grad);
      std::vector<double> expected(index.size());
      for (size_t i = 0; i < source.size(); ++i) expected[static_cast<size_t>(source[i])] = og[i];
      ExpectClose(g[0], expected, c.x, 0.0, "x_grad");
      if (dtype == DType::kFloat64) {
        const Tensor x = RandomTensor(dtype, c.x, 23);
        ExpectFiniteDifferenceGrad(
            [&](const std::vector<double>& v) { return NaiveTranspose(v, c.x, c.perm); },
            ToDoubles(x), og, g[0], c.x, "x_grad (finite differences)");
      }
    }
  }
}

TEST(TransposeTest, RejectsWhatIsNotAPermutation) {
  const Tensor x = RandomTensor(DType::kFloat32, {2, 3}, 1);
  for (const Shape& perm : std::vector<Shape>{{0, 0}, {0}, {0, 2}, {1, -3}}) {
    ExpectKernelError("transpose", DType::kFloat32, {&x}, Attrs({{"perm", perm}}), 1,
                      "transpose: perm " + ShapeToString(perm) +
                          " is not a permutation of the 2 dims of x float32[2, 3]");
  }
  ExpectKernelError("transpose_grad", DType::kFloat32, {&x}, Attrs({{"perm", Shape{1, 1}}}), 1,
                    "transpose_grad: perm [1, 1] is not a permutation of the 2 dims of out_grad "
                    "float32[2, 3]");
}

// ---- concat ------------------------------------------------------------------------------------

// The naive concatenation: out[i] comes from the piece whose range along axis holds i[axis].
std::vector<double> NaiveConcat(const std::vector<std::vector<double>>& pieces,
                                const std::vector<Shape>& shapes, int axis, Shape* out_shape) {
  *out_shape = shapes[0];
  (*out_shape)[static_cast<size_t>(axis)] = 0;
  for (const Shape& s : shapes) (*out_shape)[static_cast<size_t>(axis)] += s[axis];
  std::vector<double> out(static_cast<size_t>(NumelOf(*out_shape)));
  ForEachIndex(*out_shape, [&](const Shape& i, int64_t flat) {
    Shape j = i;
    size_t p = 0;
    while (j[axis] >= shapes[p][axis]) j[axis] -= shapes[p++][axis];
    out[static_cast<size_t>(flat)] = pieces[p][static_cast<size_t>(FlatIndex(j, shapes[p]))];
  });
  return out;
}

struct ConcatCase {
  std::vector<Shape> shapes;
  int64_t axis;
};
const std::vector<ConcatCase> kConcatCases = {
    {{{2, 3}, {2, 1}, {2, 4}}, 1}, {{{2, 3}, {2, 1}}, -1},
    {{{1, 3}, {2, 3}}, 0},         {{{4}}, 0},
    {{{2, 1, 3}, {2, 2, 3}}, 1},   {{{2, 0}, {2, 2}, {2, 0}}, 1},
    {{{1, 1}, {1, 1}, {1, 1}}, 0}, {{{3, 2, 1}, {3, 2, 1}}, -1}};

int Normalized(int64_t axis, size_t rank) {
  return static_cast<int>(axis < 0 ? axis + static_cast<int64_t>(rank) : axis);
}

TEST(ConcatTest, MatchesTheNaiveConcatenationForEveryDType) {
  for (DType dtype : data::kEveryDType) {
    for (const ConcatCase& c : kConcatCases) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " axis " + std::to_string(c.axis));
      std::vector<Tensor> xs;
      for (size_t i = 0; i < c.shapes.size(); ++i) xs.push_back(DataInput(dtype, c.shapes[i], i));
      std::vector<const Tensor*> inputs;
      std::vector<std::vector<double>> values;
      for (const Tensor& x : xs) {
        inputs.push_back(&x);
        values.push_back(ToDoubles(x));
      }
      std::vector<Tensor> out = RunKernel("concat", dtype, inputs, Attrs({{"axis", c.axis}}), 1);
      Shape shape;
      const std::vector<double> expected =
          NaiveConcat(values, c.shapes, Normalized(c.axis, c.shapes[0].size()), &shape);
      EXPECT_EQ(out[0].dtype(), dtype);
      ExpectClose(out[0], expected, shape, 0.0, "out");
    }
  }
}

TEST(ConcatTest, TakesAnAxisReadFromAFloatConstant) {
  const Tensor a = RandomTensor(DType::kFloat32, {2, 1}, 1);
  const Tensor b = RandomTensor(DType::kFloat32, {2, 2}, 2);
  std::vector<Tensor> out =
      RunKernel("concat", DType::kFloat32, {&a, &b}, Attrs({{"axis", 1.0}}), 1);
  Shape shape;
  ExpectClose(out[0], NaiveConcat({ToDoubles(a), ToDoubles(b)}, {{2, 1}, {2, 2}}, 1, &shape),
              {2, 3}, 0.0, "out");
  ExpectKernelError("concat", DType::kFloat32, {&a, &b}, Attrs({{"axis", 0.5}}), 1,
                    "attribute 'axis' is 0.5, not an int64");
}

TEST(ConcatTest, RejectsPiecesThatDoNotFit) {
  const Tensor a = RandomTensor(DType::kFloat32, {2, 3}, 1);
  const Tensor b = RandomTensor(DType::kFloat32, {3, 3}, 2);
  const Tensor c = RandomTensor(DType::kFloat32, {2, 3, 1}, 3);
  const Tensor d = RandomTensor(DType::kFloat64, {2, 3}, 4);
  const Tensor scalar = RandomTensor(DType::kFloat32, {}, 5);
  const KernelAttrs axis1 = Attrs({{"axis", int64_t{1}}});
  ExpectKernelError("concat", DType::kFloat32, {&a, &b}, axis1, 1,
                    "concat: x[1] float32[3, 3] does not match x[0] float32[2, 3] outside axis 1");
  ExpectKernelError(
      "concat", DType::kFloat32, {&a, &c}, axis1, 1,
      "concat: x[1] float32[2, 3, 1] does not match x[0] float32[2, 3] outside axis 1");
  ExpectKernelError("concat", DType::kFloat32, {&a, &d}, axis1, 1,
                    "concat: x[1] is float64, x[0] is float32");
  ExpectKernelError("concat", DType::kFloat32, {&scalar}, Attrs({{"axis", int64_t{0}}}), 1,
                    "concat: x[0] float32[] is 0-D and has no axis to join");
  ExpectKernelError("concat", DType::kFloat32, {&a}, Attrs({{"axis", int64_t{2}}}), 1,
                    "concat: axis 2 is out of range for x[0] float32[2, 3]");
}

TEST(ConcatGradTest, CutsOutGradBackIntoThePieces) {
  for (DType dtype : data::kEveryDType) {
    for (const ConcatCase& c : kConcatCases) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " axis " + std::to_string(c.axis));
      const int axis = Normalized(c.axis, c.shapes[0].size());
      std::vector<Tensor> xs;
      std::vector<const Tensor*> inputs;
      std::vector<std::vector<double>> index_pieces;  // piece p's elements as (p, flat) codes
      for (size_t p = 0; p < c.shapes.size(); ++p) {
        xs.push_back(DataInput(dtype, c.shapes[p], 40 + p));
        std::vector<double> codes(static_cast<size_t>(NumelOf(c.shapes[p])));
        for (size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<double>(p * 1000 + i);
        index_pieces.push_back(codes);
      }
      for (const Tensor& x : xs) inputs.push_back(&x);
      Shape out_shape;
      const std::vector<double> source = NaiveConcat(index_pieces, c.shapes, axis, &out_shape);
      const Tensor out_grad = DataInput(dtype, out_shape, 49);
      inputs.push_back(&out_grad);
      std::vector<Tensor> g =
          RunKernel("concat_grad", dtype, inputs, Attrs({{"axis", c.axis}}), c.shapes.size());
      const std::vector<double> og = ToDoubles(out_grad);
      std::vector<std::vector<double>> expected(c.shapes.size());
      for (size_t p = 0; p < c.shapes.size(); ++p) expected[p].resize(index_pieces[p].size());
      for (size_t i = 0; i < source.size(); ++i) {
        const auto code = static_cast<size_t>(source[i]);
        expected[code / 1000][code % 1000] = og[i];
      }
      for (size_t p = 0; p < c.shapes.size(); ++p) {
        EXPECT_EQ(g[p].dtype(), dtype);
        ExpectClose(g[p], expected[p], c.shapes[p], 0.0, "x_grad[" + std::to_string(p) + "]");
        if (dtype != DType::kFloat64) continue;
        // d/dx_p of sum(out_grad * concat(x)), by differences in x_p with the others fixed.
        std::vector<std::vector<double>> values;
        for (const Tensor& x : xs) values.push_back(ToDoubles(x));
        ExpectFiniteDifferenceGrad(
            [&](const std::vector<double>& v) {
              std::vector<std::vector<double>> moved = values;
              moved[p] = v;
              Shape unused;
              return NaiveConcat(moved, c.shapes, axis, &unused);
            },
            values[p], og, g[p], c.shapes[p], "x_grad (finite differences)");
      }
    }
  }
}

TEST(ConcatGradTest, RejectsAMismatchedOutGradOrOutputCount) {
  const Tensor a = RandomTensor(DType::kFloat32, {2, 3}, 1);
  const Tensor b = RandomTensor(DType::kFloat32, {2, 1}, 2);
  const Tensor wrong = RandomTensor(DType::kFloat32, {2, 5}, 3);
  const KernelAttrs axis1 = Attrs({{"axis", int64_t{1}}});
  ExpectKernelError("concat_grad", DType::kFloat32, {&a, &b, &wrong}, axis1, 2,
                    "concat_grad: out_grad float32[2, 5] is not the concatenation of x along axis "
                    "1 ([2, 4])");
  ExpectKernelError("concat_grad", DType::kFloat32, {&a, &b, &wrong}, axis1, 3,
                    "concat_grad: 2 inputs x need 2 x_grad outputs, 3 were given");
}

// ---- split -------------------------------------------------------------------------------------

// Piece p of x cut along axis into `sizes`: the naive slice of its range.
std::vector<std::vector<double>> NaiveSplit(const std::vector<double>& x, const Shape& shape,
                                            int axis, const Shape& sizes) {
  std::vector<std::vector<double>> pieces;
  int64_t offset = 0;
  for (int64_t size : sizes) {
    Shape piece_shape = shape;
    piece_shape[static_cast<size_t>(axis)] = size;
    std::vector<double> piece;
    ForEachIndex(piece_shape, [&](const Shape& i, int64_t) {
      Shape j = i;
      j[static_cast<size_t>(axis)] += offset;
      piece.push_back(x[static_cast<size_t>(FlatIndex(j, shape))]);
    });
    pieces.push_back(piece);
    offset += size;
  }
  return pieces;
}

void ExpectPieces(const std::vector<Tensor>& out, const Tensor& x, int axis, const Shape& sizes) {
  const std::vector<std::vector<double>> expected =
      NaiveSplit(ToDoubles(x), x.shape(), axis, sizes);
  ASSERT_EQ(out.size(), sizes.size());
  for (size_t p = 0; p < sizes.size(); ++p) {
    Shape shape = x.shape();
    shape[static_cast<size_t>(axis)] = sizes[p];
    EXPECT_EQ(out[p].dtype(), x.dtype());
    ExpectClose(out[p], expected[p], shape, 0.0, "out[" + std::to_string(p) + "]");
  }
}

TEST(SplitTest, MatchesTheNaiveCutForEveryDType) {
  struct Case {
    Shape x, sections;
    int64_t axis;
    Shape sizes;
  };
  const std::vector<Case> cases = {{{3, 5}, {2, -1, 1}, 1, {2, 2, 1}},
                                   {{3, 5}, {1, 2}, 0, {1, 2}},
                                   {{2, 3, 1}, {0, -1}, -2, {0, 3}},
                                   {{4}, {4}, 0, {4}},
                                   {{1, 6}, {-1, 1}, -1, {5, 1}}};
  for (DType dtype : data::kEveryDType) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " " + ShapeToString(c.sections));
      const Tensor x = DataInput(dtype, c.x, 31);
      std::vector<Tensor> out =
          RunKernel("split", dtype, {&x}, Attrs({{"sections", c.sections}, {"axis", c.axis}}),
                    c.sections.size());
      ExpectPieces(out, x, Normalized(c.axis, c.x.size()), c.sizes);
    }
    const Tensor x = DataInput(dtype, {2, 6}, 32);
    std::vector<Tensor> out = RunKernel("split_with_num", dtype, {&x},
                                        Attrs({{"num", int64_t{3}}, {"axis", int64_t{-1}}}), 3);
    ExpectPieces(out, x, 1, {2, 2, 2});
  }
}

TEST(SplitTest, SkipsOutputsNobodyReads) {
  const Tensor x = RandomTensor(DType::kFloat32, {4, 2}, 1);
  Tensor second;
  KernelCall call{.inputs = {&x},
                  .outputs = {nullptr, &second},
                  .attrs = Attrs({{"sections", Shape{1, 3}}, {"axis", int64_t{0}}}),
                  .context = {}};
  ASSERT_TRUE(KernelRegistry::Global().Run("split", DType::kFloat32, call).ok());
  const std::vector<double> all = ToDoubles(x);
  ExpectClose(second, std::vector<double>(all.begin() + 2, all.end()), {3, 2}, 0.0, "out[1]");
}

TEST(SplitTest, RejectsSectionsThatDoNotCoverTheAxis) {
  const Tensor x = RandomTensor(DType::kFloat32, {3, 5}, 1);
  auto expect = [&](Shape sections, size_t outputs, const std::string& message) {
    ExpectKernelError("split", DType::kFloat32, {&x},
                      Attrs({{"sections", sections}, {"axis", int64_t{1}}}), outputs, message);
  };
  expect({2, 2}, 2, "split: sections [2, 2] sum to 4, but axis 1 of x float32[3, 5] has 5");
  expect({-1, 2, -1}, 3, "split: sections [-1, 2, -1] have more than one -1");
  expect({7, -2}, 2, "split: sections [7, -2] have a negative section -2");
  expect({6, -1}, 2,
         "split: sections [6, -1] sum to 6 without the -1, more than the 5 of axis 1 of x "
         "float32[3, 5]");
  expect({2, 3}, 3, "split: 2 sections [2, 3] need 2 outputs, 3 were given");
  auto expect_num = [&](int64_t num, size_t outputs, const std::string& message) {
    ExpectKernelError("split_with_num", DType::kFloat32, {&x},
                      Attrs({{"num", num}, {"axis", int64_t{1}}}), outputs, message);
  };
  expect_num(2, 2, "split_with_num: axis 1 of x float32[3, 5] has 5, not divisible by num 2");
  expect_num(0, 0, "split_with_num: num is 0, it must be at least 1");
  expect_num(5, 4, "split_with_num: num 5 needs 5 outputs, 4 were given");
}

// ---- assign, share_data ------------------------------------------------------------------------

TEST(AssignTest, CopiesIntoFreshStorageAndShareDataShares) {
  for (DType dtype : data::kEveryDType) {
    const Tensor x = DataInput(dtype, {2, 1, 3}, 51);
    const Tensor output = Tensor::ZerosUnchecked(dtype, {2, 1, 3});
    std::vector<Tensor> copy = RunKernel("assign", dtype, {&x}, {}, 1);
    EXPECT_TRUE(copy[0].BitwiseEqual(x));
    EXPECT_FALSE(copy[0].SharesStorageWith(x));
    std::vector<Tensor> out = RunKernel("assign_out", dtype, {&x, &output}, {}, 1);
    EXPECT_TRUE(out[0].BitwiseEqual(x));
    std::vector<Tensor> shared = RunKernel("share_data", dtype, {&x}, {}, 1);
    EXPECT_TRUE(shared[0].BitwiseEqual(x));
    EXPECT_TRUE(shared[0].SharesStorageWith(x));
  }
}

// ---- add_n -------------------------------------------------------------------------------------

TEST(AddNTest, MatchesTheNaiveSum) {
  const DType dtypes[] = {DType::kFloat16, DType::kBFloat16, DType::kFloat32,
                          DType::kFloat64, DType::kInt32,    DType::kInt64};
  for (DType dtype : dtypes) {
    for (size_t n : {1, 2, 5}) {
      for (const Shape& shape : std::vector<Shape>{{}, {1}, {3, 1, 4}, {0, 2}}) {
        std::vector<Tensor> xs;
        std::vector<const Tensor*> inputs;
        for (size_t i = 0; i < n; ++i) xs.push_back(DataInput(dtype, shape, 60 + i));
        for (const Tensor& x : xs) inputs.push_back(&x);
        std::vector<double> expected(static_cast<size_t>(NumelOf(shape)), 0.0);
        for (const Tensor& x : xs) {
          const std::vector<double> v = ToDoubles(x);
          for (size_t j = 0; j < v.size(); ++j) expected[j] += v[j];
        }
        std::vector<Tensor> out = RunKernel("add_n", dtype, inputs, {}, 1);
        EXPECT_EQ(out[0].dtype(), dtype);
        // One rounding of the sum to the dtype, plus float32 accumulation for the 16-bit ones.
        ExpectClose(out[0], expected, shape, testing::ToleranceFor(dtype),
                    std::string(DTypeName(dtype)) + " n=" + std::to_string(n));
      }
    }
  }
}

TEST(AddNTest, AddsInInputOrderAndWrapsIntegers) {
  // (1e8 + -1e8) + 1 = 1 in float32; 1e8 + (-1e8 + 1) would be 0.
  const Tensor a = Tensor::FromVector<float>({1e8f}, {1});
  const Tensor b = Tensor::FromVector<float>({-1e8f}, {1});
  const Tensor c = Tensor::FromVector<float>({1.0f}, {1});
  std::vector<Tensor> out = RunKernel("add_n", DType::kFloat32, {&a, &b, &c}, {}, 1);
  EXPECT_EQ(out[0].data<float>()[0], 1.0f);
  const Tensor big = Tensor::FromVector<int32_t>({std::numeric_limits<int32_t>::max()}, {1});
  const Tensor one = Tensor::FromVector<int32_t>({1}, {1});
  std::vector<Tensor> wrapped = RunKernel("add_n", DType::kInt32, {&big, &one}, {}, 1);
  EXPECT_EQ(wrapped[0].data<int32_t>()[0], std::numeric_limits<int32_t>::min());
}

TEST(AddNTest, RejectsInputsOfAnotherShapeOrDType) {
  const Tensor a = RandomTensor(DType::kFloat32, {2, 3}, 1);
  const Tensor b = RandomTensor(DType::kFloat32, {2, 4}, 2);
  const Tensor c = RandomTensor(DType::kFloat64, {2, 3}, 3);
  ExpectKernelError("add_n", DType::kFloat32, {&a, &a, &b}, {}, 1,
                    "add_n: inputs[2] float32[2, 4] does not match inputs[0] float32[2, 3]");
  ExpectKernelError("add_n", DType::kFloat32, {&a, &c}, {}, 1,
                    "add_n: inputs[1] float64[2, 3] does not match inputs[0] float32[2, 3]");
}

}  // namespace
}  // namespace irm::rt
