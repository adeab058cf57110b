// Which Paddle wrote a legacy program, as far as the program says, so that the validator checks
// it against the ops as that Paddle wrote them: a slot older grad makers did not keep is not an
// error in an older program, and is one in a current program.
//
// The evidence, from the history of Paddle's framework.proto and program_desc.cc:
//   ProgramDesc.version (field 4) > 0   Paddle 1.6 and later, release builds: the exact version
//                                       (major * 1000000 + minor * 1000 + patch; 1008005 = 1.8.5).
//   op_version_map (field 5) present    Paddle 2.0 and later (commit 0d275916, 2020-10-10).
//   op_compatible_map (field 3)         Paddle 1.6 to 1.8 (commit 01b9d079, 2019-09-27).
//   field 4 present, version 0          a development build of Paddle 1.6 or later.
//   legacy_version (field 2) present    Paddle 1.0 to 1.5 (commit 926e1077, 2018-08-24: the
//                                       ProgramDesc constructor always sets it, to 0).
//   none of them                        not written by a Paddle release of 1.0 or later (Paddle
//                                       0.x, ir-migrate's builder, hand-written text): checked as
//                                       a current program.
// Development builds give only a lower bound; the validator relaxes a check whenever the writer
// may be older than the change the check depends on.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "oldir/proto/framework.pb.h"

namespace irm::oldir {

// Paddle's version integer (paddle/fluid/framework/version.h: MAJOR_COEFF, MINOR_COEFF).
constexpr int64_t PaddleVersion(int major, int minor, int patch = 0) {
  return int64_t{major} * 1000000 + int64_t{minor} * 1000 + patch;
}
// "1.8.5"; "0" for 0.
std::string PaddleVersionName(int64_t version);

struct WriterEra {
  // The oldest Paddle that can have written the program; kCurrent when the program carries no
  // version at all.
  static constexpr int64_t kCurrent = std::numeric_limits<int64_t>::max();
  int64_t at_least = kCurrent;
  bool exact = false;    // at_least is the writer's release version
  std::string evidence;  // what in the program says so, for diagnostics

  bool IsCurrent() const { return at_least == kCurrent; }
  // Whether the writer may predate `version` (a change made in that release).
  bool MayPredate(int64_t version) const { return at_least < version; }
  // "Paddle 1.8.5 (ProgramDesc.version 1008005)", "Paddle 1.0 to 1.5 (legacy_version, field 2)"
  std::string Describe() const;
};

WriterEra DetermineWriterEra(const paddle::framework::proto::ProgramDesc& desc);

}  // namespace irm::oldir
