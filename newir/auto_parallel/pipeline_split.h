// The PIR pipeline split: one rank's dense new-IR stage program (ops tagged op_role and, under
// VPP, chunk_id) becomes the job programs of its schedule and the rank's job list, as Paddle's PIR
// pipeline scheduler passes make them (python/paddle/distributed/passes/pipeline_scheduler_pass/:
// `_partial_pir_programs` of pipeline_fthenb.py and pipeline_1f1b.py, `_split_program_for_vpp` of
// pipeline_vpp.py; pass_utils.py `_split_program_into_forward_backward_optimize`). Paddle clones
// the program once per job type and erases from each clone the ops of the others; here each op is
// cloned into the one program of its job type, which leaves the same programs.
//
// ZBH1 (pipeline_zero_bubble.py, whose split Paddle runs on the legacy program only) is split
// here by the same rules on the new IR: each non-transposed pd_op.matmul_grad becomes its
// input-grad and weight-grad GEMMs (pass_utils.py `_pir_split_matmul_grad_to_matmul`, Paddle's
// `_split_matmul_grad_ops_to_matmul`), and the backward ops go to backward_b or backward_w by
// `_get_backward_op_type` read on the legacy var names, beside the whole backward.
//
// Values crossing job programs are carried by name, as Paddle's PIR split carries them (a result a
// later program reads becomes a named value of the scope, the reader gets an input of that name):
// the producing program ends with `builtin.shadow_output {output_name}`, the reading one starts
// with `pd_op.data {name}` — the form the translator gives a legacy job program, which the
// reference runtime's plan executor runs (a job's pd_op.data reads the micro-batch scope).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "newir/program.h"
#include "schedules/paddle_schedule.h"

namespace irm::newir {

struct PipelineSplitOptions {
  std::string schedule_mode = "FThenB";  // strategy.pipeline.schedule_mode
  int pp_degree = 1;
  int pp_stage = 0;       // this rank's stage, 0-based
  int micro_batches = 1;  // pipeline.accumulate_steps
  int vpp_degree = 1;     // model chunks per stage (VPP)
  // 1F1B and VPP: the recv_forward / send_backward programs of Paddle's PR #70360 (1F1B) and
  // #71104 (VPP); false gives the programs and job list from before those PRs.
  bool split_recv_send = true;
  // Names the run fetches (a bundle's fetches): the job writing one exposes its final value under
  // that name, as the bundle translator exposes a legacy job's fetches.
  std::vector<std::string> fetches = {};
  std::string file = {};  // names the stage program in diagnostics
};

struct PipelineJobPrograms {
  // Paddle's program order: FThenB forward, backward, optimizer; 1F1B recv_forward, forward,
  // backward, send_backward, optimizer; VPP recv_forward<c>, forward<c> for c ascending, then
  // backward<c>, send_backward<c> for c descending, then optimizer; ZBH1 forward, backward,
  // backward_b, backward_w, optimizer (_program_for_zero_bubble). Every type has a program,
  // possibly empty.
  std::vector<std::string> job_types;
  std::map<std::string, Program> programs;
  // The stage's jobs (schedules::MakeJobList for the PIR form).
  std::vector<schedules::Job> plan;
};

// Splits `stage` (left unchanged). Where an op goes:
// - op_role optimize -> optimizer; backward -> backward<c>, except a pd_op.p_send (send_v2) ->
//   send_backward<c> when split_recv_send; forward -> forward<c>, except a pd_op.p_recv
//   (recv_v2) -> recv_forward<c> when split_recv_send (pipeline_1f1b.py `_partial_pir_programs`:
//   the forward's send stays in forward, the backward's recv in backward); a feed (pd_op.data
//   with op_role) always to forward (forward0), where the legacy split puts its feeds;
// - c is the op's chunk_id, or the chunk of the op before it (0 for the first), as the legacy
//   split infers it for ops a pass inserted (Paddle's `infer_chunk_id` asks the neighbours);
// - builtin.parameter and a pd_op.data without op_role (a value the program reads by name) are
//   copied into every program that reads them, in the order of first use, as the translator
//   places them;
// - pd_op.fetch goes to the first program, in the order above, that writes or reads its operand
//   (the legacy split's rule for fetch ops); a builtin.shadow_output without op_role to its
//   operand's program.
// A crossing value's name is its legacy var name (legacy_var_names), else, or when another
// crossing value already has it, Paddle's `var_<op index>_<op name>_<result index>`. A value of
// a persistable var (a builtin.parameter or builtin.set_parameter name: a gradient-merge buffer
// updated in place) is read as builtin.parameter instead, from the scope every job shares.
// ZBH1: the split works on a copy of the stage in which every pd_op.matmul_grad with transpose_x
// and transpose_y false is replaced, where it stood, by
//   x_grad = pd_op.matmul(out_grad, y, transpose_y=true)                   (when x_grad is used)
//   y_grad = reshape(pd_op.matmul(reshape(x), reshape(out_grad), transpose_x=true))
// (each reshape a pd_op.full_int_array + pd_op.reshape folding the first two dims, as
// MatmulGradKernel's FoldInitDims does, named `X@reshape.out`, `Out@GRAD@reshape.out`,
// `Y@GRAD@reshape.out`; rank-2 operands take the plain matmul(x, out_grad, transpose_x=true)),
// exactly what the legacy split writes (oldir/passes/pipeline_zero_bubble.h) translated. A
// backward op goes to `backward` and to backward_w when it is part of the run reshape, reshape,
// matmul writing a parameter's gradient, reshape, add_ (shape operands aside), or when every
// named result is a `<param>@...`; to backward_b otherwise (a send included). An op whose results
// carry no legacy name (a shape the translator made) goes with its user. A fetch goes to the
// first program in the order above, never the whole backward. The plan is the legacy ZBH1 list
// (Paddle's PIR lists have no ZBH1), split_recv_send does not apply.
// Errors, located at the stage program's op (kInvalid): an op without an integer op_role, a
// chunk_id outside [0, vpp_degree), a vector value crossing programs, a matmul_grad whose x and
// out_grad differ in rank (or above rank 2 in their first two dims: Paddle asserts both);
// kInvalidArgument at the option: a schedule_mode without a PIR split (Eager1F1B and ZBVPP:
// static/pir_pass.py::pipeline_pass allows FThenB, 1F1B and VPP, and ZBH1 is split as above),
// vpp_degree > 1 outside VPP, a stage outside [0, pp_degree), and ValidatePaddleScheduleSpec's
// refusals (m < p, ...).
StatusOr<PipelineJobPrograms> SplitPipelineProgram(const Program& stage,
                                                   const PipelineSplitOptions& options);

}  // namespace irm::newir
