// Hand-made traces for the alignment and first-divergence tests: records built field by field,
// an output given by name and hash (and optionally its values, kept as a float32 tensor).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "diff_tests/trace_align.h"
#include "reference_runtime/kernels/kernel_test_support.h"

namespace irm::diff::testing {

struct Out {
  std::string name;
  uint64_t hash = 0;
  std::vector<double> values = {};  // non-empty: kept as a float32 tensor of this many elements
};

inline rt::OpRecord Rec(int step, std::string type, std::vector<std::string> inputs,
                        std::vector<Out> outputs, int op_index = 0) {
  rt::OpRecord r;
  r.step = step;
  r.op_type = std::move(type);
  r.op_index = op_index;
  r.inputs = std::move(inputs);
  for (Out& o : outputs) {
    rt::OutputRecord out;
    out.name = o.name;
    out.produced = true;
    out.dtype = DType::kFloat32;
    out.shape = {static_cast<int64_t>(o.values.empty() ? 1 : o.values.size())};
    out.hash = o.hash;
    if (!o.values.empty()) {
      out.tensor = rt::testing::FromDoubles(o.values, out.shape, DType::kFloat32);
    }
    r.outputs.push_back(std::move(out));
  }
  return r;
}

}  // namespace irm::diff::testing
