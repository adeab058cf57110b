// Test support for the new-IR executor's tests: a kernel registry in which every kernel the
// binding table names exists for every runtime dtype and records how it was called — kernel name,
// registry dtype, inputs (dtype and shape), attributes and context — so that tests can check what
// the executor hands each kernel. By default a kernel's output i has the dtype and shape of its
// first input (float32[1] without inputs) and every element 100 + i; a test can give a kernel a
// small real behaviour instead (full, less_than, increment, ... for the semantics of control flow
// and of mutable operands). Also: parsing and verifying a program from its text form.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "newir/program.h"
#include "reference_runtime/executor.h"
#include "reference_runtime/kernel.h"

namespace irm::rt::testing {

struct KernelRecord {
  std::string kernel;
  DType dtype = DType::kFloat32;    // the registry key it ran under
  std::vector<std::string> inputs;  // Tensor::Describe() of each input, "null" when absent
  std::map<std::string, AttrValue, std::less<>> attrs;
  KernelContext context;
  std::vector<bool> outputs;  // per output: whether it was wanted
};

// Behaviours that do what the real kernel does, on doubles, for the dtypes tests use.
Status FullBehaviour(KernelCall& call, DType dtype);          // shape, value, dtype
Status FullIntArrayBehaviour(KernelCall& call, DType dtype);  // value, dtype
Status LessThanBehaviour(KernelCall& call, DType dtype);      // same-shape x < y
Status IncrementBehaviour(KernelCall& call, DType dtype);     // x + value
Status ScaleBehaviour(KernelCall& call, DType dtype);         // x * scale + bias
Status AddBehaviour(KernelCall& call, DType dtype);           // same-shape x + y
Status AssignValueBehaviour(KernelCall& call, DType dtype);   // shape, values, dtype

class RecordingKernels {
 public:
  using Behaviour = Status (*)(KernelCall& call, DType dtype);

  // Registers the recording kernels; only one RecordingKernels may exist at a time.
  RecordingKernels();
  ~RecordingKernels();
  RecordingKernels(const RecordingKernels&) = delete;
  RecordingKernels& operator=(const RecordingKernels&) = delete;

  // Gives kernel `name` (registered already, or added) a behaviour instead of the default
  // outputs.
  void SetBehaviour(const std::string& name, Behaviour behaviour);
  // Removes kernel `name` for `dtype`, so that a look-up of it fails.
  void Unregister(const std::string& name, DType dtype);

  const KernelRegistry& registry() const { return *registry_; }
  // Options naming this registry and the file "t.pir".
  ExecutorOptions Options() const;
  const std::vector<KernelRecord>& records() const;
  // The records of kernel `name`, in call order.
  std::vector<KernelRecord> RecordsOf(std::string_view name) const;
  void ClearRecords();

 private:
  void Rebuild();
  std::unique_ptr<KernelRegistry> registry_;
};

// Parses `text` (file "t.pir") and verifies it; fails the test when either fails.
newir::Program ParseVerified(const std::string& text);

}  // namespace irm::rt::testing
