// Fixture: every guard shape the C++ front end knows, and the negative controls.
#include "ir.h"

namespace paddle::framework {

void IfElse() {
  if (FLAGS_enable_pir_api) {
    NewPath();
  } else {
    OldPath();
  }
}

void Negated() {
  if (!(paddle::FLAGS_enable_pir_in_executor)) {
    OldPath();
  }
}

int EarlyReturn() {
  int calls = SharedHelper();
  if (GetFlag("FLAGS_enable_pir_api")) {
    NewPath();
    return calls;
  }
  OldPath();
  return Helper(calls);
}

void GuardVariable() {
  const bool use_pir = FLAGS_enable_pir_api;
  if (!use_pir) {
    OldPath();
  } else {
    NewPath();
  }
}

int Ternary() { return FLAGS_enable_pir_api ? NewValue() : OldValue(); }

void ElseOnlyThrows() {
  if (FLAGS_enable_pir_api) {
    NewPath();
  } else {
    PADDLE_THROW("the legacy IR is not supported");
  }
}

void Elif(int x) {
  if (x > 0) {
    NewPath();
  } else if (UsePirApi()) {
    NewPath();
  } else {
    OldPath();
  }
}

void Attribute(const Options& options) {
  if (options.in_pir_mode_) {
    NewPath();
  } else {
    OldPath();
  }
}

// Negative controls: no else and no early return; a condition that is more than a guard; a
// branch written by a macro.
void NoElse() {
  if (FLAGS_enable_pir_api) {
    NewPath();
  }
  OldPath();
}

void NotOnlyAGuard(bool other) {
  if (other && FLAGS_enable_pir_api) {
    NewPath();
  } else {
    OldPath();
  }
}

void InMacro() { GUARDED_IN_MACRO(); }

long UseHolder() { return Holder<long>().Get(); }

extern bool kPirMode;

void NameGuard() {
  if (kPirMode) {
    NewPath();
  } else {
    OldPath();
  }
}

int EarlyReturnThenThrow() {
  const bool use_pir = UsePirApi();
  if (use_pir) {
    return NewValue();
  }
  PADDLE_THROW("the legacy IR is not supported");
}

}  // namespace paddle::framework
