// Tests of AttributeMap (sorted by name, std::map's semantics for the operations the IR uses) and
// of the interned names its keys are.
#include "newir/attribute_map.h"

#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "newir/interned_name.h"

namespace irm::newir {
namespace {

using ::testing::ElementsAre;

std::vector<std::string> Keys(const AttributeMap& attrs) {
  std::vector<std::string> keys;
  for (const auto& [name, value] : attrs) keys.emplace_back(name);
  return keys;
}

TEST(AttributeMapTest, KeepsNamesSortedWhateverTheInsertionOrder) {
  AttributeMap attrs;
  for (const char* name : {"op_role", "b", "a", "legacy_var_names", "a_", "A", ""}) {
    attrs.emplace(name, Attribute::String(name));
  }
  // Byte order, as std::map<std::string> sorts (Paddle's print order).
  EXPECT_THAT(Keys(attrs), ElementsAre("", "A", "a", "a_", "b", "legacy_var_names", "op_role"));
  EXPECT_EQ(attrs.size(), 7u);
  for (const auto& [name, value] : attrs) EXPECT_EQ(*value.AsString(), name);
}

TEST(AttributeMapTest, HasStdMapSemantics) {
  // The first of repeated names wins, as in std::map's initializer-list constructor.
  AttributeMap attrs = {
      {"x", Attribute::Int32(1)}, {"w", Attribute::Int32(2)}, {"x", Attribute::Int32(3)}};
  EXPECT_THAT(Keys(attrs), ElementsAre("w", "x"));
  EXPECT_EQ(attrs.at("x"), Attribute::Int32(1));
  EXPECT_THROW((void)attrs.at("y"), std::out_of_range);

  auto [it, inserted] = attrs.emplace("x", Attribute::Int32(4));
  EXPECT_FALSE(inserted);
  EXPECT_EQ(it->second, Attribute::Int32(1));
  EXPECT_FALSE(attrs.insert_or_assign("x", Attribute::Int32(5)).second);
  EXPECT_EQ(attrs.at("x"), Attribute::Int32(5));
  EXPECT_TRUE(attrs.insert_or_assign("y", Attribute::Int32(6)).second);
  attrs["z"] = Attribute::Bool(true);
  EXPECT_TRUE(attrs["new"].IsNull());  // operator[] inserts a null attribute, as std::map does
  EXPECT_THAT(Keys(attrs), ElementsAre("new", "w", "x", "y", "z"));

  EXPECT_TRUE(attrs.contains("w"));
  EXPECT_EQ(attrs.find("nope"), attrs.end());
  EXPECT_EQ(attrs.erase("w"), 1u);
  EXPECT_EQ(attrs.erase("w"), 0u);
  EXPECT_FALSE(attrs.contains("w"));
  EXPECT_THAT(Keys(attrs), ElementsAre("new", "x", "y", "z"));
}

TEST(AttributeMapTest, EqualityGoesByNamesAndValues) {
  const AttributeMap a = {{"k", Attribute::Int32(1)}, {"j", Attribute::Bool(false)}};
  AttributeMap b;
  b.emplace("j", Attribute::Bool(false));
  b.emplace("k", Attribute::Int32(1));
  EXPECT_EQ(a, b);
  b["k"] = Attribute::Int64(1);
  EXPECT_FALSE(a == b);
  EXPECT_FALSE(a == AttributeMap{});
}

TEST(AttributeMapTest, NamesAreInternedAndOutliveTheMap) {
  std::string name = "a_name_longer_than_any_small_string_buffer";
  std::string_view key;
  {
    AttributeMap attrs;
    attrs.emplace(name, Attribute::Bool(true));
    key = attrs.begin()->first;
  }
  name.assign(name.size(), 'x');  // the caller's string changes: the key must not
  EXPECT_EQ(key, "a_name_longer_than_any_small_string_buffer");
  EXPECT_EQ(key.data(), InternName("a_name_longer_than_any_small_string_buffer").data());
}

TEST(InternedNameTest, EqualNamesAreOneObjectAcrossThreads) {
  const std::string& a = InternName("interned_name_test.a");
  EXPECT_EQ(&a, &InternName(std::string("interned_name_test.") + "a"));
  EXPECT_NE(&a, &InternName("interned_name_test.b"));
  EXPECT_EQ(InternName(""), "");

  // Threads interning the same names (each through its own cache) get the same objects, and the
  // table grows by the distinct names only.
  const size_t before = InternedNameCount();
  constexpr int kThreads = 4, kNames = 300;
  std::vector<std::vector<const std::string*>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &seen] {
      for (int round = 0; round < 3; ++round) {
        for (int i = 0; i < kNames; ++i) {
          const std::string& name = InternName("interned_name_test.n" + std::to_string(i));
          if (round == 0) seen[t].push_back(&name);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(InternedNameCount(), before + kNames);
  for (int t = 1; t < kThreads; ++t) EXPECT_EQ(seen[t], seen[0]) << t;
  for (int i = 0; i < kNames; ++i)
    EXPECT_EQ(*seen[0][i], "interned_name_test.n" + std::to_string(i));
}

// The per-thread cache places a name by its length and its first and last eight bytes: names
// alike in all three share a place and must still come back as themselves, as must short names
// a byte apart and a buffer reused for another name at the same address.
TEST(InternedNameTest, NamesSharingACachePlaceStayApart) {
  for (int round = 0; round < 3; ++round) {
    for (char c = 'a'; c <= 'z'; ++c) {
      const std::string name = std::string("prefix__") + c + "__suffix";
      EXPECT_EQ(InternName(name), name);
      const std::string short_name(1, c);
      EXPECT_EQ(InternName(short_name), short_name);
    }
  }
  char buffer[] = "reused_buffer_0";
  for (char c = '0'; c <= '9'; ++c) {
    buffer[sizeof(buffer) - 2] = c;
    EXPECT_EQ(InternName(std::string_view(buffer)), buffer);
  }
  const std::string& interned = InternName("a_view_of_the_interned_copy");
  EXPECT_EQ(&InternName(interned), &interned);
  EXPECT_EQ(InternName(std::string_view(interned).substr(0, 6)), "a_view");
}

}  // namespace
}  // namespace irm::newir
