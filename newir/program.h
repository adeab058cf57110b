// A new-IR program: a top `builtin.module` op whose one region holds one block, the top block
// where parameters, ops and outputs live. The Program owns every op, region, block and value in
// it; destroying it frees them all. Moving a Program keeps every pointer into it valid.
#pragma once

#include <memory>

#include "newir/block.h"
#include "newir/operation.h"

namespace irm::newir {

class Program {
 public:
  Program();
  Program(Program&&) noexcept = default;
  Program& operator=(Program&&) noexcept = default;
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  Operation& module() const { return *module_; }
  Block& block() const { return module_->region(0).front(); }
  // Number of ops in the whole program, nested ones included (the module op itself excluded).
  size_t CountOps() const;

 private:
  std::unique_ptr<Operation> module_;
};

}  // namespace irm::newir
