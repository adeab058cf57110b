// The verifier's walk over a program: scoping through a set of the values in scope, each op
// against its table entry, dist consistency (verify_dist.h), then the op hooks. verifier.h says
// what is checked and how findings are located.
#include "newir/verifier.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "newir/block.h"
#include "newir/pd_op_catalog.h"
#include "newir/verify_dist.h"

namespace irm::newir {
namespace {

// Paths deeper than this print their innermost and outermost kPathEnds levels only.
constexpr size_t kMaxPathLevels = 16;
constexpr size_t kPathEnds = 8;
// Attribute values quoted in messages are cut to this many characters.
constexpr size_t kMaxQuotedAttr = 80;

const char* Plural(size_t n, const char* one, const char* many) { return n == 1 ? one : many; }

std::string Abbreviate(std::string text) {
  if (text.size() > kMaxQuotedAttr) text = text.substr(0, kMaxQuotedAttr - 3) + "...";
  return text;
}

// The spec of operand (or result) slot i: the any_count slot takes every index from its own on.
template <typename Spec>
const Spec* SpecAt(const std::vector<Spec>& specs, size_t i) {
  if (!specs.empty() && specs.back().any_count && i + 1 >= specs.size()) return &specs.back();
  return i < specs.size() ? &specs[i] : nullptr;
}

// The catalog entry of a sparse op with tensor kinds (pd_op_catalog.h KINDS), or null. Paddle's
// generated VerifySig checks each tensor slot against its kernel's dispatch (op_gen.py
// parse_input_type_dict / parse_output_type_dict, op_verify_gen.py INPUT_TYPE_CHECK_TEMPLATE):
// `pd_op.abs_coo_sp` fed a dense tensor fails there, and here.
const CatalogOp* SparseCatalogOp(const Operation& op) {
  const std::string& name = op.name();
  if (!name.ends_with("_sp") && !name.ends_with("sp_")) return nullptr;
  const CatalogOp* entry = FindPdOpCatalogOp(name);
  return entry != nullptr && (!entry->operand_kinds.empty() || !entry->result_kinds.empty())
             ? entry
             : nullptr;
}

// Why `type` (or, for a vector, an element) is not of `kind`, or "" when it is.
std::string TensorKindMismatch(const Type& type, CatalogTensorKind kind) {
  if (type.kind() == TypeKind::kVector) {
    for (const Type& e : type.elements()) {
      std::string problem = TensorKindMismatch(e, kind);
      if (!problem.empty()) return problem;
    }
    return {};
  }
  struct Want {
    TypeKind type_kind;
    const char* what;
  };
  const Want want = kind == CatalogTensorKind::kSparseCoo
                        ? Want{TypeKind::kSparseCooTensor, "a sparse COO tensor"}
                    : kind == CatalogTensorKind::kSparseCsr
                        ? Want{TypeKind::kSparseCsrTensor, "a sparse CSR tensor"}
                        : Want{TypeKind::kDenseTensor, "a dense tensor"};
  if (type.IsNull() || type.kind() == want.type_kind) return {};
  return fmt::format("must be {} (the op's kernel dispatch), found {}", want.what, type.ToString());
}

// "has 3 operands but pd_op.matmul expects 2 (x, y)", or "" when the count fits.
template <typename Spec>
std::string CountMismatch(size_t count, const std::vector<Spec>& specs, const char* one,
                          const char* many, const std::string& op_name) {
  const bool any_count = !specs.empty() && specs.back().any_count;
  const size_t fixed = any_count ? specs.size() - 1 : specs.size();
  if (any_count ? count >= fixed : count == specs.size()) return "";
  std::string names;
  for (const Spec& s : specs) {
    if (!names.empty()) names += ", ";
    names += s.name;
    if (s.any_count) names += "...";
  }
  std::string expected = specs.empty()
                             ? std::string("none")
                             : fmt::format("{}{} ({})", any_count ? "at least " : "", fixed, names);
  return fmt::format("has {} {} but {} expects {}", count, Plural(count, one, many), op_name,
                     expected);
}

std::string SlotLabel(const char* kind, size_t i, const std::string* name) {
  return name != nullptr && !name->empty() ? fmt::format("{} {} ('{}')", kind, i, *name)
                                           : fmt::format("{} {}", kind, i);
}

// One block being walked.
struct Frame {
  const Block* block;
  const Operation* op;  // the next op to visit; null at the end of the block
  int index;            // op's index in the block
  // Set while the regions of `op` are walked: the next region, and block in it, to enter.
  bool in_regions = false;
  size_t region = 0;
  size_t block_in_region = 0;
};

class Verifier {
 public:
  Verifier(const Program& program, const VerifyOptions& options, bool first_only)
      : program_(program), options_(options), first_only_(first_only) {}

  Diagnostics Run() {
    const Block& top = program_.block();
    EnterBlock(top, nullptr, 0);
    frames_.push_back({&top, top.front(), 0});
    while (!frames_.empty() && !Done()) {
      Frame& f = frames_.back();
      if (f.op == nullptr) {
        LeaveBlock(*f.block);
        frames_.pop_back();
        continue;
      }
      const Operation& op = *f.op;
      if (!f.in_regions) {
        VisitOp(op, f.index);
        if (op.num_regions() == 0) {
          FinishOp(f);
          continue;
        }
        index_[&op] = f.index;
        f.in_regions = true;
        f.region = 0;
        f.block_in_region = 0;
      }
      while (f.region < op.num_regions() && f.block_in_region >= op.region(f.region).num_blocks()) {
        ++f.region;
        f.block_in_region = 0;
      }
      if (f.region < op.num_regions()) {
        const Block& child = op.region(f.region).block(f.block_in_region++);
        EnterBlock(child, &op, f.index);
        frames_.push_back({&child, child.front(), 0});  // invalidates f
        continue;
      }
      f.in_regions = false;
      FinishOp(f);
    }
    return std::move(diags_);
  }

  // One op on its own: everything VisitOp checks but scoping; nothing nested in its regions.
  Diagnostics RunOne(const Operation& op) {
    check_scoping_ = false;
    VisitOp(op, kIndexUnknown);
    return std::move(diags_);
  }

 private:
  // Passed for an op checked alone: its index is counted only when a finding needs it.
  static constexpr int kIndexUnknown = -1;

  bool Done() const { return first_only_ && !diags_.empty(); }

  // The op's results come into scope after the op and its regions (a region cannot read them).
  void FinishOp(Frame& f) {
    for (size_t i = 0; i < f.op->num_results(); ++i) visible_.insert(f.op->result(i));
    f.op = f.op->next();
    ++f.index;
  }

  void EnterBlock(const Block& block, const Operation* owner, int owner_index) {
    // An unregistered owner is checked for scoping only; its blocks' arguments with it.
    const bool check_types = owner == nullptr || owner->info() != nullptr;
    auto where = [&] {
      return owner == nullptr ? std::string("the top block") : RegionName(block);
    };
    for (size_t i = 0; i < block.num_arguments(); ++i) {
      const Value& arg = *block.argument(i);
      visible_.insert(&arg);
      if (check_types && MayBeInconsistent(arg.type())) {
        CheckBlockValue(arg, fmt::format("argument {} of {}", i, where()), owner, owner_index);
      }
    }
    for (size_t i = 0; i < block.num_kwargs(); ++i) {
      const Value& kw = *block.kwarg(i);
      visible_.insert(&kw);
      if (check_types && MayBeInconsistent(kw.type())) {
        CheckBlockValue(kw, fmt::format("keyword argument '{}' of {}", kw.kwarg_name(), where()),
                        owner, owner_index);
      }
    }
  }

  // Whether a block argument of this type needs a closer look (the rest are fine as they are).
  static bool MayBeInconsistent(const Type& type) {
    return type.IsNull() || type.kind() == TypeKind::kDistDenseTensor ||
           type.kind() == TypeKind::kVector;
  }

  void LeaveBlock(const Block& block) {
    for (size_t i = 0; i < block.num_arguments(); ++i) visible_.erase(block.argument(i));
    for (size_t i = 0; i < block.num_kwargs(); ++i) visible_.erase(block.kwarg(i));
    for (const Operation& op : block) {
      for (size_t i = 0; i < op.num_results(); ++i) visible_.erase(op.result(i));
    }
  }

  void CheckBlockValue(const Value& value, const std::string& label, const Operation* owner,
                       int owner_index) {
    std::vector<std::string> problems;
    if (value.type().IsNull()) {
      problems.push_back(fmt::format("{} has a null type", label));
    } else {
      DistTypeProblems(value.type(), label, problems);
    }
    if (problems.empty()) return;
    const Location loc = owner != nullptr ? LocationFor(*owner, owner_index) : ModuleLocation();
    for (std::string& p : problems) diags_.Add(Error(loc, std::move(p)));
  }

  void VisitOp(const Operation& op, int index) {
    const size_t findings_before = diags_.size();
    const OpInfo* info = op.info();
    if (info == nullptr) {
      const bool known =
          options_.registry != nullptr && options_.registry->Lookup(op.name()) != nullptr;
      if (known) {
        Report(op, index,
               fmt::format("op '{}' carries no table entry though the registry has one (build ops "
                           "with Builder, or set their info)",
                           op.name()));
      } else if (!options_.allow_unregistered) {
        Report(op, index,
               fmt::format("op '{}' is not registered (--allow-unregistered keeps unknown ops "
                           "opaquely)",
                           op.name()));
      }
    } else if (info->name != op.name()) {
      Report(op, index,
             fmt::format("the op's table entry is for '{}' but the op is named '{}'", info->name,
                         op.name()));
      info = nullptr;  // its table says nothing about this op
    }
    CheckOperands(op, index, info);
    if (info == nullptr) return;
    CheckResults(op, index, *info);
    CheckAttributes(op, index, *info);
    CheckRegions(op, index, *info);
    if (info->terminator) CheckTerminatorPlacement(op, index);
    if (info->verify != nullptr && diags_.size() == findings_before) {
      Status status = info->verify(op);
      if (!status.ok()) {
        Diagnostic d = status.diagnostic();
        const Location loc = LocationFor(op, index);
        d.location.file = loc.file;
        d.location.op = loc.op;
        d.location.op_type = loc.op_type;
        if (!loc.detail.empty()) {
          d.location.detail =
              d.location.detail.empty() ? loc.detail : d.location.detail + " " + loc.detail;
        }
        diags_.Add(std::move(d));
      }
    }
  }

  void CheckOperands(const Operation& op, int index, const OpInfo* info) {
    if (info != nullptr) {
      std::string count =
          CountMismatch(op.num_operands(), info->operands, "operand", "operands", info->name);
      if (!count.empty()) Report(op, index, count);
    }
    const CatalogOp* sparse = info != nullptr ? SparseCatalogOp(op) : nullptr;
    for (size_t i = 0; i < op.num_operands(); ++i) {
      const Value* v = op.operand(i);
      const OperandSpec* spec = info != nullptr ? SpecAt(info->operands, i) : nullptr;
      // Formatted only for a finding: this loop runs for every operand of the program.
      auto label = [&] { return SlotLabel("operand", i, spec != nullptr ? &spec->name : nullptr); };
      if (v == nullptr) {
        if (spec != nullptr && !spec->optional) {
          Report(op, index, fmt::format("{} is empty but the slot is not optional", label()));
        }
        continue;
      }
      if (check_scoping_ && !visible_.contains(v)) {
        Report(op, index, ScopeError(op, label(), *v));
        continue;
      }
      // A null type is reported where the value is defined.
      if (spec == nullptr || v->type().IsNull()) continue;
      const Type& t = v->type();
      const bool is_vector = t.kind() == TypeKind::kVector;
      if (spec->variadic && !spec->any_count && !is_vector) {
        Report(op, index,
               fmt::format("{} must be a vector (built by builtin.combine), found {}", label(),
                           t.ToString()));
      } else if (!spec->variadic && !spec->int_array && is_vector) {
        Report(op, index,
               fmt::format("{} must be a single value, found the vector {} (take an element with "
                           "builtin.slice or builtin.split)",
                           label(), t.ToString()));
      }
      if (sparse != nullptr && i < sparse->operand_kinds.size()) {
        std::string problem = TensorKindMismatch(t, sparse->operand_kinds[i]);
        if (!problem.empty()) Report(op, index, fmt::format("{} {}", label(), problem));
      }
    }
  }

  void CheckResults(const Operation& op, int index, const OpInfo& info) {
    std::string count =
        CountMismatch(op.num_results(), info.results, "result", "results", info.name);
    if (!count.empty()) Report(op, index, count);
    const CatalogOp* sparse = SparseCatalogOp(op);
    for (size_t i = 0; i < op.num_results(); ++i) {
      const Type& t = op.result(i)->type();
      const ResultSpec* spec = SpecAt(info.results, i);
      auto label = [&] { return SlotLabel("result", i, spec != nullptr ? &spec->name : nullptr); };
      if (t.IsNull()) {
        if (spec == nullptr || !spec->optional) {
          Report(op, index, fmt::format("{} has a null type", label()));
        }
        continue;
      }
      const bool is_vector = t.kind() == TypeKind::kVector;
      if (spec != nullptr && spec->variadic && !spec->any_count && !is_vector) {
        Report(op, index, fmt::format("{} must be a vector, found {}", label(), t.ToString()));
      } else if (spec != nullptr && !spec->variadic && is_vector) {
        Report(
            op, index,
            fmt::format("{} must be a single value, found the vector {}", label(), t.ToString()));
      }
      if (sparse != nullptr && i < sparse->result_kinds.size()) {
        std::string problem = TensorKindMismatch(t, sparse->result_kinds[i]);
        if (!problem.empty()) Report(op, index, fmt::format("{} {}", label(), problem));
      }
      if (t.kind() != TypeKind::kDistDenseTensor && t.kind() != TypeKind::kVector) continue;
      std::vector<std::string> problems;
      DistTypeProblems(t, label(), problems);
      for (std::string& problem : problems) Report(op, index, std::move(problem));
    }
  }

  void CheckAttributes(const Operation& op, int index, const OpInfo& info) {
    for (const AttrSpec& spec : info.attributes) {
      auto it = op.attributes().find(spec.name);
      if (it == op.attributes().end()) {
        if (spec.required) {
          Report(op, index,
                 spec.kind == AttrKind::kNull
                     ? fmt::format("missing required attribute '{}'", spec.name)
                     : fmt::format("missing required attribute '{}' ({})", spec.name,
                                   AttrKindName(spec.kind)));
        }
        continue;
      }
      const Attribute& a = it->second;
      if (a.IsNull()) {
        if (spec.required) {
          Report(op, index, fmt::format("required attribute '{}' is null", spec.name));
        }
        continue;
      }
      if (spec.kind != AttrKind::kNull && a.kind() != spec.kind) {
        Report(
            op, index,
            fmt::format("attribute '{}' must be {}, found {} value {}", spec.name,
                        AttrKindName(spec.kind), AttrKindName(a.kind()), Abbreviate(a.ToString())));
      }
    }
    // Dist metadata, under whatever name it is stored.
    std::vector<std::string> problems;
    for (const auto& [name, a] : op.attributes()) {
      problems.clear();
      if (const OperationDistAttr* dist = a.AsOperationDist()) {
        CheckOperationDistAttr(op, *dist, problems);
      } else if (const TensorDistAttr* tensor = a.AsTensorDist()) {
        CheckTensorDistAttr(*tensor, std::nullopt, problems);
      } else if (const ProcessMesh* mesh = a.AsProcessMesh()) {
        CheckProcessMesh(*mesh, problems);
      }
      for (const std::string& p : problems) {
        Report(op, index, fmt::format("attribute '{}': {}", name, p));
      }
    }
  }

  void CheckRegions(const Operation& op, int index, const OpInfo& info) {
    if (op.num_regions() != info.num_regions) {
      Report(
          op, index,
          fmt::format("has {} {} but {} expects {}", op.num_regions(),
                      Plural(op.num_regions(), "region", "regions"), info.name, info.num_regions));
    }
    // The module's region is a program body, not a sequence that hands values back.
    if (info.name == "builtin.module") return;
    for (size_t r = 0; r < op.num_regions(); ++r) {
      const Region& region = op.region(r);
      if (region.empty()) {
        Report(op, index, fmt::format("region {} has no block", r));
        continue;
      }
      for (size_t b = 0; b < region.num_blocks(); ++b) {
        const Block& block = region.block(b);
        const std::string where = region.num_blocks() == 1
                                      ? fmt::format("region {}", r)
                                      : fmt::format("block {} of region {}", b, r);
        if (block.empty()) {
          Report(op, index, fmt::format("{} is empty; it must end with cf.yield", where));
          continue;
        }
        const Operation& last = *block.back();
        if (last.info() == nullptr || !last.info()->terminator) {
          Report(op, index,
                 fmt::format("{} ends with {}; it must end with cf.yield", where, last.name()));
        }
      }
    }
  }

  void CheckTerminatorPlacement(const Operation& op, int index) {
    if (op.parent_block() == &program_.block()) {
      Report(op, index,
             fmt::format("{} ends a nested region; it cannot be in the top block", op.name()));
    } else if (op.next() != nullptr) {
      Report(op, index,
             fmt::format("{} must be the last op of its block, but op {} ({}) follows it",
                         op.name(), IndexOf(op) + 1, op.next()->name()));
    }
  }

  // What is inconsistent in every dist tensor type in `type` (vector elements included).
  static void DistTypeProblems(const Type& type, const std::string& label,
                               std::vector<std::string>& out) {
    if (type.kind() != TypeKind::kDistDenseTensor && type.kind() != TypeKind::kVector) return;
    std::vector<const Type*> work = {&type};
    std::vector<std::string> problems;
    while (!work.empty()) {
      const Type* t = work.back();
      work.pop_back();
      if (t->kind() == TypeKind::kVector) {
        for (auto it = t->elements().rbegin(); it != t->elements().rend(); ++it) {
          work.push_back(&*it);
        }
        continue;
      }
      problems.clear();
      CheckDistTensorType(*t, problems);
      for (const std::string& p : problems) {
        out.push_back(
            fmt::format("{} has an inconsistent dist type {}: {}", label, t->ToString(), p));
      }
    }
  }

  // Why `v` cannot be read by `op`.
  std::string ScopeError(const Operation& op, const std::string& label, const Value& v) {
    const Block* home = v.parent_block();
    if (home == nullptr || !InProgram(*home)) {
      const std::string what =
          v.IsOpResult() ? fmt::format("result {} of {}", v.index(), v.defining_op()->name())
                         : std::string("an argument of a block");
      return fmt::format(
          "{} reads {}, which is not in this program (it belongs to another "
          "program or to a detached op)",
          label, what);
    }
    // The op of `home` that `op` is (or is nested in), if home encloses op.
    const Operation* ancestor = &op;
    while (ancestor != nullptr && ancestor->parent_block() != home) {
      ancestor = ancestor->parent_op();
    }
    if (ancestor == nullptr || !v.IsOpResult()) {
      return fmt::format(
          "{} reads {}, which is out of scope here: a region sees only its own "
          "values and those of the blocks enclosing it",
          label, DescribeValue(v));
    }
    if (v.defining_op() == &op)
      return fmt::format("{} reads result {} of its own op", label, v.index());
    if (v.defining_op() == ancestor) {
      return fmt::format(
          "{} reads {}, which encloses this op: a region cannot read the results "
          "of its own op",
          label, DescribeValue(v));
    }
    return fmt::format("{} reads {}, which is defined later (use before definition)", label,
                       DescribeValue(v));
  }

  bool InProgram(const Block& block) const {
    for (const Block* b = &block; b != nullptr;) {
      if (b == &program_.block()) return true;
      const Operation* owner = b->parent_op();
      if (owner == nullptr) return false;
      b = owner->parent_block();
    }
    return false;
  }

  // "result 0 of op 7 (pd_op.relu)", "argument 1 of region 0 of op 4 (pd_op.while)", with the
  // path to the top block when not in it.
  std::string DescribeValue(const Value& v) {
    const Block* home = v.parent_block();
    if (v.IsOpResult()) {
      const Operation& def = *v.defining_op();
      std::string out = fmt::format("result {} of op {} ({})", v.index(), IndexOf(def), def.name());
      if (home != &program_.block()) out += " " + PathOf(*home);
      return out;
    }
    const std::string which = v.kind() == Value::Kind::kBlockKwarg
                                  ? fmt::format("keyword argument '{}'", v.kwarg_name())
                                  : fmt::format("argument {}", v.index());
    if (home == &program_.block()) return which + " of the top block";
    std::string path = PathOf(*home);
    return which + " of " + path.substr(3);  // "in region ..." -> "region ..."
  }

  // "region R" or "block B of region R", for a block in a region of its owner.
  static std::string RegionName(const Block& block) {
    const Region& region = *block.parent_region();
    const Operation& owner = *region.parent_op();
    size_t r = 0;
    while (r < owner.num_regions() && &owner.region(r) != &region) ++r;
    if (region.num_blocks() == 1) return fmt::format("region {}", r);
    size_t b = 0;
    while (b < region.num_blocks() && &region.block(b) != &block) ++b;
    return fmt::format("block {} of region {}", b, r);
  }

  // "in region 0 of op 2 (pd_op.if) in region 1 of op 5 (pd_op.while)": from `block` up to the
  // top block, innermost first; "" for the top block.
  std::string PathOf(const Block& block) {
    std::vector<std::string> levels;
    for (const Block* b = &block; b != &program_.block();) {
      const Operation* owner = b->parent_op();
      if (owner == nullptr) break;
      levels.push_back(
          fmt::format("in {} of op {} ({})", RegionName(*b), IndexOf(*owner), owner->name()));
      b = owner->parent_block();
      if (b == nullptr) break;
    }
    if (levels.size() > kMaxPathLevels) {
      const size_t omitted = levels.size() - 2 * kPathEnds;
      levels.erase(levels.begin() + kPathEnds, levels.end() - kPathEnds);
      levels.insert(levels.begin() + kPathEnds, fmt::format("... ({} more levels) ...", omitted));
    }
    return fmt::format("{}", fmt::join(levels, " "));
  }

  // The op's index in its block. The ops whose regions are walked are recorded on the way; any
  // other op (a later definition, in a scoping finding) makes the whole program indexed once.
  int IndexOf(const Operation& op) {
    auto it = index_.find(&op);
    if (it != index_.end()) return it->second;
    if (!fully_indexed_) {
      fully_indexed_ = true;
      const_cast<Operation&>(program_.module()).Walk([this](Operation* o) {
        for (size_t r = 0; r < o->num_regions(); ++r) {
          for (size_t b = 0; b < o->region(r).num_blocks(); ++b) {
            int i = 0;
            for (const Operation& child : o->region(r).block(b)) index_[&child] = i++;
          }
        }
      });
      it = index_.find(&op);
      if (it != index_.end()) return it->second;
    }
    int i = 0;
    for (const Operation* p = op.prev(); p != nullptr; p = p->prev()) ++i;
    return i;
  }

  Location LocationFor(const Operation& op, int index) {
    if (index == kIndexUnknown) index = IndexOf(op);
    Location loc = Location::File(options_.file);
    loc.AtOp(index, op.name());
    if (op.parent_block() != nullptr && op.parent_block() != &program_.block()) {
      loc.With(PathOf(*op.parent_block()));
    }
    return loc;
  }

  Location ModuleLocation() const {
    Location loc = Location::File(options_.file);
    loc.AtOp(0, program_.module().name());
    return loc;
  }

  void Report(const Operation& op, int index, std::string message) {
    diags_.Add(Error(LocationFor(op, index), std::move(message)));
  }

  const Program& program_;
  const VerifyOptions& options_;
  const bool first_only_;
  Diagnostics diags_;
  std::vector<Frame> frames_;
  std::unordered_set<const Value*> visible_;
  std::unordered_map<const Operation*, int> index_;
  bool fully_indexed_ = false;
  bool check_scoping_ = true;
};

}  // namespace

Diagnostics VerifyProgramAll(const Program& program, const VerifyOptions& options) {
  return Verifier(program, options, /*first_only=*/false).Run();
}

Diagnostics VerifyOp(const Program& program, const Operation& op, const VerifyOptions& options) {
  return Verifier(program, options, /*first_only=*/false).RunOne(op);
}

Status VerifyProgram(const Program& program, const VerifyOptions& options) {
  Diagnostics found = Verifier(program, options, /*first_only=*/true).Run();
  if (found.empty()) return Status::Ok();
  return Status(StatusCode::kInvalid, found.items().front());
}

}  // namespace irm::newir
