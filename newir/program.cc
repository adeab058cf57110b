// Program construction.
#include "newir/program.h"

#include "newir/op_info.h"

namespace irm::newir {

Program::Program()
    : module_(Operation::Create("builtin.module", {}, {}, {}, 1,
                                OpRegistry::Global().Lookup("builtin.module"))) {
  module_->region(0).AddBlock();
}

size_t Program::CountOps() const {
  size_t n = 0;
  module_->Walk([&n](Operation*) { ++n; });
  return n - 1;
}

}  // namespace irm::newir
