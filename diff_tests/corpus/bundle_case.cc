// Writing a corpus case as a bundle directory (bundle_case.h).
#include "diff_tests/corpus/bundle_case.h"

namespace irm::corpus {

Status WriteBundleCase(const BundleCase& bundle_case, const std::string& dir, bool text_copies) {
  oldir::Bundle bundle = bundle_case.bundle;
  bundle.ranks.clear();
  oldir::RankProgramsOptions options;
  options.text_copies = text_copies;
  for (size_t r = 0; r < bundle_case.ranks.size(); ++r) {
    const RankPrograms& programs = bundle_case.ranks[r];
    IRM_ASSIGN_OR_RETURN(oldir::BundleRank rank,
                         oldir::WriteLegacyRankPrograms(dir, static_cast<int>(r), programs.startup,
                                                        programs.jobs, options));
    rank.plan = programs.plan;
    bundle.ranks.push_back(std::move(rank));
  }
  return oldir::WriteBundle(bundle, dir);
}

}  // namespace irm::corpus
