// The PIR pipeline split (pipeline_split.h) on small hand-written stage programs: where each op
// goes under FThenB, 1F1B (recv_forward / send_backward, pipeline_1f1b.py `_partial_pir_programs`)
// and VPP (per chunk, pipeline_vpp.py `_split_program_for_vpp`), how values cross programs by
// name, and the refusals. The cross-IR check against the legacy split is
// diff_tests/pipeline_split_parity_test.cc.
#include "newir/auto_parallel/pipeline_split.h"

#include <gtest/gtest.h>

#include <iterator>
#include <string>
#include <vector>

#include "newir/parser.h"

namespace irm::newir {
namespace {

// Stage 1 of 2 of a one-layer model: receives the activation, computes the loss, sends the
// activation's gradient back, updates its weight. Roles: 0 forward, 256 forward|loss,
// 257 backward|loss, 1 backward, 2 optimize.
const char kStage[] = R"({
    (%0) = "builtin.parameter" () {parameter_name:"w"} : () -> builtin.tensor<8x2xf32>
    (%1) = "pd_op.p_recv" () {op_role:(Int32)0,ring_id:(Int32)0,peer:(Int32)0,legacy_var_names:["h"]} : () -> builtin.tensor<4x8xf32>
    (%2) = "pd_op.matmul" (%1, %0) {op_role:(Int32)0,transpose_x:false,transpose_y:false,legacy_var_names:["y"]} : (builtin.tensor<4x8xf32>, builtin.tensor<8x2xf32>) -> builtin.tensor<4x2xf32>
    (%3) = "pd_op.relu" (%2) {op_role:(Int32)256,legacy_var_names:["loss"]} : (builtin.tensor<4x2xf32>) -> builtin.tensor<4x2xf32>
    (%4) = "pd_op.relu_grad" (%3, %3) {op_role:(Int32)257,legacy_var_names:["y@GRAD"]} : (builtin.tensor<4x2xf32>, builtin.tensor<4x2xf32>) -> builtin.tensor<4x2xf32>
    (%5, %6) = "pd_op.matmul_grad" (%1, %0, %4) {op_role:(Int32)1,transpose_x:false,transpose_y:false,legacy_var_names:["h@GRAD","w@GRAD"]} : (builtin.tensor<4x8xf32>, builtin.tensor<8x2xf32>, builtin.tensor<4x2xf32>) -> builtin.tensor<4x8xf32>, builtin.tensor<8x2xf32>
    () = "pd_op.p_send" (%5) {op_role:(Int32)1,ring_id:(Int32)1,peer:(Int32)0} : (builtin.tensor<4x8xf32>) ->
    (%7) = "builtin.parameter" () {parameter_name:"lr"} : () -> builtin.tensor<1xf32>
    (%8) = "pd_op.scale" (%6, %7) {op_role:(Int32)2,legacy_var_names:["w@SCALED"]} : (builtin.tensor<8x2xf32>, builtin.tensor<1xf32>) -> builtin.tensor<8x2xf32>
    (%9) = "pd_op.fetch" (%3) {col:(Int32)0,name:"loss"} : (builtin.tensor<4x2xf32>) -> builtin.tensor<4x2xf32>
}
)";

Program Parse(const std::string& text) {
  StatusOr<Program> program = ParseProgram(text, "stage.pir", {.allow_unregistered = true});
  EXPECT_TRUE(program.ok()) << program.status().ToString();
  return std::move(program).value();
}

// "op(name)" for a data/shadow_output/parameter op, the op name otherwise.
std::vector<std::string> OpsOf(const Program& program) {
  std::vector<std::string> ops;
  for (const Operation& op : program.block()) {
    std::string text = op.name();
    for (const char* attr : {"name", "output_name", "parameter_name"}) {
      const Attribute a = op.attribute(attr);
      if (!a.IsNull() && a.AsString() != nullptr) text += "(" + std::string(*a.AsString()) + ")";
    }
    ops.push_back(text);
  }
  return ops;
}

PipelineSplitOptions Options(const char* mode, int stage = 1) {
  PipelineSplitOptions options;
  options.schedule_mode = mode;
  options.pp_degree = 2;
  options.pp_stage = stage;
  options.micro_batches = 2;
  options.file = "stage.pir";
  return options;
}

using Ops = std::vector<std::string>;

// pass_utils.py `_split_program_into_forward_backward_optimize`: three programs by role; a
// result a later program reads travels by name (its own name, as Paddle names a value that has
// one), the reader starts with an input of that name.
TEST(PipelineSplitTest, FThenBSplitsByRoleAndCarriesValuesByName) {
  const Program stage = Parse(kStage);
  StatusOr<PipelineJobPrograms> split = SplitPipelineProgram(stage, Options("FThenB"));
  ASSERT_TRUE(split.ok()) << split.status().ToString();
  EXPECT_EQ(split->job_types, (Ops{"forward", "backward", "optimizer"}));
  EXPECT_EQ(OpsOf(split->programs.at("forward")),
            (Ops{"builtin.parameter(w)", "pd_op.p_recv", "pd_op.matmul", "pd_op.relu",
                 "pd_op.fetch(loss)", "builtin.shadow_output(h)", "builtin.shadow_output(loss)"}));
  EXPECT_EQ(OpsOf(split->programs.at("backward")),
            (Ops{"pd_op.data(loss)", "pd_op.data(h)", "builtin.parameter(w)", "pd_op.relu_grad",
                 "pd_op.matmul_grad", "pd_op.p_send", "builtin.shadow_output(w@GRAD)"}));
  EXPECT_EQ(OpsOf(split->programs.at("optimizer")),
            (Ops{"pd_op.data(w@GRAD)", "builtin.parameter(lr)", "pd_op.scale"}));
  // The input carries the producer's type.
  const Operation& input = *split->programs.at("optimizer").block().front();
  EXPECT_EQ(input.result(0)->type().dims(), (std::vector<int64_t>{8, 2}));
  // FThenB's list (pipeline_fthenb.py): F0 F1 B0 B1 OPT.
  ASSERT_EQ(split->plan.size(), 5u);
  EXPECT_EQ(split->plan[1], (schedules::Job{"forward", 1}));
  EXPECT_EQ(split->plan[4], (schedules::Job{"optimizer", 0}));
}

// pipeline_1f1b.py `_partial_pir_programs`: the forward recv and the backward send get programs
// of their own; the fetch goes to the first program using its value.
TEST(PipelineSplitTest, OneFOneBMovesTheForwardRecvAndTheBackwardSend) {
  const Program stage = Parse(kStage);
  StatusOr<PipelineJobPrograms> split = SplitPipelineProgram(stage, Options("1F1B"));
  ASSERT_TRUE(split.ok()) << split.status().ToString();
  EXPECT_EQ(split->job_types,
            (Ops{"recv_forward", "forward", "backward", "send_backward", "optimizer"}));
  EXPECT_EQ(OpsOf(split->programs.at("recv_forward")),
            (Ops{"pd_op.p_recv", "builtin.shadow_output(h)"}));
  EXPECT_EQ(OpsOf(split->programs.at("forward")),
            (Ops{"pd_op.data(h)", "builtin.parameter(w)", "pd_op.matmul", "pd_op.relu",
                 "pd_op.fetch(loss)", "builtin.shadow_output(loss)"}));
  EXPECT_EQ(OpsOf(split->programs.at("send_backward")),
            (Ops{"pd_op.data(h@GRAD)", "pd_op.p_send"}));
  // The PIR 1F1B list of stage 1 of 2, m = 2 (test_pir_1f1b_plan.py's pattern): warm-up
  // [recv_forward, forward], steady [backward, recv_forward, send_backward, forward], cool-down.
  ASSERT_GE(split->plan.size(), 4u);
  EXPECT_EQ(split->plan[0], (schedules::Job{"recv_forward", 0}));
  EXPECT_EQ(split->plan[1], (schedules::Job{"forward", 0}));
  EXPECT_EQ(split->plan[2], (schedules::Job{"backward", 0}));
  EXPECT_EQ(split->plan[3], (schedules::Job{"recv_forward", 1}));
}

TEST(PipelineSplitTest, WithoutTheRecvSendSplitOneFOneBHasThreePrograms) {
  const Program stage = Parse(kStage);
  PipelineSplitOptions options = Options("1F1B");
  options.split_recv_send = false;
  StatusOr<PipelineJobPrograms> split = SplitPipelineProgram(stage, options);
  ASSERT_TRUE(split.ok()) << split.status().ToString();
  EXPECT_EQ(split->job_types, (Ops{"forward", "backward", "optimizer"}));
  EXPECT_EQ(split->plan.front(), (schedules::Job{"forward", 0}));
}

// A stage of two chunks: the p_recv and matmul in chunk 0, the rest in chunk 1 (an op without
// chunk_id takes the chunk of the op before it).
TEST(PipelineSplitTest, VppSplitsPerChunk) {
  std::string text = kStage;
  const auto tag = [&](const std::string& op, int chunk) {
    const size_t at = text.find("{op_role", text.find("\"" + op + "\""));
    text.insert(at + 1, "chunk_id:(Int32)" + std::to_string(chunk) + ",");
  };
  tag("pd_op.p_recv", 0);
  tag("pd_op.relu", 1);
  tag("pd_op.relu_grad", 1);
  tag("pd_op.matmul_grad", 0);
  const Program stage = Parse(text);
  PipelineSplitOptions options = Options("VPP");
  options.vpp_degree = 2;
  StatusOr<PipelineJobPrograms> split = SplitPipelineProgram(stage, options);
  ASSERT_TRUE(split.ok()) << split.status().ToString();
  EXPECT_EQ(split->job_types,
            (Ops{"recv_forward0", "forward0", "recv_forward1", "forward1", "backward1",
                 "send_backward1", "backward0", "send_backward0", "optimizer"}));
  EXPECT_EQ(
      OpsOf(split->programs.at("forward0")),
      (Ops{"pd_op.data(h)", "builtin.parameter(w)", "pd_op.matmul", "builtin.shadow_output(y)"}));
  EXPECT_EQ(
      OpsOf(split->programs.at("forward1")),
      (Ops{"pd_op.data(y)", "pd_op.relu", "pd_op.fetch(loss)", "builtin.shadow_output(loss)"}));
  EXPECT_EQ(OpsOf(split->programs.at("backward1")),
            (Ops{"pd_op.data(loss)", "pd_op.relu_grad", "builtin.shadow_output(y@GRAD)"}));
  EXPECT_EQ(OpsOf(split->programs.at("send_backward0")),
            (Ops{"pd_op.data(h@GRAD)", "pd_op.p_send"}));
  EXPECT_TRUE(split->programs.at("send_backward1").block().empty());
}

// A value without a legacy name travels under Paddle's var_<op index>_<op name>_<result>.
TEST(PipelineSplitTest, AnUnnamedValueGetsPaddlesGeneratedName) {
  std::string text = kStage;
  const std::string named = ",legacy_var_names:[\"h@GRAD\",\"w@GRAD\"]";
  text.erase(text.find(named), named.size());
  const Program stage = Parse(text);
  StatusOr<PipelineJobPrograms> split = SplitPipelineProgram(stage, Options("FThenB"));
  ASSERT_TRUE(split.ok()) << split.status().ToString();
  EXPECT_EQ(OpsOf(split->programs.at("optimizer")).front(),
            "pd_op.data(var_5_pd_op.matmul_grad_1)");
}

TEST(PipelineSplitTest, RefusesAnOpWithoutRole) {
  std::string text = kStage;
  const std::string role = "op_role:(Int32)256,";
  text.erase(text.find(role), role.size());
  const Program stage = Parse(text);
  StatusOr<PipelineJobPrograms> split = SplitPipelineProgram(stage, Options("FThenB"));
  ASSERT_FALSE(split.ok());
  EXPECT_EQ(split.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(split.status().location().op, 3);
  EXPECT_EQ(split.status().location().op_type, "pd_op.relu");
  EXPECT_NE(split.status().message().find("op_role"), std::string::npos);
}

TEST(PipelineSplitTest, RefusesAChunkBeyondTheSchedulesChunks) {
  std::string text = kStage;
  text.insert(text.find("{op_role", text.find("\"pd_op.relu\"")) + 1, "chunk_id:(Int32)2,");
  const Program stage = Parse(text);
  PipelineSplitOptions options = Options("VPP");
  options.vpp_degree = 2;
  StatusOr<PipelineJobPrograms> split = SplitPipelineProgram(stage, options);
  ASSERT_FALSE(split.ok());
  EXPECT_EQ(split.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(split.status().location().op, 3);
  EXPECT_NE(split.status().message().find("chunk_id 2 outside the stage's 2 chunks"),
            std::string::npos);
}

// ZBH1 (pipeline_zero_bubble.py with pass_utils.py's _pir_split_matmul_grad_to_matmul): the
// rank-2 matmul_grad becomes its input-grad GEMM (backward_b, with the relu_grad and the send)
// and its weight-grad GEMM (backward_w, reading the forward's input and the gradient by name);
// the whole backward holds both; the plan is the legacy ZBH1 list of stage 1 of 2, m = 2
// (pipeline_zero_bubble.py _create_job_list: F0, Bb0, F1, Bb1, Bw1, Bw0, OPT).
TEST(PipelineSplitTest, ZeroBubbleSplitsTheMatmulGradIntoBAndW) {
  const Program stage = Parse(kStage);
  StatusOr<PipelineJobPrograms> split = SplitPipelineProgram(stage, Options("ZBH1"));
  ASSERT_TRUE(split.ok()) << split.status().ToString();
  EXPECT_EQ(split->job_types, (std::vector<std::string>{"forward", "backward", "backward_b",
                                                        "backward_w", "optimizer"}));
  EXPECT_EQ(
      OpsOf(split->programs.at("backward_b")),
      (std::vector<std::string>{"pd_op.data(loss)", "builtin.parameter(w)", "pd_op.relu_grad",
                                "pd_op.matmul", "pd_op.p_send", "builtin.shadow_output(y@GRAD)"}));
  EXPECT_EQ(OpsOf(split->programs.at("backward_w")),
            (std::vector<std::string>{"pd_op.data(h)", "pd_op.data(y@GRAD)", "pd_op.matmul",
                                      "builtin.shadow_output(w@GRAD)"}));
  EXPECT_EQ(OpsOf(split->programs.at("backward")),
            (std::vector<std::string>{"pd_op.data(loss)", "builtin.parameter(w)", "pd_op.data(h)",
                                      "pd_op.relu_grad", "pd_op.matmul", "pd_op.matmul",
                                      "pd_op.p_send", "builtin.shadow_output(w@GRAD)"}));
  // x_grad = out_grad . w^T; w_grad = h^T . out_grad.
  const Operation& input_grad = *std::next(split->programs.at("backward_b").block().begin(), 3);
  EXPECT_EQ(*input_grad.attribute("transpose_y").AsBool(), true);
  const Operation& weight_grad = *std::next(split->programs.at("backward_w").block().begin(), 2);
  EXPECT_EQ(*weight_grad.attribute("transpose_x").AsBool(), true);
  std::vector<std::string> plan;
  for (const schedules::Job& job : split->plan) {
    plan.push_back(job.type + std::to_string(job.micro_batch));
  }
  EXPECT_EQ(plan, (std::vector<std::string>{"forward0", "backward_b0", "forward1", "backward_b1",
                                            "backward_w1", "backward_w0", "optimizer0"}));
}

// static/pir_pass.py::pipeline_pass takes FThenB, 1F1B and VPP; ZBH1 is split by the legacy
// pass's rules; Eager1F1B and ZBVPP have no PIR form.
TEST(PipelineSplitTest, RefusesSchedulesWithoutAPirForm) {
  const Program stage = Parse(kStage);
  for (const char* mode : {"Eager1F1B", "ZBVPP", "GPipe"}) {
    StatusOr<PipelineJobPrograms> split = SplitPipelineProgram(stage, Options(mode));
    ASSERT_FALSE(split.ok()) << mode;
    EXPECT_EQ(split.status().code(), StatusCode::kInvalidArgument) << mode;
    EXPECT_EQ(split.status().location().attr, "schedule_mode") << mode;
  }
  PipelineSplitOptions chunks = Options("1F1B");
  chunks.vpp_degree = 2;
  StatusOr<PipelineJobPrograms> split = SplitPipelineProgram(stage, chunks);
  ASSERT_FALSE(split.ok());
  EXPECT_EQ(split.status().location().attr, "vpp_degree");
  PipelineSplitOptions few = Options("1F1B");
  few.micro_batches = 1;  // 1F1B asserts pp_degree <= num_micro_batches
  split = SplitPipelineProgram(stage, few);
  ASSERT_FALSE(split.ok());
  EXPECT_EQ(split.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace irm::newir
