// The op tables checked against each other, each gap a named exception with its reason (as XLA
// brackets its opcode lists with LINT.IfChange and IREE fails on an op left unconverted): every
// legacy binding and every new-IR binding names a kernel the real registry has; every op of the
// legacy schema (oldir/op_schema) has an op-compat row that translates it, or sits in the
// not-translated list below with the reason. The tables themselves stay independent
// (docs/architecture.md, invariant 1): these tests only read them.
//
// Here, in diff_tests/, because this is the lowest layer allowed to see all of them:
// reference_runtime must not include translator, and oldir neither of them. The oldir-only check
// (grad rules against the schema) is in oldir/validator_test.cc.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "newir/pd_op_elementwise.h"
#include "oldir/elementwise_ops.h"
#include "oldir/grad_makers.h"
#include "oldir/op_schema.h"
#include "reference_runtime/kernel.h"
#include "reference_runtime/legacy_bindings.h"
#include "reference_runtime/pir_bindings.h"
#include "translator/op_compat.h"

namespace irm {
namespace {

bool RegistryHas(std::string_view kernel) {
  return !rt::KernelRegistry::Global().DTypesOf(kernel, rt::Device::kCpu).empty();
}

// Kernels a legacy binding's hook switches to (legacy_bindings.cc): split with `num` > 0 is
// split_with_num, tril_triu with lower=false is triu / triu_grad.
const std::set<std::string_view> kLegacyHookKernels = {"split_with_num", "triu", "triu_grad"};

TEST(OpTablesTest, EveryLegacyBindingNamesAKernelTheRegistryHas) {
  std::vector<std::string> missing;
  for (const rt::LegacyBinding& binding : rt::AllLegacyBindings()) {
    if (!RegistryHas(binding.kernel)) {
      missing.push_back(std::string(binding.op_type) + " -> " + std::string(binding.kernel));
    }
  }
  for (std::string_view kernel : kLegacyHookKernels) {
    if (!RegistryHas(kernel)) missing.push_back("(hook) " + std::string(kernel));
  }
  EXPECT_EQ(missing, std::vector<std::string>{});
}

TEST(OpTablesTest, EveryPirBindingNamesAKernelTheRegistryHas) {
  const rt::PirBindings& bindings = rt::PirBindings::Global();
  std::vector<std::string> missing;
  for (const std::string& op : bindings.OpNames()) {
    const rt::OpBinding* binding = bindings.Find(op);
    ASSERT_NE(binding, nullptr) << op;
    if (binding->kind != rt::BindingKind::kKernel) continue;
    if (!RegistryHas(binding->kernel)) missing.push_back(op + " -> " + binding->kernel);
  }
  EXPECT_EQ(missing, std::vector<std::string>{});
}

// Legacy schema ops the translator does not translate, each with the reason. An op that gains a
// translating row must leave this list (the test below fails until it does). A refusal row of the
// op-compat table (no new op, no handler) names its reason in its note and needs no entry here.
const std::map<std::string_view, std::string_view> kNotTranslated = {
    {"share_data",
     "pd_op.share_data exists, but translator/op_compat.cc has no row for the legacy share_data "
     "yet"},
};

TEST(OpTablesTest, EveryLegacySchemaOpTranslatesOrIsNamedNotTranslated) {
  std::vector<std::string> untranslated, listed_but_translated;
  for (const oldir::OpSchema& schema : oldir::AllOpSchemas()) {
    const translator::OpCompat* row = translator::FindOpCompat(schema.type);
    const bool translates = translator::IsTranslatable(row);
    const bool refused_with_reason = row != nullptr && !translates && !row->note.empty();
    // Parameter-server (RPC) programs are read and validated, neither run nor translated
    // (docs/validator.md): their ops are one named family, not entries of the list.
    const bool listed = kNotTranslated.count(schema.type) > 0 || refused_with_reason ||
                        oldir::IsParameterServerOp(schema.type);
    if (!translates && !listed) untranslated.push_back(std::string(schema.type));
    if (translates && listed) listed_but_translated.push_back(std::string(schema.type));
  }
  EXPECT_EQ(untranslated, std::vector<std::string>{})
      << "give each an op-compat row (translator/op_compat.cc) or a reason in kNotTranslated";
  EXPECT_EQ(listed_but_translated, std::vector<std::string>{})
      << "translated now: take them out of kNotTranslated";
  for (const auto& [type, reason] : kNotTranslated) {
    EXPECT_NE(oldir::FindOpSchema(type), nullptr) << type << " is not a legacy schema op";
    EXPECT_FALSE(reason.empty()) << type;
  }
}

// The detection ops of a Faster R-CNN training program and the exponential decay's ops (issue 28)
// translate and have a binding on both sides; rpn_target_assign's bindings are a kernel that
// refuses it by name (it samples at random: reference_runtime/kernels/detection.cc).
TEST(OpTablesTest, DetectionOpsTranslateAndAreBoundOnBothSides) {
  const std::pair<std::string_view, std::string_view> ops[] = {
      {"elementwise_pow", "elementwise_pow"},
      {"elementwise_pow_grad", "elementwise_pow_grad"},
      {"floor", "floor"},
      {"floor_grad", "floor_grad"},
      {"gather", "gather"},
      {"gather_grad", "gather_grad"},
      {"shape", "shape"},
      {"reduce_prod", "prod"},
      {"reduce_prod_grad", "prod_grad"},
      {"smooth_l1_loss", "smooth_l1_loss"},
      {"smooth_l1_loss_grad", "smooth_l1_loss_grad"},
      {"sigmoid_cross_entropy_with_logits", "sigmoid_cross_entropy_with_logits"},
      {"sigmoid_cross_entropy_with_logits_grad", "sigmoid_cross_entropy_with_logits_grad"},
      {"affine_channel", "affine_channel"},
      {"affine_channel_grad", "affine_channel_grad"},
      {"anchor_generator", "anchor_generator"},
      {"roi_align", "roi_align"},
      {"roi_align_grad", "roi_align_grad"},
      {"generate_proposals_v2", "generate_proposals"},
      {"rpn_target_assign", "rpn_target_assign"}};
  for (const auto& [legacy, pd_op] : ops) {
    SCOPED_TRACE(std::string(legacy));
    const translator::OpCompat* row = translator::FindOpCompat(legacy);
    ASSERT_TRUE(translator::IsTranslatable(row));
    EXPECT_EQ(row->new_op, pd_op);
    EXPECT_NE(rt::FindLegacyBinding(legacy), nullptr);
    EXPECT_NE(rt::PirBindings::Global().Find("pd_op." + std::string(pd_op)), nullptr);
  }
}

// The elementwise family's two lists (oldir/elementwise_ops.h, newir/pd_op_elementwise.h) and the
// translator's rows for it agree: every legacy op (and its grad) translates to an op of the PIR
// list (and that op's grad), and both sides bind what they list. The lists stay apart (invariant
// 1); this test only reads them.
TEST(OpTablesTest, ElementwiseFamiliesAgreeAcrossTheTables) {
  auto find_pd_op = [](std::string_view name) -> const newir::PdOpElementwiseOp* {
    for (const newir::PdOpElementwiseOp& op : newir::PdOpElementwiseOps()) {
      if (op.name == name) return &op;
    }
    return nullptr;
  };
  const rt::PirBindings& pir = rt::PirBindings::Global();
  for (const oldir::LegacyElementwiseOp& legacy : oldir::LegacyElementwiseOps()) {
    SCOPED_TRACE(std::string(legacy.type));
    const translator::OpCompat* row = translator::FindOpCompat(legacy.type);
    ASSERT_TRUE(translator::IsTranslatable(row));
    const newir::PdOpElementwiseOp* pd_op = find_pd_op(row->new_op);
    ASSERT_NE(pd_op, nullptr) << row->new_op << " is not in newir/pd_op_elementwise.cc's list";
    ASSERT_NE(rt::FindLegacyBinding(legacy.type), nullptr);
    EXPECT_EQ(rt::FindLegacyBinding(legacy.type)->kernel, legacy.kernel);
    EXPECT_NE(pir.Find("pd_op." + std::string(pd_op->name)), nullptr);
    if (pd_op->inplace) {
      EXPECT_NE(pir.Find("pd_op." + std::string(pd_op->name) + "_"), nullptr);
    }
    EXPECT_NE(oldir::FindOpSchema(legacy.type), nullptr);
    EXPECT_EQ(legacy.has_grad(), oldir::FindGradRule(legacy.type) != nullptr);
    EXPECT_EQ(legacy.has_grad(), !pd_op->grad.empty()) << "one side has a grad op, the other not";
    if (!legacy.has_grad() || pd_op->grad.empty()) continue;
    const translator::OpCompat* grad_row = translator::FindOpCompat(legacy.grad_type);
    ASSERT_TRUE(translator::IsTranslatable(grad_row)) << legacy.grad_type;
    EXPECT_EQ(grad_row->new_op, pd_op->grad);
    EXPECT_NE(oldir::FindOpSchema(legacy.grad_type), nullptr);
    ASSERT_NE(rt::FindLegacyBinding(legacy.grad_type), nullptr);
    EXPECT_EQ(rt::FindLegacyBinding(legacy.grad_type)->kernel, legacy.grad_kernel);
    EXPECT_NE(pir.Find("pd_op." + std::string(pd_op->grad)), nullptr);
  }
}

}  // namespace
}  // namespace irm
