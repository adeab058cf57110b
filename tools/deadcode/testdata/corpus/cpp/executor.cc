// The executor: overload twins, every guard shape on FLAGS_enable_pir_in_executor, a template and
// a macro-written kernel on legacy paths.
#include "framework.h"
#include "util.h"

bool FLAGS_enable_pir_in_executor = false;

namespace ir {

DEFINE_LEGACY_KERNEL(Relu)

int RunProgram(const paddle::framework::ProgramDesc& program) { return LegacyStep(program.ops); }

int RunProgram(const pir::Program& program) { return CountOps(program.ops); }

int PrepareInterpreter_in_old_ir(int ops) { return LegacyCopy(ops); }

int PrepareInterpreter_in_pir(int ops) { return ops; }

int Execute(const pir::Program& p, const paddle::framework::ProgramDesc& d) {
  if (FLAGS_enable_pir_in_executor) {
    return RunProgram(p);
  } else {
    return RunProgram(d);
  }
}

int ExecuteEarly(const pir::Program& p, int ops) {
  if (FLAGS_enable_pir_in_executor) {
    return PrepareInterpreter_in_pir(p.ops);
  }
  const int prepared = PrepareInterpreter_in_old_ir(ops);
  return prepared;
}

int ExecuteNegated(int ops) {
  if (!FLAGS_enable_pir_in_executor) {
    return ReluLegacyKernel(ops);
  }
  return ops;
}

int ExecuteWithVariable(int ops) {
  const bool use_pir = FLAGS_enable_pir_in_executor;
  if (use_pir) {
    return ops;
  } else {
    return LegacyCopy<long>(ops) > 0 ? 1 : 0;
  }
}

int ExecuteTernary(int ops) { return FLAGS_enable_pir_in_executor ? ops : LegacyStep(ops); }

// Negative controls: a legacy branch that only throws, and a new-IR branch with no else.
int OnlyThrowsOnLegacy(int ops) {
  if (FLAGS_enable_pir_in_executor) {
    return ops;
  } else {
    PADDLE_THROW("the legacy executor is gone");
  }
}

int PirWithoutElse(int ops) {
  if (FLAGS_enable_pir_in_executor) {
    ops += 1;
  }
  return ops;
}

}  // namespace ir

int main() { return ir::ExecuteWithVariable(ir::ExecuteNegated(ir::ExecuteEarly({}, 1))); }
