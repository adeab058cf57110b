// Reading and writing the strategy JSON (strategy.h).
#include "oldir/passes/strategy.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <vector>

#include "common/diagnostic.h"
#include "common/file_io.h"
#include "common/json_kind.h"
#include "common/json_pointer.h"

namespace irm::oldir::passes {
namespace {

using json = nlohmann::json;

// The schedules Paddle's pipeline_scheduler_pass registers (pipelines.md §1.1).
constexpr std::array<std::string_view, 6> kScheduleModes = {"FThenB", "1F1B", "Eager1F1B",
                                                            "VPP",    "ZBH1", "ZBVPP"};

// Structure and range errors of one strategy file, located by JSON pointer.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  Location At(const std::string& pointer) const {
    Location loc = Location::File(file_);
    if (!pointer.empty()) loc.detail = pointer;
    return loc;
  }
  Status Error(StatusCode code, const std::string& pointer, std::string message) const {
    return Status(code, At(pointer), std::move(message));
  }
  Status WrongType(const std::string& pointer, const char* expected, const json& v) const {
    return Error(StatusCode::kParseError, pointer,
                 fmt::format("expected {}, found {}", expected, JsonKindName(v)));
  }
  Status Object(const std::string& pointer, const json& v,
                const std::vector<std::string_view>& known) const {
    if (!v.is_object()) return WrongType(pointer, "an object", v);
    for (const auto& [key, value] : v.items()) {
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      Status status = Error(StatusCode::kParseError, JsonPointerChild(pointer, key),
                            fmt::format("unknown field '{}'", key));
      status.AddNote(fmt::format("the fields here are: {}", fmt::join(known, ", ")));
      return status;
    }
    return Status::Ok();
  }
  // Reads member `key` of `obj` (when present) into `out`.
  Status Bool(const std::string& pointer, const json& obj, std::string_view key, bool* out) const {
    auto it = obj.find(key);
    if (it == obj.end()) return Status::Ok();
    if (!it->is_boolean()) return WrongType(JsonPointerChild(pointer, key), "a boolean", *it);
    *out = it->get<bool>();
    return Status::Ok();
  }
  // An integer >= `min`.
  Status Int(const std::string& pointer, const json& obj, std::string_view key, int min,
             int* out) const {
    auto it = obj.find(key);
    if (it == obj.end()) return Status::Ok();
    const std::string p = JsonPointerChild(pointer, key);
    if (!it->is_number_integer()) return WrongType(p, "an integer", *it);
    const bool in_range = it->is_number_unsigned()
                              ? it->get<uint64_t>() >= static_cast<uint64_t>(min) &&
                                    it->get<uint64_t>() <= uint64_t{INT32_MAX}
                              : it->get<int64_t>() >= min && it->get<int64_t>() <= INT32_MAX;
    if (!in_range) {
      return Error(
          StatusCode::kInvalidArgument, p,
          fmt::format("'{}' must be an integer of at least {}, not {}", key, min, it->dump()));
    }
    *out = it->get<int>();
    return Status::Ok();
  }
  Status String(const std::string& pointer, const json& obj, std::string_view key,
                std::string* out) const {
    auto it = obj.find(key);
    if (it == obj.end()) return Status::Ok();
    if (!it->is_string()) return WrongType(JsonPointerChild(pointer, key), "a string", *it);
    *out = it->get<std::string>();
    return Status::Ok();
  }
  // A number > 0.
  Status Positive(const std::string& pointer, const json& obj, std::string_view key,
                  double* out) const {
    auto it = obj.find(key);
    if (it == obj.end()) return Status::Ok();
    const std::string p = JsonPointerChild(pointer, key);
    if (!it->is_number()) return WrongType(p, "a number", *it);
    const double value = it->get<double>();
    if (!(value > 0)) {
      return Error(StatusCode::kInvalidArgument, p,
                   fmt::format("'{}' must be a positive number, not {}", key, it->dump()));
    }
    *out = value;
    return Status::Ok();
  }

 private:
  std::string file_;
};

// The rules between fields: a pipeline needs pp_degree > 1 and the reverse; chunks and split
// backward belong to the schedules that have them; the pipeline accumulates its micro-batches
// itself (pipeline.accumulate_steps), so gradient merge on top of it is a contradiction.
Status CheckConsistent(const Reader& r, const Strategy& s) {
  auto invalid = [&](const std::string& pointer, std::string message) {
    return r.Error(StatusCode::kInvalidArgument, pointer, std::move(message));
  };
  const PipelineStrategy& pp = s.pipeline;
  if (s.pp_degree > 1 && !pp.enable) {
    return invalid("/pipeline/enable",
                   fmt::format("pp_degree {} needs pipeline.enable", s.pp_degree));
  }
  if (pp.enable && s.pp_degree == 1) {
    return invalid("/pp_degree", "pipeline.enable needs pp_degree > 1");
  }
  const bool chunked = pp.schedule_mode == "VPP" || pp.schedule_mode == "ZBVPP";
  if (pp.vpp_degree > 1 && !chunked) {
    return invalid("/pipeline/vpp_degree",
                   fmt::format("vpp_degree {} needs schedule_mode VPP or ZBVPP, not {}",
                               pp.vpp_degree, pp.schedule_mode));
  }
  if (pp.split_backward && pp.schedule_mode != "VPP") {
    return invalid("/pipeline/split_backward", "split_backward belongs to schedule_mode VPP");
  }
  if (pp.enable && s.gradient_merge.enable) {
    return invalid("/gradient_merge/enable",
                   "a pipeline accumulates its micro-batches itself (pipeline.accumulate_steps); "
                   "gradient merge on top of it is not a strategy Paddle runs");
  }
  return Status::Ok();
}

// Refuses what no pass implements yet: a strategy asking for it must not run as if it did not.
Status RefuseUnimplemented(const Reader& r, const Strategy& s) {
  const Strategy defaults;
  auto refuse = [&](const std::string& pointer, std::string_view what) {
    return r.Error(StatusCode::kUnimplemented, pointer,
                   fmt::format("{} is not supported yet", what));
  };
  if (s.pipeline.enable_send_recv_overlap) {
    return refuse("/pipeline/enable_send_recv_overlap", "overlapping send and receive");
  }
  if (s.dp_optimization.gradient_sync_after_accumulate) {
    return refuse("/dp_optimization/gradient_sync_after_accumulate",
                  "synchronising the gradients after accumulation");
  }
  // The fused buckets make each gradient a view that coalesce_tensor writes before the bucket's
  // all-reduce, so an accumulation add placed after the gradient's last writer would read it
  // unreduced: gradient merge and a pipeline's accumulation both have such adds.
  if (s.dp_degree > 1 && s.fuse_all_reduce()) {
    if (s.gradient_merge.enable) {
      return refuse("/gradient_merge",
                    "gradient merge with the fused all-reduce (dp_optimization)");
    }
    if (s.pipeline.enable) {
      return refuse("/pipeline", "a pipeline with the fused all-reduce (dp_optimization)");
    }
  }
  if (s.fused_passes != defaults.fused_passes) return refuse("/fused_passes", "fused_passes");
  return Status::Ok();
}

}  // namespace

StatusOr<Strategy> ParseStrategyJson(std::string_view text, const std::string& file) {
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    return Status(StatusCode::kParseError,
                  Location::File(file).With(fmt::format("byte {}", e.byte)), e.what());
  } catch (const json::exception& e) {
    return Status(StatusCode::kParseError, Location::File(file), e.what());
  }
  const Reader r(file);
  Strategy s;
  IRM_RETURN_IF_ERROR(r.Object("", doc,
                               {"dp_degree", "mp_degree", "pp_degree", "world_size", "pipeline",
                                "gradient_merge", "dp_optimization", "fused_passes"}));
  IRM_RETURN_IF_ERROR(r.Int("", doc, "dp_degree", 1, &s.dp_degree));
  IRM_RETURN_IF_ERROR(r.Int("", doc, "mp_degree", 1, &s.mp_degree));
  IRM_RETURN_IF_ERROR(r.Int("", doc, "pp_degree", 1, &s.pp_degree));
  if (int64_t{s.dp_degree} * s.mp_degree * s.pp_degree > 1 << 20) {
    return r.Error(StatusCode::kInvalidArgument, "",
                   "dp_degree * mp_degree * pp_degree is larger than 2^20 ranks");
  }
  if (auto it = doc.find("world_size"); it != doc.end()) {
    int world = 0;
    IRM_RETURN_IF_ERROR(r.Int("", doc, "world_size", 1, &world));
    if (world != s.world_size()) {
      return r.Error(StatusCode::kInvalidArgument, "/world_size",
                     fmt::format("world_size {} is not dp_degree * mp_degree * pp_degree = {}",
                                 world, s.world_size()));
    }
  }
  if (auto it = doc.find("pipeline"); it != doc.end()) {
    const std::string p = "/pipeline";
    IRM_RETURN_IF_ERROR(r.Object(p, *it,
                                 {"enable", "schedule_mode", "accumulate_steps", "vpp_degree",
                                  "split_backward", "enable_send_recv_overlap"}));
    PipelineStrategy& pp = s.pipeline;
    IRM_RETURN_IF_ERROR(r.Bool(p, *it, "enable", &pp.enable));
    IRM_RETURN_IF_ERROR(r.String(p, *it, "schedule_mode", &pp.schedule_mode));
    if (std::find(kScheduleModes.begin(), kScheduleModes.end(), pp.schedule_mode) ==
        kScheduleModes.end()) {
      Status status = r.Error(StatusCode::kInvalidArgument, JsonPointerChild(p, "schedule_mode"),
                              fmt::format("unknown schedule_mode '{}'", pp.schedule_mode));
      status.AddNote(fmt::format("the schedules are: {}", fmt::join(kScheduleModes, ", ")));
      return status;
    }
    IRM_RETURN_IF_ERROR(r.Int(p, *it, "accumulate_steps", 1, &pp.accumulate_steps));
    IRM_RETURN_IF_ERROR(r.Int(p, *it, "vpp_degree", 1, &pp.vpp_degree));
    IRM_RETURN_IF_ERROR(r.Bool(p, *it, "split_backward", &pp.split_backward));
    IRM_RETURN_IF_ERROR(r.Bool(p, *it, "enable_send_recv_overlap", &pp.enable_send_recv_overlap));
  }
  if (auto it = doc.find("gradient_merge"); it != doc.end()) {
    const std::string p = "/gradient_merge";
    IRM_RETURN_IF_ERROR(r.Object(p, *it, {"enable", "k_steps", "avg"}));
    IRM_RETURN_IF_ERROR(r.Bool(p, *it, "enable", &s.gradient_merge.enable));
    IRM_RETURN_IF_ERROR(r.Int(p, *it, "k_steps", 1, &s.gradient_merge.k_steps));
    IRM_RETURN_IF_ERROR(r.Bool(p, *it, "avg", &s.gradient_merge.avg));
  }
  if (auto it = doc.find("dp_optimization"); it != doc.end()) {
    const std::string p = "/dp_optimization";
    IRM_RETURN_IF_ERROR(r.Object(p, *it,
                                 {"enable", "fuse_all_reduce_ops", "fuse_grad_size_in_MB",
                                  "gradient_sync_after_accumulate"}));
    DpOptimizationStrategy& dp = s.dp_optimization;
    IRM_RETURN_IF_ERROR(r.Bool(p, *it, "enable", &dp.enable));
    IRM_RETURN_IF_ERROR(r.Bool(p, *it, "fuse_all_reduce_ops", &dp.fuse_all_reduce_ops));
    IRM_RETURN_IF_ERROR(r.Positive(p, *it, "fuse_grad_size_in_MB", &dp.fuse_grad_size_in_MB));
    IRM_RETURN_IF_ERROR(
        r.Bool(p, *it, "gradient_sync_after_accumulate", &dp.gradient_sync_after_accumulate));
  }
  if (auto it = doc.find("fused_passes"); it != doc.end()) {
    const std::string p = "/fused_passes";
    IRM_RETURN_IF_ERROR(r.Object(p, *it, {"enable", "fused_passes_list"}));
    IRM_RETURN_IF_ERROR(r.Bool(p, *it, "enable", &s.fused_passes.enable));
    if (auto list = it->find("fused_passes_list"); list != it->end()) {
      const std::string q = JsonPointerChild(p, "fused_passes_list");
      if (!list->is_array()) return r.WrongType(q, "an array", *list);
      for (size_t i = 0; i < list->size(); ++i) {
        const json& name = (*list)[i];
        if (!name.is_string()) return r.WrongType(q + "/" + std::to_string(i), "a string", name);
        s.fused_passes.fused_passes_list.push_back(name.get<std::string>());
      }
    }
  }
  IRM_RETURN_IF_ERROR(CheckConsistent(r, s));
  IRM_RETURN_IF_ERROR(RefuseUnimplemented(r, s));
  return s;
}

StatusOr<Strategy> ReadStrategyFile(const std::string& path) {
  IRM_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseStrategyJson(text, path);
}

json StrategyToJson(const Strategy& s) {
  return json{
      {"dp_degree", s.dp_degree},
      {"mp_degree", s.mp_degree},
      {"pp_degree", s.pp_degree},
      {"world_size", s.world_size()},
      {"pipeline",
       {{"enable", s.pipeline.enable},
        {"schedule_mode", s.pipeline.schedule_mode},
        {"accumulate_steps", s.pipeline.accumulate_steps},
        {"vpp_degree", s.pipeline.vpp_degree},
        {"split_backward", s.pipeline.split_backward},
        {"enable_send_recv_overlap", s.pipeline.enable_send_recv_overlap}}},
      {"gradient_merge",
       {{"enable", s.gradient_merge.enable},
        {"k_steps", s.gradient_merge.k_steps},
        {"avg", s.gradient_merge.avg}}},
      {"dp_optimization",
       {{"enable", s.dp_optimization.enable},
        {"fuse_all_reduce_ops", s.dp_optimization.fuse_all_reduce_ops},
        {"fuse_grad_size_in_MB", s.dp_optimization.fuse_grad_size_in_MB},
        {"gradient_sync_after_accumulate", s.dp_optimization.gradient_sync_after_accumulate}}},
      {"fused_passes",
       {{"enable", s.fused_passes.enable},
        {"fused_passes_list", s.fused_passes.fused_passes_list}}},
  };
}

}  // namespace irm::oldir::passes
