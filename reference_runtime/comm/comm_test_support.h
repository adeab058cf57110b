// What the communication tests share: building a thread world that must build, and running a
// body on every rank of it.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "reference_runtime/comm/thread_world.h"

namespace irm::rt::testing {

inline std::unique_ptr<ThreadWorld> MakeWorld(int n, std::vector<CommGroup> groups = {},
                                              ThreadWorldOptions options = {}) {
  StatusOr<std::unique_ptr<ThreadWorld>> world =
      ThreadWorld::Create(n, std::move(groups), std::move(options));
  EXPECT_TRUE(world.ok()) << world.status().ToString();
  return world.ok() ? std::move(world).value() : nullptr;
}

// The communicator of `rank` in `ring`; fails the test when the world has none.
inline Communicator& CommOf(ThreadWorld& world, int rank, int ring = 0) {
  StatusOr<Communicator*> comm = world.For(rank, ring);
  EXPECT_TRUE(comm.ok()) << comm.status().ToString();
  return **comm;
}

}  // namespace irm::rt::testing
