// Parameter initialisers as Paddle's static graph writes them into the startup program:
// Constant -> fill_constant, Uniform / XavierUniform -> uniform_random, Normal / XavierNormal ->
// gaussian_random, each with Paddle's full attribute set and a `seed` attribute (the
// initializer's own seed, else the program's random_seed, as paddle.nn.initializer does).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "oldir/builder.h"

namespace irm::oldir {

struct Initializer {
  enum class Kind { kConstant, kUniform, kNormal };
  Kind kind = Kind::kConstant;
  float value = 0.0f;                // kConstant
  float low = -1.0f, high = 1.0f;    // kUniform
  float mean = 0.0f, stddev = 1.0f;  // kNormal
  int32_t seed = 0;                  // 0: use the program's random seed

  static Initializer Constant(float value);
  static Initializer Uniform(float low, float high, int32_t seed = 0);
  static Initializer Normal(float mean, float stddev, int32_t seed = 0);
  // Paddle's XavierUniform: U(-sqrt(6 / (fan_in + fan_out)), +...).
  static Initializer XavierUniform(int64_t fan_in, int64_t fan_out, int32_t seed = 0);
  // Paddle's XavierNormal: N(0, sqrt(2 / (fan_in + fan_out))).
  static Initializer XavierNormal(int64_t fan_in, int64_t fan_out, int32_t seed = 0);
};

// Declares `name` (persistable) in the startup program's root block and appends the op that
// initialises it. `program_seed` stands in for a zero initializer seed.
proto::OpDesc* AppendInitializer(ProgramBuilder& startup, const std::string& name,
                                 proto::VarType::Type dtype, const std::vector<int64_t>& dims,
                                 const Initializer& init, int32_t program_seed = 0);

// fill_constant with Paddle's attributes (shape LONGS, value FLOAT, str_value, dtype, force_cpu,
// place_type), writing an existing var `out`. Shared by initialisers, the loss-gradient seed and
// optimizer accumulators.
proto::OpDesc* AppendFillConstant(BlockBuilder& block, const std::string& out,
                                  proto::VarType::Type dtype, const std::vector<int64_t>& shape,
                                  float value);

}  // namespace irm::oldir
