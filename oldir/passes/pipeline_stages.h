// Stage partition, the first half of the legacy pipeline pass: one model-parallel rank's training
// program (startup + main with forward, backward and optimizer ops carrying op_role) becomes the
// programs of each pipeline stage, as Paddle's legacy static auto-parallel made them — stages from
// process meshes over the model's layers (completion and partition), and reshard's `send_v2` /
// `recv_v2` pairs wherever an op reads a var another stage computes
// (python/paddle/distributed/auto_parallel/static/reshard.py, Inserter.insert_send_op /
// insert_recv_op: one two-rank group per direction). The job split (pipeline_jobs.h) follows; in
// between, a caller may insert the data-parallel gradient synchronisation into each stage.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "oldir/program.h"

namespace irm::oldir::passes {

// The op attribute holding an op's model chunk on its stage (Paddle's dist_attr.chunk_id: the
// local chunk index 0..vpp-1, so stage s runs chunks s, s + pp, s + 2pp, ... of the model).
inline constexpr const char* kChunkIdAttr = "chunk_id";

// The model's layer units: the contiguous pieces the stages split, each parameter's unit.
struct LayerUnits {
  int count = 0;
  std::map<std::string, int> of_param;
};

// The units of a zoo model, recognised by the names of the parameters its layers create
// (oldir/models/gpt.h, mlp.h): gpt's are [embeddings, block 0 .. block L-1, final LayerNorm +
// head] (L + 2 units: embedding_*; per block two layer_norm_* and the same number of linear_*;
// the last layer_norm_* and linear_*), mlp's are its linear_* layers, one unit each.
// kInvalidArgument naming the parameter that fits neither layout.
StatusOr<LayerUnits> FindLayerUnits(const Program& main, const std::string& file = "");

struct PipelinePartitionOptions {
  int pp_degree = 1;
  int vpp_degree = 1;  // model chunks per stage (VPP)
  // Rows of one micro-batch: the batch dims (-1) of recv_v2's out_shape, which must be static
  // (the pass sets dynamic_shape false, as Paddle's pipeline passes do).
  int64_t micro_batch_size = 1;
  // The ring id of the two-rank p2p group [rank of from_stage, rank of to_stage].
  std::function<int(int from_stage, int to_stage)> ring;
  std::string file;  // names the main program in diagnostics
};

// One stage's programs after the partition. Every op of `main` carries op_device "gpu:<stage>"
// and chunk_id (its local chunk); `main` declares every var its ops use and nothing else;
// `startup` holds the initialisers of the persistable vars `main` uses (the stage's parameters,
// their optimizer state, the learning rate).
struct StagePrograms {
  int stage = 0;
  int pp_degree = 1;
  int vpp_degree = 1;
  Program startup;
  Program main;
};

// The stages' programs, by stage. Units split evenly and in order over pp * vpp chunks (chunk c
// on stage c % pp); a forward op goes with the chunk of the parameters it reads, else with the
// latest chunk among its inputs' producers, else (constants, and a column-parallel linear's
// c_identity) with its first consumer's; a feed op
// goes to every stage that reads its var; each backward op with the forward op whose output
// gradient it reads (the var's producer, for the `sum` of partial gradients and the loss seed);
// each optimizer op with its parameter's (an optimizer op of no parameter, to every stage); a
// fetch with its var's producer. Where an op reads a var produced on another stage, a `send_v2`
// on the producer's stage and a `recv_v2` on the reader's are inserted right before the reader
// (ring_id = options.ring(from, to), peer 1 on the sender and 0 on the receiver: the ranks' index
// in the group [from, to]; use_calc_stream true; dynamic_shape false; out_shape with
// micro_batch_size for -1 and the var's dtype), with the reader's op role (forward or backward).
// Errors: kInvalidArgument for degrees below 1, "pp_degree above the layer count" (located at
// the pp_degree) when pp * vpp exceeds the units, a parameter that fits no unit; kInvalid
// (located at the op) for a program with sub-blocks, an op reading parameters of two chunks, an
// op that cannot be placed, a var crossing stages from a forward op to a backward one.
StatusOr<std::vector<StagePrograms>> PartitionStages(const Program& startup, const Program& main,
                                                     const PipelinePartitionOptions& options);

// The chunk_id of an op (0 when absent).
int ChunkOf(const proto::OpDesc& op);

// Every argument an op reads or writes, inputs first, in slot order; empty names skipped.
std::vector<std::string> ArgumentsOf(const proto::OpDesc& op);

// `program` keeping only the var declarations of its root block that its ops use.
void KeepUsedVars(Program& program);

}  // namespace irm::oldir::passes
