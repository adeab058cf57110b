// The shared checks of the legacy passes' tests (serial_reference_test_support.h).
#include "diff_tests/serial_reference_test_support.h"

#include <cstring>
#include <utility>
#include <vector>

#include "oldir/float64_shadow.h"
#include "oldir/models/gpt.h"
#include "oldir/models/mlp.h"
#include "oldir/models/training.h"
#include "oldir/params_io.h"

namespace irm::diff {

namespace {

rt::ExecutorOptions Seeded(uint64_t seed) {
  rt::ExecutorOptions options;
  options.seed = seed;
  return options;
}

}  // namespace

Status BuildZooTraining(std::string_view model, oldir::OptimizerKind kind,
                        oldir::models::ModelPrograms* out) {
  if (model == "mlp" || model == "mlp8") {
    oldir::models::MlpConfig config;
    config.depth = model == "mlp" ? 4 : 8;
    config.in_features = 4;
    config.width = 8;
    config.classes = 3;
    IRM_RETURN_IF_ERROR(oldir::models::BuildMlp(config, out));
  } else {
    oldir::models::GptConfig config;
    config.layers = model == "gpt6" ? 6 : 2;
    config.hidden = 8;
    config.heads = 4;
    config.vocab = 12;
    config.seq = 4;
    config.dropout = 0.0f;
    IRM_RETURN_IF_ERROR(oldir::models::BuildGpt(config, out));
  }
  oldir::OptimizerOptions optimizer;
  optimizer.kind = kind;
  optimizer.learning_rate = 0.05f;
  return oldir::models::AddTraining(out, optimizer);
}

bool SameBits(const rt::Tensor& a, const rt::Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         (a.nbytes() == 0 || std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0);
}

float Scalar(const rt::Tensor& t) {
  float v = 0.0f;
  std::memcpy(&v, t.raw(), sizeof v);
  return v;
}

oldir::Bundle ZooBundleJson(const oldir::models::ModelPrograms& model,
                            const oldir::passes::Strategy& strategy, int steps,
                            int64_t pipeline_rows) {
  oldir::Bundle bundle;
  bundle.steps = steps;
  bundle.seed = model.seed;
  bundle.strategy = oldir::passes::StrategyToJson(strategy);
  for (const oldir::models::FeedSpec& feed : model.feeds) {
    std::vector<int64_t> shape = feed.shape;
    if (pipeline_rows > 0 && !shape.empty() && shape[0] == -1) shape[0] = pipeline_rows;
    bundle.feeds.push_back({feed.name, shape, DTypeName(*oldir::DTypeFromVarType(feed.dtype)),
                            oldir::FeedSplit::kBatch});
  }
  bundle.fetches = model.fetches;
  return bundle;
}

std::vector<ZooCase> ZooCases(const std::vector<int>& degrees) {
  std::vector<ZooCase> cases;
  for (const char* model : {"mlp", "gpt"}) {
    for (oldir::OptimizerKind optimizer :
         {oldir::OptimizerKind::kSgd, oldir::OptimizerKind::kAdamW}) {
      for (int degree : degrees) cases.push_back({model, optimizer, degree});
    }
  }
  return cases;
}

std::string ZooCaseName(const ZooCase& c, std::string_view prefix) {
  return std::string(c.model) + "_" + oldir::OptimizerKindName(c.optimizer) + "_" +
         std::string(prefix) + std::to_string(c.degree);
}

rt::Tensor ToFloat64(const rt::Tensor& t) {
  if (t.dtype() != DType::kFloat32) return t.Clone();
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = t.data<float>()[i];
  return rt::Tensor::FromVector(v, t.shape());
}

SerialReference::SerialReference(oldir::Program main, oldir::Program shadow_main, uint64_t seed)
    : main_(std::move(main)),
      shadow_main_(std::move(shadow_main)),
      seed_(seed),
      step_(main_, Seeded(seed)),
      shadow_step_(shadow_main_, Seeded(seed)) {}

StatusOr<std::unique_ptr<SerialReference>> SerialReference::Create(
    const oldir::models::ModelPrograms& model) {
  oldir::Program main = model.main.Build();
  oldir::Program shadow_main = main;
  oldir::PromoteToFloat64(shadow_main);
  const uint64_t seed = static_cast<uint64_t>(model.seed);
  std::unique_ptr<SerialReference> reference(
      new SerialReference(std::move(main), std::move(shadow_main), seed));
  IRM_RETURN_IF_ERROR(reference->step_.plan_status());
  IRM_RETURN_IF_ERROR(reference->shadow_step_.plan_status());
  rt::LegacyExecutor init(model.startup.Build(), Seeded(seed));
  IRM_RETURN_IF_ERROR(init.plan_status());
  IRM_RETURN_IF_ERROR(init.Run(reference->serial_, {}).status());
  reference->state_ = reference->serial_.LocalNames();
  for (const std::string& name : reference->state_) {
    const rt::Tensor* t = reference->serial_.FindLocal(name);
    if (t != nullptr && t->defined()) reference->shadow_.Set(name, ToFloat64(*t));
  }
  return reference;
}

StatusOr<std::vector<rt::Fetch>> SerialReference::Step(const rt::FeedMap& feeds) {
  rt::FeedMap wide;
  for (const auto& [name, tensor] : feeds) wide[name] = ToFloat64(tensor);
  IRM_ASSIGN_OR_RETURN(std::vector<rt::Fetch> fetched, step_.Run(serial_, feeds));
  IRM_RETURN_IF_ERROR(shadow_step_.Run(shadow_, wide).status());
  return fetched;
}

rt::FeedMap GlobalFeedBatch(const std::vector<rt::FeedSpec>& specs, int64_t rows,
                            FeedValues& values) {
  rt::FeedMap feeds;
  for (const rt::FeedSpec& spec : specs) {
    std::vector<int64_t> shape = spec.shape;
    int64_t numel = 1;
    for (int64_t& d : shape) {
      if (d < 0) d = rows;
      numel *= d;
    }
    if (spec.dtype == DType::kInt64) {
      std::vector<int64_t> v(static_cast<size_t>(numel));
      const uint64_t bound = spec.index_bound > 0 ? static_cast<uint64_t>(spec.index_bound) : 3;
      for (int64_t& x : v) x = static_cast<int64_t>(values.Next() % bound);
      feeds[spec.name] = rt::Tensor::FromVector(v, shape);
    } else {
      std::vector<float> v(static_cast<size_t>(numel));
      for (float& x : v) x = values.Uniform();
      feeds[spec.name] = rt::Tensor::FromVector(v, shape);
    }
  }
  return feeds;
}

rt::FeedMap FeedRows(const rt::FeedMap& global, int64_t first, int64_t count) {
  rt::FeedMap part;
  for (const auto& [name, tensor] : global) {
    std::vector<int64_t> shape = tensor.shape();
    const size_t row_bytes = tensor.nbytes() / static_cast<size_t>(shape[0]);
    shape[0] = count;
    rt::Tensor rows = rt::Tensor::ZerosUnchecked(tensor.dtype(), shape);
    std::memcpy(rows.raw(), static_cast<const char*>(tensor.raw()) + first * row_bytes,
                count * row_bytes);
    part[name] = std::move(rows);
  }
  return part;
}

}  // namespace irm::diff
