// The gradient rules of the legacy ops, one per forward op type, as Paddle's grad op makers
// (the GradOpMaker classes of paddle/fluid/operators/*_op.cc) write them: which grad op(s) a
// forward op gets, which forward inputs and outputs they re-feed under their own slot names,
// which `Out@GRAD`-style inputs they read and `X@GRAD`-style outputs they write, and which
// attributes they carry. A forward op type either has a maker, is known to have no gradient
// (Paddle registers EmptyGradOpMaker: backward stops there), or is unknown to ir-migrate.
//
// The makers are pure: they read the forward op through GradMakerContext (Paddle's
// GradOpDescMakerBase) and return GradOp values; append_backward (oldir/backward.h) renames,
// prunes and appends them.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/status.h"
#include "oldir/attribute.h"
#include "oldir/builder.h"

namespace irm::oldir {

// A grad op under construction. Slots are kept sorted by name, as Paddle's OpDesc keeps them (a
// std::map): append_backward's renaming walks outputs in that order, so the order is part of the
// result.
struct GradOp {
  std::string type;
  SlotArgs inputs;
  SlotArgs outputs;
  AttrList attrs;  // op_role is left to the builder's role guard

  void SetInput(const std::string& slot, std::vector<std::string> names);
  void SetOutput(const std::string& slot, std::vector<std::string> names);
  void SetAttr(const std::string& name, AttrValue value);
  const AttrValue* FindAttr(std::string_view name) const;
  // Paddle's OpDesc::InputArgumentNames / OutputArgumentNames: every argument, slot by slot.
  std::vector<std::string> InputArgNames() const;
  std::vector<std::string> OutputArgNames() const;
  // Paddle's _rename_input / _rename_output: every occurrence in every slot.
  void RenameInput(const std::string& from, const std::string& to);
  void RenameOutput(const std::string& from, const std::string& to);
};

// What a grad maker sees of the forward op: Paddle's GradOpDescMakerBase. A slot or attribute a
// maker asks for that the forward op lacks (Paddle throws there) is recorded in status().
class GradMakerContext {
 public:
  // `attrs` are the forward op's attributes, already read; `no_grad` holds the gradient names
  // (`x@GRAD`) no gradient may flow into; `grad_to_var` receives gradient -> forward var name.
  GradMakerContext(const proto::OpDesc& forward, AttrList attrs,
                   const std::unordered_set<std::string>& no_grad,
                   std::unordered_map<std::string, std::string>* grad_to_var)
      : forward_(forward), attrs_(std::move(attrs)), no_grad_(no_grad), grad_to_var_(grad_to_var) {}

  const std::string& type() const { return forward_.type(); }
  // Whether the forward op has the slot at all (Paddle's HasInput counts empty slots too).
  bool HasInput(std::string_view slot) const;
  bool HasOutput(std::string_view slot) const;
  std::vector<std::string> Input(std::string_view slot) const;
  std::vector<std::string> Output(std::string_view slot) const;
  // `x@GRAD` for each input of the slot; a gradient in the no-grad set is dropped, or, with
  // drop_empty_grad false (duplicable slots), kept in place as @EMPTY@.
  std::vector<std::string> InputGrad(std::string_view slot, bool drop_empty_grad = true) const;
  // `y@GRAD` for each output of the slot.
  std::vector<std::string> OutputGrad(std::string_view slot) const;
  // The forward attributes, for SetAttrMap (op_role left out: the grad op's role is Backward).
  AttrList AttrMap() const;
  // One forward attribute (a missing one is recorded and read as INT 0).
  AttrValue GetAttr(std::string_view name) const;

  const Status& status() const { return status_; }

 private:
  void Missing(std::string what) const;

  const proto::OpDesc& forward_;
  AttrList attrs_;
  const std::unordered_set<std::string>& no_grad_;
  std::unordered_map<std::string, std::string>* grad_to_var_;
  mutable Status status_;
};

using GradMaker = std::vector<GradOp> (*)(const GradMakerContext& ctx);

struct GradRule {
  std::string_view type;  // forward op type
  GradMaker maker;        // null: the op has no gradient (Paddle's EmptyGradOpMaker)
};

// The rule of a forward op type; null when ir-migrate has none.
const GradRule* FindGradRule(std::string_view type);

}  // namespace irm::oldir
