// Reassembling a var from its pieces (shard_assembly.h): byte copies into the global tensor, one
// owner per element, every later holder compared bit for bit with the owner.
#include "diff_tests/shard_assembly.h"

#include <cstring>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "reference_runtime/dtype_visit.h"

namespace irm::diff {
namespace {

std::string ShapeText(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ","));
}

std::string PieceText(const VarPiece& piece) {
  std::string text =
      fmt::format("{}{}", DTypeName(piece.tensor->dtype()), ShapeText(piece.tensor->shape()));
  if (piece.slice != nullptr)
    text += fmt::format(" at offsets {}", ShapeText(piece.slice->offsets));
  return text;
}

// The global shape a piece claims.
const std::vector<int64_t>& ClaimedShape(const VarPiece& piece) {
  return piece.slice != nullptr ? piece.slice->global_shape : piece.tensor->shape();
}

// Why `piece` does not fit a var of `dtype` and `global` ("" when it fits).
std::string Misfit(const VarPiece& piece, DType dtype, const std::vector<int64_t>& global) {
  const rt::Tensor& t = *piece.tensor;
  if (t.dtype() != dtype)
    return fmt::format("is {}, the var {}", DTypeName(t.dtype()), DTypeName(dtype));
  if (ClaimedShape(piece) != global) {
    return fmt::format("says the var is {}, another rank {}", ShapeText(ClaimedShape(piece)),
                       ShapeText(global));
  }
  if (piece.slice == nullptr) return "";
  const std::vector<int64_t>& offsets = piece.slice->offsets;
  if (offsets.size() != global.size() || t.shape().size() != global.size()) {
    return fmt::format("has {} dims and {} offsets for a var of {} dims", t.shape().size(),
                       offsets.size(), global.size());
  }
  for (size_t d = 0; d < global.size(); ++d) {
    if (offsets[d] < 0 || t.shape()[d] < 0 || offsets[d] > global[d] - t.shape()[d]) {
      return fmt::format("lies outside the var's shape {} in dim {}", ShapeText(global), d);
    }
  }
  return "";
}

struct Disagreement {
  int64_t count = 0;
  int64_t first = -1;
  double owner_value = 0.0;
  double value = 0.0;
};

}  // namespace

AssembledVar AssembleVar(const std::string& name, const std::vector<VarPiece>& pieces) {
  AssembledVar out;
  const VarPiece* first = nullptr;
  for (const VarPiece& piece : pieces) {
    if (piece.tensor != nullptr && piece.tensor->defined()) {
      first = &piece;
      break;
    }
  }
  if (first == nullptr) return out;
  const DType dtype = first->tensor->dtype();
  const std::vector<int64_t> global = ClaimedShape(*first);
  int64_t numel = 1;
  for (int64_t d : global) numel *= d;
  StatusOr<rt::Tensor> zeros = rt::Tensor::Zeros(dtype, global);
  if (!zeros.ok()) {
    out.findings.push_back(
        {AssemblyFinding::Kind::kLayout, first->rank,
         fmt::format("'{}' {}: {}", name, ShapeText(global), zeros.status().message())});
    return out;
  }
  rt::Tensor assembled = std::move(zeros).value();
  const size_t width = DTypeSize(dtype);
  auto* bytes = static_cast<unsigned char*>(assembled.raw());
  std::vector<int> owner(static_cast<size_t>(numel), -1);
  // Keyed by (owner, rank): the first disagreement of each pair of ranks.
  std::map<std::pair<int, int>, Disagreement> disagreements;
  bool placed = false;

  for (const VarPiece& piece : pieces) {
    if (piece.tensor == nullptr || !piece.tensor->defined()) continue;
    if (const std::string why = Misfit(piece, dtype, global); !why.empty()) {
      out.findings.push_back(
          {AssemblyFinding::Kind::kLayout, piece.rank,
           fmt::format("rank {}'s '{}' ({}) {}", piece.rank, name, PieceText(piece), why)});
      continue;
    }
    placed = true;
    const rt::Tensor& local = *piece.tensor;
    const auto* src = static_cast<const unsigned char*>(local.raw());
    const std::vector<int64_t>& shape = local.shape();
    std::vector<int64_t> coord(shape.size(), 0);
    for (int64_t i = 0; i < local.numel(); ++i) {
      // The element's flat index in the global tensor (row-major).
      int64_t g = 0;
      for (size_t d = 0; d < shape.size(); ++d) {
        const int64_t offset = piece.slice != nullptr ? piece.slice->offsets[d] : 0;
        g = g * global[d] + coord[d] + offset;
      }
      const size_t gi = static_cast<size_t>(g);
      unsigned char* dst = bytes + gi * width;
      if (owner[gi] < 0) {
        std::memcpy(dst, src + static_cast<size_t>(i) * width, width);
        owner[gi] = piece.rank;
      } else if (std::memcmp(dst, src + static_cast<size_t>(i) * width, width) != 0) {
        Disagreement& d = disagreements[{owner[gi], piece.rank}];
        if (d.count++ == 0) {
          d.first = g;
          d.owner_value = rt::ElementAsDouble(assembled, g);
          d.value = rt::ElementAsDouble(local, i);
        }
      }
      for (size_t d = shape.size(); d-- > 0;) {
        if (++coord[d] < shape[d]) break;
        coord[d] = 0;
      }
    }
  }
  if (!placed) return out;
  for (const auto& [ranks, d] : disagreements) {
    out.findings.push_back(
        {AssemblyFinding::Kind::kDisagree, ranks.second,
         fmt::format("ranks {} and {} hold different bits of '{}' at {} element{}, first at "
                     "index {} ({:.9g} vs {:.9g})",
                     ranks.first, ranks.second, name, d.count, d.count == 1 ? "" : "s", d.first,
                     d.owner_value, d.value)});
  }
  int64_t uncovered = 0;
  int64_t first_uncovered = -1;
  for (int64_t g = 0; g < numel; ++g) {
    if (owner[static_cast<size_t>(g)] >= 0) continue;
    if (uncovered++ == 0) first_uncovered = g;
  }
  if (uncovered > 0) {
    out.findings.push_back(
        {AssemblyFinding::Kind::kUncovered, first->rank,
         fmt::format("{} of {} elements of '{}' {} are held by no rank, first at index {}",
                     uncovered, numel, name, ShapeText(global), first_uncovered)});
  }
  out.tensor = std::move(assembled);
  return out;
}

}  // namespace irm::diff
