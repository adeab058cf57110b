// The registries' start-up policy (builtin_registry.h): a complete registration yields the
// registry; a failed one stops the process with its diagnostic instead of leaving a partial one.
#include "common/builtin_registry.h"

#include <gtest/gtest.h>

#include <vector>

namespace irm {
namespace {

struct Names {
  std::vector<int> entries;
};

Status RegisterTwo(Names& names) {
  names.entries.push_back(1);
  names.entries.push_back(2);
  return Status::Ok();
}

Status FailOnSecond(Names& names) {
  names.entries.push_back(1);
  return Status(StatusCode::kInvalid, Location{}, "entry 2 is registered twice");
}

TEST(BuiltinRegistryTest, ACompleteRegistrationYieldsTheRegistry) {
  const Names* names = BuildBuiltinRegistry<Names>("names", RegisterTwo);
  ASSERT_NE(names, nullptr);
  EXPECT_EQ(names->entries, (std::vector<int>{1, 2}));
  delete names;
}

TEST(BuiltinRegistryDeathTest, AFailedRegistrationStopsWithItsDiagnostic) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(BuildBuiltinRegistry<Names>("name registry", FailOnSecond),
               "name registry: .*entry 2 is registered twice");
}

}  // namespace
}  // namespace irm
