// What a model-zoo builder produces: a startup and a main legacy program under construction, the
// loss var, and the data the main program is fed and what it fetches. A builder writes the forward
// pass (feed ops included) and the parameter initialisers; AddTraining (oldir/models/training.h)
// then appends append_backward, the optimizer and the fetch ops.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "oldir/builder.h"

namespace irm::oldir::models {

// One fed tensor: a `paddle.static.data` var (need_check_feed, stop_gradient), fed by a `feed`
// op with `col`. -1 in shape is the batch dimension.
struct FeedSpec {
  std::string name;
  proto::VarType::Type dtype = proto::VarType::FP32;
  std::vector<int64_t> shape;
};

struct ModelPrograms {
  ProgramBuilder startup;
  ProgramBuilder main;
  std::string loss;  // a 0-D (or [1]) var of main's root block
  std::vector<FeedSpec> feeds;
  std::vector<std::string> fetches;  // filled by AddTraining: loss first
  int32_t seed = 0;  // the programs' random_seed: initialisers and dropout take it when theirs is 0
};

}  // namespace irm::oldir::models
