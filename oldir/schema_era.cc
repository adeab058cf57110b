// The writer era of a legacy program, read from its version fields (see schema_era.h).
#include "oldir/schema_era.h"

#include <fmt/format.h>

namespace irm::oldir {

namespace proto = ::paddle::framework::proto;

std::string PaddleVersionName(int64_t version) {
  if (version <= 0) return "0";
  return fmt::format("{}.{}.{}", version / 1000000, version / 1000 % 1000, version % 1000);
}

std::string WriterEra::Describe() const {
  if (IsCurrent()) return "a current program (" + evidence + ")";
  if (exact) return fmt::format("Paddle {} ({})", PaddleVersionName(at_least), evidence);
  return fmt::format("Paddle {} or later ({})", PaddleVersionName(at_least), evidence);
}

WriterEra DetermineWriterEra(const proto::ProgramDesc& desc) {
  WriterEra era;
  if (desc.has_version() && desc.version().version() > 0) {
    era.at_least = desc.version().version();
    era.exact = true;
    era.evidence = fmt::format("ProgramDesc.version {}", era.at_least);
    return era;
  }
  const char* zero = desc.has_version() ? "ProgramDesc.version 0, a development build" : nullptr;
  if (desc.has_op_version_map()) {
    era.at_least = PaddleVersion(2, 0);
    era.evidence = zero ? fmt::format("{}, with op_version_map", zero) : "op_version_map";
    return era;
  }
  // The deprecated Paddle 1.x field, reached by reflection to keep its accessors' warnings out.
  const auto* compatible_map = proto::ProgramDesc::descriptor()->FindFieldByNumber(3);
  if (desc.GetReflection()->HasField(desc, compatible_map)) {
    era.at_least = PaddleVersion(1, 6);
    era.evidence = zero ? fmt::format("{}, with op_compatible_map", zero) : "op_compatible_map";
    return era;
  }
  if (zero != nullptr) {
    era.at_least = PaddleVersion(1, 6);
    era.evidence = zero;
    return era;
  }
  if (desc.has_legacy_version()) {
    era.at_least = PaddleVersion(1, 0);
    era.evidence = "legacy_version, field 2, written by Paddle 1.0 to 1.5";
    return era;
  }
  era.evidence = "it carries no version";
  return era;
}

}  // namespace irm::oldir
