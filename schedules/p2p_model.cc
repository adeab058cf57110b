// ParseP2pModel / P2pModelName (p2p_model.h).
#include "schedules/p2p_model.h"

#include <charconv>

#include <fmt/format.h>

namespace irm::schedules {

StatusOr<P2pModel> ParseP2pModel(std::string_view text) {
  const auto bad = [&] {
    return Status(StatusCode::kInvalidArgument, Location{},
                  fmt::format("p2p model '{}' is not 'rendezvous', 'buffered' or 'buffered=K' "
                              "(K >= 1 unreceived messages per channel)",
                              text));
  };
  if (text == "rendezvous") return P2pModel::Rendezvous();
  if (text == "buffered") return P2pModel::Buffered(1);
  constexpr std::string_view kPrefix = "buffered=";
  if (!text.starts_with(kPrefix)) return bad();
  const std::string_view digits = text.substr(kPrefix.size());
  int depth = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), depth);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() || depth < 1) {
    return bad();
  }
  return P2pModel::Buffered(depth);
}

std::string P2pModelName(const P2pModel& model) {
  if (model.mode == P2pMode::kRendezvous) return "rendezvous";
  return fmt::format("buffered={}", model.depth);
}

}  // namespace irm::schedules
