// Initialiser ops for the startup program.
#include "oldir/initializer.h"

#include <cmath>

#include <fmt/format.h>

namespace irm::oldir {

Initializer Initializer::Constant(float value) {
  Initializer init;
  init.kind = Kind::kConstant;
  init.value = value;
  return init;
}

Initializer Initializer::Uniform(float low, float high, int32_t seed) {
  Initializer init;
  init.kind = Kind::kUniform;
  init.low = low;
  init.high = high;
  init.seed = seed;
  return init;
}

Initializer Initializer::Normal(float mean, float stddev, int32_t seed) {
  Initializer init;
  init.kind = Kind::kNormal;
  init.mean = mean;
  init.stddev = stddev;
  init.seed = seed;
  return init;
}

Initializer Initializer::XavierUniform(int64_t fan_in, int64_t fan_out, int32_t seed) {
  const float limit = static_cast<float>(std::sqrt(6.0 / static_cast<double>(fan_in + fan_out)));
  return Uniform(-limit, limit, seed);
}

Initializer Initializer::XavierNormal(int64_t fan_in, int64_t fan_out, int32_t seed) {
  const float stddev = static_cast<float>(std::sqrt(2.0 / static_cast<double>(fan_in + fan_out)));
  return Normal(0.0f, stddev, seed);
}

proto::OpDesc* AppendFillConstant(BlockBuilder& block, const std::string& out,
                                  proto::VarType::Type dtype, const std::vector<int64_t>& shape,
                                  float value) {
  // str_value carries the exact value for dtypes a float cannot hold; Paddle writes it as Python
  // prints the float (1.0, 0.0, 0.001).
  std::string str_value = fmt::format("{}", value);
  if (str_value.find_first_not_of("-0123456789") == std::string::npos) str_value += ".0";
  return block.AppendOp("fill_constant", {}, {{"Out", {out}}},
                        {{"shape", shape},
                         {"value", value},
                         {"str_value", str_value},
                         {"dtype", static_cast<int32_t>(dtype)},
                         {"force_cpu", false},
                         {"place_type", -1}});
}

proto::OpDesc* AppendInitializer(ProgramBuilder& startup, const std::string& name,
                                 proto::VarType::Type dtype, const std::vector<int64_t>& dims,
                                 const Initializer& init, int32_t program_seed) {
  BlockBuilder& block = startup.root();
  block.CreateVar(name, dtype, dims, {.persistable = true});
  const int32_t seed = init.seed != 0 ? init.seed : program_seed;
  switch (init.kind) {
    case Initializer::Kind::kConstant:
      return AppendFillConstant(block, name, dtype, dims, init.value);
    case Initializer::Kind::kUniform:
      return block.AppendOp("uniform_random", {}, {{"Out", {name}}},
                            {{"shape", dims},
                             {"min", init.low},
                             {"max", init.high},
                             {"seed", seed},
                             {"dtype", static_cast<int32_t>(dtype)},
                             {"diag_num", 0},
                             {"diag_step", 0},
                             {"diag_val", 1.0f}});
    case Initializer::Kind::kNormal:
      return block.AppendOp("gaussian_random", {}, {{"Out", {name}}},
                            {{"shape", dims},
                             {"mean", init.mean},
                             {"std", init.stddev},
                             {"seed", seed},
                             {"dtype", static_cast<int32_t>(dtype)}});
  }
  return nullptr;
}

}  // namespace irm::oldir
