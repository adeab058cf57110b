// The float64 shadow of a legacy program: the same program computing in float64 wherever it
// computed in float32 — every FP32 tensor var becomes FP64, and every op attribute that names an
// element type (dtype, in_dtype, out_dtype) FP32 names FP64 (assign_value's fp32_values move to
// fp64_values). Other element types (integers, bool, float16, bfloat16) are left alone. It is what
// parity's noise-floor arbitration runs (an fp64 shadow of program A) and how the runtime checks
// whole-program gradients against finite differences, which need float64 to mean anything.
#pragma once

#include "oldir/program.h"

namespace irm::oldir {

// Promotes `program` in place; returns how many vars and attributes changed.
int PromoteToFloat64(Program& program);

}  // namespace irm::oldir
