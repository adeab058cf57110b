// Two pir bundles of one world compared rank by rank: the three-way check of the new-IR engine
// flow, where the same strategy reaches the new IR by two roads — the legacy passes then the
// translator (`ir-migrate build --strategy`, then `translate`), and the new IR's own passes
// (`ir-migrate parallelize`) — and both must compute the same numbers. The programs are first
// aligned op by op, rank by rank (an op-sequence alignment of the op names: the longest common
// subsequence, then what is left on each side, paired by name as moved where both sides have it):
// where every rank's ops come in the same order, the runs must agree bit for bit (the exact tier);
// where they do not, the alignment says which ops differ, and every step's fetches and every
// persistable var of every rank after the run must agree in the reordered tier. With data
// parallelism a scalar fetch (the loss) is compared as its mean over the replicas, as the serial
// check takes it: the legacy passes fetch each replica's own loss, the new IR's the loss averaged
// over the replicas (Partial(avg) all-reduced), and both mean the same global loss. Both bundles
// run on the thread world with the same seed and random feeds (each replica its rows of the global
// batch, as `run --ranks N` gives them).
//
// The report's "legacy" side is bundle A, its "new-IR" side bundle B (parity_compare.h's
// CompareFetches / CompareVars); a persistable only one side holds fails ("only in the legacy
// scope" / "only in the new-IR scope"): a caller that knows which vars one road's pass adds on its
// own (the engine's gradient-merge bookkeeping) waives those.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "diff_tests/parity_compare.h"
#include "diff_tests/parity_report.h"
#include "oldir/bundle.h"
#include "reference_runtime/executor.h"
#include "reference_runtime/multi_rank_run.h"

namespace irm::diff {

// One op of an alignment: in both sequences (kSame), in one only (kOnlyA / kOnlyB), or in both
// at positions the common subsequence could not pair (kMoved: the same name, another order).
struct AlignedOp {
  enum class Kind { kSame, kOnlyA, kOnlyB, kMoved };
  Kind kind = Kind::kSame;
  std::string name;
  int index_a = -1;  // position in A's sequence; -1 for kOnlyB
  int index_b = -1;  // position in B's sequence; -1 for kOnlyA
  bool operator==(const AlignedOp&) const = default;
};

// The alignment of two op-name sequences, in A's order with B's extra ops placed after the
// A op they follow. Deterministic: ties in the common subsequence prefer A's earlier ops.
std::vector<AlignedOp> AlignOpSequences(const std::vector<std::string>& a,
                                        const std::vector<std::string>& b);

// One program of one rank: its alignment and whether the two sequences are equal.
struct ProgramAlignment {
  int rank = 0;
  std::string program;  // "startup" or "main"
  bool same_order = true;
  int ops_a = 0;
  int ops_b = 0;
  std::vector<AlignedOp> differences;  // the entries that are not kSame, in alignment order
};

// The alignment of one program of one rank (`program` names it: "main", a job type, "plan").
ProgramAlignment AlignProgram(int rank, std::string program, const std::vector<std::string>& a,
                              const std::vector<std::string>& b);

struct PirBundleComparison {
  std::vector<ProgramAlignment> programs;  // rank by rank, startup then main
  bool same_op_order = true;               // every program of every rank
  // The runs' comparison, in the exact tier when same_op_order, else the reordered tier.
  ParityReport report;
  bool parity() const { return report.parity(); }
};

struct PirBundleCompareOptions {
  int steps = 0;                 // 0: bundle A's steps
  std::optional<uint64_t> seed;  // default: bundle A's seed, for both
  int64_t batch_size = 4;        // rows per replica of the random feeds
  std::chrono::milliseconds timeout{60000};
  // The float64 shadow of the serial program after the same steps (its scope; null: none). A
  // persistable that misses the tier is then arbitrated as the serial check does
  // (serial_arbitration.h, with the shadow's slice at B's shard: B against A, else A against B —
  // neither road is the reference): a zero gradient's rounding noise (the gpt's key biases) has
  // no order-independent digits to agree on.
  const rt::Scope* shadow = nullptr;
  // Where both runs execute (the engine's --device, --backend): every rank's kernels (null: the
  // CPU's) and the world its ranks communicate in (unset: the thread world, with `timeout`). Must
  // outlive the call.
  const rt::KernelRegistry* kernels = nullptr;
  rt::RankWorldFactory make_world;
};

// Every rank of the bundle in `dir` for `steps` steps on the thread world (or options.make_world's,
// on options.kernels), with `seed` and random feeds of options.batch_size rows per replica; a
// failure says which side (`side`: "A", "B") ran.
StatusOr<rt::MultiRankResult> RunBundleForComparison(const std::string& dir, int steps,
                                                     uint64_t seed,
                                                     const PirBundleCompareOptions& options,
                                                     const char* side);

// Every step's fetches of two runs of one world, A as the report's legacy side. With `dp` > 1
// replicas a float scalar (the loss; a plan's merged fetch: one per micro-batch, `micro_batches`
// values) is compared as its mean over the replicas of each place in a replica (a pipeline's last
// stage, a tensor-parallel rank), once, at the first replica's rank; every other fetch rank by
// rank.
void CompareFetchesOverReplicas(const std::vector<rt::RankOutcome>& a,
                                const std::vector<rt::RankOutcome>& b, int dp,
                                int64_t micro_batches, ParityReport& report);

// Arbitrates the persistables of one rank compared from report.tensors[first] on that missed the
// tier by the float64 shadow of the serial program (serial_arbitration.h), the shadow sliced at
// B's shard (`rank_b`): B against A, else A against B — neither road is the reference.
void ArbitrateByShadow(const oldir::BundleRank& rank_b, const VarView& a, const VarView& b,
                       const rt::Scope& shadow, size_t first, ParityReport& report);
// Errors: ReadBundle's; kInvalidArgument when either is not a pir bundle, when their world sizes
// or data-parallel degrees differ, or when a rank runs a plan (the job programs of a pipeline are
// not aligned here); a program that does not load; either run's failure, with a note naming the
// side (a hang is kInternal).
StatusOr<PirBundleComparison> ComparePirBundles(const std::string& a_dir, const std::string& b_dir,
                                                const PirBundleCompareOptions& options = {});

// The alignment for people: per program that differs, "rank 1 main: 212 vs 209 ops" then one
// line per difference ("  only in A: #17 pd_op.c_identity", "  moved: pd_op.all_reduce A#40 B#52").
// "every rank's programs have the same ops in the same order\n" when nothing differs.
std::string DescribeOpDifferences(const PirBundleComparison& comparison);

}  // namespace irm::diff
