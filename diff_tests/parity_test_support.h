// What the whole-program parity tests share: the model-zoo programs (mlp and gpt, every optimizer
// configuration, with and without gradient clipping) as startup + main, the fault-injection
// program of diff_tests/testdata, and translation for tests that mutate the result.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "oldir/program.h"
#include "translator/translate.h"

namespace irm::diff::testing {

struct ZooCase {
  std::string name;  // "mlp adam+clip"
  oldir::Program main;
  oldir::Program startup;
};

// Every model-zoo training program.
std::vector<ZooCase> EveryZooCase();

// A legacy program in protobuf text form from diff_tests/testdata.
StatusOr<oldir::Program> LoadTestProgram(const std::string& name);

}  // namespace irm::diff::testing
