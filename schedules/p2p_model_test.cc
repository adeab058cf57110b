#include "schedules/p2p_model.h"

#include <gtest/gtest.h>

namespace irm::schedules {
namespace {

TEST(P2pModelTest, ParsesEverySpellingAndPrintsItBack) {
  for (const char* text : {"rendezvous", "buffered=1", "buffered=4"}) {
    StatusOr<P2pModel> model = ParseP2pModel(text);
    ASSERT_TRUE(model.ok()) << text;
    EXPECT_EQ(P2pModelName(*model), text);
  }
  StatusOr<P2pModel> plain = ParseP2pModel("buffered");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(*plain, P2pModel::Buffered(1));
}

TEST(P2pModelTest, RefusesWhatIsNotAModel) {
  for (const char* text : {"", "buffered=", "buffered=0", "buffered=-1", "buffered=2x",
                           "buffered=99999999999", "Rendezvous", "nccl"}) {
    StatusOr<P2pModel> model = ParseP2pModel(text);
    ASSERT_FALSE(model.ok()) << text;
    EXPECT_EQ(model.status().code(), StatusCode::kInvalidArgument) << text;
  }
}

}  // namespace
}  // namespace irm::schedules
