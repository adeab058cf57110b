// Fixture for the C++ front end's tests: the legacy and new-IR types, the flags and registration
// macros of a Paddle-like code base, a header-defined inline function and a function template.
#pragma once

#include <stdexcept>
#include <string>

namespace paddle::framework {
class ProgramDesc {};
}  // namespace paddle::framework
namespace pir {
class Program {};
}  // namespace pir

namespace paddle {
extern bool FLAGS_enable_pir_api;
extern bool FLAGS_enable_pir_in_executor;
}  // namespace paddle

bool GetFlag(const std::string& name);
bool UsePirApi();
int RegisterPass(const char* name, void* pass);

#define PADDLE_THROW(message)          \
  do {                                 \
    throw std::runtime_error(message); \
  } while (0)
#define REGISTER_PASS(name, cls) static int registered_##name = RegisterPass(#name, new cls)
#define REGISTER_IR_PASS(name, cls)                \
  namespace {                                      \
  int registered_ir = RegisterPass(name, new cls); \
  }
#define DEFINE_KERNEL(name) \
  int name##_kernel(int x) { return x; }
#define GUARDED_IN_MACRO()    \
  if (FLAGS_enable_pir_api) { \
    NewPath();                \
  } else {                    \
    OldPath();                \
  }

namespace paddle::framework {

class Pass {
 public:
  virtual ~Pass() = default;
  virtual void Apply() = 0;
};

struct Options {
  bool in_pir_mode_ = false;
};

void NewPath();
void OldPath();
int NewValue();
int OldValue();
int Helper(int x);

inline int SharedHelper() { return 1; }

template <typename T>
T Twice(T x) {
  return x + x;
}

template <typename T>
class Holder {
 public:
  T Get() const { return value_; }
  T value_{};
};

}  // namespace paddle::framework
