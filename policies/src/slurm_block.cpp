// SPDX-License-Identifier: GPL-2.0-or-later
// slurm-block: Slurm 24.11's topology/block node selection (select/cons_tres through
// topology_p_eval_nodes -> eval_nodes_block, src/plugins/topology/block/eval_nodes_block.c,
// with the block tables of block_record.c), for whole-node jobs of equal node weight and
// CPU count and no required nodes, run on the blocks our slurm-block export writes
// (fabric/slurm_block.hpp), with or without --segment.
//
// What Slurm does (docs/placement.md, "The slurm-block baseline"), per segment (the whole
// job when there is no segment; with --segment=S the job is N / S segments placed one after
// the other, each on the nodes the earlier ones left):
//  1. Level: the job (segment) needs ceil(n / base) base blocks; its block level is the
//     smallest configured level (BlockSizes) of at least that many, none = the whole
//     fabric; the "lower-level block" (llblock) level is the largest configured level below.
//  2. Block: among the blocks of that level (2^level consecutive base blocks by position),
//     those with enough usable nodes (counting only the fullest max_llblock llblocks when
//     llblocks are smaller than the block), the one with the fewest usable nodes; a tie goes
//     to the later block.
//  3. Base blocks, one at a time (_choose_best_bblock): prefer one whose llblock is already
//     used, else an llblock that can hold the rest (the emptiest such), else the fullest;
//     then a base block that holds the rest (the emptiest such, later on ties), else the
//     fullest (later on ties). Its usable nodes are taken in index order until the segment
//     is whole. No more than max_llblock llblocks.
// The code follows Slurm's line for line, its bookkeeping included (the llblock counts are
// sorted in place and carried from one segment to the next); neither shows in a result,
// since a segment is never larger than a base block: every segment is placed on its own, in
// the base block with the fewest usable nodes that holds it (the later on a tie), wherever
// the job's other segments went. Ranks follow node index order (no BlockAsNodeRank).
#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "fabricplace/policies/policies.hpp"

namespace fabricplace::policies {
namespace {

using fabric::HostId;
using fabric::idx;
constexpr int kMaxBlockLevels = 16;  // MAX_BLOCK_LEVELS

// bit_fls_from_bit / bit_ffs_from_bit on block_levels.
int fls_from(const std::array<bool, kMaxBlockLevels>& levels, int bit) {
  for (int b = std::min(bit, kMaxBlockLevels - 1); b >= 0; --b)
    if (levels[static_cast<std::size_t>(b)]) return b;
  return -1;
}
int ffs_from(const std::array<bool, kMaxBlockLevels>& levels, int bit) {
  for (int b = std::max(bit, 0); b < kMaxBlockLevels; ++b)
    if (levels[static_cast<std::size_t>(b)]) return b;
  return -1;
}

bool same_block(int a, int b, int level) {
  return (a >> level) == (b >> level);
}

// _choose_best_bblock, line for line.
void choose_best_bblock(const std::vector<std::uint8_t>& required, int llblock_level, int rem_nodes,
                        const std::vector<std::uint32_t>& on_bblock,
                        const std::vector<std::uint32_t>* on_llblock, int i, bool& best_same,
                        bool& best_fit, int& best) {
  const int nb = static_cast<int>(required.size());
  const bool fit = static_cast<int>(on_bblock[static_cast<std::size_t>(i)]) >= rem_nodes;
  bool same = false;
  if (on_llblock && !same_block(best, i, llblock_level)) {
    const auto& ll = *on_llblock;
    for (int j = i & (~0 << llblock_level); j < nb && j <= (i | ~(~0 << llblock_level)); ++j) {
      if (!required[static_cast<std::size_t>(j)]) continue;
      if ((same = same_block(j, i, llblock_level))) break;
    }
    if (best == -1 || (same && !best_same)) {
      best = i, best_fit = fit, best_same = same;
      return;
    }
    if (!same && best_same) return;
    const auto best_cnt = ll[static_cast<std::size_t>(best >> llblock_level)];
    const auto cnt = ll[static_cast<std::size_t>(i >> llblock_level)];
    const bool ll_fit = static_cast<int>(cnt) >= rem_nodes;
    const bool best_ll_fit = static_cast<int>(best_cnt) >= rem_nodes;
    if (ll_fit && !best_ll_fit) {
      best = i, best_fit = fit, best_same = same;
      return;
    }
    if (!ll_fit && best_ll_fit) return;
    if (ll_fit && best_ll_fit) {
      if (cnt < best_cnt) {
        best = i, best_fit = fit, best_same = same;
        return;
      }
      if (cnt > best_cnt) return;
    } else {
      if (cnt > best_cnt) {
        best = i, best_fit = fit, best_same = same;
        return;
      }
      if (cnt < best_cnt) return;
    }
  }
  const auto n_i = on_bblock[static_cast<std::size_t>(i)];
  if (best == -1 || (fit && !best_fit) ||
      (!fit && !best_fit && n_i >= on_bblock[static_cast<std::size_t>(best)]) ||
      (fit && n_i <= on_bblock[static_cast<std::size_t>(best)])) {
    best = i, best_fit = fit;
  }
}

placement::Placement pending(std::string why) {
  placement::Placement p;
  p.policy = "slurm-block";
  p.reason = std::move(why);
  return p;
}

}  // namespace

placement::Placement slurm_block(const placement::Context& c, const fabric::SlurmBlocks& blocks,
                                 const placement::JobRequest& job,
                                 const placement::NodeStates& states,
                                 const placement::Traffic* traffic) {
  const auto& B = blocks.blocks;
  const int nb = static_cast<int>(B.size());
  const int base = static_cast<int>(blocks.base_size);
  const int N = static_cast<int>(job.nodes);
  if (nb == 0 || base == 0) return pending("the fabric has no blocks (no leaf with hosts)");
  std::array<bool, kMaxBlockLevels> levels{};
  for (auto size : blocks.sizes) {
    const auto k = std::lround(std::log2(size / blocks.base_size));
    if (k >= 0 && k < kMaxBlockLevels) levels[static_cast<std::size_t>(k)] = true;
  }
  // Compared unsigned: --segment 4000000000 as an int would be negative and pass.
  const std::uint32_t given = job.block_segment();
  if (given > static_cast<std::uint32_t>(base))
    return pending("--segment " + std::to_string(given) + " is larger than a base block (" +
                   std::to_string(base) +
                   " nodes, BlockSizes' first value): Slurm does not "
                   "support it (ESLURM_REQUESTED_TOPO_CONFIG_UNAVAILABLE)");
  const auto segment = static_cast<int>(given);
  if (segment && N % segment)
    return pending("--segment " + std::to_string(segment) + " does not divide the job's " +
                   std::to_string(N) + " nodes");

  const auto ok = placement::usable_hosts(c, job, states, /*healthy_only=*/false);
  std::size_t usable = 0;
  for (auto u : ok) usable += u;
  if (static_cast<int>(usable) < N)  // eval_nodes(): fewer nodes than min_nodes
    return pending("job needs " + std::to_string(N) + " nodes; only " + std::to_string(usable) +
                   " are free" + (job.exclude.empty() ? "" : " and not excluded"));
  // topo_eval->node_map by HostId: each segment starts from the usable hosts less those the
  // earlier segments took (Slurm: orig_node_map & ~alloc_node_map).
  std::vector<std::uint8_t> node_map = ok;
  std::size_t left = usable;
  const auto usable_in = [&](int i) {  // usable hosts of base block i (placeholders: none)
    std::uint32_t n = 0;
    for (HostId h : B[static_cast<std::size_t>(i)].hosts) n += node_map[idx(h)];
    return n;
  };

  int rem_nodes = N;
  int segment_cnt = 1, rem_segment_cnt = 0;
  if (segment) {
    segment_cnt = N / segment;
    rem_segment_cnt = segment_cnt;
    rem_nodes = segment;
  }
  int bblock_per_block = (rem_nodes + base - 1) / base;
  int block_level = static_cast<int>(std::ceil(std::log2(bblock_per_block)));
  const int llblock_level = block_level > 0 ? fls_from(levels, block_level - 1) : 0;
  block_level = ffs_from(levels, block_level);
  const int bblock_per_llblock = 1 << llblock_level;
  const int llblock_size = bblock_per_llblock * base;
  int max_llblock = (rem_nodes + llblock_size - 1) / llblock_size;

  std::vector<std::uint32_t> on_llblock_store;  // nodes_on_llblock: allocated once, then kept
  std::vector<std::uint8_t> required(static_cast<std::size_t>(nb), 0);
  std::vector<std::uint32_t> on_bblock(static_cast<std::size_t>(nb), 0);
  std::vector<int> bblock_block(static_cast<std::size_t>(nb), 0);
  int llblock_cnt = 0;
  int block_cnt = 0;
  std::vector<HostId> chosen, seg_hosts;

  for (;;) {  // next_segment
    if (rem_segment_cnt) {
      rem_nodes = segment;
      max_llblock = (rem_nodes + llblock_size - 1) / llblock_size;
    }
    if (left == 0)
      return pending("no usable node is left for segment " +
                     std::to_string(segment_cnt - rem_segment_cnt + 1));
    if (block_level < 0) {
      bblock_per_block = nb;
      block_cnt = 1;
    } else {
      bblock_per_block = 1 << block_level;
      block_cnt = (nb + bblock_per_block - 1) / bblock_per_block;
    }
    if (bblock_per_block != bblock_per_llblock * max_llblock && on_llblock_store.empty()) {
      llblock_cnt = (nb + bblock_per_llblock - 1) / bblock_per_llblock;
      on_llblock_store.assign(static_cast<std::size_t>(llblock_cnt), 0);
    }
    auto* on_llblock = on_llblock_store.empty() ? nullptr : &on_llblock_store;
    std::fill(required.begin(), required.end(), 0);
    for (int i = 0; i < nb; ++i) {
      bblock_block[static_cast<std::size_t>(i)] = i / bblock_per_block;
      if (on_llblock)
        (*on_llblock)[static_cast<std::size_t>(i / bblock_per_llblock)] += usable_in(i);
    }
    // Step 2: the block.
    int block_inx = -1;
    std::uint32_t block_node_cnt = 0;
    for (int b = 0; b < block_cnt; ++b) {
      std::uint32_t bnc = 0, avail_bnc = 0;
      const int first = b * bblock_per_block, last = std::min(nb, first + bblock_per_block);
      for (int i = first; i < last; ++i) bnc += usable_in(i);
      if (!on_llblock) {
        avail_bnc = bnc;
      } else {
        int per_block = bblock_per_block / bblock_per_llblock;
        const int offset = b * per_block;
        per_block = std::min(per_block, llblock_cnt - offset);
        auto* arr = on_llblock->data() + offset;
        // qsort(_cmp_bblock): descending, in place
        std::sort(arr, arr + std::max(per_block, 0), std::greater<>());
        const int top = std::min(max_llblock, per_block);
        for (int j = 0; j < top; ++j) avail_bnc += arr[j];
      }
      if (static_cast<int>(avail_bnc) < rem_nodes || bnc == 0) continue;
      // One node weight: the block with the fewest usable nodes, the later on a tie.
      if (block_inx == -1 || bnc <= block_node_cnt) {
        block_inx = b;
        block_node_cnt = bnc;
      }
    }
    if (block_inx == -1)
      return pending(
          std::string("no ") +
          (block_level < 0 ? std::string("block")
           : bblock_per_block == 1
               ? "base block (" + std::string(fabric::block_noun(blocks.kind())) + ")"
               : "block of " + std::to_string(bblock_per_block) + " base blocks") +
          " has " + std::to_string(rem_nodes) + " usable nodes" +
          (segment ? " for segment " + std::to_string(segment_cnt - rem_segment_cnt + 1) : "") +
          " (topology/block keeps a job inside one block of the smallest size that fits); "
          "Slurm would leave the job pending");
    // best_nodes_bitmap: the block's usable nodes (one weight: all of them, so no req2).
    // Not `sufficient` when they are fewer than the segment: the block passed on llblock
    // counts carried over from an earlier segment.
    if (static_cast<int>(block_node_cnt) < rem_nodes)
      return pending("the block Slurm picks has " + std::to_string(block_node_cnt) + " of " +
                     std::to_string(rem_nodes) +
                     " usable nodes; Slurm would leave the job pending");
    seg_hosts.clear();  // topo_eval->node_map after bit_clear_all: this segment's hosts
    // Step 3: recount per base block of the chosen block.
    if (on_llblock) std::fill(on_llblock->begin(), on_llblock->end(), 0);
    for (int i = 0; i < nb; ++i) {
      if (bblock_block[static_cast<std::size_t>(i)] != block_inx) continue;
      const auto cnt = usable_in(i);
      on_bblock[static_cast<std::size_t>(i)] = cnt;
      if (on_llblock) (*on_llblock)[static_cast<std::size_t>(i / bblock_per_llblock)] += cnt;
    }
    int prev_rem = rem_nodes + 1;
    bool done = false;
    while (!done) {
      int best = -1;
      bool best_fit = false, best_same = true;
      if (prev_rem == rem_nodes) break;  // stalled
      prev_rem = rem_nodes;
      for (int i = 0; i < nb; ++i) {
        if (bblock_block[static_cast<std::size_t>(i)] != block_inx) continue;
        if (required[static_cast<std::size_t>(i)]) continue;
        choose_best_bblock(required, llblock_level, rem_nodes, on_bblock, on_llblock, i, best_same,
                           best_fit, best);
      }
      if (best == -1) break;
      if (max_llblock <= 0 && !best_same) break;
      required[static_cast<std::size_t>(best)] = 1;
      // A base block is taken once per segment and its hosts are its own: none is taken twice.
      for (HostId h : B[static_cast<std::size_t>(best)].hosts) {
        if (!node_map[idx(h)]) continue;
        seg_hosts.push_back(h);
        --rem_nodes;
        if (rem_nodes <= 0) {
          done = true;
          break;
        }
      }
      if (!done && !best_same) --max_llblock;
    }
    if (rem_nodes > 0)
      return pending("the block ran out after " + std::to_string(chosen.size() + seg_hosts.size()) +
                     " of " + std::to_string(N) + " nodes (Slurm's limit on lower-level blocks)");
    for (HostId h : seg_hosts) node_map[idx(h)] = 0;  // the next segment's map
    left -= seg_hosts.size();
    chosen.insert(chosen.end(), seg_hosts.begin(), seg_hosts.end());
    if (!rem_segment_cnt || --rem_segment_cnt == 0) break;
  }
  std::sort(chosen.begin(), chosen.end(), [](HostId a, HostId b) { return idx(a) < idx(b); });
  return placement::evaluate(c, job, states, std::move(chosen), "slurm-block", traffic);
}

}  // namespace fabricplace::policies
