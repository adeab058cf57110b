// Test support for the legacy executor's tests (linked into the tests only): a kernel registry of
// recording kernels, which store what the executor handed them (kernel name, dtype, inputs,
// attributes, context) and produce outputs of a shape the test knows; and small helpers that
// write legacy programs in protobuf text form and parse them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "common/status.h"
#include "oldir/program.h"
#include "reference_runtime/executor.h"
#include "reference_runtime/kernel.h"
#include "reference_runtime/tensor.h"

// Fails the test, with the rendered diagnostic, when `expr` is not an OK Status.
#define ASSERT_OK(expr)                                                  \
  do {                                                                   \
    const ::irm::Status assert_ok_status_ = (expr);                      \
    ASSERT_TRUE(assert_ok_status_.ok()) << assert_ok_status_.ToString(); \
  } while (0)

namespace irm::rt::testing {

struct RecordedCall {
  std::string kernel;
  DType dtype = DType::kFloat32;    // the dtype the kernel was looked up for
  std::vector<std::string> inputs;  // each input's Describe(), "null" for an absent one
  std::vector<bool> wanted;         // per output: whether the executor wants it
  KernelAttrs attrs;
  KernelContext context;

  // "float32[2, 3], null".
  std::string Inputs() const;
  // "axis=[0, 2], keepdim=false, p=0.5, mode='x', dtype=float32": by name; ints print as ints,
  // floats always with a fraction or exponent, strings quoted, so that kinds are visible.
  std::string Attrs() const;
};

using KernelBehavior = std::function<Status(KernelCall& call)>;

// A registry of recording kernels. One instance may exist at a time (the kernels are plain
// functions that find it through a global).
class RecordingKernels {
 public:
  RecordingKernels();
  ~RecordingKernels();
  RecordingKernels(const RecordingKernels&) = delete;
  RecordingKernels& operator=(const RecordingKernels&) = delete;

  // Registers kernel `name` for `dtypes`. A call is recorded, then `behavior` runs; without one,
  // each wanted output i gets a zero tensor of the kernel's dtype and shape [i + 1].
  void Add(const std::string& name, std::vector<DType> dtypes = {DType::kFloat32},
           KernelBehavior behavior = nullptr);

  const KernelRegistry& registry() const { return registry_; }
  const std::vector<RecordedCall>& calls() const { return calls_; }
  void ClearCalls() { calls_.clear(); }

  // Called by the registered kernels.
  Status Handle(size_t slot, KernelCall& call);

 private:
  struct Slot {
    std::string name;
    DType dtype;
    KernelBehavior behavior;
  };
  KernelRegistry registry_;
  std::vector<Slot> slots_;
  std::vector<RecordedCall> calls_;
};

// Kernels that compute, for control-flow tests: full (shape, value, dtype), assign, increment
// (value), scale (scale, bias, bias_after_scale), and elementwise binaries whose y has x's shape
// or one element. Values go through float64.
Status TestFull(KernelCall& call);
Status TestAssign(KernelCall& call);
Status TestIncrement(KernelCall& call);
Status TestScale(KernelCall& call);
// out[i] = fn(x[i], y[i]) in x's dtype, or as bool when `to_bool`.
KernelBehavior TestBinary(std::function<double(double, double)> fn, bool to_bool = false);

// `ops { ... }` text of an op: slots as {"X", {"x"}}, attributes as AttrText below.
using SlotArgs = std::vector<std::pair<std::string, std::vector<std::string>>>;
std::string OpText(std::string_view type, const SlotArgs& inputs, const SlotArgs& outputs,
                   const std::vector<std::string>& attrs = {});
std::string BoolAttr(std::string_view name, bool value);
std::string IntAttr(std::string_view name, int32_t value);
std::string LongAttr(std::string_view name, int64_t value);
std::string FloatAttr(std::string_view name, float value);
std::string StrAttr(std::string_view name, std::string_view value);
std::string IntsAttr(std::string_view name, const std::vector<int32_t>& values);
std::string LongsAttr(std::string_view name, const std::vector<int64_t>& values);
std::string FloatsAttr(std::string_view name, const std::vector<float>& values);
std::string BlockAttr(std::string_view name, int block);

// Runs legacy programs on recording kernels, with `persistent` as the persistent scope, and keeps
// what the observer saw of every op.
class LegacyHarness {
 public:
  LegacyHarness();
  LegacyHarness(const LegacyHarness&) = delete;
  LegacyHarness& operator=(const LegacyHarness&) = delete;

  // Parses `program_text` and runs it once.
  StatusOr<std::vector<Fetch>> Run(std::string_view program_text, const FeedMap& feeds = {});
  // Runs `ops` (and `vars`) as the one block of a program; the status only.
  Status RunOps(std::string_view ops, std::string_view vars = "");
  // The one recorded kernel call (a test failure when there is not exactly one).
  const RecordedCall& OnlyCall();

  RecordingKernels kernels;
  Scope persistent;
  ExecutorOptions options;  // kernels, file "t.prototxt", the observer below
  // One line per observed op: "0/1 matmul_v2: out=float32[1], y=null" (block/op index).
  std::vector<std::string> events;

 private:
  OpObserver observer_;
};

// A program of one block holding `body` (vars and ops in protobuf text).
std::string OneBlock(std::string_view body);
// A block of `idx` with parent `parent` holding `body`.
std::string Block(int idx, int parent, std::string_view body);
// A DENSE_TENSOR var declaration; dtype is a VarType.Type name ("FP32", "INT64").
std::string DenseVar(std::string_view name, std::string_view dtype,
                     const std::vector<int64_t>& dims, bool persistable = false);
std::string FeedOp(std::string_view var, int col);
std::string FetchOp(std::string_view var, int col);

// Parses a legacy program in protobuf text form, named "t.prototxt"; fails the test on error.
oldir::Program ParseTestProgram(std::string_view text);

// A tensor of `dtype` and `shape` holding `values` (converted), for feeds and parameters.
Tensor MakeTensor(DType dtype, std::vector<int64_t> shape, const std::vector<double>& values = {});

}  // namespace irm::rt::testing
