// Recording kernels and program text helpers for the legacy executor's tests
// (legacy_test_support.h).
#include "reference_runtime/legacy_test_support.h"

#include <array>
#include <cmath>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "oldir/program_io.h"
#include "reference_runtime/kernels/kernel_test_support.h"
#include "reference_runtime/legacy_executor.h"

namespace irm::rt::testing {
namespace {

// KernelFn is a plain function pointer: each registered (name, dtype) gets one of these
// functions, which knows its slot number and asks the live RecordingKernels what the slot is.
constexpr size_t kNumSlots = 512;
RecordingKernels* g_active = nullptr;

template <size_t K>
Status SlotKernel(KernelCall& call) {
  return g_active->Handle(K, call);
}

template <size_t... K>
constexpr std::array<KernelFn, sizeof...(K)> MakeSlotKernels(std::index_sequence<K...>) {
  return {&SlotKernel<K>...};
}

constexpr std::array<KernelFn, kNumSlots> kSlotKernels =
    MakeSlotKernels(std::make_index_sequence<kNumSlots>{});

// A double as its kind shows it: 0.5, 1.0, 1e-08.
std::string FloatText(double v) {
  std::string text = fmt::format("{}", v);
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
  return text;
}

std::string AttrText(const AttrValue& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, bool>) {
          return v ? "true" : "false";
        } else if constexpr (std::is_same_v<T, int64_t>) {
          return fmt::format("{}", v);
        } else if constexpr (std::is_same_v<T, double>) {
          return FloatText(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return fmt::format("'{}'", v);
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          return fmt::format("[{}]", fmt::join(v, ", "));
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          std::vector<std::string> items;
          for (double d : v) items.push_back(FloatText(d));
          return fmt::format("[{}]", fmt::join(items, ", "));
        } else {
          return DTypeName(v);
        }
      },
      value);
}

}  // namespace

std::string RecordedCall::Inputs() const { return fmt::format("{}", fmt::join(inputs, ", ")); }

std::string RecordedCall::Attrs() const {
  std::vector<std::string> items;
  for (const auto& [name, value] : attrs.values()) {
    items.push_back(fmt::format("{}={}", name, AttrText(value)));
  }
  return fmt::format("{}", fmt::join(items, ", "));
}

RecordingKernels::RecordingKernels() {
  EXPECT_EQ(g_active, nullptr) << "one RecordingKernels at a time";
  g_active = this;
}

RecordingKernels::~RecordingKernels() { g_active = nullptr; }

void RecordingKernels::Add(const std::string& name, std::vector<DType> dtypes,
                           KernelBehavior behavior) {
  for (DType dtype : dtypes) {
    ASSERT_LT(slots_.size(), kNumSlots);
    const KernelSignature any{0, KernelSignature::kVariadic, KernelSignature::kVariadic};
    const Status status =
        registry_.Register(name, dtype, Device::kCpu, {kSlotKernels[slots_.size()], any});
    ASSERT_TRUE(status.ok()) << status.ToString();
    slots_.push_back({name, dtype, behavior});
  }
}

Status RecordingKernels::Handle(size_t slot, KernelCall& call) {
  const Slot& s = slots_.at(slot);
  RecordedCall record;
  record.kernel = s.name;
  record.dtype = s.dtype;
  for (const Tensor* input : call.inputs) {
    record.inputs.push_back(input != nullptr ? input->Describe() : "null");
  }
  for (size_t i = 0; i < call.outputs.size(); ++i) record.wanted.push_back(call.wants_output(i));
  record.attrs = call.attrs;
  record.context = call.context;
  calls_.push_back(std::move(record));
  if (s.behavior) return s.behavior(call);
  for (size_t i = 0; i < call.outputs.size(); ++i) {
    call.SetOutput(i, Tensor::ZerosUnchecked(s.dtype, {static_cast<int64_t>(i) + 1}));
  }
  return Status::Ok();
}

Status TestFull(KernelCall& call) {
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> shape, call.attrs.Get<std::vector<int64_t>>("shape"));
  IRM_ASSIGN_OR_RETURN(double value, call.attrs.Get<double>("value"));
  IRM_ASSIGN_OR_RETURN(DType dtype, call.attrs.Get<DType>("dtype"));
  Tensor out = Tensor::ZerosUnchecked(dtype, shape);
  call.SetOutput(
      0, FromDoubles(std::vector<double>(static_cast<size_t>(out.numel()), value), shape, dtype));
  return Status::Ok();
}

Status TestAssign(KernelCall& call) {
  call.SetOutput(0, call.input(0).Clone());
  return Status::Ok();
}

Status TestIncrement(KernelCall& call) {
  IRM_ASSIGN_OR_RETURN(double step, call.attrs.Get<double>("value"));
  std::vector<double> values = ToDoubles(call.input(0));
  for (double& v : values) v += step;
  call.SetOutput(0, FromDoubles(values, call.input(0).shape(), call.input(0).dtype()));
  return Status::Ok();
}

Status TestScale(KernelCall& call) {
  IRM_ASSIGN_OR_RETURN(double scale, call.attrs.Get<double>("scale"));
  IRM_ASSIGN_OR_RETURN(double bias, call.attrs.Get<double>("bias"));
  IRM_ASSIGN_OR_RETURN(bool after, call.attrs.Get<bool>("bias_after_scale"));
  std::vector<double> values = ToDoubles(call.input(0));
  for (double& v : values) v = after ? v * scale + bias : (v + bias) * scale;
  call.SetOutput(0, FromDoubles(values, call.input(0).shape(), call.input(0).dtype()));
  return Status::Ok();
}

KernelBehavior TestBinary(std::function<double(double, double)> fn, bool to_bool) {
  return [fn = std::move(fn), to_bool](KernelCall& call) -> Status {
    const std::vector<double> x = ToDoubles(call.input(0));
    const std::vector<double> y = ToDoubles(call.input(1));
    if (y.size() != x.size() && y.size() != 1) return KernelError("test kernel: y does not fit");
    std::vector<double> out(x.size());
    for (size_t i = 0; i < x.size(); ++i) out[i] = fn(x[i], y[y.size() == 1 ? 0 : i]);
    call.SetOutput(
        0, FromDoubles(out, call.input(0).shape(), to_bool ? DType::kBool : call.input(0).dtype()));
    return Status::Ok();
  };
}

std::string OpText(std::string_view type, const SlotArgs& inputs, const SlotArgs& outputs,
                   const std::vector<std::string>& attrs) {
  std::string text = fmt::format("ops {{ type: \"{}\"", type);
  const auto slots = [&](const char* field, const SlotArgs& args) {
    for (const auto& [slot, names] : args) {
      text += fmt::format(" {} {{ parameter: \"{}\"", field, slot);
      for (const std::string& name : names) text += fmt::format(" arguments: \"{}\"", name);
      text += " }";
    }
  };
  slots("inputs", inputs);
  slots("outputs", outputs);
  for (const std::string& attr : attrs) text += fmt::format(" attrs {{ {} }}", attr);
  return text + " }\n";
}

std::string BoolAttr(std::string_view name, bool value) {
  return fmt::format("name: \"{}\" type: BOOLEAN b: {}", name, value);
}
std::string IntAttr(std::string_view name, int32_t value) {
  return fmt::format("name: \"{}\" type: INT i: {}", name, value);
}
std::string LongAttr(std::string_view name, int64_t value) {
  return fmt::format("name: \"{}\" type: LONG l: {}", name, value);
}
std::string FloatAttr(std::string_view name, float value) {
  return fmt::format("name: \"{}\" type: FLOAT f: {}", name, value);
}
std::string StrAttr(std::string_view name, std::string_view value) {
  return fmt::format("name: \"{}\" type: STRING s: \"{}\"", name, value);
}
std::string IntsAttr(std::string_view name, const std::vector<int32_t>& values) {
  std::string text = fmt::format("name: \"{}\" type: INTS", name);
  for (int32_t v : values) text += fmt::format(" ints: {}", v);
  return text;
}
std::string LongsAttr(std::string_view name, const std::vector<int64_t>& values) {
  std::string text = fmt::format("name: \"{}\" type: LONGS", name);
  for (int64_t v : values) text += fmt::format(" longs: {}", v);
  return text;
}
std::string FloatsAttr(std::string_view name, const std::vector<float>& values) {
  std::string text = fmt::format("name: \"{}\" type: FLOATS", name);
  for (float v : values) text += fmt::format(" floats: {}", v);
  return text;
}
std::string BlockAttr(std::string_view name, int block) {
  return fmt::format("name: \"{}\" type: BLOCK block_idx: {}", name, block);
}

LegacyHarness::LegacyHarness() {
  options.kernels = &kernels.registry();
  options.file = "t.prototxt";
  observer_ = [this](const OpEvent& event) {
    std::vector<std::string> outputs;
    for (const auto& [name, tensor] : event.outputs) {
      outputs.push_back(fmt::format("{}={}", name, tensor ? tensor->Describe() : "null"));
    }
    events.push_back(fmt::format("{}/{} {}: {}", event.block, event.op_index, event.op_type,
                                 fmt::join(outputs, ", ")));
  };
  options.observer = &observer_;
}

StatusOr<std::vector<Fetch>> LegacyHarness::Run(std::string_view program_text,
                                                const FeedMap& feeds) {
  LegacyExecutor executor(ParseTestProgram(program_text), options);
  return executor.Run(persistent, feeds);
}

Status LegacyHarness::RunOps(std::string_view ops, std::string_view vars) {
  return Run(OneBlock(std::string(vars) + std::string(ops))).status();
}

const RecordedCall& LegacyHarness::OnlyCall() {
  static const RecordedCall kNone;
  EXPECT_EQ(kernels.calls().size(), 1u);
  return kernels.calls().size() == 1 ? kernels.calls()[0] : kNone;
}

std::string Block(int idx, int parent, std::string_view body) {
  return fmt::format("blocks {{ idx: {} parent_idx: {} {} }}\n", idx, parent, body);
}

std::string OneBlock(std::string_view body) { return Block(0, -1, body); }

std::string DenseVar(std::string_view name, std::string_view dtype,
                     const std::vector<int64_t>& dims, bool persistable) {
  std::string dims_text;
  for (int64_t d : dims) dims_text += fmt::format(" dims: {}", d);
  return fmt::format(
      "vars {{ name: \"{}\" type {{ type: DENSE_TENSOR dense_tensor {{ tensor {{ data_type: {}{} "
      "}} }} }} persistable: {} }}\n",
      name, dtype, dims_text, persistable ? "true" : "false");
}

std::string FeedOp(std::string_view var, int col) {
  return fmt::format(
      "ops {{ type: \"feed\" inputs {{ parameter: \"X\" arguments: \"feed\" }} outputs {{ "
      "parameter: \"Out\" arguments: \"{}\" }} attrs {{ name: \"col\" type: INT i: {} }} }}\n",
      var, col);
}

std::string FetchOp(std::string_view var, int col) {
  return fmt::format(
      "ops {{ type: \"fetch\" inputs {{ parameter: \"X\" arguments: \"{}\" }} outputs {{ "
      "parameter: \"Out\" arguments: \"fetch\" }} attrs {{ name: \"col\" type: INT i: {} }} }}\n",
      var, col);
}

oldir::Program ParseTestProgram(std::string_view text) {
  StatusOr<oldir::Program> program =
      oldir::ParseProgram(text, "t.prototxt", oldir::ProgramFormat::kText);
  EXPECT_TRUE(program.ok()) << program.status().ToString() << "\n" << text;
  return program.ok() ? std::move(program).value() : oldir::Program();
}

Tensor MakeTensor(DType dtype, std::vector<int64_t> shape, const std::vector<double>& values) {
  if (values.empty()) return Tensor::ZerosUnchecked(dtype, std::move(shape));
  return FromDoubles(values, std::move(shape), dtype);
}

}  // namespace irm::rt::testing
