// The comparison steps both parity drivers share (parity_run.h for one program, bundle_parity.h
// for a bundle, rank by rank): fetches and persistable vars compared into the report, aligned
// intermediates and unaligned writes listed, the first divergence described, and the names a
// re-run keeps in full to measure it. Every function takes the rank it reports; a single program
// is rank 0.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "diff_tests/first_divergence.h"
#include "diff_tests/parity_report.h"
#include "diff_tests/trace_align.h"
#include "newir/program.h"
#include "oldir/program.h"
#include "reference_runtime/executor.h"
#include "reference_runtime/op_trace.h"

namespace irm::diff {

// Persistable vars by name (not owned).
using VarView = std::map<std::string, const rt::Tensor*>;

// The defined tensors of `scope`'s own vars.
VarView DefinedVars(const rt::Scope& scope);
// A view of `vars`.
VarView ViewOf(const std::map<std::string, rt::Tensor>& vars);

// One step's fetches, position by position; `unit` names what was run ("program", "bundle") in
// the reason of a fetch only one side made.
void CompareFetches(int rank, int step, const std::vector<rt::Fetch>& old_fetches,
                    const std::vector<rt::Fetch>& new_fetches, std::string_view unit,
                    ParityReport& report);

// The persistable vars of both sides after `step`, by name (the union of both sides' names).
void CompareVars(int rank, int step, const VarView& old_vars, const VarView& new_vars,
                 ParityReport& report);

// Labels of a traced op for the report: the legacy op by block and index, the new-IR op by depth
// and index.
std::string OldOpLabel(const rt::OpRecord& r);
std::string NewOpLabel(const rt::OpRecord& r);

// Every aligned pair with its comparison as an intermediate, and the writes of either side left
// unaligned.
void AppendIntermediates(const Alignment& alignment, const std::vector<PairResult>& results,
                         const Trace& old_trace, const Trace& new_trace, ParityReport& report);
void AppendUnaligned(const Alignment& alignment, const Trace& old_trace, const Trace& new_trace,
                     ParityReport& report);

// What to keep besides `also`.
rt::KeepPredicate KeepNames(std::set<std::string> names, rt::KeepPredicate also);

// The re-run that measures a divergence found by hash keeps the legacy op's inputs and outputs
// and the new-IR op's outputs.
struct DivergenceKeep {
  rt::KeepPredicate old_side;
  rt::KeepPredicate new_side;
};
DivergenceKeep KeepForDivergence(const rt::OpRecord& old_op, const rt::OpRecord& new_op,
                                 const rt::KeepPredicate& also);

// Compares the divergence's differing pairs again on the re-run's traces.
void RecompareDiffering(const FirstDivergence& divergence, const Alignment& alignment,
                        const Trace& old_trace, const Trace& new_trace, Tier tier,
                        std::vector<PairResult>& results);

// The divergence for the report, the ops' text left to the caller: the legacy op's empty, the
// new-IR op's its type.
DivergenceReport DescribeDivergence(const FirstDivergence& divergence, const Alignment& alignment,
                                    const std::vector<PairResult>& results, const Trace& old_trace,
                                    const Trace& new_trace);

// The legacy op a record names in `program` as text; empty when the program has no such op.
std::string LegacyOpText(const oldir::Program& program, const rt::OpRecord& r);

// The top-level op at `index` of `program`; null for an op nested in a region.
const newir::Operation* TopLevelOp(const newir::Program& program, int depth, int index);

// The kept output `name` of the traced op at `record`; null when not kept.
const rt::Tensor* KeptOutput(const Trace& trace, size_t record, const std::string& name);

}  // namespace irm::diff
