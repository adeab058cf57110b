// The program-level translation (translate.h): walk the root block (checking on the way that
// every op can be translated), then store the persistable vars whose final value is not their
// parameter's own storage (builtin.set_parameter right after the op that made it) and expose the
// requested outputs (builtin.shadow_output).
#include "translator/translate.h"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "newir/builder.h"
#include "newir/nesting.h"
#include "oldir/block_graph.h"
#include "translator/op_compat.h"
#include "translator/op_context.h"

namespace irm::translator {
namespace {

struct Unsupported {
  int count = 0;
  std::string first;  // "block 0, op 4"
  std::string note;
};

// Every op type of every block that has no translation, in order of first appearance.
std::vector<std::pair<std::string, Unsupported>> FindUnsupported(const oldir::Program& legacy) {
  std::vector<std::pair<std::string, Unsupported>> found;
  for (int b = 0; b < legacy.num_blocks(); ++b) {
    const oldir::Block block = legacy.block(b);
    for (int i = 0; i < block.num_ops(); ++i) {
      const std::string& type = block.op(i).type();
      const OpCompat* row = FindOpCompat(type);
      if (IsTranslatable(row)) continue;
      auto it = std::find_if(found.begin(), found.end(),
                             [&](const auto& entry) { return entry.first == type; });
      if (it == found.end()) {
        found.push_back({type,
                         {0, fmt::format("block {}, op {}", block.index(), i),
                          row != nullptr ? std::string(row->note) : "no translation known"}});
        it = found.end() - 1;
      }
      ++it->second.count;
    }
  }
  return found;
}

Status UnsupportedError(const TranslateOptions& options,
                        const std::vector<std::pair<std::string, Unsupported>>& found) {
  int ops = 0;
  for (const auto& [type, u] : found) ops += u.count;
  Status status(StatusCode::kUnimplemented, Location::File(options.file),
                fmt::format("cannot translate {} op type{} ({} op{}); --allow-unregistered keeps "
                            "them as opaque ops",
                            found.size(), found.size() == 1 ? "" : "s", ops, ops == 1 ? "" : "s"));
  for (const auto& [type, u] : found) {
    status.AddNote(fmt::format("'{}': {} op{}, first at {}: {}", type, u.count,
                               u.count == 1 ? "" : "s", u.first, u.note));
  }
  return status;
}

void StoreParameters(ProgramState& state, const Scope& root) {
  // Several parameters stored from one op's results follow it in the order of their names'
  // first writes.
  std::unordered_map<newir::Operation*, newir::Operation*> last_stored;
  for (const auto& [name, b] : root.local_bindings()) {
    // Root-block ops bind root-block vars: `persistable` is the root var's flag.
    if (!b->persistable) continue;
    // Still the parameter's own storage: nothing to store.
    const Binding* parameter = state.externals.FindLocal(name);
    if (parameter != nullptr && b->storage == parameter->value) continue;
    newir::Operation* producer = b->value->defining_op();
    if (producer == nullptr) continue;
    newir::Builder builder(state.program.block());
    newir::Operation*& after = last_stored[producer];
    builder.SetInsertionPointAfter(after != nullptr ? *after : *producer);
    newir::AttributeMap attrs = {{"parameter_name", newir::Attribute::String(std::string(name))}};
    if (const newir::Attribute role = producer->attribute("op_role"); !role.IsNull()) {
      attrs.emplace("op_role", role);
    }
    after = builder.Create("builtin.set_parameter", {b->value}, {}, std::move(attrs));
  }
}

Status ExposeOutputs(ProgramState& state, const Scope& root) {
  newir::Builder builder(state.program.block());
  for (const std::string& name : state.options.outputs) {
    const Binding* b = root.Find(name);
    if (b == nullptr) b = state.externals.FindLocal(name);
    if (b == nullptr) {
      return Status(StatusCode::kInvalid, Location::File(state.options.file).AtVar(name),
                    fmt::format("output '{}' is never written by the program", name));
    }
    builder.Create("builtin.shadow_output", {b->value}, {},
                   {{"output_name", newir::Attribute::String(name)}});
  }
  return Status::Ok();
}

}  // namespace

StatusOr<Translation> TranslateProgram(const oldir::Program& legacy,
                                       const TranslateOptions& options) {
  if (legacy.num_blocks() == 0) {
    return Status(StatusCode::kInvalid, Location::File(options.file), "the program has no block");
  }
  // The walk recurses once per sub-block level, and the new-IR program nests its regions as deep
  // as the legacy program nests its blocks: a cycle of sub-blocks, or a nesting the new-IR readers
  // would refuse to read back, is refused before anything is built.
  IRM_RETURN_IF_ERROR(
      oldir::RequireWellNestedBlocks(legacy, options.file, newir::kMaxRegionNesting));
  Translation t;
  ProgramState state{.legacy = legacy,
                     .options = options,
                     .program = t.program,
                     .coverage = t.coverage,
                     .notes = t.notes};
  // Written names bind in `root`, names read before any write in `externals`: each at most one
  // per var of the block.
  Scope root;
  root.Reserve(static_cast<size_t>(legacy.root().num_vars()));
  state.externals.Reserve(static_cast<size_t>(legacy.root().num_vars()));
  // Unless opaque ops are allowed, a program with an op that has no translation fails listing
  // every such op type, before any other error. The walk stops at the first such op, so the list
  // is made only then (or for any other failure, to put it first). A successful walk checked
  // every block it translated; only when it never reached some block is the whole program
  // looked at again. So the usual, translatable program is walked once, not twice.
  Status walked = TranslateOps(state, legacy.root(), t.program.block(), root);
  if (!options.allow_unregistered) {
    const bool unchecked = std::find(state.checked_blocks.begin(), state.checked_blocks.end(),
                                     false) != state.checked_blocks.end();
    if (!walked.ok() || unchecked) {
      const auto unsupported = FindUnsupported(legacy);
      if (!unsupported.empty()) return UnsupportedError(options, unsupported);
    }
  }
  IRM_RETURN_IF_ERROR(walked);
  StoreParameters(state, root);
  IRM_RETURN_IF_ERROR(ExposeOutputs(state, root));
  return t;
}

}  // namespace irm::translator
