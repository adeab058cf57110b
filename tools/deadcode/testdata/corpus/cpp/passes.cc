// Passes registered by name through the legacy and the new-IR macro; a legacy serializer that a
// kept legacy API still calls.
#include "framework.h"

namespace ir {

class FuseGemmPass : public PassBase {
 public:
  int Apply() override { return 1; }
};

class FuseGemmPirPass : public PassBase {
 public:
  int Apply() override { return 2; }
};

class LegacyOnlyPass : public PassBase {
 public:
  int Apply() override { return 3; }
};

REGISTER_PASS(fuse_gemm, FuseGemmPass);
REGISTER_IR_PASS(fuse_gemm, FuseGemmPirPass);
REGISTER_PASS(legacy_only, LegacyOnlyPass);

int SerializeDesc(const paddle::framework::ProgramDesc& desc) { return desc.ops; }

int Save(const pir::Program& p, const paddle::framework::ProgramDesc& d) {
  if (FLAGS_enable_pir_in_executor) {
    return p.ops;
  } else {
    return SerializeDesc(d);
  }
}

int SaveInferenceModel(const paddle::framework::ProgramDesc& d) { return SerializeDesc(d); }

}  // namespace ir
