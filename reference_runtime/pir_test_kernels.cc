// Recording test kernels for the new-IR executor's tests (pir_test_kernels.h). A KernelFn is a
// plain function pointer, so each (kernel name, dtype) key gets its own instance of a function
// template whose index finds the key in the active recorder's table.
#include "reference_runtime/pir_test_kernels.h"

#include <gtest/gtest.h>

#include <array>
#include <set>
#include <utility>

#include "newir/parser.h"
#include "newir/verifier.h"
#include "reference_runtime/kernels/kernel_test_support.h"
#include "reference_runtime/pir_bindings.h"

namespace irm::rt::testing {
namespace {

constexpr DType kRuntimeDTypes[] = {
    DType::kBool,  DType::kInt8,    DType::kUInt8,    DType::kInt16,   DType::kInt32,
    DType::kInt64, DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64};

struct RecorderState {
  std::vector<std::pair<std::string, DType>> keys;  // function index -> registry key
  std::map<std::string, RecordingKernels::Behaviour> behaviours;
  std::set<std::pair<std::string, DType>> removed;
  std::vector<KernelRecord> records;
};
RecorderState* g_state = nullptr;

Tensor Filled(DType dtype, const std::vector<int64_t>& shape, double value) {
  Tensor t = Tensor::ZerosUnchecked(dtype, shape);
  return FromDoubles(std::vector<double>(static_cast<size_t>(t.numel()), value), shape, dtype);
}

Status DefaultOutputs(KernelCall& call) {
  const Tensor* first = nullptr;
  for (const Tensor* t : call.inputs) {
    if (first == nullptr && t != nullptr) first = t;
  }
  for (size_t i = 0; i < call.outputs.size(); ++i) {
    if (first != nullptr) {
      call.SetOutput(i, Filled(first->dtype(), first->shape(), 100.0 + static_cast<double>(i)));
    } else {
      call.SetOutput(i, Filled(DType::kFloat32, {1}, 100.0 + static_cast<double>(i)));
    }
  }
  return Status::Ok();
}

Status RunRecorded(size_t key, KernelCall& call) {
  if (g_state == nullptr || key >= g_state->keys.size()) {
    return KernelError("no recorder is active for this kernel");
  }
  const auto& [name, dtype] = g_state->keys[key];
  KernelRecord record;
  record.kernel = name;
  record.dtype = dtype;
  for (const Tensor* t : call.inputs) record.inputs.push_back(t ? t->Describe() : "null");
  for (const auto& [attr, value] : call.attrs.values()) record.attrs.emplace(attr, value);
  record.context = call.context;
  for (const Tensor* t : call.outputs) record.outputs.push_back(t != nullptr);
  g_state->records.push_back(std::move(record));
  auto it = g_state->behaviours.find(name);
  if (it != g_state->behaviours.end()) return it->second(call, dtype);
  return DefaultOutputs(call);
}

// Enough keys for every kernel name the table binds, times every runtime dtype.
constexpr size_t kMaxKeys = 1200;

template <size_t I>
Status Recording(KernelCall& call) {
  return RunRecorded(I, call);
}

template <size_t... I>
constexpr std::array<KernelFn, sizeof...(I)> MakeRecordingFns(std::index_sequence<I...>) {
  return {&Recording<I>...};
}
constexpr std::array<KernelFn, kMaxKeys> kRecordingFns =
    MakeRecordingFns(std::make_index_sequence<kMaxKeys>{});

StatusOr<std::vector<double>> Values(const KernelCall& call, size_t i) {
  if (!call.has_input(i)) return KernelError("input " + std::to_string(i) + " is absent");
  return ToDoubles(call.input(i));
}

}  // namespace

Status FullBehaviour(KernelCall& call, DType dtype) {
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> shape, call.attrs.Get<std::vector<int64_t>>("shape"));
  IRM_ASSIGN_OR_RETURN(double value, call.attrs.Get<double>("value"));
  call.SetOutput(0, Filled(dtype, shape, value));
  return Status::Ok();
}

Status FullIntArrayBehaviour(KernelCall& call, DType dtype) {
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> value, call.attrs.Get<std::vector<int64_t>>("value"));
  std::vector<double> values(value.begin(), value.end());
  call.SetOutput(0, FromDoubles(values, {static_cast<int64_t>(values.size())}, dtype));
  return Status::Ok();
}

Status LessThanBehaviour(KernelCall& call, DType) {
  IRM_ASSIGN_OR_RETURN(std::vector<double> x, Values(call, 0));
  IRM_ASSIGN_OR_RETURN(std::vector<double> y, Values(call, 1));
  if (x.size() != y.size()) return KernelError("x and y differ in size");
  std::vector<double> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = x[i] < y[i] ? 1.0 : 0.0;
  call.SetOutput(0, FromDoubles(out, call.input(0).shape(), DType::kBool));
  return Status::Ok();
}

Status IncrementBehaviour(KernelCall& call, DType) {
  IRM_ASSIGN_OR_RETURN(std::vector<double> x, Values(call, 0));
  IRM_ASSIGN_OR_RETURN(double value, call.attrs.GetOr<double>("value", 1.0));
  for (double& v : x) v += value;
  call.SetOutput(0, FromDoubles(x, call.input(0).shape(), call.input(0).dtype()));
  return Status::Ok();
}

Status ScaleBehaviour(KernelCall& call, DType) {
  IRM_ASSIGN_OR_RETURN(std::vector<double> x, Values(call, 0));
  IRM_ASSIGN_OR_RETURN(double scale, call.attrs.Get<double>("scale"));
  IRM_ASSIGN_OR_RETURN(double bias, call.attrs.GetOr<double>("bias", 0.0));
  IRM_ASSIGN_OR_RETURN(bool after, call.attrs.GetOr<bool>("bias_after_scale", true));
  for (double& v : x) v = after ? v * scale + bias : (v + bias) * scale;
  call.SetOutput(0, FromDoubles(x, call.input(0).shape(), call.input(0).dtype()));
  return Status::Ok();
}

Status AddBehaviour(KernelCall& call, DType) {
  IRM_ASSIGN_OR_RETURN(std::vector<double> x, Values(call, 0));
  IRM_ASSIGN_OR_RETURN(std::vector<double> y, Values(call, 1));
  if (x.size() != y.size()) return KernelError("x and y differ in size");
  for (size_t i = 0; i < x.size(); ++i) x[i] += y[i];
  call.SetOutput(0, FromDoubles(x, call.input(0).shape(), call.input(0).dtype()));
  return Status::Ok();
}

Status AssignValueBehaviour(KernelCall& call, DType dtype) {
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> shape, call.attrs.Get<std::vector<int64_t>>("shape"));
  IRM_ASSIGN_OR_RETURN(std::vector<double> values, call.attrs.Get<std::vector<double>>("values"));
  call.SetOutput(0, FromDoubles(values, shape, dtype));
  return Status::Ok();
}

RecordingKernels::RecordingKernels() {
  EXPECT_EQ(g_state, nullptr) << "two RecordingKernels at once";
  g_state = new RecorderState();
  Rebuild();
}

RecordingKernels::~RecordingKernels() {
  delete g_state;
  g_state = nullptr;
}

void RecordingKernels::SetBehaviour(const std::string& name, Behaviour behaviour) {
  g_state->behaviours[name] = behaviour;
  Rebuild();
}

void RecordingKernels::Unregister(const std::string& name, DType dtype) {
  g_state->removed.emplace(name, dtype);
  Rebuild();
}

void RecordingKernels::Rebuild() {
  std::set<std::string> names;
  const PirBindings& table = PirBindings::Global();
  for (const std::string& op : table.OpNames()) {
    const OpBinding* b = table.Find(op);
    if (b->kind == BindingKind::kKernel) names.insert(b->kernel);
  }
  for (const auto& [name, behaviour] : g_state->behaviours) names.insert(name);
  // The same registry object, refilled: options already handed out keep pointing at it.
  if (registry_ == nullptr) registry_ = std::make_unique<KernelRegistry>();
  *registry_ = KernelRegistry();
  g_state->keys.clear();
  const KernelSignature any{0, KernelSignature::kVariadic, KernelSignature::kVariadic};
  for (const std::string& name : names) {
    for (DType dtype : kRuntimeDTypes) {
      if (g_state->removed.contains({name, dtype})) continue;
      const size_t key = g_state->keys.size();
      if (key >= kMaxKeys) {
        ADD_FAILURE() << "more recording kernels than kMaxKeys";
        return;
      }
      g_state->keys.emplace_back(name, dtype);
      EXPECT_TRUE(registry_->Register(name, dtype, Device::kCpu, {kRecordingFns[key], any}).ok());
    }
  }
}

ExecutorOptions RecordingKernels::Options() const {
  ExecutorOptions options;
  options.kernels = registry_.get();
  options.file = "t.pir";
  return options;
}

const std::vector<KernelRecord>& RecordingKernels::records() const { return g_state->records; }

std::vector<KernelRecord> RecordingKernels::RecordsOf(std::string_view name) const {
  std::vector<KernelRecord> found;
  for (const KernelRecord& r : g_state->records) {
    if (r.kernel == name) found.push_back(r);
  }
  return found;
}

void RecordingKernels::ClearRecords() { g_state->records.clear(); }

newir::Program ParseVerified(const std::string& text) {
  StatusOr<newir::Program> program = newir::ParseProgram(text, "t.pir");
  if (!program.ok()) {
    ADD_FAILURE() << program.status().ToString() << "\n" << text;
    return newir::Program();
  }
  const Status verified = newir::VerifyProgram(*program, {.file = "t.pir"});
  if (!verified.ok()) ADD_FAILURE() << verified.ToString() << "\n" << text;
  return std::move(program).value();
}

}  // namespace irm::rt::testing
