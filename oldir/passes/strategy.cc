// Reading and writing the strategy JSON (strategy.h).
#include "oldir/passes/strategy.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <vector>

#include "common/diagnostic.h"
#include "common/file_io.h"
#include "common/json_access.h"
#include "common/json_depth.h"
#include "common/json_parse.h"

namespace irm::oldir::passes {
namespace {

using json = nlohmann::json;

// The schedules Paddle's pipeline_scheduler_pass registers (pipelines.md §1.1).
constexpr std::array<std::string_view, 6> kScheduleModes = {"FThenB", "1F1B", "Eager1F1B",
                                                            "VPP",    "ZBH1", "ZBVPP"};

// Structure and range errors of one strategy file, located by JSON pointer. Kinds and keys are
// checked by the shared JSON reader (kParseError); ranges and the rules between fields are the
// strategy's own (kInvalidArgument). Absent members keep their defaults.
class Reader {
 public:
  explicit Reader(std::string file) : access_(std::move(file)) {}

  const JsonAccess& access() const { return access_; }
  Status Error(StatusCode code, const std::string& pointer, std::string message) const {
    return Status(code, JsonLocation(access_.file(), pointer), std::move(message));
  }
  // `v` must be an object whose keys are all in `known`.
  Status Object(const std::string& pointer, const json& v,
                std::initializer_list<std::string_view> known) const {
    return access_.Object(v, JsonPath::Rendered(pointer), known);
  }
  // Reads member `key` of `obj` (when present) into `out`.
  Status Bool(const std::string& pointer, const json& obj, std::string_view key, bool* out) const {
    const json* v = JsonAccess::Find(obj, key);
    if (v == nullptr) return Status::Ok();
    const JsonPath at = JsonPath::Rendered(pointer);
    IRM_ASSIGN_OR_RETURN(*out, access_.Bool(*v, at / key));
    return Status::Ok();
  }
  // An integer >= `min`.
  Status Int(const std::string& pointer, const json& obj, std::string_view key, int min,
             int* out) const {
    const json* v = JsonAccess::Find(obj, key);
    if (v == nullptr) return Status::Ok();
    const JsonPath at = JsonPath::Rendered(pointer);
    IRM_RETURN_IF_ERROR(access_.Expect(*v, at / key, json::value_t::number_integer));
    const bool in_range = v->is_number_unsigned()
                              ? v->get<uint64_t>() >= static_cast<uint64_t>(min) &&
                                    v->get<uint64_t>() <= uint64_t{INT32_MAX}
                              : v->get<int64_t>() >= min && v->get<int64_t>() <= INT32_MAX;
    if (!in_range) {
      return Error(
          StatusCode::kInvalidArgument, JsonPointerChild(pointer, key),
          fmt::format("'{}' must be an integer of at least {}, not {}", key, min, v->dump()));
    }
    *out = v->get<int>();
    return Status::Ok();
  }
  Status String(const std::string& pointer, const json& obj, std::string_view key,
                std::string* out) const {
    const json* v = JsonAccess::Find(obj, key);
    if (v == nullptr) return Status::Ok();
    const JsonPath at = JsonPath::Rendered(pointer);
    IRM_ASSIGN_OR_RETURN(*out, access_.String(*v, at / key));
    return Status::Ok();
  }
  // A number > 0.
  Status Positive(const std::string& pointer, const json& obj, std::string_view key,
                  double* out) const {
    const json* v = JsonAccess::Find(obj, key);
    if (v == nullptr) return Status::Ok();
    const JsonPath at = JsonPath::Rendered(pointer);
    IRM_ASSIGN_OR_RETURN(const double value, access_.Number(*v, at / key));
    if (!(value > 0)) {
      return Error(StatusCode::kInvalidArgument, JsonPointerChild(pointer, key),
                   fmt::format("'{}' must be a positive number, not {}", key, v->dump()));
    }
    *out = value;
    return Status::Ok();
  }

 private:
  JsonAccess access_;
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
  IRM_ASSIGN_OR_RETURN(const json doc, ParseStrictJson(text, file, kMaxSmallJsonDepth));
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
      const JsonPath at = JsonPath::Rendered(p);
      IRM_ASSIGN_OR_RETURN(s.fused_passes.fused_passes_list,
                           r.access().Array<std::string>(*list, at / "fused_passes_list",
                                                         [&](const JsonPath& q, const json& name) {
                                                           return r.access().String(name, q);
                                                         }));
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
