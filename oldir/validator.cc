// The legacy-program validator. One pass over the blocks reports, in program order, every problem
// with the block tree, the var declarations, the op encodings, the dataflow and the op schemas.
//
// It runs on every program ir-migrate loads (tens of thousands of ops) and is bound by memory: a
// program is hundreds of bytes per attribute, spread over the heap, so the pass reads each message
// once, in order, and allocates nothing per op. Per block, a flat hash table holds each name's
// declaration and first writer (one probe per argument, filled as the pass goes); slots and
// attributes are matched to their schema entry once, which also finds duplicates; unknown fields
// are only looked for in detail when some message has any. Strings are formatted only to report.
#include "oldir/validator.h"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

#include "oldir/attribute.h"
#include "oldir/block_graph.h"
#include "oldir/name_table.h"
#include "oldir/op_schema.h"
#include "oldir/program_io.h"
#include "oldir/schema_era.h"

namespace irm::oldir {
namespace {

using Slots = google::protobuf::RepeatedPtrField<proto::OpDesc::Var>;
using validation::NameEntry;
using validation::NameTable;

bool IsNoArgument(std::string_view name) { return name.empty() || name == kEmptyVarName; }

// Element types a tensor may hold: the POD codes of VarType.Type, all below 64.
constexpr uint64_t kPodTypes =
    uint64_t{1} << proto::VarType::BOOL | uint64_t{1} << proto::VarType::INT16 |
    uint64_t{1} << proto::VarType::INT32 | uint64_t{1} << proto::VarType::INT64 |
    uint64_t{1} << proto::VarType::FP16 | uint64_t{1} << proto::VarType::FP32 |
    uint64_t{1} << proto::VarType::FP64 | uint64_t{1} << proto::VarType::SIZE_T |
    uint64_t{1} << proto::VarType::UINT8 | uint64_t{1} << proto::VarType::INT8 |
    uint64_t{1} << proto::VarType::BF16 | uint64_t{1} << proto::VarType::COMPLEX64 |
    uint64_t{1} << proto::VarType::COMPLEX128 | uint64_t{1} << proto::VarType::FP8_E4M3FN |
    uint64_t{1} << proto::VarType::FP8_E5M2 | uint64_t{1} << proto::VarType::UINT32 |
    uint64_t{1} << proto::VarType::UINT64;
bool IsPodType(int type) { return type >= 0 && type < 64 && (kPodTypes >> type & 1) != 0; }

std::string VarTypeName(int type) {
  if (!proto::VarType::Type_IsValid(type)) return std::to_string(type);
  return proto::VarType::Type_Name(static_cast<proto::VarType::Type>(type));
}

// The value field of each AttrType that holds one value; null for the repeated types, which cannot
// be missing.
constexpr const char* kScalarValueField[] = {
    "i",     "f",        "s",         nullptr,   nullptr,  nullptr,  // INT .. STRINGS
    "b",     nullptr,    "block_idx", "l",       nullptr,  nullptr,  // BOOLEAN .. LONGS
    nullptr, "var_name", nullptr,     "float64", "scalar", nullptr,  // FLOAT64S .. SCALARS
};
static_assert(std::size(kScalarValueField) == proto::AttrType_ARRAYSIZE);

// Whether the field attr's type names is set: ReadAttrValue's rule, without copying the value
// (ReadAttrValue copies strings and lists; op_callstack alone would cost allocations per op).
bool HasValue(const proto::OpDesc::Attr& attr) {
  switch (attr.type()) {
    case proto::INT:
      return attr.has_i();
    case proto::FLOAT:
      return attr.has_f();
    case proto::STRING:
      return attr.has_s();
    case proto::BOOLEAN:
      return attr.has_b();
    case proto::BLOCK:
      return attr.has_block_idx();
    case proto::LONG:
      return attr.has_l();
    case proto::VAR:
      return attr.has_var_name();
    case proto::FLOAT64:
      return attr.has_float64();
    case proto::SCALAR:
      return attr.has_scalar();
    default:
      return true;
  }
}

// AttrType's 18 values are 0..17 without gaps, so validity is a range test (AttrType_IsValid is an
// out-of-line switch).
static_assert(proto::AttrType_MIN == 0 && proto::AttrType_MAX == 17 &&
              std::variant_size_v<AttrValue> == 18);
bool IsValidAttrType(int type) {
  return type >= proto::AttrType_MIN && type <= proto::AttrType_MAX;
}

// Whether attr sets a value field that belongs to another type. StrayValueFields names them; this
// only answers yes or no, without building a list for every attribute.
bool HasStrayFields(const proto::OpDesc::Attr& a) {
  const proto::AttrType t = a.type();
  return (a.has_i() && t != proto::INT) || (a.has_f() && t != proto::FLOAT) ||
         (a.has_s() && t != proto::STRING) || (a.ints_size() > 0 && t != proto::INTS) ||
         (a.floats_size() > 0 && t != proto::FLOATS) ||
         (a.strings_size() > 0 && t != proto::STRINGS) || (a.has_b() && t != proto::BOOLEAN) ||
         (a.bools_size() > 0 && t != proto::BOOLEANS) || (a.has_block_idx() && t != proto::BLOCK) ||
         (a.has_l() && t != proto::LONG) || (a.blocks_idx_size() > 0 && t != proto::BLOCKS) ||
         (a.longs_size() > 0 && t != proto::LONGS) ||
         (a.float64s_size() > 0 && t != proto::FLOAT64S) || (a.has_var_name() && t != proto::VAR) ||
         (a.vars_name_size() > 0 && t != proto::VARS) || (a.has_float64() && t != proto::FLOAT64) ||
         (a.has_scalar() && t != proto::SCALAR) || (a.scalars_size() > 0 && t != proto::SCALARS);
}

// ---- unknown fields ---------------------------------------------------------------------------
//
// FindUnknownFields builds a path for every message it visits and walks var types by reflection;
// on a large program that costs more than all other checks together, and almost no program has
// unknown fields. So the main pass notes, for each message it reads anyway, whether it carries
// any (a typed test of one word), and the full scan runs only when one does.

template <typename M>
bool Has(const M& message) {
  return !message.unknown_fields().empty();
}

bool AnyUnknown(const proto::Scalar& s) { return Has(s) || (s.has_c() && Has(s.c())); }

bool AnyUnknown(const proto::VarType& t) {
  if (Has(t)) return true;
  auto tensor = [](const proto::VarType::TensorDesc& d) { return Has(d); };
  if (t.has_selected_rows() && tensor(t.selected_rows())) return true;
  if (t.has_dense_tensor() && (Has(t.dense_tensor()) || tensor(t.dense_tensor().tensor()))) {
    return true;
  }
  if (t.has_tensor_array() && (Has(t.tensor_array()) || tensor(t.tensor_array().tensor()))) {
    return true;
  }
  if (t.has_reader()) {
    if (Has(t.reader())) return true;
    for (const auto& d : t.reader().dense_tensor()) {
      if (Has(d) || tensor(d.tensor())) return true;
    }
  }
  if (t.has_tuple() && Has(t.tuple())) return true;
  return (t.has_string() && tensor(t.string())) || (t.has_strings() && tensor(t.strings())) ||
         (t.has_vocab() && tensor(t.vocab())) || (t.has_sparse_coo() && tensor(t.sparse_coo())) ||
         (t.has_sparse_csr() && tensor(t.sparse_csr()));
}

// The messages outside the blocks.
bool AnyUnknownOutsideBlocks(const proto::ProgramDesc& p) {
  if (Has(p)) return true;
  if (p.has_version() && Has(p.version())) return true;
  if (p.has_legacy_version() && Has(p.legacy_version())) return true;
  if (p.has_op_version_map()) {
    if (Has(p.op_version_map())) return true;
    for (const auto& pair : p.op_version_map().pair()) {
      if (Has(pair) || (pair.has_op_version() && Has(pair.op_version()))) return true;
    }
  }
  // The deprecated Paddle 1.x table (field 3, reached by reflection to keep its accessors'
  // deprecation warnings out): rare, so the full scan looks inside when it is there.
  const auto* legacy = proto::ProgramDesc::descriptor()->FindFieldByNumber(3);
  return p.GetReflection()->HasField(p, legacy);
}

// ---- schema matching --------------------------------------------------------------------------

// Name equality without a library call for the short names slots and attributes have.
bool SameName(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

// Index of `name` in CommonAttrSchemas(), or -1. Most attributes of an op are common ones, the
// others are turned away by their first letter.
int CommonAttrIndex(std::string_view name) {
  const std::vector<AttrSchema>& common = CommonAttrSchemas();
  static const std::array<bool, 256> kFirstLetters = [&common] {
    std::array<bool, 256> letters{};
    for (const AttrSchema& attr : common) {
      if (!attr.name.empty()) letters[static_cast<unsigned char>(attr.name[0])] = true;
    }
    return letters;
  }();
  if (name.empty() || !kFirstLetters[static_cast<unsigned char>(name[0])]) return -1;
  for (size_t i = 0; i < common.size(); ++i) {
    if (SameName(common[i].name, name)) return static_cast<int>(i);
  }
  return -1;
}

template <typename T>
int IndexByName(const std::vector<T>& items, std::string_view name) {
  for (size_t i = 0; i < items.size(); ++i) {
    if (SameName(items[i].name, name)) return static_cast<int>(i);
  }
  return -1;
}

// Bits of a 64-bit "seen" mask; entries past it fall back to pairwise name comparison.
constexpr int kMaskBits = 64;
uint64_t Bit(int i) { return i >= 0 && i < kMaskBits ? uint64_t{1} << i : 0; }

class Validator {
 public:
  Validator(const Program& program, const ValidateOptions& options)
      : program_(program),
        options_(options),
        num_blocks_(program.num_blocks()),
        num_common_(static_cast<int>(CommonAttrSchemas().size())),
        era_(DetermineWriterEra(program.desc())) {}

  Diagnostics Run() {
    if (num_blocks_ == 0) {
      Report(Severity::kError, Location::File(options_.file), "program has no blocks");
    } else {
      Prepare();
      for (int b = 0; b < num_blocks_; ++b) {
        const Block block = program_.block(b);
        any_unknown_ |= Has(block.desc());
        CheckBlock(block);
        // A var's check starts with loads from random places: its VarDesc, its name, its type,
        // the table slot of its name. Start those loads for the vars a few positions ahead, in
        // stages (an object before what it points to), so that the cache misses overlap.
        const NameTable& table = tables_[b];
        const auto& vars = block.desc().vars();
        const int num_vars = vars.size();
        for (int v = 0; v < num_vars; ++v) {
          if (v + 16 < num_vars) __builtin_prefetch(&vars.Get(v + 16));
          if (v + 12 < num_vars) {
            __builtin_prefetch(&vars.Get(v + 12).name());
            __builtin_prefetch(&vars.Get(v + 12).type());
          }
          if (v + 8 < num_vars) table.Prefetch(vars.Get(v + 8).name());
          CheckVar(block, v);
        }
        for (int j = 0; j < block.num_ops(); ++j) {
          CheckOp(block, j);
        }
      }
    }
    if (num_blocks_ > 0) diagnostics_.Append(CheckBlockGraph(program_, options_.file));
    if (options_.warn_unknown_fields &&
        (any_unknown_ || AnyUnknownOutsideBlocks(program_.desc()))) {
      CheckUnknownFields();
    }
    NoteEra();
    NoteParameterServerOps();
    return std::move(diagnostics_);
  }

 private:
  void Report(Severity severity, Location location, std::string message) {
    diagnostics_.Add(Diagnostic{severity, std::move(location), std::move(message), {}});
  }

  // ---- writer era and program-wide notes ------------------------------------------------------

  // A finding the program's writer era causes: not an error; counted, and the first kept as an
  // example for the note.
  void Excuse(std::string what) {
    if (excused_ == 0) first_excused_ = std::move(what);
    ++excused_;
  }

  void NoteEra() {
    if (excused_ == 0) return;
    Diagnostic note{Severity::kNote,
                    Location::File(options_.file),
                    fmt::format("checked as written by {}: {} finding(s) that writers of that era "
                                "cause are not errors",
                                era_.Describe(), excused_),
                    {}};
    note.notes.push_back("the first: " + first_excused_);
    diagnostics_.Add(std::move(note));
  }

  void NoteParameterServerOps() {
    if (ps_ops_.empty()) return;
    Report(Severity::kNote, Location::File(options_.file),
           fmt::format("the program holds parameter-server ops ({}): they are read and validated, "
                       "but ir-migrate does not run them",
                       fmt::join(ps_ops_, ", ")));
  }
  Location BlockLoc(int b) const { return Location::File(options_.file).InBlock(b); }
  Location OpLoc(const Block& block, int j) const { return OpLocation(options_.file, block, j); }

  bool InRange(int b) const { return b >= 0 && b < num_blocks_; }
  // The parent of block b when it names another existing block, else -1.
  int ParentOf(int b) const {
    const int p = program_.block(b).parent_index();
    return InRange(p) && p != b ? p : -1;
  }

  // ---- per-program indexes ------------------------------------------------------------------
  //
  // Each block's name table fills as the main pass goes through the block (declarations, then
  // each op's outputs after its inputs were checked), and the op running a sub-block is noted
  // when the pass meets its BLOCK/BLOCKS attribute. A block's dataflow looks at the tables of its
  // parent and forward blocks, complete by then when those come earlier in the program, as Paddle
  // always builds them. Otherwise every table and owner is indexed before the pass.

  void Prepare() {
    tables_.resize(num_blocks_);
    owner_.assign(num_blocks_, -1);
    visit_stamp_.assign(num_blocks_, 0);
    chain_state_.assign(num_blocks_, kChainUnknown);
    outside_memo_.resize(num_blocks_);
    defined_memo_.resize(num_blocks_);
    chain_state_[0] = kChainReachesRoot;
    bool in_order = true;
    for (int b = 0; b < num_blocks_; ++b) {
      const proto::BlockDesc& block = program_.block(b).desc();
      // Sized for the declarations; names written but not declared here are rare (and errors,
      // unless an ancestor declares them): the table grows for them.
      tables_[b].Reserve(block.vars_size());
      for (int link : {block.parent_idx(), block.forward_block_idx()}) {
        in_order &= !InRange(link) || link < b;
      }
    }
    if (!in_order) IndexAll();
  }

  void IndexAll() {
    for (int b = 0; b < num_blocks_; ++b) {
      const proto::BlockDesc& block = program_.block(b).desc();
      for (int v = 0; v < block.vars_size(); ++v) Declare(b, v);
      for (int j = 0; j < block.ops_size(); ++j) {
        const proto::OpDesc& op = block.ops(j);
        for (const proto::OpDesc::Var& slot : op.outputs()) {
          for (const std::string& arg : slot.arguments()) {
            if (!IsNoArgument(arg)) Write(b, arg, j);
          }
        }
        for (const proto::OpDesc::Attr& attr : op.attrs()) NoteOwner(b, j, attr);
      }
    }
  }

  // Records var v of block b in its table; false when an earlier var of the block has its name.
  bool Declare(int b, int v) {
    const proto::VarDesc& var = program_.block(b).desc().vars(v);
    NameEntry& entry = tables_[b].Upsert(var.name());
    if (entry.var < 0) {
      entry.var = v;
      entry.fed = var.persistable() || var.need_check_feed();
    }
    return entry.var == v;
  }

  // Records that op j of block b writes `name`; returns the name's entry (valid until the next
  // Upsert).
  NameEntry& Write(int b, const std::string& name, int j) {
    NameEntry& entry = tables_[b].Upsert(name);
    if (entry.first_writer > j) entry.first_writer = j;
    return entry;
  }

  void NoteOwner(int b, int j, const proto::OpDesc::Attr& attr) {
    if (attr.type() == proto::BLOCK && attr.has_block_idx()) {
      Own(attr.block_idx(), b, j);
    } else if (attr.type() == proto::BLOCKS) {
      for (int target : attr.blocks_idx()) Own(target, b, j);
    }
  }

  void Own(int target, int b, int j) {
    if (InRange(target) && target != b && owner_[target] < 0 && ParentOf(target) == b) {
      owner_[target] = j;
    }
  }

  const proto::VarDesc* VarOf(int b, const NameEntry* entry) const {
    return entry != nullptr && entry->var >= 0 ? &program_.block(b).desc().vars(entry->var)
                                               : nullptr;
  }

  // FindOutside on a chain of blocks without forward blocks, where the breadth-first search is a
  // walk up the parents: the answer for each block walked is remembered (outside_memo_), so that
  // the inputs of a deep nest of sub-blocks that all read one outer name cost O(1) each after the
  // first, not O(depth) (declarations never change once the blocks above are checked: they come
  // earlier in the program, or IndexAll declared everything first). nullopt when the chain meets
  // a forward block (a grad block), where FindOutside searches breadth-first.
  std::optional<const proto::VarDesc*> FindUpChain(int b, std::string_view name) {
    // Only where the parent chain is known to reach the root (checked with the block, before its
    // ops): a malformed chain gets the breadth-first search, which stops at blocks it has seen.
    if (chain_state_[b] != kChainReachesRoot) return std::nullopt;
    walked_.clear();
    const proto::VarDesc* found = nullptr;
    int current = b;
    for (int steps = 0; steps <= num_blocks_; ++steps) {
      const Block block = program_.block(current);
      if (InRange(block.forward_block_index())) return std::nullopt;
      auto memo = outside_memo_[current].find(name);
      if (memo != outside_memo_[current].end()) {
        found = memo->second;
        break;
      }
      walked_.push_back(current);
      const int parent = ParentOf(current);
      if (parent < 0 || parent == b) break;  // the root, or a malformed chain back to b
      if (const proto::VarDesc* var = VarOf(parent, tables_[parent].Find(name))) {
        found = var;
        break;
      }
      current = parent;
    }
    // Remembered for sub-blocks only: the root block has nothing outside it, and memos there
    // would only cost memory on a flat program.
    for (int block : walked_) {
      if (block != 0) outside_memo_[block].emplace(name, found);
    }
    return found;
  }

  // The declaration `name` resolves to outside block b, searched as Paddle's
  // Block._var_recursive does: breadth-first through parents and forward blocks (a grad
  // sub-block sees the vars of the forward sub-block it differentiates). O(blocks visited).
  // `*parents_only` (when given) tells whether the walk met only blocks without a forward block
  // before it ended: then it went straight up the parent chain, and from any block on that chain
  // below the declaration's block the search finds the same declaration (or, when it found
  // none, nothing).
  const proto::VarDesc* FindOutside(int b, std::string_view name, bool* parents_only = nullptr) {
    if (const std::optional<const proto::VarDesc*> up = FindUpChain(b, name)) {
      if (parents_only != nullptr) *parents_only = true;
      return *up;
    }
    ++stamp_;
    frontier_.clear();
    frontier_.push_back(b);
    visit_stamp_[b] = stamp_;
    bool straight = true;
    const proto::VarDesc* found = nullptr;
    for (size_t i = 0; i < frontier_.size() && found == nullptr; ++i) {
      const int current = frontier_[i];
      if (i > 0) {
        if (const proto::VarDesc* var = VarOf(current, tables_[current].Find(name))) {
          found = var;
          break;
        }
      }
      const Block block = program_.block(current);
      straight &= !InRange(block.forward_block_index());
      for (int next : {block.parent_index(), block.forward_block_index()}) {
        if (InRange(next) && visit_stamp_[next] != stamp_) {
          visit_stamp_[next] = stamp_;
          frontier_.push_back(next);
        }
      }
    }
    if (parents_only != nullptr) *parents_only = straight;
    return found;
  }

  // Defined from outside block b: computed by the forward block of a grad block, or holding a
  // value in the parent when the op owning b ran (there: written by an earlier op, fed, or
  // declared persistable or fed further out — and so on up the chain of owners).
  //
  // A loop up the parent chain rather than a recursion, so that no nesting depth can exhaust the
  // stack; bounded by the number of blocks on malformed chains. The search for an outside
  // declaration at one level is reused at the levels above it while it went straight up the
  // chain, so the walk costs O(depth) per input rather than O(depth^2) (which made the whole
  // validation cubic in the nesting depth).
  bool DefinedOutside(int b, std::string_view name) {
    // Each level's answer is the answer of the level above it, unless a check at the level
    // decides: every block walked gets the final answer, remembered (defined_memo_) where the
    // chain is known to reach the root. So a deep nest whose blocks all read one outer name costs
    // O(depth) in all, not O(depth) per block.
    defined_walk_.clear();
    const bool answer = DefinedOutsideWalk(b, name);
    for (int block : defined_walk_) defined_memo_[block].emplace(name, answer);
    return answer;
  }

  bool DefinedOutsideWalk(int b, std::string_view name) {
    const proto::VarDesc* outside = nullptr;
    bool outside_known = false;  // `outside` holds FindOutside(current level) without searching
    for (int steps = 0; steps < num_blocks_; ++steps) {
      if (auto memo = defined_memo_[b].find(name); memo != defined_memo_[b].end()) {
        return memo->second;
      }
      if (chain_state_[b] == kChainReachesRoot) defined_walk_.push_back(b);
      const int forward = program_.block(b).forward_block_index();
      if (InRange(forward) && forward != b && tables_[forward].Find(name) != nullptr) return true;
      const int parent = ParentOf(b);
      if (parent < 0) return false;
      const NameEntry* entry = tables_[parent].Find(name);
      if (owner_[b] < 0) {
        // No op runs this block, so there is no point in time to check against: anything the
        // ancestors declare counts.
        return VarOf(parent, entry) != nullptr || FindOutside(parent, name) != nullptr;
      }
      if (entry != nullptr && (entry->first_writer < owner_[b] || entry->fed)) return true;
      if (entry == nullptr || entry->var < 0) {
        if (!outside_known) {
          bool straight = false;
          outside = FindOutside(parent, name, &straight);
          outside_known = straight;
        }
        if (outside != nullptr && (outside->persistable() || outside->need_check_feed())) {
          return true;
        }
      } else {
        // The parent declares the name: the levels above search past it.
        outside_known = false;
      }
      b = parent;
    }
    return false;
  }

  // ---- blocks -------------------------------------------------------------------------------

  void CheckBlock(const Block& block) {
    const int b = block.position();
    if (block.index() != b) {
      Report(Severity::kError, BlockLoc(b),
             fmt::format("block at position {} has idx {}", b, block.index()));
    }
    const int p = block.parent_index();
    if (b == 0) {
      if (p != -1) {
        Report(Severity::kError, BlockLoc(b),
               fmt::format("root block has parent_idx {}, expected -1", p));
      }
    } else if (p == b) {
      Report(Severity::kError, BlockLoc(b), fmt::format("block {} is its own parent", b));
    } else if (p == -1) {
      Report(
          Severity::kError, BlockLoc(b),
          fmt::format("block {} has no parent (parent_idx -1); only block 0 may be the root", b));
    } else if (!InRange(p)) {
      Report(Severity::kError, BlockLoc(b),
             fmt::format("block {} has parent_idx {}, out of range (the program has {} blocks)", b,
                         p, num_blocks_));
    } else {
      CheckParentChain(b);
    }
    const int f = block.forward_block_index();
    if (f != -1 && !InRange(f)) {
      Report(Severity::kError, BlockLoc(b),
             fmt::format("block {} has forward_block_idx {}, out of range (the program has {} "
                         "blocks)",
                         b, f, num_blocks_));
    }
  }

  // Follows the parents of block b (whose own parent is valid) towards the root; reports a
  // cycle. A chain that runs into another block's invalid parent is reported at that block.
  // Each block's outcome is remembered (chain_state_), and a walk stops at the first block whose
  // outcome is known, so the checks of all blocks together take O(blocks): a deep tree of
  // thousands of levels costs one step per block, not one per level per block.
  void CheckParentChain(int b) {
    chain_.clear();
    chain_.push_back(b);
    chain_state_[b] = kChainOnWalk;
    int current = b;
    ChainState outcome = kChainReachesRoot;
    int broken_at = -1;  // the block already known not to reach the root, if the walk met one
    while (current != 0) {
      const int p = program_.block(current).parent_index();
      if (!InRange(p) || p == current) {
        outcome = kChainInvalid;  // reported at `current`
        break;
      }
      const ChainState known = chain_state_[p];
      if (known == kChainReachesRoot || known == kChainInvalid) {
        outcome = known;
        break;
      }
      if (known == kChainLoops) {
        outcome = kChainLoops;
        broken_at = p;
        chain_.push_back(p);
        break;
      }
      chain_.push_back(p);
      if (known == kChainOnWalk) {
        outcome = kChainLoops;
        break;
      }
      chain_state_[p] = kChainOnWalk;
      current = p;
    }
    for (int block : chain_) {
      if (chain_state_[block] == kChainOnWalk) chain_state_[block] = outcome;
    }
    if (outcome != kChainLoops) return;
    if (broken_at >= 0) {
      Report(Severity::kError, BlockLoc(b),
             fmt::format("the parent chain of block {} never reaches the root block: {}, whose "
                         "chain never does",
                         b, fmt::join(chain_, " -> ")));
    } else {
      Report(Severity::kError, BlockLoc(b),
             fmt::format("the parent chain of block {} never reaches the root block: {}", b,
                         fmt::join(chain_, " -> ")));
    }
  }

  // ---- vars ---------------------------------------------------------------------------------

  void CheckVar(const Block& block, int v) {
    const proto::VarDesc& var = block.desc().vars(v);
    const std::string& name = var.name();
    auto loc = [&] { return VarLocation(options_.file, block, name); };
    any_unknown_ |= Has(var) || AnyUnknown(var.type());

    if (!Declare(block.position(), v)) {
      Report(
          Severity::kError, loc(),
          fmt::format("var '{}' is declared more than once in block {}", name, block.position()));
    }
    const int type = var.type().type();
    if (!proto::VarType::Type_IsValid(type)) {
      Report(Severity::kError, loc(), fmt::format("var '{}' has unknown type {}", name, type));
    } else if (type == proto::VarType::DENSE_TENSOR || type == proto::VarType::SELECTED_ROWS ||
               type == proto::VarType::DENSE_TENSOR_ARRAY) {
      CheckTensorVar(block, var);
    }
    for (const proto::VarDesc::Attr& attr : var.attrs()) {
      any_unknown_ |= Has(attr);
      CheckVarAttr(block, var, attr);
    }
  }

  void CheckTensorVar(const Block& block, const proto::VarDesc& var) {
    auto loc = [&] { return VarLocation(options_.file, block, var.name()); };
    const proto::VarType& t = var.type();
    const proto::VarType::TensorDesc* tensor = nullptr;
    int lod_level = 0;
    if (t.type() == proto::VarType::DENSE_TENSOR) {
      if (t.has_dense_tensor() && t.dense_tensor().has_tensor()) {
        tensor = &t.dense_tensor().tensor();
        lod_level = t.dense_tensor().legacy_lod_level();
      }
    } else if (t.type() == proto::VarType::SELECTED_ROWS) {
      if (t.has_selected_rows()) tensor = &t.selected_rows();
    } else if (t.has_tensor_array() && t.tensor_array().has_tensor()) {
      tensor = &t.tensor_array().tensor();
      lod_level = t.tensor_array().legacy_lod_level();
    }
    if (tensor == nullptr) {
      // Parameter-server programs order their RPC ops through dummy vars Paddle creates without a
      // shape or dtype (send's Out, send_barrier's and fetch_barrier's X and Out).
      if (t.type() == proto::VarType::DENSE_TENSOR && IsControlDependencyVar(var.name())) return;
      Report(Severity::kError, loc(),
             fmt::format("var '{}' of type {} has no tensor description", var.name(),
                         VarTypeName(t.type())));
      return;
    }
    const int dtype = tensor->data_type();
    if (!tensor->has_data_type()) {
      Report(Severity::kError, loc(), fmt::format("var '{}' has no element type", var.name()));
    } else if (!IsPodType(dtype)) {
      Report(Severity::kError, loc(),
             fmt::format("var '{}' has element type {}, which is not a POD type", var.name(),
                         VarTypeName(dtype)));
    }
    for (int i = 0; i < tensor->dims_size(); ++i) {
      if (tensor->dims(i) < -1) {
        Report(Severity::kError, loc(),
               fmt::format("var '{}' has dimension {} at index {} (dimensions must be >= -1)",
                           var.name(), tensor->dims(i), i));
      }
    }
    if (lod_level < 0) {
      Report(Severity::kError, loc(),
             fmt::format("var '{}' has lod level {} (must be >= 0)", var.name(), lod_level));
    }
  }

  void CheckVarAttr(const Block& block, const proto::VarDesc& var,
                    const proto::VarDesc::Attr& attr) {
    const int type = attr.type();
    if ((type == proto::INT && attr.has_i()) || (type == proto::STRING && attr.has_s()) ||
        type == proto::INTS) {
      return;
    }
    Location loc = VarLocation(options_.file, block, var.name()).AtAttr(attr.name());
    if (type == proto::INT || type == proto::STRING) {
      Report(Severity::kError, std::move(loc),
             fmt::format("var attribute '{}' of type {} has no value (field '{}' is not set)",
                         attr.name(), AttrTypeName(attr.type()), type == proto::INT ? "i" : "s"));
    } else if (!IsValidAttrType(type)) {
      Report(Severity::kError, std::move(loc),
             fmt::format("var attribute '{}' has unknown AttrType {}", attr.name(), type));
    } else {
      Report(Severity::kError, std::move(loc),
             fmt::format("var attribute '{}' has type {}; var attributes hold only INT, STRING "
                         "or INTS",
                         attr.name(), AttrTypeName(attr.type())));
    }
  }

  // ---- ops ----------------------------------------------------------------------------------

  // Duplicate detection among the slot or attribute names of one op that have no schema bit:
  // a short scan for the few an op usually has, a hash set past kScanLimit, so that an op with
  // n such names costs O(n) rather than O(n^2) (an op of 200,000 attributes).
  static constexpr size_t kScanLimit = 16;
  void ClearUnmatched() {
    unmatched_.clear();
    if (!unmatched_set_.empty()) unmatched_set_ = {};  // O(size), not O(buckets) per op
  }
  // Whether `name` was met before among them; remembers it.
  bool RepeatsUnmatched(std::string_view name) {
    if (unmatched_.size() < kScanLimit) {
      for (std::string_view earlier : unmatched_) {
        if (earlier == name) return true;
      }
      unmatched_.push_back(name);
      if (unmatched_.size() == kScanLimit)
        unmatched_set_.insert(unmatched_.begin(), unmatched_.end());
      return false;
    }
    return !unmatched_set_.insert(name).second;
  }

  void CheckOp(const Block& block, int j) {
    const proto::OpDesc& op = block.desc().ops(j);
    any_unknown_ |= Has(op);
    const OpSchema* schema = nullptr;
    if (op.type().empty()) {
      Report(Severity::kError, OpLoc(block, j), "op has an empty type");
    } else {
      schema = FindOpSchema(op.type());
      if (IsParameterServerOp(op.type())) NoteParameterServerOp(op.type());
      if (schema == nullptr && options_.note_unknown_ops) {
        Report(Severity::kNote, OpLoc(block, j),
               fmt::format("op '{}' has no schema; its slots and attributes are not checked "
                           "against one",
                           op.type()));
      }
    }
    CheckSlots(block, j, op.inputs(), "input", schema ? &schema->inputs : nullptr);
    CheckSlots(block, j, op.outputs(), "output", schema ? &schema->outputs : nullptr);
    CheckAttrs(block, j, op, schema);
    CheckDataflow(block, j, op);
  }

  void NoteParameterServerOp(const std::string& type) {
    for (const std::string& seen : ps_ops_) {
      if (seen == type) return;
    }
    ps_ops_.push_back(type);
  }

  // Slot names are matched to the schema once; the match also finds the duplicates (a schema
  // entry seen twice) and the required slots that are missing or empty. Slots without a schema
  // entry are compared pairwise, which is rare.
  void CheckSlots(const Block& block, int j, const Slots& slots, const char* kind,
                  const std::vector<SlotSchema>* schema) {
    const int n = slots.size();
    uint64_t seen = 0;
    uint64_t filled = 0;
    ClearUnmatched();
    for (int s = 0; s < n; ++s) {
      const proto::OpDesc::Var& slot = slots.Get(s);
      any_unknown_ |= Has(slot);
      const std::string& name = slot.parameter();
      const int k = schema ? IndexByName(*schema, name) : -1;
      bool duplicate = false;
      if (k >= 0 && k < kMaskBits) {
        duplicate = (seen & Bit(k)) != 0;
        seen |= Bit(k);
      } else {
        duplicate = RepeatsUnmatched(name);
      }
      if (duplicate) {
        Report(Severity::kError, OpLoc(block, j),
               fmt::format("{} slot '{}' appears more than once", kind, name));
      }
      if (schema == nullptr) continue;
      const std::string& type = block.desc().ops(j).type();
      if (k < 0) {
        Report(Severity::kWarning, OpLoc(block, j),
               fmt::format("unknown {} slot '{}' for op '{}'", kind, name, type));
        continue;
      }
      if (!(*schema)[k].duplicable && slot.arguments_size() > 1) {
        Report(Severity::kError, OpLoc(block, j),
               fmt::format("{} slot '{}' holds {} arguments; '{}' takes at most 1", kind, name,
                           slot.arguments_size(), type));
      }
      for (const std::string& arg : slot.arguments()) {
        if (!IsNoArgument(arg)) {
          filled |= Bit(k);
          break;
        }
      }
    }
    if (schema == nullptr) return;
    for (int k = 0; k < static_cast<int>(schema->size()); ++k) {
      const SlotSchema& expected = (*schema)[k];
      if (!expected.required || (filled & Bit(k)) != 0) continue;
      std::string message =
          fmt::format("required {} slot '{}' of '{}' is {}", kind, expected.name,
                      block.desc().ops(j).type(), (seen & Bit(k)) ? "empty" : "missing");
      if (expected.required_since > 0 && era_.MayPredate(expected.required_since)) {
        Excuse(fmt::format("{} ({}; Paddle writes it since {})", message, OpLoc(block, j).Render(),
                           PaddleVersionName(expected.required_since)));
        continue;
      }
      Report(Severity::kError, OpLoc(block, j), std::move(message));
    }
  }

  void CheckAttrs(const Block& block, int j, const proto::OpDesc& op, const OpSchema* schema) {
    const std::vector<AttrSchema>& common = CommonAttrSchemas();
    const int n = op.attrs_size();
    uint64_t seen = 0;  // bits [0, num_common_): common attrs; then the schema's own
    ClearUnmatched();
    for (int a = 0; a < n; ++a) {
      const proto::OpDesc::Attr& attr = op.attrs(a);
      const std::string& name = attr.name();
      auto loc = [&] { return OpLoc(block, j).AtAttr(name); };
      any_unknown_ |= Has(attr) || (attr.has_scalar() && AnyUnknown(attr.scalar()));
      for (const proto::Scalar& scalar : attr.scalars()) any_unknown_ |= AnyUnknown(scalar);

      const AttrSchema* expected = nullptr;
      int bit = CommonAttrIndex(name);
      if (bit >= 0) {
        expected = &common[bit];
      } else if (schema != nullptr) {
        const int k = IndexByName(schema->attrs, name);
        if (k >= 0) {
          expected = &schema->attrs[k];
          bit = num_common_ + k;
        }
      }
      bool duplicate = false;
      if (bit >= 0 && bit < kMaskBits) {
        duplicate = (seen & Bit(bit)) != 0;
        seen |= Bit(bit);
      } else {
        duplicate = RepeatsUnmatched(name);
      }
      if (duplicate) {
        Report(Severity::kError, loc(), fmt::format("attribute '{}' appears more than once", name));
      }

      const proto::AttrType type = attr.type();
      if (!IsValidAttrType(type)) {
        Report(Severity::kError, loc(),
               fmt::format("attribute '{}' has unknown AttrType {}", name, static_cast<int>(type)));
        continue;
      }
      if (!HasValue(attr)) {
        Report(Severity::kError, loc(),
               fmt::format("attribute '{}' of type {} has no value (field '{}' is not set)", name,
                           AttrTypeName(type), kScalarValueField[type]));
      }
      if (HasStrayFields(attr)) {
        Report(Severity::kWarning, loc(),
               fmt::format("attribute '{}' of type {} also sets field(s) {}, which its type does "
                           "not use",
                           name, AttrTypeName(type), fmt::join(StrayValueFields(attr), ", ")));
      }
      if (type == proto::BLOCK && attr.has_block_idx()) {
        CheckBlockRef(block, j, attr, attr.block_idx());
      } else if (type == proto::BLOCKS) {
        for (int target : attr.blocks_idx()) CheckBlockRef(block, j, attr, target);
      }
      if (expected != nullptr && expected->type != type) {
        std::string message = fmt::format("attribute '{}' has type {}, expected {}", name,
                                          AttrTypeName(type), AttrTypeName(expected->type));
        if (PaddleConvertsAttr(expected->type, type) && era_.MayPredate(DeclaredAttrTypesSince())) {
          Excuse(
              fmt::format("{} ({}; Paddle converts it on reading, and writes the declared "
                          "type since {})",
                          message, loc().Render(), PaddleVersionName(DeclaredAttrTypesSince())));
        } else {
          Report(Severity::kError, loc(), std::move(message));
        }
      }
    }
    if (schema == nullptr) return;
    for (int k = 0; k < static_cast<int>(schema->attrs.size()); ++k) {
      const AttrSchema& expected = schema->attrs[k];
      if (!expected.required) continue;
      bool found = (seen & Bit(num_common_ + k)) != 0;
      if (num_common_ + k >= kMaskBits) {
        for (const proto::OpDesc::Attr& attr : op.attrs()) found |= attr.name() == expected.name;
      }
      if (!found) {
        Report(Severity::kError, OpLoc(block, j).AtAttr(std::string(expected.name)),
               fmt::format("required attribute '{}' of '{}' is missing", expected.name, op.type()));
      }
    }
  }

  void CheckBlockRef(const Block& block, int j, const proto::OpDesc::Attr& attr, int target) {
    const int b = block.position();
    Own(target, b, j);
    auto loc = [&] { return OpLoc(block, j).AtAttr(attr.name()); };
    if (!InRange(target)) {
      Report(Severity::kError, loc(),
             fmt::format("attribute '{}' refers to block {}, but the program has {} blocks",
                         attr.name(), target, num_blocks_));
    } else if (target == b) {
      Report(Severity::kError, loc(),
             fmt::format("attribute '{}' refers to the op's own block {}", attr.name(), b));
    } else if (attr.type() == proto::BLOCK && attr.name() == kSubBlockAttr) {
      const int parent = program_.block(target).parent_index();
      if (parent != b) {
        Report(Severity::kWarning, loc(),
               fmt::format("sub-block {} has parent block {}, not the op's block {}", target,
                           parent, b));
      }
    }
  }

  void CheckDataflow(const Block& block, int j, const proto::OpDesc& op) {
    const int b = block.position();
    const NameTable& table = tables_[b];
    for (const proto::OpDesc::Var& slot : op.inputs()) {
      for (const std::string& arg : slot.arguments()) {
        if (IsNoArgument(arg)) continue;
        const NameEntry* entry = table.Find(arg);
        // The cheap tests first: most inputs were written by an earlier op of the block or are
        // parameters and feeds declared in it.
        const bool local_var = entry != nullptr && entry->var >= 0;
        const proto::VarDesc* outside = local_var ? nullptr : FindOutside(b, arg);
        if (!local_var && outside == nullptr) {
          Report(Severity::kError, OpLoc(block, j).AtVar(arg),
                 fmt::format("input '{}' of slot '{}' is not declared", arg, slot.parameter()));
        }
        const bool defined =
            (entry != nullptr && (entry->first_writer < j || entry->fed)) ||
            (outside != nullptr && (outside->persistable() || outside->need_check_feed())) ||
            DefinedOutside(b, arg) || options_.extra_feeds.count(arg) > 0;
        if (!defined && (local_var || outside != nullptr)) {
          const proto::VarDesc* declaration = local_var ? VarOf(b, entry) : outside;
          if (IsProgramInput(arg, *declaration)) {
            NoteProgramInput(block, j, arg, slot.parameter());
            continue;
          }
        }
        if (!defined) {
          Report(Severity::kError, OpLoc(block, j).AtVar(arg),
                 fmt::format("input '{}' of slot '{}' is not defined before use", arg,
                             slot.parameter()));
        }
      }
    }
    for (const proto::OpDesc::Var& slot : op.outputs()) {
      for (const std::string& arg : slot.arguments()) {
        if (IsNoArgument(arg)) continue;
        if (Write(b, arg, j).var < 0 && FindOutside(b, arg) == nullptr) {
          Report(Severity::kError, OpLoc(block, j).AtVar(arg),
                 fmt::format("output '{}' of slot '{}' is not declared", arg, slot.parameter()));
        }
      }
    }
  }

  // ---- program inputs -----------------------------------------------------------------------
  //
  // A program fed by a dataset reader (Paddle's train_from_dataset, the 1.x CTR jobs) or by the
  // executor's feed list at run time (a saved training program: Executor.run adds its feed ops to
  // a copy) declares its data vars and never writes them. Such a var is a program input when
  // nothing else says what is fed: no feed ops, no names from the caller.

  bool IsProgramInput(std::string_view name, const proto::VarDesc& declaration) {
    if (!options_.infer_program_inputs || !options_.extra_feeds.empty()) return false;
    if (declaration.persistable()) return false;  // a parameter or state nobody initialised
    // Data vars live in the root block.
    if (VarOf(0, tables_[0].Find(name)) != &declaration) return false;
    IndexWrites();
    return !has_feed_ops_ && written_anywhere_.count(name) == 0;
  }

  // Every name some op of the program writes, and whether it has feed ops: built once, the first
  // time an input is not defined before use.
  void IndexWrites() {
    if (writes_indexed_) return;
    writes_indexed_ = true;
    for (int b = 0; b < num_blocks_; ++b) {
      for (const proto::OpDesc& op : program_.block(b).desc().ops()) {
        has_feed_ops_ |= op.type() == "feed";
        for (const proto::OpDesc::Var& slot : op.outputs()) {
          for (const std::string& arg : slot.arguments()) {
            if (!IsNoArgument(arg)) written_anywhere_.insert(arg);
          }
        }
      }
    }
  }

  void NoteProgramInput(const Block& block, int j, const std::string& name,
                        const std::string& slot) {
    if (!noted_inputs_.insert(name).second) return;
    Report(Severity::kNote, OpLoc(block, j).AtVar(name),
           fmt::format("input '{}' of slot '{}' is never written: a program input (a data var "
                       "fed by a dataset reader or at run time; the program has no feed ops)",
                       name, slot));
  }

  // ---- unknown fields -----------------------------------------------------------------------

  // The first kMaxUnknownFieldWarnings unknown fields, then one warning counting the rest: a
  // junk input of three bytes per unknown field would otherwise make millions of warnings.
  static constexpr size_t kMaxUnknownFieldWarnings = 100;

  void CheckUnknownFields() {
    size_t total = 0;
    const std::vector<UnknownField> found =
        FindUnknownFields(program_.desc(), kMaxUnknownFieldWarnings, &total);
    if (total > found.size()) {
      Report(Severity::kWarning, Location::File(options_.file),
             fmt::format("{} unknown fields kept from the input; the first {} follow", total,
                         found.size()));
    }
    for (const UnknownField& field : found) {
      Location loc = field.location;
      loc.file = options_.file;
      // Name the op, as every other op finding does.
      if (InRange(loc.block) && loc.op >= 0 && loc.op < program_.block(loc.block).num_ops()) {
        loc.op_type = program_.block(loc.block).op(loc.op).type();
      }
      Report(Severity::kWarning, std::move(loc),
             fmt::format("unknown field {} (at {}) kept from the input", field.number, field.path));
    }
  }

  const Program& program_;
  const ValidateOptions& options_;
  const int num_blocks_;
  const int num_common_;
  const WriterEra era_;
  Diagnostics diagnostics_;
  int excused_ = 0;                  // findings the writer era causes
  std::string first_excused_;        // the first of them, described
  std::vector<std::string> ps_ops_;  // the parameter-server op types met, in order
  // Program inputs: the names written by some op (filled once, when first needed), whether the
  // program has feed ops, the inputs noted so far.
  bool writes_indexed_ = false;
  bool has_feed_ops_ = false;
  std::unordered_set<std::string_view> written_anywhere_;
  std::unordered_set<std::string> noted_inputs_;
  bool any_unknown_ = false;  // some message read so far carries unknown fields

  std::vector<NameTable> tables_;  // per block
  std::vector<int> owner_;         // per block: index of the op of its parent that runs it, or -1
  // Scratch reused across ops and calls.
  // The names of the slots or attrs of the current op with no schema bit (RepeatsUnmatched).
  std::vector<std::string_view> unmatched_;
  std::unordered_set<std::string_view> unmatched_set_;
  std::vector<int> frontier_;  // FindOutside's breadth-first walk
  std::vector<unsigned> visit_stamp_;
  unsigned stamp_ = 0;
  // CheckParentChain's outcome per block (its chain ends at the root, at an invalid parent, or in
  // a loop), and its walk.
  enum ChainState : uint8_t {
    kChainUnknown,
    kChainOnWalk,
    kChainReachesRoot,
    kChainInvalid,
    kChainLoops
  };
  std::vector<ChainState> chain_state_;
  std::vector<int> chain_;
  // FindUpChain: per block, the outside declaration of each name looked up from it (null: none).
  std::vector<std::unordered_map<std::string_view, const proto::VarDesc*>> outside_memo_;
  std::vector<int> walked_;
  // DefinedOutside: per block, whether each name looked up from it is defined from outside it.
  std::vector<std::unordered_map<std::string_view, bool>> defined_memo_;
  std::vector<int> defined_walk_;
};

}  // namespace

Diagnostics ValidateProgram(const Program& program, const ValidateOptions& options) {
  return Validator(program, options).Run();
}

}  // namespace irm::oldir
