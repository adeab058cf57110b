// The auto-parallel passes by name through the pass manager: a pipeline
// `lower-reshard{rank=1},dist-to-dense{rank=1}` makes rank 1's dense program (verified after
// each pass), with the options declared; dist-to-dense before lowering is refused at the reshard.
#include "newir/auto_parallel/passes.h"

#include <gtest/gtest.h>

#include "newir/auto_parallel/reshard_test_support.h"
#include "newir/pass_manager.h"
#include "newir/printer.h"

namespace irm::newir {
namespace {

using testing::Layout;

PassRegistry Registry() {
  PassRegistry registry;
  EXPECT_TRUE(RegisterAutoParallelPasses(registry).ok());
  return registry;
}

TEST(AutoParallelPassesTest, PipelineMakesOneRanksDenseProgram) {
  const PassRegistry registry = Registry();
  EXPECT_EQ(registry.ListPasses(),
            "dist-to-dense: makes one rank's dense program: local types, no dist ops, no "
            "op_dist_attr\n"
            "  rank=<int> (default: 0, at least 0): the rank whose program to make\n"
            "gradient-merge: accumulates every gradient into a @GRAD@MERGE buffer and runs the "
            "optimizer every k-steps-th step inside a pd_op.if (Paddle's PIR gradient merge)\n"
            "  k-steps=<int> (default: 1, at least 1): executor steps merged into one optimizer "
            "update (gradient_merge.k_steps)\n"
            "  avg=<bool> (default: true): scale the merged gradients by 1/k-steps "
            "(gradient_merge.avg)\n"
            "  test-fault=<string> (default: \"\"): tests only: break the pass on purpose "
            "(scale-by-k-plus-1, drop-if)\n"
            "lower-reshard: lowers every dist_op.reshard to one rank's collectives, as Paddle's "
            "reshard functions do\n"
            "  rank=<int> (default: 0, at least 0): the rank whose program to make\n"
            "  world-size=<int> (default: 0, at least 0): ranks in the world (ring 0); 0: the "
            "largest process id of the program's meshes plus one\n"
            "remove-other-ranks: erases the ops of meshes without the rank, and the dense ops "
            "only they read (Paddle's remove_other_rank_op_pass)\n"
            "  rank=<int> (default: 0, at least 0): the rank whose program to make\n"
            "spmd-completion: decides every op's layouts by its SPMD rule (op_dist_attr, "
            "distributed result types) and inserts dist_op.reshard where an operand needs "
            "another layout\n");
  // 9 rows over 2 ranks: rank 1 holds 4, pads them to 5 and gathers 10 rows, of which 9 stay.
  Program program = testing::ReshardProgram({9, 4}, Layout({2}, {0, 1}, {0, -1}),
                                            Layout({2}, {0, 1}, {-1, -1}), 1);
  PassManager pm;
  ASSERT_TRUE(pm.AddPipeline("lower-reshard{rank=1},dist-to-dense{rank=1}", registry).ok());
  StatusOr<IrChange> change = pm.Run(program);
  ASSERT_TRUE(change.ok()) << change.status().ToString();
  const std::string text = PrintProgram(program);
  EXPECT_EQ(text.find("pd_dist"), std::string::npos) << text;
  EXPECT_EQ(text.find("dist_op."), std::string::npos) << text;
  EXPECT_NE(text.find("shape:(pd_op.IntArray)[4,4]"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("pd_op.all_gather" (%)"), std::string::npos) << text;
  EXPECT_NE(text.find("-> builtin.tensor<9x4xf32>"), std::string::npos) << text;
}

TEST(AutoParallelPassesTest, DistToDenseRefusesAReshardLeft) {
  const PassRegistry registry = Registry();
  Program program = testing::ReshardProgram({4, 4}, Layout({2}, {0, 1}, {0, -1}),
                                            Layout({2}, {0, 1}, {-1, -1}), 0);
  PassManager pm;
  ASSERT_TRUE(pm.AddPipeline("dist-to-dense", registry).ok());
  StatusOr<IrChange> change = pm.Run(program);
  ASSERT_FALSE(change.ok());
  EXPECT_EQ(change.status().ToString(),
            "op 2 (dist_op.reshard): error: dist_op.reshard is left: run lower-reshard before "
            "dist-to-dense\n  note: in pass 'dist-to-dense' (1 of 1 in the pipeline)");
}

}  // namespace
}  // namespace irm::newir
