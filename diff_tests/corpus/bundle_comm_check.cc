// CheckBundleCommunication (bundle_comm_check.h).
#include "diff_tests/corpus/bundle_comm_check.h"

#include <optional>

#include <fmt/format.h>

#include "diff_tests/corpus/bundle_comm_program.h"
#include "schedules/simulator.h"

namespace irm::corpus {

Status CheckBundleCommunication(const oldir::Bundle& bundle, const std::string& dir,
                                const schedules::P2pModel& model) {
  IRM_ASSIGN_OR_RETURN(const schedules::CommProgram program, BundleCommProgram(bundle, dir));
  IRM_ASSIGN_OR_RETURN(const schedules::SimResult result, schedules::Simulate(program, model));
  if (result.completed()) return Status::Ok();
  Status refused(StatusCode::kInvalid, Location::File(dir), result.diagnostic);
  IRM_ASSIGN_OR_RETURN(const std::optional<int> depth, schedules::MinBufferDepth(program));
  if (depth.has_value()) {
    refused.AddNote(
        fmt::format("the order needs buffer depth {} (0: safe under rendezvous); "
                    "run it under buffered={} or fix the order",
                    *depth, *depth));
  } else {
    refused.AddNote(
        "no buffer depth lets the order complete: the ranks disagree on a send/recv "
        "pair, or a receive would take another message");
  }
  return refused;
}

}  // namespace irm::corpus
