// SPDX-License-Identifier: GPL-2.0-or-later
// fill(): the fabric policy's greedy fill of a scope's blocks (policies/src/fabric.cpp,
// docs/placement.md "The search"). Internal to the policies library; its own unit so that
// tests/placement/test_fill_reference.cpp can hold it to a plain reference.
#pragma once

#include <cstdint>
#include <vector>

namespace fabricplace::policies::detail {

using Set = std::vector<std::uint32_t>;  // block indices, ascending

// Blocks by cost (Search::rank), and each block's place in that order.
struct Ranking {
  std::vector<std::uint32_t> blocks;
  std::vector<std::uint32_t> at;  // per block: its index in `blocks` (kNone: not there)
};

// Fills of more blocks than this find their greedy steps through per-pod lists; fewer scan.
constexpr std::uint32_t kFillLists = 64;
// Fills of more blocks than this find their swaps through per-capacity lists; fewer scan.
constexpr std::uint32_t kSwapLists = 16;

// Greedy fill of exactly L blocks from `order` (eligible blocks sorted by capacity
// descending, then index) covering G groups; empty when impossible. A block of a pod not
// yet used costs that pod's `pod_cost` more. `ranked`: the blocks with capacity (every block
// of `order`) by cost ascending, then capacity descending, then index (Search::rank), so
// that its blocks of `order` come by cost and, on equal cost, in `order`'s own order.
// `lists_above`, `swap_lists_above`: the numbers of blocks above which the per-pod and the
// per-capacity lists are used (tests pass 0 to drive them on small inputs); the sets are the
// same either way.
Set fill(const std::vector<std::uint32_t>& order, const std::vector<std::uint32_t>& cap,
         const std::vector<double>& cost, const Ranking& ranked,
         const std::vector<std::uint32_t>& pod, const std::vector<double>& pod_cost,
         std::uint32_t L, std::uint32_t G,
         std::uint32_t lists_above = kFillLists, std::uint32_t swap_lists_above = kSwapLists);

}  // namespace fabricplace::policies::detail
