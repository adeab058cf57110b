// What the tests of the legacy passes share when they check a pass's output against the serial
// program (docs/architecture.md, invariant 6): the small zoo training programs they run, a few
// tensor helpers, and the serial twin with its float64 shadow that a tensor missing the reordered
// tier is arbitrated by — with the parity driver's own rule (serial_arbitration.h, AgainstSerial),
// so the passes' tests and `ir-migrate parity --serial` judge alike.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "diff_tests/serial_arbitration.h"
#include "oldir/bundle.h"
#include "oldir/models/model.h"
#include "oldir/optimizer.h"
#include "oldir/passes/strategy.h"
#include "oldir/program.h"
#include "reference_runtime/executor.h"
#include "reference_runtime/legacy_executor.h"
#include "reference_runtime/tensor.h"

namespace irm::diff {

// "mlp" (4 -> 8 -> 8 -> 8 -> 3: two Megatron column/row pairs, one linear per stage at pp4) or
// "gpt" (2 layers, hidden 8, 4 heads, vocab 12 — tp2 and tp4 divide both —, sequence 4, no
// dropout: dropout draws by the local element index, which a split batch changes); "mlp8" and
// "gpt6" the same with 8 linears / 6 layers (8 layer units: pp4 x vpp2 chunks),
// with its backward and `kind` (learning rate 0.05).
Status BuildZooTraining(std::string_view model, oldir::OptimizerKind kind,
                        oldir::models::ModelPrograms* out);

// bundle.json's shared fields for a pass's output on `model`, as `ir-migrate build --strategy`
// writes them: steps, seed, the strategy (its dp_degree splits the batch among replicas), feeds
// and fetches; `pipeline_rows` > 0 fixes the feeds' batch dim (a pipeline's recv shapes are
// static), 0 keeps -1.
oldir::Bundle ZooBundleJson(const oldir::models::ModelPrograms& model,
                            const oldir::passes::Strategy& strategy, int steps,
                            int64_t pipeline_rows = 0);

// One case of the passes' tests: a zoo model ("mlp", "gpt"), an optimizer, and the degree of the
// pass under test (dp_degree, mp_degree, k_steps).
struct ZooCase {
  const char* model;
  oldir::OptimizerKind optimizer;
  int degree;
};
// The passes' tests' grid: mlp then gpt, SGD then AdamW, each of `degrees`.
std::vector<ZooCase> ZooCases(const std::vector<int>& degrees);
// "<model>_<optimizer>_<prefix><degree>": "mlp_sgd_dp2".
std::string ZooCaseName(const ZooCase& c, std::string_view prefix);

bool SameBits(const rt::Tensor& a, const rt::Tensor& b);
float Scalar(const rt::Tensor& t);  // the first element of a float32 tensor

// A deterministic stream of feed values (a 64-bit LCG from `seed`), so that every run of a test
// sees the same batches.
class FeedValues {
 public:
  explicit FeedValues(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    state_ = state_ * 6364136223846793005ull + 1442695040888963407ull;
    return state_ >> 33;
  }
  float Uniform() { return static_cast<float>(Next() % 2001) / 1000.0f - 1.0f; }

 private:
  uint64_t state_;
};
// A global batch of `rows` rows (for every -1 dim) for every feed of `specs`: floats uniform in
// [-1, 1], indices below the feed's bound (3 without one).
rt::FeedMap GlobalFeedBatch(const std::vector<rt::FeedSpec>& specs, int64_t rows,
                            FeedValues& values);
// Rows [first, first + count) of every feed (the batch dimension is the first).
rt::FeedMap FeedRows(const rt::FeedMap& global, int64_t first, int64_t count);
// `t` in float64 when it is float32; other tensors as they are (a copy).
rt::Tensor ToFloat64(const rt::Tensor& t);

// The serial program of a model and its float64 shadow (oldir::PromoteToFloat64), both starting
// from the serial startup's parameters: what a pass's output is checked against.
class SerialReference {
 public:
  static StatusOr<std::unique_ptr<SerialReference>> Create(
      const oldir::models::ModelPrograms& model);
  SerialReference(const SerialReference&) = delete;
  SerialReference& operator=(const SerialReference&) = delete;

  // One step of both programs on `feeds` (the shadow on them widened): the serial fetches.
  StatusOr<std::vector<rt::Fetch>> Step(const rt::FeedMap& feeds);

  const oldir::Program& main() const { return main_; }
  std::vector<rt::FeedSpec> FeedSpecs() const { return step_.FeedSpecs(); }
  uint64_t seed() const { return seed_; }
  rt::Scope& serial() { return serial_; }
  rt::Scope& shadow() { return shadow_; }
  // The startup's vars: parameters, learning rate, optimizer state.
  const std::vector<std::string>& state() const { return state_; }

 private:
  SerialReference(oldir::Program main, oldir::Program shadow_main, uint64_t seed);

  const oldir::Program main_;
  const oldir::Program shadow_main_;
  const uint64_t seed_;
  rt::LegacyExecutor step_;
  rt::LegacyExecutor shadow_step_;
  rt::Scope serial_;
  rt::Scope shadow_;
  std::vector<std::string> state_;
};

}  // namespace irm::diff
