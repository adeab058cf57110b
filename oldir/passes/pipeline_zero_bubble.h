// Zero-bubble backward split of the legacy pipeline pass: each non-transposed `matmul_v2_grad`
// becomes its two GEMMs (python/paddle/distributed/passes/pass_utils.py,
// split_matmul_grad_to_matmul, run on every such op by pipeline_zero_bubble.py's
// _split_matmul_grad_ops_to_matmul), and every backward op is classified as part of the
// input-gradient job (backward_b) or the weight-gradient job (backward_w) as
// pass_utils._get_backward_op_type does.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "oldir/program.h"

namespace irm::oldir::passes {

// Rewrites the root block in place: each `matmul_v2_grad` with trans_x and trans_y false becomes
//   matmul_v2(X=Out@GRAD, Y=Y, trans_y=true) -> X@GRAD                      (when X@GRAD is set)
// and, when Y@GRAD is set, for operands of rank > 2 (MatmulGradKernel's FoldInitDims: one plain
// GEMM over the first two dims folded; -1 stands for the dynamic batch dim)
//   reshape2(X -> X@reshape.out), reshape2(Out@GRAD -> Out@GRAD@reshape.out),
//   matmul_v2(trans_x=true) -> Y@GRAD@reshape.out, reshape2(-> Y@GRAD, Y@GRAD's dims)
// or, for rank 2, matmul_v2(X=X, Y=Out@GRAD, trans_x=true) -> Y@GRAD (Paddle's fold would make a
// rank-2 operand rank 1). The new ops keep the grad op's op_role, op_namescope, op_device and
// chunk_id. kInvalid located at the op when X and Out@GRAD differ in rank (or, above rank 2, in
// their first two dims), as Paddle asserts.
Status SplitMatmulGradToMatmul(Program& main, const std::string& file = "");

enum class BackwardPart { kB, kW };

// For each op of the root block, Paddle's classification (meaningful for backward-role ops): B
// for an op without outputs (send_v2); W for each op of the run reshape2, reshape2, matmul_v2,
// reshape2, elementwise_add (all backward) whose matmul_v2 writes a parameter's gradient; W for an
// op all of whose outputs are `<param>@...`; B otherwise.
std::vector<BackwardPart> BackwardParts(const Program& main);

}  // namespace irm::oldir::passes
