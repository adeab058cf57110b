// Pipeline stages as process meshes: a serial new-IR training program becomes every rank's dense
// stage program by the new IR's own auto-parallel passes, as Paddle's PIR Engine makes a pipeline
// (python/paddle/distributed/auto_parallel/static/pir_pass.py: apply_partition_pass,
// ReshardPasses, RemovePasses, then dist-to-dense; the stages' meshes as the `pp` dim of the
// intermediate API puts them, one ProcessMesh per stage). Each stage s runs on the 1-D mesh of one
// process [s] (pure pipeline parallelism: rank = stage, Paddle's hybrid topology with dp = mp = 1),
// with data parallelism on the 1-D mesh of its dp ranks (options.dp_degree), with tensor
// parallelism on the [dp, mp] mesh of its ranks, the parameters placed as Megatron's layers
// place them (options.mp_placements); completion then adds the stage's tensor-parallel
// collectives as it does without a pipeline.
//
// Ops go to stages by the rule of the legacy partition (oldir/passes/pipeline_stages.h, Paddle's
// layers split evenly between stages; static/utils.py get_pp_stage), read on the new IR: the
// model's layer units split evenly and in order over pp * vpp chunks, chunk c on stage c % pp
// with local chunk_id c / pp; a forward op goes with the chunk of the parameters it reads, else
// with the latest chunk among its operands' producers, else with its first reader's; a backward
// op with the forward op whose output gradient it reads (found by the gradient's legacy name
// `<var>@GRAD...`), else with the parameters it reads or its operands' producers; an optimizer op
// with the parameter it updates; a fetch or shadow_output with its operand's producer. Ops
// without operands (parameters, feeds, constants) stay dense and go with their readers.
//
// The parameters of a stage and the feeds are annotated replicated on their stage's mesh
// (dist_op.shard_tensor), every placed op carries its stage's mesh (an op_dist_attr holding only
// the mesh) and chunk_id; SPMD completion then brings each value read on another stage across
// with a reshard (spmd_completion.h), whose lowering is a send_v2 on the producer's stage and a
// recv_v2 on the reader's (reshard_lowering.h: same_status_reshard_func.py, one two-rank group
// per direction) under the reader's op_role — forward activations and backward gradients alike.
// Per rank, remove-other-ranks leaves the rank its stage, dist-to-dense makes it dense, and the
// micro-batch accumulation of pipeline_accumulation.h is appended; each rank's startup keeps only
// the initialisers of what its stage reads, plus the accumulation buffers'.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "newir/auto_parallel/parallelize.h"
#include "newir/program.h"

namespace irm::newir {

struct PipelineMeshOptions {
  int pp_degree = 1;
  // Data parallelism inside each stage: stage s runs on the 1-D mesh "dp" of the ranks
  // (d * pp + s) for d = 0..dp-1 (Paddle's hybrid topology, dp outermost), the feeds named in
  // `batch_feeds` sharded by rows over it.
  int dp_degree = 1;
  std::vector<std::string> batch_feeds = {};
  // Tensor parallelism inside each stage: stage s runs on the mesh [dp, mp] ("dp", "mp"; [mp]
  // alone without dp) of the ranks (d * pp + s) * mp + m, Paddle's hybrid topology (dp outermost,
  // then pp, mp innermost), each parameter placed over "mp" by `mp_placements` (parameter name ->
  // dims mapping over the mp axis, as MegatronPlacements gives it; absent: replicated).
  int mp_degree = 1;
  std::map<std::string, std::vector<int64_t>> mp_placements = {};
  int vpp_degree = 1;  // model chunks per stage (VPP)
  // The model's layer units (oldir/passes/pipeline_stages.h FindLayerUnits): how many, and the
  // unit of each model parameter by name.
  int unit_count = 0;
  std::map<std::string, int> unit_of_param = {};
  // Rows of one micro-batch: a recv_v2's out_shape takes it for a dynamic batch dim (the legacy
  // pipeline pass's dynamic_shape false needs static shapes).
  int64_t micro_batch_size = 1;
  // The accumulation across micro-batches (pipeline.accumulate_steps) and its 1/k scale.
  int micro_batches = 1;
  bool avg = true;
};

// The op annotation half: shard_tensor on the stage meshes, mesh and chunk_id on every placed op.
// Returns how many ops were placed. Errors (kInvalidArgument at the option): degrees below 1, a
// pp * vpp above the unit count ("pp_degree above the layer count", as the legacy pass says);
// kInvalid, located at the op: a top-level op with regions, an op reading parameters of two
// chunks.
StatusOr<size_t> AnnotatePipelineStages(Program& main, const PipelineMeshOptions& options);

// Every rank's dense stage program (with the accumulation) and startup. world_size is
// dp_degree * pp_degree * mp_degree;
// process_groups the world (ring 0) and the p2p pairs in the order the reshards first use them.
// Errors: AnnotatePipelineStages's, the completion's, the lowering's and remove-other-ranks' (a
// value crossing stages without a reshard), the accumulation's.
StatusOr<ParallelPrograms> ParallelizePipeline(const Program& serial_main,
                                               const Program& serial_startup,
                                               const PipelineMeshOptions& options);

}  // namespace irm::newir
