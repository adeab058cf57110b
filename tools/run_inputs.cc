// Feeds from .npy files and run failures (run_inputs.h).
#include "tools/run_inputs.h"

#include <fmt/format.h>

#include "common/npy.h"
#include "tools/exit_code.h"

namespace irm::tools {

StatusOr<rt::FeedMap> ReadFeeds(const std::vector<std::string>& feeds) {
  rt::FeedMap map;
  for (const std::string& feed : feeds) {
    const size_t eq = feed.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == feed.size()) {
      return Status(StatusCode::kInvalidArgument, Location{},
                    fmt::format("--feed '{}' is not NAME=FILE.npy", feed));
    }
    const std::string name = feed.substr(0, eq);
    if (map.contains(name)) {
      return Status(StatusCode::kInvalidArgument, Location{},
                    fmt::format("--feed {} is given twice", name));
    }
    IRM_ASSIGN_OR_RETURN(const HostTensor host, LoadNpy(feed.substr(eq + 1)));
    StatusOr<rt::Tensor> t = rt::Tensor::FromHost(host);
    if (!t.ok()) return Status(t.status()).InFile(feed.substr(eq + 1));
    map[name] = std::move(t).value();
  }
  return map;
}

int FailRun(const Status& status, std::ostream& err) {
  err << status.diagnostic().Render();
  return status.code() == StatusCode::kInvalid || status.code() == StatusCode::kInternal
             ? kExitRuntimeFailure
             : ExitCodeFor(status);
}

}  // namespace irm::tools
