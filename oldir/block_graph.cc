// CheckBlockGraph (block_graph.h): one depth-first walk over the sub-block references, with an
// explicit stack, finds the references that close a cycle; the longest path from the root block
// over the remaining (acyclic) references is each block's nesting level.
#include "oldir/block_graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace irm::oldir {
namespace {

// One reference: op `op` of block `from` names block `to` in attribute `attr`.
struct Edge {
  int from;
  int op;
  int to;
  const std::string* attr;
};

// The references of every block, grouped by block (CSR): edges_[first_[b] .. first_[b + 1]).
// Targets out of range and references of a block to itself are the validator's own findings and
// no walker follows them, so they are left out here.
class BlockGraph {
 public:
  explicit BlockGraph(const Program& program) : num_blocks_(program.num_blocks()) {
    first_.assign(static_cast<size_t>(num_blocks_) + 1, 0);
    for (int b = 0; b < num_blocks_; ++b) {
      first_[static_cast<size_t>(b)] = static_cast<int>(edges_.size());
      const proto::BlockDesc& block = program.desc().blocks(b);
      for (int j = 0; j < block.ops_size(); ++j) {
        for (const proto::OpDesc::Attr& attr : block.ops(j).attrs()) {
          if (attr.type() == proto::BLOCK && attr.has_block_idx()) {
            AddEdge(b, j, attr.block_idx(), &attr.name());
          } else if (attr.type() == proto::BLOCKS) {
            for (int target : attr.blocks_idx()) AddEdge(b, j, target, &attr.name());
          }
        }
      }
    }
    first_[static_cast<size_t>(num_blocks_)] = static_cast<int>(edges_.size());
  }

  int num_blocks() const { return num_blocks_; }
  int begin(int b) const { return first_[static_cast<size_t>(b)]; }
  int end(int b) const { return first_[static_cast<size_t>(b) + 1]; }
  const Edge& edge(int e) const { return edges_[static_cast<size_t>(e)]; }

 private:
  void AddEdge(int from, int op, int to, const std::string* attr) {
    if (to >= 0 && to < num_blocks_ && to != from) edges_.push_back(Edge{from, op, to, attr});
  }

  int num_blocks_;
  std::vector<int> first_;
  std::vector<Edge> edges_;
};

// "1 -> 2 -> 1": path[from..] and back to path[from]; shortened in the middle when the cycle is
// long, so that the cost of a finding does not grow with the nesting.
std::string CyclePath(const std::vector<int>& path, size_t from) {
  constexpr size_t kShown = 8;
  if (path.size() - from <= 2 * kShown) {
    std::vector<int> shown(path.begin() + static_cast<std::ptrdiff_t>(from), path.end());
    shown.push_back(path[from]);
    return fmt::format("{}", fmt::join(shown, " -> "));
  }
  const auto head = path.begin() + static_cast<std::ptrdiff_t>(from);
  return fmt::format("{} -> ... ({} more) -> {} -> {}", fmt::join(head, head + kShown, " -> "),
                     path.size() - from - 2 * kShown + 1,
                     fmt::join(path.end() - kShown + 1, path.end(), " -> "), path[from]);
}

Location EdgeLocation(const Program& program, const std::string& file, const Edge& edge) {
  return OpLocation(file, program.block(edge.from), edge.op).AtAttr(*edge.attr);
}

}  // namespace

Diagnostics CheckBlockGraph(const Program& program, const std::string& file, int max_depth) {
  Diagnostics findings;
  const BlockGraph graph(program);
  const int n = graph.num_blocks();
  if (n == 0) return findings;

  // Depth-first from the root block, then from every block it never reaches (those never run,
  // but a cycle among them is still malformed). `on_path` marks the blocks of the current path,
  // `path` lists them; `back` marks the references that close a cycle.
  enum : uint8_t { kUnseen, kOnPath, kDone };
  std::vector<uint8_t> state(static_cast<size_t>(n), kUnseen);
  std::vector<int> next_edge(static_cast<size_t>(n), 0);
  std::vector<int> path_pos(static_cast<size_t>(n), -1);  // index in `path` while on it
  std::vector<bool> back;
  std::vector<int> path;
  std::vector<int> post_order;  // blocks as they finish
  post_order.reserve(static_cast<size_t>(n));
  {
    int num_edges = graph.end(n - 1);
    back.assign(static_cast<size_t>(num_edges), false);
  }
  for (int start = 0; start < n; ++start) {
    if (state[static_cast<size_t>(start)] != kUnseen) continue;
    state[static_cast<size_t>(start)] = kOnPath;
    next_edge[static_cast<size_t>(start)] = graph.begin(start);
    path_pos[static_cast<size_t>(start)] = 0;
    path.push_back(start);
    while (!path.empty()) {
      const int b = path.back();
      int& e = next_edge[static_cast<size_t>(b)];
      if (e == graph.end(b)) {
        state[static_cast<size_t>(b)] = kDone;
        post_order.push_back(b);
        path.pop_back();
        continue;
      }
      const Edge& edge = graph.edge(e++);
      const int to = edge.to;
      if (state[static_cast<size_t>(to)] == kOnPath) {
        back[static_cast<size_t>(e - 1)] = true;
        findings.Add(Error(
            EdgeLocation(program, file, edge),
            fmt::format("attribute '{}' runs block {}, which already runs this op: the sub-blocks "
                        "form a cycle {}",
                        *edge.attr, to,
                        CyclePath(path, static_cast<size_t>(path_pos[static_cast<size_t>(to)])))));
      } else if (state[static_cast<size_t>(to)] == kUnseen) {
        state[static_cast<size_t>(to)] = kOnPath;
        next_edge[static_cast<size_t>(to)] = graph.begin(to);
        path_pos[static_cast<size_t>(to)] = static_cast<int>(path.size());
        path.push_back(to);
      }
    }
  }

  // Nesting levels: the longest path from the root block over the references that close no
  // cycle, relaxed in topological order (the reverse of the finishing order). A block the root
  // never reaches is never run and has no level.
  std::vector<int> depth(static_cast<size_t>(n), -1);
  std::vector<int> reached_by(static_cast<size_t>(n), -1);  // the edge that set depth
  depth[0] = 0;
  for (auto it = post_order.rbegin(); it != post_order.rend(); ++it) {
    const int b = *it;
    if (depth[static_cast<size_t>(b)] < 0) continue;
    for (int e = graph.begin(b); e < graph.end(b); ++e) {
      if (back[static_cast<size_t>(e)]) continue;
      const int to = graph.edge(e).to;
      if (depth[static_cast<size_t>(to)] < depth[static_cast<size_t>(b)] + 1) {
        depth[static_cast<size_t>(to)] = depth[static_cast<size_t>(b)] + 1;
        reached_by[static_cast<size_t>(to)] = e;
      }
    }
  }
  for (int b = 0; b < n; ++b) {
    if (depth[static_cast<size_t>(b)] <= max_depth) continue;
    // Report where the nesting first crosses the bound: walk back to the block at max_depth + 1.
    int at = b;
    while (depth[static_cast<size_t>(at)] > max_depth + 1) {
      at = graph.edge(reached_by[static_cast<size_t>(at)]).from;
    }
    const Edge& edge = graph.edge(reached_by[static_cast<size_t>(at)]);
    findings.Add(Error(
        EdgeLocation(program, file, edge),
        fmt::format("block {} is nested {} levels deep (its sub-blocks reach {}); "
                    "at most {} levels are supported",
                    at, max_depth + 1, *std::max_element(depth.begin(), depth.end()), max_depth)));
    break;
  }
  return findings;
}

Status RequireWellNestedBlocks(const Program& program, const std::string& file, int max_depth) {
  Diagnostics findings = CheckBlockGraph(program, file, max_depth);
  if (findings.empty()) return Status::Ok();
  return Status(StatusCode::kInvalid, findings.items().front());
}

}  // namespace irm::oldir
