// The ops gradient merge adds to a legacy training program (Paddle's
// auto_parallel_gradient_merge pass, old IR): a persistable `<grad>@MERGE` buffer per gradient,
// zero-filled in startup, and the update that averages the buffers over the k merged steps,
// applies them and resets them.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "oldir/backward.h"
#include "oldir/models/model.h"

namespace irm::corpus {

// Declares `merge` persistable with the dtype and dims of `param` in main's and startup's root
// blocks, and zero-fills it in startup (fill_constant).
Status AddMergeBuffer(oldir::models::ModelPrograms& model, const std::string& param,
                      const std::string& merge);

// Appends to main's root block, with op role Optimize: `scale(merge, 1/k)` in place per pair, the
// SGD updates of the parameters from the merge buffers (AppendOptimizer), and `set_value(merge,
// 0)` per pair. `merged` pairs a parameter with its merge buffer.
Status AppendMergedUpdate(oldir::models::ModelPrograms& model,
                          const std::vector<oldir::ParamGrad>& merged, int k);

}  // namespace irm::corpus
