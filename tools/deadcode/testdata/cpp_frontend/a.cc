// Fixture: overload twins, virtual overrides, registrations of both kinds, a macro-generated
// function and template uses.
#include "ir.h"

namespace paddle::framework {

void Run(const ProgramDesc& program) { (void)program; }
void Run(const pir::Program& program) { (void)program; }

int Helper(int x) { return x + SharedHelper(); }

class FusePass : public Pass {
 public:
  void Apply() override {}
};

class FuseIrPass : public Pass {
 public:
  void Apply() override {}
};

void ApplyAll(Pass& pass) { pass.Apply(); }

DEFINE_KERNEL(relu)

int UseTemplates() { return Twice(1) + static_cast<int>(Twice(2.0)); }

}  // namespace paddle::framework

REGISTER_PASS(fuse_gemm, paddle::framework::FusePass);
REGISTER_IR_PASS("fuse_gemm", paddle::framework::FuseIrPass);

int main() { return paddle::framework::Helper(0) + paddle::framework::Holder<int>().Get(); }
