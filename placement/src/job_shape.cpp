// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/placement/job_shape.hpp"

#include <algorithm>
#include <string>

namespace fabricplace::placement {

ShapeRule first_broken_rule(const ShapeSpec& s) {
  const std::uint32_t G = s.gpus_per_node;
  if (s.nodes && *s.nodes == 0) return ShapeRule::kNoNodes;
  if (G == 0) return ShapeRule::kNoGpus;
  if (s.tp && *s.tp == 0) return ShapeRule::kNoTp;
  if (s.pp == 0) return ShapeRule::kNoPp;
  if (s.ranks_per_node && *s.ranks_per_node == 0) return ShapeRule::kNoRanks;
  if (s.ranks_per_node && *s.ranks_per_node > kMaxRanksPerNode) return ShapeRule::kTooManyRanks;
  const std::uint32_t T = s.tp.value_or(G);
  if (T > G && T % G != 0) return ShapeRule::kTpPartialNodes;
  if (T <= G && G % T != 0) return ShapeRule::kTpSplitsNode;
  if (s.nodes) {
    const std::uint64_t gpus = std::uint64_t{*s.nodes} * G;
    if (gpus % T != 0) return ShapeRule::kTpDoesNotTile;
    // With --tp left out (one node per group) this is the next rule: say that one, not a
    // --tp the user never gave.
    if (s.tp && gpus % (std::uint64_t{T} * s.pp) != 0) return ShapeRule::kPpDoesNotTile;
    if (*s.nodes % s.pp != 0) return ShapeRule::kPpSplitsNodes;
  }
  // A TP group of T x K / G ranks, or ranks that each hold whole groups.
  const std::uint64_t tk = std::uint64_t{T} * s.ranks_per_node.value_or(G);
  if (tk % G != 0 && (tk > G || G % tk != 0)) return ShapeRule::kTpNotWholeRanks;
  if (s.ep) {
    const std::uint32_t E = *s.ep;
    if (E == 0) return ShapeRule::kNoEp;
    if (E > G && E % G != 0) return ShapeRule::kEpPartialNodes;
    if (E <= G && G % E != 0) return ShapeRule::kEpSplitsNode;
    if (E % T != 0 && T % E != 0) return ShapeRule::kEpNotNested;
    if (s.nodes && (std::uint64_t{*s.nodes} * G) % (std::uint64_t{std::max(E, T)} * s.pp) != 0)
      return ShapeRule::kEpDoesNotTile;
    const std::uint64_t ek = std::uint64_t{E} * s.ranks_per_node.value_or(G);
    if (ek % G != 0 && (ek > G || G % ek != 0)) return ShapeRule::kEpNotWholeRanks;
  }
  return ShapeRule::kOk;
}

Result<JobShape> JobShape::make(const ShapeSpec& s, const ShapeNames& n) {
  const auto rule = first_broken_rule(s);
  if (rule == ShapeRule::kOk) {
    JobShape out;
    out.nodes = s.nodes.value_or(0);
    out.gpus_per_node = s.gpus_per_node;
    out.tp = s.tp.value_or(s.gpus_per_node);
    out.pp = s.pp;
    out.ranks_per_node = s.ranks_per_node.value_or(s.gpus_per_node);
    out.ep = s.ep.value_or(0);
    return out;
  }
  using std::to_string;
  const std::uint32_t G = s.gpus_per_node, T = s.tp.value_or(G), N = s.nodes.value_or(0);
  const std::uint32_t K = s.ranks_per_node.value_or(G);
  const std::string tp = std::string(n.tp) + " " + to_string(T),
                    gpn = to_string(G) + " GPUs per node";
  const std::uint64_t gpus = std::uint64_t{N} * G;
  auto at_least_one = [](std::string_view what) {
    return fail(ErrorCode::kUsage, std::string(what) + " must be at least 1");
  };
  switch (rule) {
    case ShapeRule::kOk:
      break;
    case ShapeRule::kNoNodes:
      return at_least_one(n.nodes);
    case ShapeRule::kNoGpus:
      return at_least_one(n.gpus_per_node);
    case ShapeRule::kNoTp:
      return at_least_one(n.tp);
    case ShapeRule::kNoPp:
      return at_least_one(n.pp);
    case ShapeRule::kNoRanks:
      return at_least_one(n.ranks_per_node);
    case ShapeRule::kTooManyRanks:
      return fail(ErrorCode::kUsage, std::string(n.ranks_per_node) + " " + to_string(K) +
                                         ": at most " + to_string(kMaxRanksPerNode));
    case ShapeRule::kTpPartialNodes:
      return fail(ErrorCode::kUsage, tp + " with " + gpn +
                                         ": a TP group larger than a node must span whole nodes "
                                         "(a multiple of " +
                                         to_string(G) + ")");
    case ShapeRule::kTpSplitsNode:
      return fail(ErrorCode::kUsage,
                  tp + " with " + gpn + ": a TP group smaller than a node must divide it (" +
                      to_string(G) + " is not a multiple of " + to_string(T) + ")");
    case ShapeRule::kTpDoesNotTile:
      return fail(ErrorCode::kUsage, tp + " does not tile the job: " + to_string(N) + " nodes x " +
                                         gpn + " = " + to_string(gpus) +
                                         " GPUs, not a multiple of " + to_string(T));
    case ShapeRule::kPpDoesNotTile:
      return fail(ErrorCode::kUsage, std::string(n.pp) + " " + to_string(s.pp) + " with " + tp +
                                         " does not tile the job: " + to_string(gpus) +
                                         " GPUs are not a multiple of TP x PP = " +
                                         to_string(std::uint64_t{T} * s.pp));
    case ShapeRule::kPpSplitsNodes:
      return fail(ErrorCode::kUsage, std::string(n.pp) + " " + to_string(s.pp) + ": " +
                                         to_string(N) +
                                         " nodes do not split into equal pipeline stages");
    case ShapeRule::kNoEp:
      return at_least_one(n.ep);
    case ShapeRule::kEpPartialNodes:
    case ShapeRule::kEpSplitsNode:
    case ShapeRule::kEpNotNested:
    case ShapeRule::kEpDoesNotTile:
    case ShapeRule::kEpNotWholeRanks: {
      const std::uint32_t E = *s.ep;
      const std::string ep = std::string(n.ep) + " " + to_string(E);
      if (rule == ShapeRule::kEpNotWholeRanks) {
        const std::string ranks(n.ranks), k = to_string(K);
        return fail(ErrorCode::kUsage, ep + " with " + gpn + " and " + k + " " + ranks +
                                           " per node: an EP group would be " + to_string(E) +
                                           " x " + k + " / " + to_string(G) + " " + ranks +
                                           ", not a whole number, and " + k + " " + ranks +
                                           " do not split a node into whole EP groups");
      }
      if (rule == ShapeRule::kEpPartialNodes)
        return fail(ErrorCode::kUsage, ep + " with " + gpn +
                                           ": an EP group larger than a node must span whole "
                                           "nodes (a multiple of " +
                                           to_string(G) + ")");
      if (rule == ShapeRule::kEpSplitsNode)
        return fail(ErrorCode::kUsage,
                    ep + " with " + gpn + ": an EP group smaller than a node must divide it (" +
                        to_string(G) + " is not a multiple of " + to_string(E) + ")");
      if (rule == ShapeRule::kEpNotNested)
        return fail(ErrorCode::kUsage, ep + " with " + tp +
                                           ": EP and TP groups must nest (one size a multiple "
                                           "of the other)");
      const std::uint64_t unit = std::uint64_t{std::max(E, T)} * s.pp;
      return fail(ErrorCode::kUsage, ep + " does not tile the job: " + to_string(gpus) +
                                         " GPUs are not a multiple of " +
                                         (s.pp > 1 ? "max(TP, EP) x PP = " : "") + to_string(unit));
    }
    case ShapeRule::kTpNotWholeRanks: {
      const std::string ranks(n.ranks), k = to_string(K);
      return fail(ErrorCode::kUsage, tp + " with " + gpn + " and " + k + " " + ranks +
                                         " per node: a TP group would be " + to_string(T) + " x " +
                                         k + " / " + to_string(G) + " " + ranks +
                                         ", not a whole number, and " + k + " " + ranks +
                                         " do not split a node into whole TP groups");
    }
  }
  return fail(ErrorCode::kUsage, "invalid job shape");
}

ShapeSpec JobShape::spec() const {
  ShapeSpec s;
  s.nodes = nodes;
  s.gpus_per_node = gpus_per_node;
  if (tp) s.tp = tp;
  if (ep) s.ep = ep;
  s.pp = pp;
  if (ranks_per_node) s.ranks_per_node = ranks_per_node;
  return s;
}

}  // namespace fabricplace::placement
