// Tests of the program model: var lookup (per block and through the parent chain, including
// malformed parent links), tensor facts of vars, op slots and typed attributes, op roles and
// sub-blocks, the var index after edits, copies and moves, and the op/var editors.
#include "oldir/program.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "oldir/editor.h"

namespace irm::oldir {
namespace {

proto::BlockDesc* AddBlock(proto::ProgramDesc* desc, int idx, int parent) {
  proto::BlockDesc* block = desc->add_blocks();
  block->set_idx(idx);
  block->set_parent_idx(parent);
  return block;
}

proto::VarDesc* AddDense(proto::BlockDesc* block, const std::string& name,
                         proto::VarType::Type dtype, const std::vector<int64_t>& dims,
                         int lod = 0) {
  proto::VarDesc* var = block->add_vars();
  var->set_name(name);
  VarEditor(var).SetDenseTensor(dtype, dims, lod);
  return var;
}

// Block 0 (root): a FP32 [2, 3], b INT64 [-1]. Block 1 (parent 0): c, and an `a` of its own
// (FP64) that shadows block 0's. Block 2 (parent 1): d.
proto::ProgramDesc ThreeBlocks() {
  proto::ProgramDesc desc;
  proto::BlockDesc* b0 = AddBlock(&desc, 0, -1);
  AddDense(b0, "a", proto::VarType::FP32, {2, 3});
  AddDense(b0, "b", proto::VarType::INT64, {-1});
  proto::BlockDesc* b1 = AddBlock(&desc, 1, 0);
  AddDense(b1, "c", proto::VarType::BOOL, {1});
  AddDense(b1, "a", proto::VarType::FP64, {7});
  proto::BlockDesc* b2 = AddBlock(&desc, 2, 1);
  AddDense(b2, "d", proto::VarType::INT8, {});
  OpEditor(b0->add_ops()).SetType("conditional_block").SetAttr("sub_block", BlockRef{1});
  OpEditor(b1->add_ops()).SetType("while").SetAttr("sub_block", BlockRef{2});
  OpEditor(b2->add_ops()).SetType("increment");
  OpEditor(b2->add_ops()).SetType("relu");
  return desc;
}

// ---- var lookup --------------------------------------------------------------------------------

TEST(ProgramTest, BasicShape) {
  Program p(ThreeBlocks());
  EXPECT_EQ(p.num_blocks(), 3);
  EXPECT_EQ(p.num_ops(), 4);
  EXPECT_EQ(p.version(), std::nullopt);
  EXPECT_EQ(p.root().position(), 0);
  EXPECT_EQ(p.root().index(), 0);
  EXPECT_EQ(p.root().parent_index(), -1);
  EXPECT_EQ(p.root().forward_block_index(), -1);  // the schema default
  EXPECT_FALSE(p.root().parent().has_value());
  EXPECT_EQ(p.block(2).parent()->position(), 1);
  EXPECT_EQ(p.block(2).parent()->parent()->position(), 0);
  EXPECT_EQ(p.block(1).num_vars(), 2);
  EXPECT_EQ(p.block(1).var(1).name(), "a");
  EXPECT_EQ(p.block(2).num_ops(), 2);
  EXPECT_EQ(p.block(2).op(1).type(), "relu");

  proto::ProgramDesc with_version = ThreeBlocks();
  with_version.mutable_version()->set_version(0);  // dev builds write 0: set, not absent
  EXPECT_EQ(Program(with_version).version(), 0);
}

TEST(ProgramTest, FindVarInOneBlock) {
  Program p(ThreeBlocks());
  std::optional<Var> a = p.root().FindVar("a");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->dtype(), proto::VarType::FP32);
  EXPECT_EQ(&a->desc(), &p.desc().blocks(0).vars(0));
  EXPECT_TRUE(p.root().FindVar("b").has_value());
  EXPECT_FALSE(p.root().FindVar("c").has_value());    // declared in a child, not here
  EXPECT_FALSE(p.block(2).FindVar("b").has_value());  // FindVar does not climb
  EXPECT_FALSE(p.root().FindVar("").has_value());
}

TEST(ProgramTest, FindVarRecursiveWalksTheParentChainNearestFirst) {
  Program p(ThreeBlocks());
  Block b2 = p.block(2);
  std::optional<Var> d = b2.FindVarRecursive("d");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->dtype(), proto::VarType::INT8);
  std::optional<Var> c = b2.FindVarRecursive("c");  // from the parent
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->dtype(), proto::VarType::BOOL);
  std::optional<Var> b = b2.FindVarRecursive("b");  // from the grandparent
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->dtype(), proto::VarType::INT64);
  std::optional<Var> a = b2.FindVarRecursive("a");  // block 1's shadows block 0's
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->dtype(), proto::VarType::FP64);
  EXPECT_EQ(&a->desc(), &p.desc().blocks(1).vars(1));
  EXPECT_EQ(p.root().FindVarRecursive("a")->dtype(), proto::VarType::FP32);
  EXPECT_FALSE(b2.FindVarRecursive("nowhere").has_value());
  EXPECT_FALSE(p.root().FindVarRecursive("d").has_value());  // never downwards
}

TEST(ProgramTest, DuplicateVarNameFirstDeclarationWins) {
  proto::ProgramDesc desc;
  proto::BlockDesc* b0 = AddBlock(&desc, 0, -1);
  AddDense(b0, "x", proto::VarType::FP32, {1});
  AddDense(b0, "x", proto::VarType::FP16, {1});
  Program p(desc);
  EXPECT_EQ(p.root().FindVar("x")->dtype(), proto::VarType::FP32);
}

TEST(ProgramTest, ParentCycleDoesNotLoopForever) {
  // Blocks 1 and 2 name each other as parent.
  proto::ProgramDesc desc;
  AddBlock(&desc, 0, -1);
  proto::BlockDesc* b1 = AddBlock(&desc, 1, 2);
  AddDense(b1, "one", proto::VarType::FP32, {1});
  proto::BlockDesc* b2 = AddBlock(&desc, 2, 1);
  AddDense(b2, "two", proto::VarType::FP32, {1});
  Program p(desc);
  EXPECT_FALSE(p.block(1).FindVarRecursive("missing").has_value());
  EXPECT_FALSE(p.block(2).FindVarRecursive("missing").has_value());
  // Lookups across the cycle still find what is there.
  EXPECT_TRUE(p.block(1).FindVarRecursive("two").has_value());
  EXPECT_TRUE(p.block(2).FindVarRecursive("one").has_value());
}

TEST(ProgramTest, SelfParentAndOutOfRangeParents) {
  proto::ProgramDesc desc;
  AddBlock(&desc, 0, 0);   // its own parent
  AddBlock(&desc, 1, 7);   // past the end
  AddBlock(&desc, 2, -5);  // negative but not -1
  AddBlock(&desc, 3, 3);
  Program p(desc);
  for (int i = 0; i < p.num_blocks(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_FALSE(p.block(i).parent().has_value());
    EXPECT_FALSE(p.block(i).FindVarRecursive("x").has_value());
  }
}

TEST(ProgramTest, LongParentChainIsFollowedToTheRoot) {
  // 50 nested blocks: the bound on the walk must not cut a legitimate chain short.
  proto::ProgramDesc desc;
  AddDense(AddBlock(&desc, 0, -1), "root_var", proto::VarType::FP32, {1});
  for (int i = 1; i < 50; ++i) AddBlock(&desc, i, i - 1);
  Program p(desc);
  EXPECT_TRUE(p.block(49).FindVarRecursive("root_var").has_value());
}

// ---- var facts ---------------------------------------------------------------------------------

TEST(VarTest, DenseTensor) {
  proto::VarDesc desc;
  desc.set_name("x");
  VarEditor(&desc).SetDenseTensor(proto::VarType::FP16, {-1, 3, 224}, 2).SetPersistable(true);
  Var v(&desc);
  EXPECT_EQ(v.name(), "x");
  EXPECT_EQ(v.type(), proto::VarType::DENSE_TENSOR);
  ASSERT_NE(v.tensor_desc(), nullptr);
  EXPECT_EQ(v.dtype(), proto::VarType::FP16);
  EXPECT_EQ(v.dims(), (std::vector<int64_t>{-1, 3, 224}));
  EXPECT_EQ(v.lod_level(), 2);
  EXPECT_TRUE(v.persistable());
  EXPECT_FALSE(v.stop_gradient());
  EXPECT_FALSE(v.is_parameter());
  EXPECT_FALSE(v.need_check_feed());
}

TEST(VarTest, ScalarTensorHasNoDims) {
  proto::VarDesc desc;
  desc.set_name("s");
  VarEditor(&desc).SetDenseTensor(proto::VarType::FP32, {});
  Var v(&desc);
  EXPECT_EQ(v.dtype(), proto::VarType::FP32);
  EXPECT_TRUE(v.dims().empty());
  EXPECT_EQ(v.lod_level(), 0);
}

TEST(VarTest, SelectedRowsAndTensorArray) {
  proto::VarDesc rows;
  rows.set_name("rows");
  rows.mutable_type()->set_type(proto::VarType::SELECTED_ROWS);
  rows.mutable_type()->mutable_selected_rows()->set_data_type(proto::VarType::FP32);
  rows.mutable_type()->mutable_selected_rows()->add_dims(10);
  rows.mutable_type()->mutable_selected_rows()->add_dims(4);
  Var r(&rows);
  EXPECT_EQ(r.dtype(), proto::VarType::FP32);
  EXPECT_EQ(r.dims(), (std::vector<int64_t>{10, 4}));
  EXPECT_EQ(r.lod_level(), 0);

  proto::VarDesc arr;
  arr.set_name("arr");
  arr.mutable_type()->set_type(proto::VarType::DENSE_TENSOR_ARRAY);
  arr.mutable_type()->mutable_tensor_array()->mutable_tensor()->set_data_type(
      proto::VarType::INT32);
  arr.mutable_type()->mutable_tensor_array()->mutable_tensor()->add_dims(5);
  arr.mutable_type()->mutable_tensor_array()->set_legacy_lod_level(3);
  Var a(&arr);
  EXPECT_EQ(a.dtype(), proto::VarType::INT32);
  EXPECT_EQ(a.dims(), std::vector<int64_t>{5});
  EXPECT_EQ(a.lod_level(), 3);
}

TEST(VarTest, NonTensorVarsHaveNoTensorFacts) {
  proto::VarDesc feed;
  feed.set_name("feed");
  VarEditor(&feed).SetType(proto::VarType::FEED_MINIBATCH).SetStopGradient(true);
  Var f(&feed);
  EXPECT_EQ(f.type(), proto::VarType::FEED_MINIBATCH);
  EXPECT_EQ(f.tensor_desc(), nullptr);
  EXPECT_EQ(f.dtype(), std::nullopt);
  EXPECT_TRUE(f.dims().empty());
  EXPECT_EQ(f.lod_level(), 0);
  EXPECT_TRUE(f.stop_gradient());

  // A DENSE_TENSOR var whose dense_tensor message is missing.
  proto::VarDesc bare;
  bare.set_name("bare");
  bare.mutable_type()->set_type(proto::VarType::DENSE_TENSOR);
  Var b(&bare);
  EXPECT_EQ(b.tensor_desc(), nullptr);
  EXPECT_EQ(b.dtype(), std::nullopt);
  EXPECT_TRUE(b.dims().empty());
  EXPECT_EQ(b.lod_level(), 0);

  // A var whose type says FP32 tensor facts live in selected_rows, but only dense_tensor is set:
  // the type field decides which message counts.
  proto::VarDesc mixed;
  mixed.set_name("mixed");
  mixed.mutable_type()->set_type(proto::VarType::SELECTED_ROWS);
  mixed.mutable_type()->mutable_dense_tensor()->mutable_tensor()->set_data_type(
      proto::VarType::FP32);
  EXPECT_EQ(Var(&mixed).dtype(), std::nullopt);
}

// ---- ops
// -----------------------------------------------------------------------------------------

proto::OpDesc MatmulOp() {
  proto::OpDesc op;
  OpEditor(&op)
      .SetType("matmul_v2")
      .SetInput("X", {"x"})
      .SetInput("Y", {"y1", "y2"})
      .SetInput("Empty", {})
      .SetOutput("Out", {"out"})
      .SetAttr("trans_x", false)
      .SetAttr("alpha", 0.5f)
      .SetAttr("axis", int32_t{-1})
      .SetAttr("shape", std::vector<int64_t>{2, -1});
  return op;
}

TEST(OpTest, Slots) {
  proto::OpDesc desc = MatmulOp();
  Op op(&desc);
  EXPECT_EQ(op.type(), "matmul_v2");
  ASSERT_NE(op.Input("X"), nullptr);
  EXPECT_EQ(op.Input("X")->size(), 1);
  ASSERT_NE(op.Input("Y"), nullptr);
  EXPECT_EQ(op.Input("Y")->Get(1), "y2");
  ASSERT_NE(op.Input("Empty"), nullptr);  // present but empty is not absent
  EXPECT_EQ(op.Input("Empty")->size(), 0);
  EXPECT_EQ(op.Input("Out"), nullptr);  // an output slot is not an input
  EXPECT_EQ(op.Input("Missing"), nullptr);
  ASSERT_NE(op.Output("Out"), nullptr);
  EXPECT_EQ(op.Output("X"), nullptr);

  EXPECT_EQ(op.SingleInput("X"), "x");
  EXPECT_EQ(op.SingleInput("Y"), std::nullopt);      // two names
  EXPECT_EQ(op.SingleInput("Empty"), std::nullopt);  // none
  EXPECT_EQ(op.SingleInput("Missing"), std::nullopt);
  EXPECT_EQ(op.SingleOutput("Out"), "out");
  EXPECT_EQ(op.SingleOutput("X"), std::nullopt);
}

TEST(OpTest, TypedAttributes) {
  proto::OpDesc desc = MatmulOp();
  Op op(&desc);
  EXPECT_TRUE(op.HasAttr("alpha"));
  EXPECT_FALSE(op.HasAttr("beta"));
  ASSERT_NE(op.FindAttr("axis"), nullptr);
  EXPECT_EQ(op.FindAttr("axis")->i(), -1);

  StatusOr<float> alpha = op.Attr<float>("alpha");
  ASSERT_TRUE(alpha.ok());
  EXPECT_EQ(*alpha, 0.5f);
  StatusOr<bool> trans = op.Attr<bool>("trans_x");
  ASSERT_TRUE(trans.ok());
  EXPECT_FALSE(*trans);
  StatusOr<std::vector<int64_t>> shape = op.Attr<std::vector<int64_t>>("shape");
  ASSERT_TRUE(shape.ok());
  EXPECT_EQ(*shape, (std::vector<int64_t>{2, -1}));

  StatusOr<AttrValue> any = op.GetAttr("axis");
  ASSERT_TRUE(any.ok());
  EXPECT_EQ(any->index(), 0u);  // INT
}

TEST(OpTest, AttrOfTheWrongTypeIsInvalid) {
  proto::OpDesc desc = MatmulOp();
  Op op(&desc);
  // axis is INT (int32); asking for a LONG (int64) is a type error, not a conversion.
  StatusOr<int64_t> axis = op.Attr<int64_t>("axis");
  ASSERT_FALSE(axis.ok());
  EXPECT_EQ(axis.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(axis.status().location().attr, "axis");
  EXPECT_EQ(axis.status().ToString(),
            "attr 'axis': error: attribute 'axis' of op 'matmul_v2' has type INT, not the one "
            "asked for");
  StatusOr<double> alpha = op.Attr<double>("alpha");
  ASSERT_FALSE(alpha.ok());
  EXPECT_EQ(alpha.status().message(),
            "attribute 'alpha' of op 'matmul_v2' has type FLOAT, not the one asked for");
}

TEST(OpTest, AbsentAttrIsNotFound) {
  proto::OpDesc desc = MatmulOp();
  Op op(&desc);
  StatusOr<float> beta = op.Attr<float>("beta");
  ASSERT_FALSE(beta.ok());
  EXPECT_EQ(beta.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(beta.status().ToString(), "attr 'beta': error: op 'matmul_v2' has no attribute 'beta'");
  EXPECT_EQ(op.GetAttr("beta").status().code(), StatusCode::kNotFound);
}

TEST(OpTest, AttrWithoutItsValueIsInvalid) {
  proto::OpDesc desc;
  desc.set_type("scale");
  proto::OpDesc::Attr* attr = desc.add_attrs();
  attr->set_name("scale");
  attr->set_type(proto::FLOAT);  // but no f
  Op op(&desc);
  StatusOr<float> scale = op.Attr<float>("scale");
  ASSERT_FALSE(scale.ok());
  EXPECT_EQ(scale.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(scale.status().ToString(),
            "attr 'scale': error: attribute of type FLOAT has no value: field 'f' is not set");
  EXPECT_EQ(op.AttrOr<float>("scale", 2.0f), 2.0f);
}

TEST(OpTest, AttrOr) {
  proto::OpDesc desc = MatmulOp();
  Op op(&desc);
  EXPECT_EQ(op.AttrOr<float>("alpha", 9.0f), 0.5f);        // present
  EXPECT_EQ(op.AttrOr<float>("beta", 9.0f), 9.0f);         // absent
  EXPECT_EQ(op.AttrOr<int64_t>("axis", int64_t{42}), 42);  // wrong type
  EXPECT_EQ(op.AttrOr<std::string>("name", "dflt"), "dflt");
  EXPECT_EQ(op.AttrOr<std::vector<int64_t>>("shape", {}), (std::vector<int64_t>{2, -1}));
}

TEST(OpTest, RoleDefaultsToNotSpecified) {
  proto::OpDesc desc;
  desc.set_type("relu");
  EXPECT_EQ(Op(&desc).role(), 4096);  // absent: Paddle's kNotSpecified = 0x1000
  EXPECT_EQ(kNotSpecified, 0x1000);
  OpEditor(&desc).SetAttr(kOpRoleAttr, int32_t{257});
  EXPECT_EQ(Op(&desc).role(), 257);
  OpEditor(&desc).SetAttr(kOpRoleAttr, int32_t{0});
  EXPECT_EQ(Op(&desc).role(), 0);
  // op_role stored with another type is not an op_role.
  OpEditor(&desc).SetAttr(kOpRoleAttr, int64_t{1});
  EXPECT_EQ(Op(&desc).role(), 4096);
  // An INT op_role without its value is not Forward (0): it is unset.
  desc.mutable_attrs(0)->Clear();
  desc.mutable_attrs(0)->set_name(kOpRoleAttr);
  desc.mutable_attrs(0)->set_type(proto::INT);
  EXPECT_EQ(Op(&desc).role(), 4096);
}

TEST(OpTest, SubBlocks) {
  proto::OpDesc desc;
  desc.set_type("select");
  EXPECT_TRUE(Op(&desc).SubBlocks().empty());
  OpEditor(&desc)
      .SetAttr("sub_block", BlockRef{3})
      .SetAttr("branches", BlockRefs{{1, 2}})
      .SetAttr("not_a_block", int32_t{5});
  EXPECT_EQ(Op(&desc).SubBlocks(), (std::vector<int32_t>{3, 1, 2}));
  // A BLOCK attr without block_idx names no block.
  proto::OpDesc::Attr* empty = desc.add_attrs();
  empty->set_name("empty_block");
  empty->set_type(proto::BLOCK);
  EXPECT_EQ(Op(&desc).SubBlocks(), (std::vector<int32_t>{3, 1, 2}));

  Program p(ThreeBlocks());
  EXPECT_EQ(p.root().op(0).SubBlocks(), std::vector<int32_t>{1});
  EXPECT_EQ(p.block(1).op(0).SubBlocks(), std::vector<int32_t>{2});
  EXPECT_TRUE(p.block(2).op(0).SubBlocks().empty());
}

TEST(OpTest, Locations) {
  Program p(ThreeBlocks());
  EXPECT_EQ(OpLocation("m.pdmodel", p.block(2), 1).Render(), "m.pdmodel: block 2, op 1 (relu)");
  EXPECT_EQ(VarLocation("m.pdmodel", p.block(1), "c").Render(), "m.pdmodel: block 1, var 'c'");
}

// ---- the index after edits, copies and moves
// -----------------------------------------------------

TEST(ProgramIndexTest, ReindexAfterAddingVars) {
  Program p(ThreeBlocks());
  AddDense(p.mutable_desc()->mutable_blocks(0), "new_var", proto::VarType::UINT8, {4});
  p.Reindex();
  std::optional<Var> v = p.root().FindVar("new_var");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->dtype(), proto::VarType::UINT8);
  EXPECT_TRUE(p.block(2).FindVarRecursive("new_var").has_value());
  EXPECT_TRUE(p.root().FindVar("a").has_value());  // the old ones are still there
}

TEST(ProgramIndexTest, ReindexAfterRenamingAndRemoving) {
  Program p(ThreeBlocks());
  proto::BlockDesc* b0 = p.mutable_desc()->mutable_blocks(0);
  b0->mutable_vars(0)->set_name("a_renamed");
  p.Reindex();
  EXPECT_FALSE(p.root().FindVar("a").has_value());
  ASSERT_TRUE(p.root().FindVar("a_renamed").has_value());
  // Remove the first var: b moves to position 0 and is still found, with the right desc.
  b0->mutable_vars()->DeleteSubrange(0, 1);
  p.Reindex();
  EXPECT_FALSE(p.root().FindVar("a_renamed").has_value());
  std::optional<Var> b = p.root().FindVar("b");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(&b->desc(), &p.desc().blocks(0).vars(0));
  EXPECT_EQ(b->dtype(), proto::VarType::INT64);
}

TEST(ProgramIndexTest, ReindexAfterAddingABlock) {
  Program p(ThreeBlocks());
  proto::BlockDesc* b3 = AddBlock(p.mutable_desc(), 3, 2);
  AddDense(b3, "e", proto::VarType::FP32, {1});
  // Before Reindex the new block has no index yet; its vars are still found, nothing crashes.
  EXPECT_TRUE(p.block(3).FindVar("e").has_value());
  p.Reindex();
  EXPECT_TRUE(p.block(3).FindVar("e").has_value());
  EXPECT_EQ(p.block(3).FindVarRecursive("b")->dtype(), proto::VarType::INT64);
  EXPECT_EQ(p.block(3).FindVarRecursive("a")->dtype(), proto::VarType::FP64);
}

TEST(ProgramIndexTest, CopyHasItsOwnIndex) {
  auto original = std::make_unique<Program>(ThreeBlocks());
  Program copy(*original);
  Program assigned;
  assigned = *original;
  original.reset();  // the index of the copies must not point into the destroyed program
  for (const Program* p : {&copy, &assigned}) {
    std::optional<Var> a = p->block(2).FindVarRecursive("a");
    ASSERT_TRUE(a.has_value());
    EXPECT_EQ(&a->desc(), &p->desc().blocks(1).vars(1));  // inside the copy
    EXPECT_EQ(a->dtype(), proto::VarType::FP64);
    EXPECT_TRUE(p->root().FindVar("b").has_value());
    EXPECT_FALSE(p->root().FindVar("zzz").has_value());
  }
}

TEST(ProgramIndexTest, CopyIsIndependentOfTheOriginal) {
  Program original(ThreeBlocks());
  Program copy(original);
  original.mutable_desc()->mutable_blocks(0)->mutable_vars(0)->set_name("changed");
  original.Reindex();
  EXPECT_TRUE(copy.root().FindVar("a").has_value());
  EXPECT_FALSE(copy.root().FindVar("changed").has_value());
}

TEST(ProgramIndexTest, SelfAssignmentKeepsTheIndex) {
  Program p(ThreeBlocks());
  Program& alias = p;
  p = alias;
  EXPECT_TRUE(p.block(2).FindVarRecursive("b").has_value());
}

TEST(ProgramIndexTest, MoveKeepsTheIndexValid) {
  auto original = std::make_unique<Program>(ThreeBlocks());
  Program moved(std::move(*original));
  original.reset();
  EXPECT_EQ(moved.num_blocks(), 3);
  std::optional<Var> a = moved.block(2).FindVarRecursive("a");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(&a->desc(), &moved.desc().blocks(1).vars(1));
  EXPECT_TRUE(moved.root().FindVar("b").has_value());

  Program target;
  target = std::move(moved);
  EXPECT_TRUE(target.block(1).FindVar("c").has_value());
  EXPECT_EQ(target.block(2).FindVarRecursive("a")->dtype(), proto::VarType::FP64);

  // Through a vector that reallocates (moves its elements).
  std::vector<Program> programs;
  for (int i = 0; i < 20; ++i) programs.emplace_back(ThreeBlocks());
  for (const Program& p : programs) EXPECT_TRUE(p.block(2).FindVarRecursive("b").has_value());
}

TEST(ProgramIndexTest, EmptyProgram) {
  Program p;
  EXPECT_EQ(p.num_blocks(), 0);
  EXPECT_EQ(p.num_ops(), 0);
  EXPECT_EQ(p.version(), std::nullopt);
}

// ---- editors
// -------------------------------------------------------------------------------------

TEST(EditorTest, SetAttrReplacesInPlace) {
  proto::OpDesc desc;
  OpEditor edit(&desc);
  edit.SetType("scale").SetAttr("scale", 2.0f).SetAttr("bias", 0.0f);
  edit.SetAttr("scale", int64_t{3});  // a new type for the same name: replaced, not appended
  ASSERT_EQ(desc.attrs_size(), 2);
  EXPECT_EQ(desc.attrs(0).name(), "scale");
  EXPECT_EQ(desc.attrs(0).type(), proto::LONG);
  EXPECT_EQ(desc.attrs(0).l(), 3);
  EXPECT_FALSE(desc.attrs(0).has_f());  // the old value is gone
  EXPECT_EQ(*Op(&desc).Attr<int64_t>("scale"), 3);
}

TEST(EditorTest, SetAttrOnDuplicateNamesUpdatesTheOneThatIsRead) {
  // A malformed op with two attrs named "x": the editor must change the one Op::Attr reads.
  proto::OpDesc desc;
  desc.set_type("t");
  for (int v : {1, 2}) {
    proto::OpDesc::Attr* a = desc.add_attrs();
    a->set_name("x");
    WriteAttrValue(int32_t{v}, a);
  }
  OpEditor(&desc).SetAttr("x", int32_t{7});
  EXPECT_EQ(*Op(&desc).Attr<int32_t>("x"), 7);
}

TEST(EditorTest, RemoveAttr) {
  proto::OpDesc desc = MatmulOp();
  OpEditor(&desc).RemoveAttr("alpha").RemoveAttr("no_such_attr");
  Op op(&desc);
  EXPECT_FALSE(op.HasAttr("alpha"));
  EXPECT_TRUE(op.HasAttr("trans_x"));
  EXPECT_TRUE(op.HasAttr("axis"));
  EXPECT_EQ(desc.attrs_size(), 3);
}

TEST(EditorTest, SetInputReplacesOrAppendsSlots) {
  proto::OpDesc desc = MatmulOp();
  OpEditor(&desc).SetInput("Y", {"z"}).SetInput("Bias", {"b"}).SetOutput("Out", {});
  ASSERT_EQ(desc.inputs_size(), 4);
  EXPECT_EQ(desc.inputs(1).parameter(), "Y");  // replaced where it was
  EXPECT_EQ(Op(&desc).SingleInput("Y"), "z");
  EXPECT_EQ(desc.inputs(3).parameter(), "Bias");  // appended
  EXPECT_EQ(Op(&desc).Output("Out")->size(), 0);
}

TEST(EditorTest, VarEditorReplacesTheWholeType) {
  proto::VarDesc desc;
  desc.set_name("v");
  desc.mutable_type()->set_type(proto::VarType::SELECTED_ROWS);
  desc.mutable_type()->mutable_selected_rows()->set_data_type(proto::VarType::FP32);
  VarEditor(&desc).SetDenseTensor(proto::VarType::INT32, {5});
  EXPECT_FALSE(desc.type().has_selected_rows());
  EXPECT_EQ(Var(&desc).dtype(), proto::VarType::INT32);
  EXPECT_FALSE(desc.type().dense_tensor().has_legacy_lod_level());  // 0 is not written
  VarEditor(&desc).SetType(proto::VarType::STEP_SCOPES);
  EXPECT_FALSE(desc.type().has_dense_tensor());
  EXPECT_EQ(Var(&desc).type(), proto::VarType::STEP_SCOPES);
  VarEditor(&desc).SetIsParameter(true).SetNeedCheckFeed(true).SetPersistable(false);
  EXPECT_TRUE(Var(&desc).is_parameter());
  EXPECT_TRUE(Var(&desc).need_check_feed());
  EXPECT_TRUE(desc.has_persistable());  // set explicitly, even to false
}

}  // namespace
}  // namespace irm::oldir
