// The strategy JSON: Paddle's defaults (python/paddle/distributed/auto_parallel/constants.py:
// GRADIENT_MERGE, PIPELINE, FUSED_PASSES, DP_OPTIMIZATION), a lossless round trip, and every
// malformed input as one located diagnostic: syntax, wrong types and unknown keys (kParseError at
// the JSON pointer), values out of range (kInvalidArgument), and what no pass implements yet
// (kUnimplemented), never silently ignored.
#include "oldir/passes/strategy.h"

#include <gtest/gtest.h>

#include <utility>

namespace irm::oldir::passes {
namespace {

Status ParseError(std::string_view text) {
  StatusOr<Strategy> s = ParseStrategyJson(text, "s.json");
  EXPECT_FALSE(s.ok()) << text;
  return s.ok() ? Status::Ok() : s.status();
}

// constants.py's set_field_default_config values.
TEST(StrategyTest, AnEmptyObjectGivesPaddlesDefaults) {
  StatusOr<Strategy> s = ParseStrategyJson("{}", "s.json");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->dp_degree, 1);
  EXPECT_EQ(s->mp_degree, 1);
  EXPECT_EQ(s->pp_degree, 1);
  EXPECT_FALSE(s->pipeline.enable);
  EXPECT_EQ(s->pipeline.schedule_mode, "1F1B");
  EXPECT_EQ(s->pipeline.accumulate_steps, 1);
  EXPECT_EQ(s->pipeline.vpp_degree, 1);
  EXPECT_FALSE(s->pipeline.split_backward);
  EXPECT_FALSE(s->pipeline.enable_send_recv_overlap);
  EXPECT_FALSE(s->gradient_merge.enable);
  EXPECT_EQ(s->gradient_merge.k_steps, 1);
  EXPECT_TRUE(s->gradient_merge.avg);
  EXPECT_FALSE(s->dp_optimization.enable);
  EXPECT_TRUE(s->dp_optimization.fuse_all_reduce_ops);
  EXPECT_EQ(s->dp_optimization.fuse_grad_size_in_MB, 32);
  EXPECT_FALSE(s->fuse_all_reduce());
  EXPECT_FALSE(s->fused_passes.enable);
  EXPECT_TRUE(s->fused_passes.fused_passes_list.empty());
  EXPECT_EQ(s->world_size(), 1);
}

TEST(StrategyTest, DataParallelFieldsAreReadAndRoundTrip) {
  StatusOr<Strategy> s = ParseStrategyJson(
      R"({"dp_degree": 4, "world_size": 4,
          "dp_optimization": {"enable": true, "fuse_grad_size_in_MB": 0.5}})",
      "s.json");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->dp_degree, 4);
  EXPECT_EQ(s->world_size(), 4);
  EXPECT_TRUE(s->fuse_all_reduce());
  EXPECT_EQ(s->dp_optimization.fuse_grad_size_in_MB, 0.5);
  StatusOr<Strategy> again = ParseStrategyJson(StrategyToJson(*s).dump(), "again.json");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, *s);
}

TEST(StrategyTest, SyntaxErrorsAreParseErrors) {
  Status s = ParseError(R"({"dp_degree": )");
  EXPECT_EQ(s.code(), StatusCode::kParseError);
  EXPECT_EQ(s.location().file, "s.json");
  // Located by line and column, as every JSON reader's syntax errors are.
  s = ParseError("{\n  \"dp_degree\": 2,\n}");
  EXPECT_EQ(s.ToString(),
            "s.json:3:1: error: syntax error while parsing object key - unexpected '}'; expected "
            "string literal");
  // A key given twice would silently lose one of the two values.
  s = ParseError(R"({"dp_degree": 2, "dp_degree": 4})");
  EXPECT_EQ(s.ToString(), "s.json: /dp_degree: error: key 'dp_degree' appears twice");
}

TEST(StrategyTest, UnknownFieldsAreNamedAtTheirPointer) {
  Status s = ParseError(R"({"dp_degre": 2})");
  EXPECT_EQ(s.code(), StatusCode::kParseError);
  EXPECT_EQ(s.location().detail, "/dp_degre");
  EXPECT_EQ(s.message(), "unknown key 'dp_degre'");
  s = ParseError(R"({"pipeline": {"accumulate_step": 2}})");
  EXPECT_EQ(s.location().detail, "/pipeline/accumulate_step");
  EXPECT_EQ(s.message(), "unknown key 'accumulate_step'");
  s = ParseError(R"({"dp_optimization": {"fuse_grad_size": 1}})");
  EXPECT_EQ(s.location().detail, "/dp_optimization/fuse_grad_size");
}

TEST(StrategyTest, WrongTypesAreParseErrorsAtTheirPointer) {
  Status s = ParseError(R"({"dp_degree": "2"})");
  EXPECT_EQ(s.code(), StatusCode::kParseError);
  EXPECT_EQ(s.location().detail, "/dp_degree");
  EXPECT_EQ(s.message(), "expected an integer, found a string");
  s = ParseError(R"({"gradient_merge": {"avg": 1}})");
  EXPECT_EQ(s.location().detail, "/gradient_merge/avg");
  EXPECT_EQ(s.message(), "expected a boolean, found an integer");
  s = ParseError(R"({"fused_passes": {"fused_passes_list": [1]}})");
  EXPECT_EQ(s.location().detail, "/fused_passes/fused_passes_list/0");
  EXPECT_EQ(s.message(), "expected a string, found an integer");
  s = ParseError("[]");
  EXPECT_EQ(s.message(), "expected an object, found an array");
}

TEST(StrategyTest, OutOfRangeValuesAreInvalidArguments) {
  Status s = ParseError(R"({"dp_degree": 0})");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.location().detail, "/dp_degree");
  s = ParseError(R"({"dp_degree": 2, "world_size": 4})");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.location().detail, "/world_size");
  EXPECT_EQ(s.message(), "world_size 4 is not dp_degree * mp_degree * pp_degree = 2");
  s = ParseError(R"({"dp_optimization": {"fuse_grad_size_in_MB": 0}})");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  s = ParseError(R"({"pipeline": {"schedule_mode": "GPipe"}})");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "unknown schedule_mode 'GPipe'");
  s = ParseError(R"({"dp_degree": 4294967297})");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
}

TEST(StrategyTest, WhatNoPassImplementsYetIsRefusedNotIgnored) {
  for (
      const char* text :
      {R"({"pp_degree": 2, "pipeline": {"enable": true, "enable_send_recv_overlap": true}})",
       R"({"dp_optimization": {"gradient_sync_after_accumulate": true}})",
       R"({"dp_degree": 2, "pp_degree": 2, "pipeline": {"enable": true},
           "dp_optimization": {"enable": true}})",
       R"({"dp_degree": 2, "gradient_merge": {"enable": true, "k_steps": 2},
           "dp_optimization": {"enable": true}})",
       R"({"fused_passes": {"enable": true, "fused_passes_list": ["fused_gemm_epilogue_pass"]}})"}) {
    const Status s = ParseError(text);
    EXPECT_EQ(s.code(), StatusCode::kUnimplemented) << text;
    EXPECT_NE(s.message().find("is not supported yet"), std::string::npos) << s.ToString();
  }
}

// Fields that contradict each other are invalid, located at the field to change.
TEST(StrategyTest, ContradictionsAreInvalid) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"pp_degree": 2})", "/pipeline/enable"},
      {R"({"pipeline": {"enable": true}})", "/pp_degree"},
      {R"({"pp_degree": 2, "pipeline": {"enable": true, "vpp_degree": 2}})",
       "/pipeline/vpp_degree"},
      {R"({"pp_degree": 2, "pipeline": {"enable": true, "split_backward": true}})",
       "/pipeline/split_backward"},
      {R"({"pp_degree": 2, "pipeline": {"enable": true}, "gradient_merge": {"enable": true}})",
       "/gradient_merge/enable"},
  };
  for (const auto& [text, pointer] : cases) {
    const Status s = ParseError(text);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << text;
    EXPECT_EQ(s.location().detail, pointer) << s.ToString();
  }
}

// Tensor and pipeline parallelism parse, with Paddle's field names, and round-trip.
TEST(StrategyTest, HybridStrategiesAreAccepted) {
  StatusOr<Strategy> s = ParseStrategyJson(
      R"({"dp_degree": 2, "mp_degree": 2, "pp_degree": 2,
          "pipeline": {"enable": true, "schedule_mode": "VPP", "vpp_degree": 2,
                       "accumulate_steps": 4}})",
      "s.json");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->world_size(), 8);
  EXPECT_EQ(s->pipeline.vpp_degree, 2);
  StatusOr<Strategy> again = ParseStrategyJson(StrategyToJson(*s).dump(), "again.json");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, *s);
}

// Gradient merge is implemented (apply_strategy.h): its fields parse, and round-trip.
TEST(StrategyTest, GradientMergeIsAccepted) {
  StatusOr<Strategy> s = ParseStrategyJson(
      R"({"dp_degree": 2, "gradient_merge": {"enable": true, "k_steps": 4, "avg": false}})",
      "s.json");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(s->gradient_merge.enable);
  EXPECT_EQ(s->gradient_merge.k_steps, 4);
  EXPECT_FALSE(s->gradient_merge.avg);
  EXPECT_FALSE(s->dp_optimization.gradient_sync_after_accumulate);
  StatusOr<Strategy> again = ParseStrategyJson(StrategyToJson(*s).dump(), "again.json");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, *s);
}

}  // namespace
}  // namespace irm::oldir::passes
