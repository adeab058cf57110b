// The cases the parity tests run (corpus.h).
#include "diff_tests/corpus/corpus.h"

namespace irm::corpus {

StatusOr<std::vector<BundleCase>> StandardCases(const CorpusOptions& options) {
  std::vector<BundleCase> cases;
  auto add = [&](StatusOr<BundleCase> c) -> Status {
    IRM_RETURN_IF_ERROR(c.status());
    cases.push_back(std::move(c).value());
    return Status::Ok();
  };
  IRM_RETURN_IF_ERROR(add(DataParallelMlp(2, options)));
  IRM_RETURN_IF_ERROR(add(DataParallelMlp(4, options)));
  IRM_RETURN_IF_ERROR(add(TensorParallelMlp(2, options)));
  IRM_RETURN_IF_ERROR(add(PipelineFThenBMlp(2, options)));
  IRM_RETURN_IF_ERROR(add(PipelineFThenBMlp(4, options)));
  IRM_RETURN_IF_ERROR(add(GradientMergeMlp(2, options)));
  return cases;
}

}  // namespace irm::corpus
