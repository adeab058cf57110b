// The parity report's model: names and counts (parity_report.h).
#include "diff_tests/parity_report.h"

namespace irm::diff {

const char* TensorGroupName(TensorGroup group) {
  switch (group) {
    case TensorGroup::kFetch:
      return "fetches";
    case TensorGroup::kParameter:
      return "parameters";
    case TensorGroup::kIntermediate:
      return "intermediates";
  }
  return "intermediates";
}

const char* IsolationVerdictName(IsolationReport::Verdict verdict) {
  switch (verdict) {
    case IsolationReport::Verdict::kOpDiffers:
      return "the op itself computes differently";
    case IsolationReport::Verdict::kInheritedDrift:
      return "inherited drift";
    case IsolationReport::Verdict::kNotRun:
      return "not run";
  }
  return "not run";
}

bool ParityReport::parity() const { return Mismatched() == 0 && CommMismatched() == 0; }

int ParityReport::CommMismatched() const {
  int n = 0;
  for (const CommDiff& c : communication) n += c.equal ? 0 : 1;
  return n;
}

int ParityReport::Compared(std::optional<TensorGroup> group) const {
  int n = 0;
  for (const ComparedTensor& t : tensors) {
    if (t.compared && (!group || t.group == *group)) ++n;
  }
  return n;
}

int ParityReport::Mismatched(std::optional<TensorGroup> group) const {
  int n = 0;
  for (const ComparedTensor& t : tensors) {
    if (t.compared && !t.comparison.pass && (!group || t.group == *group)) ++n;
  }
  return n;
}

int ParityReport::NotCompared() const {
  int n = 0;
  for (const ComparedTensor& t : tensors) n += t.compared ? 0 : 1;
  return n;
}

int ParityReport::Arbitrated() const {
  int n = 0;
  for (const ComparedTensor& t : tensors) {
    n += t.arbitration && t.arbitration->agreement != Agreement::kMismatch ? 1 : 0;
  }
  return n;
}

}  // namespace irm::diff
