// The two IRs' program types, the executor flag and the registration macros (stand-ins for
// Paddle's).
#pragma once

#include <stdexcept>

namespace paddle::framework {
class ProgramDesc {
 public:
  int ops = 0;
};
}  // namespace paddle::framework

namespace pir {
class Program {
 public:
  int ops = 0;
};
}  // namespace pir

extern bool FLAGS_enable_pir_in_executor;

class PassBase {
 public:
  virtual ~PassBase() = default;
  virtual int Apply() = 0;
};

template <typename T>
struct PassRegistrar {
  explicit PassRegistrar(const char* name) : name(name) {}
  const char* name;
  T pass;
};

#define REGISTER_PASS(name, cls) static PassRegistrar<cls> name##_legacy_registrar(#name)
#define REGISTER_IR_PASS(name, cls) static PassRegistrar<cls> name##_ir_registrar(#name)
#define PADDLE_THROW(message) throw std::runtime_error(message)
#define DEFINE_LEGACY_KERNEL(op) \
  inline int op##LegacyKernel(int x) { return x + 1; }
