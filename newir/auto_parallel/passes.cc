// Pass wrappers of reshard lowering and dist-to-dense (passes.h).
#include "newir/auto_parallel/passes.h"

#include "newir/auto_parallel/dist_to_dense.h"
#include "newir/auto_parallel/gradient_merge.h"
#include "newir/auto_parallel/remove_other_ranks.h"
#include "newir/auto_parallel/reshard_lowering.h"
#include "newir/auto_parallel/spmd_completion.h"

namespace irm::newir {
namespace {

class LowerReshardPass : public Pass {
 public:
  LowerReshardPass(int64_t rank, int64_t world_size) : rank_(rank), world_size_(world_size) {}
  std::string_view name() const override { return "lower-reshard"; }
  StatusOr<IrChange> Run(Program& program) override {
    ProcessGroupTable groups(world_size_ > 0 ? world_size_ : WorldSizeOf(program));
    IRM_RETURN_IF_ERROR(PlanProcessGroups(program, groups));
    IRM_ASSIGN_OR_RETURN(size_t lowered, LowerReshards(program, rank_, groups));
    return lowered > 0 ? IrChange::kChanged : IrChange::kUnchanged;
  }

 private:
  int64_t rank_;
  int64_t world_size_;
};

class DistToDensePass : public Pass {
 public:
  explicit DistToDensePass(int64_t rank) : rank_(rank) {}
  std::string_view name() const override { return "dist-to-dense"; }
  StatusOr<IrChange> Run(Program& program) override {
    IRM_RETURN_IF_ERROR(DistToDense(program, rank_));
    return IrChange::kChanged;
  }

 private:
  int64_t rank_;
};

class RemoveOtherRanksPass : public Pass {
 public:
  explicit RemoveOtherRanksPass(int64_t rank) : rank_(rank) {}
  std::string_view name() const override { return "remove-other-ranks"; }
  StatusOr<IrChange> Run(Program& program) override {
    IRM_ASSIGN_OR_RETURN(size_t erased, RemoveOtherRankOps(program, rank_));
    return erased > 0 ? IrChange::kChanged : IrChange::kUnchanged;
  }

 private:
  int64_t rank_;
};

class SpmdCompletionPass : public Pass {
 public:
  std::string_view name() const override { return "spmd-completion"; }
  StatusOr<IrChange> Run(Program& program) override {
    IRM_ASSIGN_OR_RETURN(SpmdCompletionResult result, CompleteSpmd(program));
    return result.ops_completed > 0 ? IrChange::kChanged : IrChange::kUnchanged;
  }
};

// Runs gradient_merge.h on the main program alone; its startup initialisers come from
// AddGradientMergeInitializers.
class GradientMergePass : public Pass {
 public:
  GradientMergePass(int64_t k_steps, bool avg, std::string fault)
      : k_steps_(k_steps), avg_(avg), fault_(std::move(fault)) {}
  std::string_view name() const override { return "gradient-merge"; }
  StatusOr<IrChange> Run(Program& program) override {
    IRM_ASSIGN_OR_RETURN(GradientMergeFault fault, GradientMergeFaultFromName(fault_));
    IRM_RETURN_IF_ERROR(
        ApplyGradientMerge(program, {.k_steps = k_steps_, .avg = avg_, .fault = fault}).status());
    return IrChange::kChanged;
  }

 private:
  int64_t k_steps_;
  bool avg_;
  std::string fault_;
};

PassOptionSpec RankOption() {
  return {.name = "rank",
          .default_value = int64_t{0},
          .help = "the rank whose program to make",
          .min = 0,
          .max = std::numeric_limits<int64_t>::max()};
}

}  // namespace

Status RegisterAutoParallelPasses(PassRegistry& registry) {
  IRM_RETURN_IF_ERROR(registry.Register(
      {.name = "spmd-completion",
       .summary = "decides every op's layouts by its SPMD rule (op_dist_attr, distributed result "
                  "types) and inserts dist_op.reshard where an operand needs another layout",
       .options = {},
       .factory = [](const PassOptions&) { return std::make_unique<SpmdCompletionPass>(); }}));
  IRM_RETURN_IF_ERROR(registry.Register(
      {.name = "lower-reshard",
       .summary = "lowers every dist_op.reshard to one rank's collectives, as Paddle's reshard "
                  "functions do",
       .options = {RankOption(),
                   {.name = "world-size",
                    .default_value = int64_t{0},
                    .help = "ranks in the world (ring 0); 0: the largest process id of the "
                            "program's meshes plus one",
                    .min = 0,
                    .max = std::numeric_limits<int64_t>::max()}},
       .factory = [](const PassOptions& options) {
         return std::make_unique<LowerReshardPass>(options.GetInt("rank"),
                                                   options.GetInt("world-size"));
       }}));
  IRM_RETURN_IF_ERROR(registry.Register(
      {.name = "remove-other-ranks",
       .summary = "erases the ops of meshes without the rank, and the dense ops only they read "
                  "(Paddle's remove_other_rank_op_pass)",
       .options = {RankOption()},
       .factory = [](const PassOptions& options) {
         return std::make_unique<RemoveOtherRanksPass>(options.GetInt("rank"));
       }}));
  IRM_RETURN_IF_ERROR(registry.Register(
      {.name = "gradient-merge",
       .summary = "accumulates every gradient into a @GRAD@MERGE buffer and runs the optimizer "
                  "every k-steps-th step inside a pd_op.if (Paddle's PIR gradient merge)",
       .options = {{.name = "k-steps",
                    .default_value = int64_t{1},
                    .help = "executor steps merged into one optimizer update (gradient_merge."
                            "k_steps)",
                    .min = 1,
                    .max = std::numeric_limits<int64_t>::max()},
                   {.name = "avg",
                    .default_value = true,
                    .help = "scale the merged gradients by 1/k-steps (gradient_merge.avg)",
                    .min = std::numeric_limits<int64_t>::min(),
                    .max = std::numeric_limits<int64_t>::max()},
                   {.name = "test-fault",
                    .default_value = std::string(),
                    .help = "tests only: break the pass on purpose (scale-by-k-plus-1, drop-if)",
                    .min = std::numeric_limits<int64_t>::min(),
                    .max = std::numeric_limits<int64_t>::max()}},
       .factory = [](const PassOptions& options) {
         return std::make_unique<GradientMergePass>(
             options.GetInt("k-steps"), options.GetBool("avg"), options.GetString("test-fault"));
       }}));
  return registry.Register(
      {.name = "dist-to-dense",
       .summary = "makes one rank's dense program: local types, no dist ops, no op_dist_attr",
       .options = {RankOption()},
       .factory = [](const PassOptions& options) {
         return std::make_unique<DistToDensePass>(options.GetInt("rank"));
       }});
}

}  // namespace irm::newir
