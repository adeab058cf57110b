// Fuzzes the reference runtime — the LegacyExecutor's planning and binding table and every kernel
// it reaches — on whatever the legacy-program reader accepts and the validator passes: running
// the program (startup-free, random feeds, a few steps) must succeed or fail with a located
// message, never crash, hang, leak or hit undefined behaviour (ASan + UBSan).
// The harness keeps memory and time bounded, which are limits of the harness, not of the runtime:
// persistable vars are made from their declarations (random values, as a startup program would)
// so that runs get past the parameters and into the kernels; it skips programs with more than 256
// ops, declared tensors over 4096 elements (or a dim over
// 4096), constant shapes over 4096 elements, shapes read from tensors (fill_constant and the
// random ops with tensor inputs), and `while` loops (a fuzzed condition may never turn false).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "oldir/params_io.h"
#include "oldir/program_io.h"
#include "oldir/validator.h"
#include "reference_runtime/legacy_executor.h"
#include "reference_runtime/run.h"

namespace {

constexpr int64_t kMaxElements = 4096;

void Require(bool condition) {
  if (!condition) __builtin_trap();
}

bool SmallShape(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d > kMaxElements) return false;
    n *= d < 0 ? 2 : d;  // -1: the batch of random feeds
    if (n > kMaxElements) return false;
  }
  return true;
}

bool SmallInts(const irm::oldir::proto::OpDesc::Attr& attr) {
  std::vector<int64_t> dims(attr.ints().begin(), attr.ints().end());
  dims.insert(dims.end(), attr.longs().begin(), attr.longs().end());
  return SmallShape(dims);
}

bool WithinBounds(const irm::oldir::Program& program) {
  if (program.num_ops() > 256) return false;
  for (int b = 0; b < program.num_blocks(); ++b) {
    const irm::oldir::Block block = program.block(b);
    for (const auto& var : block.desc().vars()) {
      if (!SmallShape(irm::oldir::Var(&var).dims())) return false;
    }
    for (const auto& op : block.desc().ops()) {
      if (op.type() == "while") return false;
      const bool creates = op.type() == "fill_constant" || op.type() == "uniform_random" ||
                           op.type() == "gaussian_random" || op.type() == "assign_value";
      if (creates && op.inputs_size() > 0) return false;
      for (const auto& attr : op.attrs()) {
        if (attr.name() == "shape" && !SmallInts(attr)) return false;
      }
    }
  }
  return true;
}

// Every persistable dense var of the root block with known dims, from the seed.
void InitPersistables(const irm::oldir::Program& program, irm::rt::Scope& scope) {
  for (const auto& desc : program.root().desc().vars()) {
    const irm::oldir::Var var(&desc);
    const auto type = var.dtype();
    if (!var.persistable() || !type) continue;
    const auto dtype = irm::oldir::DTypeFromVarType(*type);
    if (!dtype || !irm::rt::IsRuntimeDType(*dtype)) continue;
    const irm::rt::FeedSpec spec{var.name(), *dtype, var.dims(), 0};
    scope.SetLocal(var.name(), irm::rt::RandomFeed(spec, /*seed=*/1, /*step=*/0, /*batch_size=*/2));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto program = irm::oldir::ParseProgram(bytes, "fuzz-input");
  if (!program.ok() || !WithinBounds(*program)) return 0;
  irm::oldir::ValidateOptions validate;
  validate.file = "fuzz-input";
  if (irm::oldir::ValidateProgram(*program, validate).HasErrors()) return 0;

  irm::rt::ExecutorOptions options;
  options.file = "fuzz-input";
  options.seed = 1;
  irm::rt::LegacyExecutor executor(*program, options);
  irm::rt::Scope scope;
  InitPersistables(*program, scope);
  irm::rt::TrainingConfig config;
  config.steps = 2;
  config.random_feeds = true;
  config.batch_size = 2;
  auto ran = irm::rt::RunTraining(nullptr, executor, scope, config);
  if (!ran.ok()) Require(!ran.status().message().empty());
  return 0;
}
