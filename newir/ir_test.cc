// Tests of the IR core: building with the builder, use lists under create / replace / erase,
// erase refusal, op-list order under insertion points and moves, clone across programs, block
// (keyword) arguments and nested regions.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "newir/builder.h"
#include "newir/program.h"
#include "newir/rewriter.h"

namespace irm::newir {
namespace {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

Type T(std::vector<int64_t> dims) { return Type::DenseTensor(Type::F32(), std::move(dims)); }

std::vector<std::string> Names(const Block& block) {
  std::vector<std::string> out;
  for (const Operation& op : block) out.push_back(op.name());
  return out;
}

// parameter w -> pd_op.relu (opaque) -> shadow_output "out"
struct Small {
  Program program;
  Operation* param = nullptr;
  Operation* relu = nullptr;
  Operation* output = nullptr;

  Small() {
    Builder b(program.block());
    param = b.Create("builtin.parameter", {}, {T({4, 8})},
                     {{"parameter_name", Attribute::String("w")}});
    relu = b.Create("pd_op.relu", {param->result(0)}, {T({4, 8})},
                    {{"stop_gradient", Attribute::Array({Attribute::Bool(false)})}});
    output = b.Create("builtin.shadow_output", {relu->result(0)}, {},
                      {{"output_name", Attribute::String("out")}});
  }
};

TEST(IrTest, BuildsASmallProgram) {
  Small s;
  EXPECT_THAT(Names(s.program.block()),
              ElementsAre("builtin.parameter", "pd_op.relu", "builtin.shadow_output"));
  EXPECT_EQ(s.program.block().size(), 3u);
  EXPECT_EQ(s.program.CountOps(), 3u);
  EXPECT_EQ(s.program.module().name(), "builtin.module");
  EXPECT_NE(s.program.module().info(), nullptr);
  // Registered ops carry their table entry; an unregistered name builds an opaque op.
  ASSERT_NE(s.param->info(), nullptr);
  EXPECT_EQ(s.param->info()->name, "builtin.parameter");
  ASSERT_NE(s.relu->info(), nullptr);
  EXPECT_EQ(s.relu->info()->name, "pd_op.relu");
  EXPECT_EQ(Operation::Create("pd_op.frobnicate", {}, {}, {})->info(), nullptr);
  EXPECT_EQ(s.relu->dialect(), "pd_op");
  EXPECT_EQ(s.relu->op_name(), "relu");
  EXPECT_EQ(s.relu->operand(0), s.param->result(0));
  EXPECT_EQ(s.relu->result(0)->defining_op(), s.relu);
  EXPECT_EQ(s.relu->result(0)->type().ToString(), "builtin.tensor<4x8xf32>");
  EXPECT_EQ(s.relu->parent_block(), &s.program.block());
  EXPECT_EQ(s.relu->parent_op(), &s.program.module());
  EXPECT_EQ(s.relu->result(0)->parent_block(), &s.program.block());
  EXPECT_EQ(s.param->next(), s.relu);
  EXPECT_EQ(s.output->prev(), s.relu);
  EXPECT_LT(s.param->id(), s.relu->id());
}

TEST(IrTest, AttributesStaySortedByName) {
  auto op = Operation::Create("pd_op.x", {}, {},
                              {{"b", Attribute::Int32(1)}, {"a", Attribute::Int32(2)}});
  op->SetAttribute("0", Attribute::Bool(true));
  op->SetAttribute("c", Attribute::Bool(true));
  std::vector<std::string> keys;
  for (const auto& [k, v] : op->attributes()) keys.emplace_back(k);
  EXPECT_THAT(keys, ElementsAre("0", "a", "b", "c"));
  EXPECT_EQ(op->attribute("a"), Attribute::Int32(2));
  EXPECT_TRUE(op->attribute("zz").IsNull());
  EXPECT_TRUE(op->RemoveAttribute("a"));
  EXPECT_FALSE(op->RemoveAttribute("a"));
  EXPECT_FALSE(op->HasAttribute("a"));
}

TEST(IrTest, UseListsFollowCreateReplaceAndErase) {
  Small s;
  Value* w = s.param->result(0);
  Value* r = s.relu->result(0);
  EXPECT_EQ(w->use_count(), 1u);
  EXPECT_EQ(r->use_count(), 1u);
  EXPECT_TRUE(s.output->results().empty());

  // A second reader of w, with w twice: every slot is its own use.
  Builder b(s.program.block());
  b.SetInsertionPoint(*s.output);
  Operation* add = b.Create("pd_op.add", {w, w}, {T({4, 8})});
  EXPECT_EQ(w->use_count(), 3u);
  std::vector<std::pair<Operation*, uint32_t>> uses;
  for (OpOperand* u : w->uses()) uses.emplace_back(u->owner(), u->index());
  EXPECT_THAT(uses,
              UnorderedElementsAre(std::pair{s.relu, 0u}, std::pair{add, 0u}, std::pair{add, 1u}));

  // Replace-all-uses moves every slot.
  r->ReplaceAllUsesWith(add->result(0));
  EXPECT_TRUE(r->use_empty());
  EXPECT_EQ(s.output->operand(0), add->result(0));
  EXPECT_EQ(add->result(0)->use_count(), 1u);

  // Selective replacement.
  Value* v = s.relu->result(0);
  w->ReplaceUsesWithIf(v, [&](const OpOperand& u) { return u.owner() == add && u.index() == 1; });
  EXPECT_EQ(add->operand(0), w);
  EXPECT_EQ(add->operand(1), v);
  EXPECT_EQ(w->use_count(), 2u);
  EXPECT_EQ(v->use_count(), 1u);

  // Erasing a reader drops its uses.
  ASSERT_TRUE(EraseOp(s.output).ok());
  EXPECT_TRUE(add->result(0)->use_empty());
  ASSERT_TRUE(EraseOp(add).ok());
  EXPECT_EQ(w->use_count(), 1u);
  EXPECT_TRUE(v->use_empty());
  EXPECT_THAT(Names(s.program.block()), ElementsAre("builtin.parameter", "pd_op.relu"));
}

TEST(IrTest, EraseOfAUsedOpIsRefused) {
  Small s;
  Status status = EraseOp(s.relu);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kInvalid);
  EXPECT_EQ(status.ToString(),
            "op 1 (pd_op.relu): error: cannot erase 'pd_op.relu': result 0 still has 1 use(s)");
  EXPECT_EQ(s.program.block().size(), 3u);
  EXPECT_EQ(s.output->operand(0), s.relu->result(0));
}

TEST(IrTest, ReplaceOpRewiresThenErases) {
  Small s;
  Status bad = ReplaceOp(s.relu, {});
  EXPECT_EQ(bad.message(), "cannot replace 'pd_op.relu': it has 1 results but 0 values were given");
  ASSERT_TRUE(ReplaceOp(s.relu, {s.param->result(0)}).ok());
  EXPECT_EQ(s.output->operand(0), s.param->result(0));
  EXPECT_THAT(Names(s.program.block()), ElementsAre("builtin.parameter", "builtin.shadow_output"));
}

TEST(IrTest, InsertionPointsAndMoves) {
  Program p;
  Builder b(p.block());
  Operation* a = b.Create("t.a", {}, {});
  Operation* d = b.Create("t.d", {}, {});
  b.SetInsertionPointAfter(*a);
  b.Create("t.b", {}, {});
  b.Create("t.c", {}, {});  // after b, still before d
  b.SetInsertionPointToStart(p.block());
  b.Create("t.0", {}, {});
  b.SetInsertionPoint(*d);
  b.Create("t.c2", {}, {});
  EXPECT_THAT(Names(p.block()), ElementsAre("t.0", "t.a", "t.b", "t.c", "t.c2", "t.d"));
  MoveBefore(d, a);
  EXPECT_THAT(Names(p.block()), ElementsAre("t.0", "t.d", "t.a", "t.b", "t.c", "t.c2"));
  MoveAfter(d, p.block().back());
  EXPECT_THAT(Names(p.block()), ElementsAre("t.0", "t.a", "t.b", "t.c", "t.c2", "t.d"));
  EXPECT_EQ(p.block().back(), d);
  EXPECT_EQ(d->next(), nullptr);
  // Move into a nested block.
  Operation* holder = b.Create("t.holder", {}, {}, {}, 1);
  Block& inner = holder->region(0).AddBlock();
  MoveToEnd(a, inner);
  EXPECT_THAT(Names(inner), ElementsAre("t.a"));
  EXPECT_EQ(a->parent_op(), holder);
  EXPECT_EQ(p.block().size(), 6u);
}

TEST(IrTest, BlockArgumentsAndKeywordArguments) {
  Program p;
  Block& block = p.block();
  Value* x = block.AddArgument(T({2}));
  Value* y = block.AddArgument(T({3}));
  x->SetAttribute("stop_gradient", Attribute::Bool(true));
  EXPECT_TRUE(x->IsBlockArgument());
  EXPECT_EQ(x->defining_op(), nullptr);
  EXPECT_EQ(x->parent_block(), &block);
  EXPECT_EQ(y->index(), 1u);
  EXPECT_EQ(x->attributes().at("stop_gradient"), Attribute::Bool(true));

  StatusOr<Value*> kw = block.AddKwarg("feed_x", T({5}));
  ASSERT_TRUE(kw.ok());
  EXPECT_EQ((*kw)->kind(), Value::Kind::kBlockKwarg);
  EXPECT_EQ((*kw)->kwarg_name(), "feed_x");
  EXPECT_EQ(block.FindKwarg("feed_x"), *kw);
  EXPECT_EQ(block.FindKwarg("nope"), nullptr);
  EXPECT_EQ(block.AddKwarg("feed_x", T({5})).status().message(),
            "block already has a keyword argument 'feed_x'");

  Builder b(block);
  Operation* use = b.Create("pd_op.add", {y, *kw}, {T({3})});
  EXPECT_EQ(y->use_count(), 1u);
  Status refused = block.EraseArgument(1);
  EXPECT_EQ(refused.message(), "block argument 1 still has 1 uses");
  EXPECT_EQ(block.EraseArgument(2).message(), "block has no argument 2 (it has 2)");
  ASSERT_TRUE(block.EraseArgument(0).ok());
  EXPECT_EQ(block.num_arguments(), 1u);
  EXPECT_EQ(block.argument(0), y);
  EXPECT_EQ(y->index(), 0u);
  EXPECT_EQ(use->operand(0), y);
}

TEST(IrTest, NestedRegionOpsAndWalkOrder) {
  Program p;
  Builder b(p.block());
  Operation* cond = b.Create("pd_op.full", {}, {Type::DenseTensor(Type::Bool(), {1})});
  Operation* x = b.Create("pd_op.full", {}, {T({2})});
  Operation* if_op = b.Create("pd_op.if", {cond->result(0)}, {T({2})}, {}, 2);
  Block& then_block = if_op->region(0).AddBlock();
  Block& else_block = if_op->region(1).AddBlock();
  Builder inner(then_block);
  Operation* relu = inner.Create("pd_op.relu", {x->result(0)}, {T({2})});
  inner.Create("cf.yield", {relu->result(0)}, {});
  inner.SetInsertionPointToEnd(else_block);
  inner.Create("cf.yield", {x->result(0)}, {});
  b.Create("builtin.shadow_output", {if_op->result(0)}, {},
           {{"output_name", Attribute::String("y")}});

  EXPECT_EQ(relu->parent_op(), if_op);
  EXPECT_EQ(relu->parent_region(), &if_op->region(0));
  EXPECT_EQ(if_op->region(1).front().front()->info()->terminator, true);
  EXPECT_EQ(x->result(0)->use_count(), 2u);  // read from both branches

  std::vector<std::string> walked;
  p.module().Walk([&](Operation* op) { walked.push_back(op->name()); });
  EXPECT_THAT(walked, ElementsAre("builtin.module", "pd_op.full", "pd_op.full", "pd_op.if",
                                  "pd_op.relu", "cf.yield", "cf.yield", "builtin.shadow_output"));
  EXPECT_EQ(p.CountOps(), 7u);

  // The if is read by shadow_output; once that is gone, erasing the if drops the nested uses of x.
  ASSERT_FALSE(EraseOp(if_op).ok());
  ASSERT_TRUE(EraseOp(p.block().back()).ok());
  ASSERT_TRUE(EraseOp(if_op).ok());
  EXPECT_TRUE(x->result(0)->use_empty());
  EXPECT_TRUE(cond->result(0)->use_empty());
}

TEST(IrTest, EraseRefusesWhenANestedValueIsReadOutside) {
  Program p;
  Builder b(p.block());
  Operation* holder = b.Create("t.holder", {}, {}, {}, 1);
  Builder inner(holder->region(0).AddBlock());
  Operation* def = inner.Create("t.def", {}, {T({1})});
  b.Create("t.reader", {def->result(0)}, {});  // invalid IR, but erase must not dangle
  EXPECT_EQ(EraseOp(holder).message(),
            "cannot erase 't.holder': a value defined in its regions is still used outside it");
}

TEST(IrTest, CloneAcrossProgramsRemapsOperandsAndKeepsStructure) {
  Program src;
  Builder b(src.block());
  Operation* w =
      b.Create("builtin.parameter", {}, {T({2})}, {{"parameter_name", Attribute::String("w")}});
  Operation* loop = b.Create("pd_op.while", {w->result(0)}, {T({2})}, {}, 1);
  Block& body = loop->region(0).AddBlock();
  Value* arg = body.AddArgument(T({2}));
  arg->SetAttribute("stop_gradient", Attribute::Bool(false));
  Builder inner(body);
  Operation* sum = inner.Create("pd_op.add", {arg, w->result(0)}, {T({2})});
  inner.Create("cf.yield", {sum->result(0)}, {});
  b.Create("builtin.shadow_output", {loop->result(0)}, {},
           {{"output_name", Attribute::String("out")}});

  Program dst;
  Builder to(dst.block());
  IrMapping mapping;
  for (const Operation& op : src.block()) to.Clone(op, mapping);

  ASSERT_EQ(dst.block().size(), 3u);
  Operation* w2 = dst.block().front();
  Operation* loop2 = w2->next();
  Operation* out2 = loop2->next();
  EXPECT_EQ(w2->attribute("parameter_name"), Attribute::String("w"));
  EXPECT_EQ(w2->info(), w->info());
  EXPECT_NE(w2, w);
  EXPECT_EQ(loop2->operand(0), w2->result(0));
  EXPECT_EQ(out2->operand(0), loop2->result(0));
  ASSERT_EQ(loop2->num_regions(), 1u);
  Block& body2 = loop2->region(0).front();
  ASSERT_EQ(body2.num_arguments(), 1u);
  EXPECT_NE(body2.argument(0), arg);
  EXPECT_EQ(body2.argument(0)->attributes().at("stop_gradient"), Attribute::Bool(false));
  Operation* sum2 = body2.front();
  EXPECT_EQ(sum2->operand(0), body2.argument(0));
  EXPECT_EQ(sum2->operand(1), w2->result(0));  // enclosing value remapped into dst
  EXPECT_EQ(body2.back()->operand(0), sum2->result(0));
  EXPECT_EQ(mapping.Lookup(sum->result(0)), sum2->result(0));
  // Every operand in dst refers to a value of dst.
  dst.module().Walk([&](Operation* op) {
    for (Value* v : op->operands()) {
      Operation* owner = v->IsOpResult() ? v->defining_op() : v->parent_block()->parent_op();
      while (owner->parent_op() != nullptr) owner = owner->parent_op();
      EXPECT_EQ(owner, &dst.module()) << op->name();
    }
  });
  // The source is untouched: w is read by the loop and by the add.
  EXPECT_EQ(w->result(0)->use_count(), 2u);
  // Destroying the source first leaves dst whole.
  { Program gone = std::move(src); }
  EXPECT_EQ(sum2->operand(1), w2->result(0));
}

TEST(IrTest, CloneWithoutMappingKeepsOperands) {
  Small s;
  IrMapping mapping;
  Builder b(s.program.block());
  b.SetInsertionPointAfter(*s.relu);
  Operation* copy = b.Clone(*s.relu, mapping);
  EXPECT_EQ(copy->operand(0), s.param->result(0));
  EXPECT_EQ(s.param->result(0)->use_count(), 2u);
  EXPECT_EQ(copy->attribute("stop_gradient"), s.relu->attribute("stop_gradient"));
  EXPECT_THAT(Names(s.program.block()), ElementsAre("builtin.parameter", "pd_op.relu", "pd_op.relu",
                                                    "builtin.shadow_output"));
}

TEST(IrTest, DestroyingAProgramWithForwardReferencesIsSafe) {
  // A use before its def (invalid IR a parser may still build before verifying).
  auto p = std::make_unique<Program>();
  Builder b(p->block());
  Operation* reader = b.Create("t.reader", {nullptr}, {});
  Operation* def = b.Create("t.def", {}, {T({1})});
  reader->SetOperand(0, def->result(0));
  EXPECT_EQ(def->result(0)->use_count(), 1u);
  p.reset();  // must not touch freed memory (run under ASan to see)
  SUCCEED();
}

TEST(IrTest, OptionalOperandSlotsMayBeEmpty) {
  Small s;
  auto op = Operation::Create("pd_op.opt", {s.param->result(0), nullptr}, {});
  EXPECT_EQ(op->num_operands(), 2u);
  EXPECT_EQ(op->operand(1), nullptr);
  EXPECT_EQ(s.param->result(0)->use_count(), 2u);
  op->SetOperands({nullptr});
  EXPECT_EQ(s.param->result(0)->use_count(), 1u);
  op.reset();
  EXPECT_EQ(s.param->result(0)->use_count(), 1u);
}

// An op's slots live in its own block up to the count it was made with; longer lists move to an
// array of their own and shorter ones come back. Use lists must follow every move, and an op's
// results must keep their identity and use lists throughout.
TEST(IrTest, OperandListsGrowPastAndShrinkBackIntoTheOpsBlock) {
  Small s;
  Value* w = s.param->result(0);
  Value* r = s.relu->result(0);
  Builder b(s.program.block());
  b.SetInsertionPoint(*s.output);
  Operation* op = b.Create("t.op", {w, r}, {T({4, 8}), T({2})});
  Value* first_result = op->result(0);
  s.output->SetOperand(0, first_result);

  op->SetOperands({w, r, w, r, w});  // past the two slots it was made with
  ASSERT_EQ(op->num_operands(), 5u);
  EXPECT_EQ(w->use_count(), 4u);  // relu's and three here
  EXPECT_EQ(r->use_count(), 2u);
  for (uint32_t i = 0; i < 5; ++i) {
    EXPECT_EQ(op->operand(i), i % 2 == 0 ? w : r) << i;
    EXPECT_EQ(op->op_operand(i).owner(), op);
    EXPECT_EQ(op->op_operand(i).index(), i);
  }

  op->SetOperands({r});  // back into the op's block
  ASSERT_EQ(op->num_operands(), 1u);
  EXPECT_EQ(op->operand(0), r);
  EXPECT_EQ(w->use_count(), 1u);
  EXPECT_EQ(r->use_count(), 1u);

  op->SetOperands({});
  EXPECT_EQ(op->num_operands(), 0u);
  EXPECT_TRUE(r->use_empty());

  EXPECT_EQ(op->result(0), first_result);
  EXPECT_EQ(op->result(1)->index(), 1u);
  EXPECT_EQ(op->result(1)->defining_op(), op);
  EXPECT_EQ(s.output->operand(0), first_result);
  EXPECT_EQ(first_result->use_count(), 1u);
  ASSERT_TRUE(EraseOp(s.output).ok());
  ASSERT_TRUE(EraseOp(op).ok());
  EXPECT_EQ(w->use_count(), 1u);
}

// Only values that carry attributes (or a keyword name) keep a record of them; the others answer
// empty ones, and a clone copies what the original has.
TEST(IrTest, ResultAttributesAreKeptAndCloned) {
  Small s;
  Value* r = s.relu->result(0);
  EXPECT_TRUE(r->attributes().empty());
  EXPECT_EQ(r->kwarg_name(), "");
  r->SetAttribute("note", Attribute::String("kept"));
  IrMapping mapping;
  std::unique_ptr<Operation> copy = s.relu->Clone(mapping);
  EXPECT_EQ(copy->result(0)->attributes().at("note"), Attribute::String("kept"));
  EXPECT_TRUE(s.param->Clone(mapping)->result(0)->attributes().empty());
  EXPECT_EQ(s.program.block().AddArgument(T({1}))->kwarg_name(), "");
}

}  // namespace
}  // namespace irm::newir
