// Tests of the op table and registry: the builtin and cf entries, duplicate registration, dialect
// ids, the self-consistency of every registered entry, and the builtin verifier hooks on good and
// bad ops.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "newir/builder.h"
#include "newir/dialect.h"
#include "newir/program.h"

namespace irm::newir {
namespace {

Type T(std::vector<int64_t> dims) { return Type::DenseTensor(Type::F32(), std::move(dims)); }

TEST(OpInfoTest, GlobalRegistryHoldsBuiltinAndCf) {
  const OpRegistry& r = OpRegistry::Global();
  std::vector<std::string> builtin;
  for (const OpInfo* info : r.OpsOfDialect("builtin")) builtin.push_back(info->name);
  EXPECT_THAT(builtin,
              ::testing::ElementsAre("builtin.combine", "builtin.constant", "builtin.module",
                                     "builtin.parameter", "builtin.set_parameter",
                                     "builtin.shadow_output", "builtin.slice", "builtin.split"));
  const OpInfo* yield = r.Lookup("cf.yield");
  ASSERT_NE(yield, nullptr);
  EXPECT_TRUE(yield->terminator);
  EXPECT_TRUE(yield->operands.at(0).variadic);
  EXPECT_EQ(r.Lookup("pd_op.nonexistent"), nullptr);
  EXPECT_EQ(r.OpsOfDialect("builtin").size() + r.OpsOfDialect("cf").size(), 9u);

  const OpInfo* param = r.Lookup("builtin.parameter");
  ASSERT_NE(param, nullptr);
  EXPECT_TRUE(param->side_effect);
  const AttrSpec* name = param->FindAttribute("parameter_name");
  ASSERT_NE(name, nullptr);
  EXPECT_EQ(name->kind, AttrKind::kString);
  EXPECT_TRUE(name->required);
  EXPECT_EQ(param->FindAttribute("nope"), nullptr);
  EXPECT_TRUE(r.Lookup("builtin.shadow_output")->side_effect);
  EXPECT_FALSE(r.Lookup("builtin.combine")->side_effect);
  EXPECT_EQ(r.Lookup("builtin.module")->num_regions, 1u);
  EXPECT_EQ(r.Lookup("builtin.slice")->dialect(), "builtin");
}

TEST(OpInfoTest, DuplicateRegistrationFails) {
  OpRegistry r;
  ASSERT_TRUE(RegisterBuiltinDialect(r).ok());
  Status again = RegisterBuiltinDialect(r);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.message(), "op 'builtin.module' is registered twice");
}

TEST(OpInfoTest, DialectJsonIds) {
  EXPECT_EQ(DialectJsonId("builtin"), 0);
  EXPECT_EQ(DialectJsonId("pd_op"), 1);
  EXPECT_EQ(DialectJsonId("cf"), 2);
  EXPECT_EQ(DialectJsonId("pd_dist"), 4);
  EXPECT_FALSE(DialectJsonId("mlir").has_value());
  EXPECT_EQ(DialectFromJsonId(3), "custom_op");
  EXPECT_FALSE(DialectFromJsonId(9).has_value());
}

// What every entry must say of itself, whoever wrote the table: the rules the verifier, printer
// and parser rely on (op_info.h).
template <typename Spec>
void ExpectSlotsConsistent(const OpInfo& info, const std::vector<Spec>& slots, const char* what) {
  std::set<std::string> names;
  for (size_t i = 0; i < slots.size(); ++i) {
    const Spec& s = slots[i];
    const std::string where = info.name + " " + what + " '" + s.name + "'";
    EXPECT_FALSE(s.name.empty()) << info.name << " " << what << " " << i;
    EXPECT_TRUE(names.insert(s.name).second) << where << " is declared twice";
    if (s.any_count) {
      EXPECT_TRUE(s.variadic) << where << ": any_count without variadic";
      EXPECT_EQ(i + 1, slots.size()) << where << ": only the last slot may be any_count";
      EXPECT_FALSE(s.optional) << where << ": an any_count slot is never optional";
    }
  }
}

TEST(OpInfoTest, EveryRegisteredEntryIsSelfConsistent) {
  const OpRegistry& r = OpRegistry::Global();
  size_t seen = 0;
  for (const DialectInfo& dialect : kDialects) {
    for (const OpInfo* info : r.OpsOfDialect(OpNamePrefixOfDialect(dialect.name))) {
      ++seen;
      SCOPED_TRACE(info->name);
      EXPECT_EQ(r.Lookup(info->name), info);
      EXPECT_EQ(DialectOfOpName(info->name), dialect.name);
      EXPECT_GT(info->name.size(), info->name.find('.') + 1) << "empty op name after the dot";
      EXPECT_FALSE(info->summary.empty());
      ExpectSlotsConsistent(*info, info->operands, "operand");
      ExpectSlotsConsistent(*info, info->results, "result");
      for (const OperandSpec& o : info->operands) {
        EXPECT_FALSE(o.int_array && o.variadic) << o.name << ": int_array is a single slot";
      }
      std::set<std::string> attrs;
      for (const AttrSpec& a : info->attributes) {
        EXPECT_FALSE(a.name.empty());
        EXPECT_TRUE(attrs.insert(a.name).second) << "attribute '" << a.name << "' twice";
        if (a.required) {
          EXPECT_TRUE(a.default_value.IsNull()) << a.name << ": required, with a default";
        }
        if (!a.default_value.IsNull() && a.kind != AttrKind::kNull) {
          EXPECT_EQ(a.default_value.kind(), a.kind) << "default of '" << a.name << "'";
        }
      }
      if (info->terminator) {
        EXPECT_TRUE(info->results.empty());
        EXPECT_EQ(info->num_regions, 0u);
      }
      if (info->inplace) {
        EXPECT_FALSE(info->operands.empty()) << "in place on no input";
      }
    }
  }
  // Every op sits in a dialect of kDialects.
  EXPECT_EQ(seen, r.size());
  EXPECT_GT(seen, 100u);
}

class BuiltinVerifyTest : public ::testing::Test {
 protected:
  Status Verify(const Operation* op) {
    EXPECT_NE(op->info(), nullptr);
    EXPECT_NE(op->info()->verify, nullptr);
    return op->info()->verify(*op);
  }
  Program p;
  Builder b{p.block()};
};

TEST_F(BuiltinVerifyTest, CombineSplitSliceAccepted) {
  Operation* x = b.Create("pd_op.x", {}, {T({2})});
  Operation* y = b.Create("pd_op.y", {}, {T({3})});
  Type vec = Type::Vector({T({2}), T({3})});
  Operation* combine = b.Create("builtin.combine", {x->result(0), y->result(0)}, {vec});
  Operation* split = b.Create("builtin.split", {combine->result(0)}, {T({2}), T({3})});
  Operation* slice =
      b.Create("builtin.slice", {combine->result(0)}, {T({3})}, {{"index", Attribute::Int32(1)}});
  EXPECT_TRUE(Verify(combine).ok());
  EXPECT_TRUE(Verify(split).ok());
  EXPECT_TRUE(Verify(slice).ok());
}

TEST_F(BuiltinVerifyTest, BadOpsGetExactDiagnostics) {
  Operation* x = b.Create("pd_op.x", {}, {T({2})});
  Operation* combine = b.Create("builtin.combine", {x->result(0)}, {Type::Vector({T({3})})});
  EXPECT_EQ(Verify(combine).ToString(),
            "op 1 (builtin.combine): error: builtin.combine result type is "
            "vec[builtin.tensor<3xf32>] but its operands make vec[builtin.tensor<2xf32>]");
  Operation* split = b.Create("builtin.split", {x->result(0)}, {T({2})});
  EXPECT_EQ(Verify(split).message(),
            "builtin.split operand must be a vector, not builtin.tensor<2xf32>");
  Operation* good = b.Create("builtin.combine", {x->result(0)}, {Type::Vector({T({2})})});
  Operation* split2 = b.Create("builtin.split", {good->result(0)}, {T({2}), T({2})});
  EXPECT_EQ(Verify(split2).message(), "builtin.split has 2 results but its operand has 1 elements");
  Operation* split3 = b.Create("builtin.split", {good->result(0)}, {T({4})});
  EXPECT_EQ(Verify(split3).message(),
            "builtin.split result 0 is builtin.tensor<4xf32> but element 0 is "
            "builtin.tensor<2xf32>");
  Operation* slice =
      b.Create("builtin.slice", {good->result(0)}, {T({2})}, {{"index", Attribute::Int32(1)}});
  EXPECT_EQ(Verify(slice).message(), "builtin.slice index 1 is out of range for 1 elements");
  Operation* slice2 =
      b.Create("builtin.slice", {good->result(0)}, {T({2})}, {{"index", Attribute::Int64(0)}});
  EXPECT_EQ(Verify(slice2).message(), "builtin.slice needs an int32 attribute 'index'");
  Operation* slice3 =
      b.Create("builtin.slice", {good->result(0)}, {T({9})}, {{"index", Attribute::Int32(0)}});
  EXPECT_EQ(Verify(slice3).message(), "builtin.slice result must be builtin.tensor<2xf32>");
  Operation* slice4 = b.Create("builtin.slice", {}, {T({9})}, {{"index", Attribute::Int32(0)}});
  EXPECT_EQ(Verify(slice4).message(), "builtin.slice needs exactly 1 operand");
}

}  // namespace
}  // namespace irm::newir
