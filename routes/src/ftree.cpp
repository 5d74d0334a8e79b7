// SPDX-License-Identifier: GPL-2.0-or-later
// opensm's fat-tree routing engine (opensm/osm_ucast_ftree.c, 3.3.23; unchanged since),
// modelled step by step for the default options: no root, compute-node or I/O GUID files,
// LMC 0, every CA port a compute node. Only the host entries of the forwarding tables are
// kept; the switch LIDs ftree routes afterwards change none of them.
//
// The order of every step matters to reproduce opensm's tables exactly (tests/sim compare
// them with opensm's own dumps on 2- and 3-level and oversubscribed trees):
// - "GUID order" is opensm's table order: GUIDs compared with their last byte most
//   significant (cl_qmap keys are network-order GUIDs read as little-endian integers).
// - Group lists are re-sorted with opensm's bubble sort and comparators (one of which is not
//   a strict weak order, so std::sort would differ), and groups are referred to by identity,
//   not position, exactly as opensm's pointers are.
// - Destinations are routed leaf by leaf (leaves in index-tuple order, hosts in port order),
//   each followed by "dummy" destinations up to the fullest leaf's count, which update the
//   load counters like real ones.
//
// Cost: opensm keeps a hop and a port matrix (switches x LIDs) and walks every destination
// over every switch. Each destination only ever reads and writes its own column, so the
// model keeps one column (a switch's hop count and port for the destination being routed)
// and writes it to the table when the destination is done, in batches of destinations so
// the switch-major table is written a cache line at a time. And where no switch has sibling
// links (every fat-tree opensm's ftree routes, in practice), a down pass of
// fabric_route_upgoing_by_going_down that can change nothing is skipped:
// - After a pass of switch S at hop count c, every switch below S has a hop count of at most
//   c + 1 for this destination: it had one (the switch S came up from has at most c - 1), or
//   the pass gave it c + 1.
// - Counts only fall while a destination is routed. (A count rises only where a switch has
//   a count but no port: the leaf of a dummy destination, which is never reached again
//   without sibling links, as no switch is above a leaf.)
// - So a later pass, of S or of any switch with the same switches below it (the spines of a
//   pod share its leaves), at c' >= c finds every one of them at most c' + 1 and skips them
//   all: it routes nothing, changes no counter, and returns whether the switch has a CA
//   port. The model returns that without the pass.
// - The bubble sort such a pass would start with (when its counters changed since the last
//   one) waits for the next pass that is made: only S's passes change the counters it
//   compares, and only they read the order, so it then gives the order it would have given.
// The order of everything that changes state (the bubble sorts, the counters) is opensm's.
// tests/routes/test_table_digests.cpp holds the tables of the model before these changes.
#include <algorithm>
#include <array>
#include <cstring>
#include <deque>
#include <map>
#include <set>
#include <span>

#include "fabricplace/common/strings.hpp"
#include "fabricplace/routes/table.hpp"

namespace fabricplace::routes {

using namespace fabricplace::fabric;
namespace {

constexpr std::uint8_t kNoHops = 0xFF;
constexpr std::uint16_t kNoPort = 0xFFFF;
using Tuple = std::array<std::uint8_t, 8>;
constexpr Tuple kNoTuple{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};

struct FPort {
  PortNum num = 0, rnum = 0;  // local and remote port numbers
  std::uint32_t counter_up = 0, counter_down = 0;
};

struct FGroup {
  bool remote_is_sw = false;
  std::uint32_t remote = 0;  // switch index, or destination index for a CA port
  std::span<FPort> ports;    // ascending local port number (in Ftree::ports_)
  std::uint64_t key = 0;     // the remote switch's tuple_key(), once tuples are assigned
  std::uint32_t counter_up = 0, counter_down = 0;
};

struct FSw {
  NodeId node;
  std::uint64_t key = 0;  // GUID order
  int rank = -1;          // -1: unranked
  Tuple tuple = kNoTuple;
  bool has_tuple = false;
  std::vector<std::uint32_t> down, up, sib;  // group ids
  bool is_leaf = false;
  std::uint32_t min_counter_down = 0;
  bool counter_up_changed = false;
};

std::uint64_t guid_order_key(Guid g) {
  return __builtin_bswap64(g);
}

// A tuple as a number that compares as the tuple does (lexicographically, unsigned bytes).
std::uint64_t tuple_key(const Tuple& t) {
  std::uint64_t v;
  std::memcpy(&v, t.data(), sizeof v);
  return __builtin_bswap64(v);
}

class Ftree {
 public:
  explicit Ftree(const Fabric& f) : f_(f) {}

  Result<void> build();
  /// Routes every destination and writes each one's entries into `out` (its entries for
  /// the end port of destination d, end_of_dest[d]; none where that is kNone).
  void route(Table& out, const std::vector<std::uint32_t>& end_of_dest);
  [[nodiscard]] std::uint32_t num_dests() const { return num_dests_; }
  [[nodiscard]] std::uint32_t sw_of(NodeId n) const { return sw_of_node_[idx(n)]; }
  [[nodiscard]] std::uint32_t dest_of(PortId p) const { return dest_of_port_[idx(p)]; }

 private:
  Result<void> unsupported(const std::string& why) const {
    return fail(
        ErrorCode::kUnsupported,
        "opensm's ftree engine would not route this fabric (it falls back to minhop): " + why);
  }
  [[nodiscard]] const Tuple& tuple_of(const FGroup& g) const {
    return g.remote_is_sw ? sw_[g.remote].tuple : kNoTuple;
  }
  // compare_port_groups_by_remote_switch_index: 0 unless both remotes are switches.
  [[nodiscard]] int grp_index_cmp(const FGroup& a, const FGroup& b) const {
    if (!a.remote_is_sw || !b.remote_is_sw) return 0;
    const auto ta = tuple_key(sw_[a.remote].tuple);
    const auto tb = tuple_key(sw_[b.remote].tuple);
    return ta < tb ? -1 : (tb < ta ? 1 : 0);
  }
  // grp_index_cmp once tuples are assigned (routing): from the groups' cached keys.
  [[nodiscard]] static int grp_key_cmp(const FGroup& a, const FGroup& b) {
    if (!a.remote_is_sw || !b.remote_is_sw) return 0;
    return a.key < b.key ? -1 : (b.key < a.key ? 1 : 0);
  }
  [[nodiscard]] int cmp_load_up(std::uint32_t a, std::uint32_t b) const {
    const auto& ga = groups_[a];
    const auto& gb = groups_[b];
    if (ga.counter_up > gb.counter_up) return 1;
    if (ga.counter_up < gb.counter_up) return -1;
    return grp_key_cmp(ga, gb);
  }
  [[nodiscard]] int cmp_load_down(std::uint32_t a, std::uint32_t b) const {
    const auto& ga = groups_[a];
    const auto& gb = groups_[b];
    if (ga.counter_down > gb.counter_down) return 1;
    if (ga.counter_down < gb.counter_down) return -1;
    // opensm: the remote switches' least loaded down group, then (sic) only ">" counts.
    const auto l1 = static_cast<std::int64_t>(sw_[ga.remote].min_counter_down);
    const auto l2 = static_cast<std::int64_t>(sw_[gb.remote].min_counter_down);
    if (l1 - l2 > 0) return 1;
    return grp_key_cmp(ga, gb);
  }
  template <class Cmp>
  static void bubble(std::vector<std::uint32_t>& v, Cmp cmp) {
    const std::size_t n = v.size();
    std::size_t i = 0;
    bool swapped = true;
    while (swapped) {
      swapped = false;
      for (std::size_t j = 1; j + i < n; ++j) {
        if (cmp(v[j], v[j - 1]) < 0) {
          std::swap(v[j - 1], v[j]);
          swapped = true;
        }
      }
      ++i;
    }
  }
  // The group's least loaded port, the first on a tie (a group has at least one port).
  static FPort* min_port(FGroup& g, bool up) {
    FPort* m = g.ports.data();
    if (up) {
      for (FPort& p : g.ports.subspan(1))
        if (p.counter_up < m->counter_up) m = &p;
    } else {
      for (FPort& p : g.ports.subspan(1))
        if (p.counter_down < m->counter_down) m = &p;
    }
    return m;
  }
  // prune_: whether a down pass of switch s at hop count next - 1 would change nothing
  // (top of the file).
  [[nodiscard]] bool passes_nothing(std::uint32_t s, std::uint8_t next) const {
    const std::uint32_t set = below_[s];
    return set == kNone || (covered_[set].serial == serial_ && covered_[set].hops <= next);
  }
  // opensm's hop and port matrices, the column of the destination being routed: every
  // step reads and writes only that column.
  std::uint8_t& hops(std::uint32_t s, std::uint32_t /*d*/) { return hops_[s]; }
  std::uint16_t& lft_at(std::uint32_t s, std::uint32_t /*d*/) { return lft_[s]; }
  void start_destination(std::uint16_t* lft_column);
  Tuple new_tuple(const Tuple& from, bool down) const;
  bool up_by_down(std::uint32_t s, std::uint32_t prev, std::uint32_t d, std::uint8_t cur);
  bool down_pass(std::uint32_t s, std::uint32_t prev, std::uint32_t d, std::uint8_t cur);
  bool down_pass_any(std::uint32_t s, std::uint32_t prev, std::uint32_t d, std::uint8_t cur);
  bool down_by_up(std::uint32_t s, std::uint32_t prev, std::uint32_t d, bool main,
                  std::uint8_t cur);

  const Fabric& f_;
  std::vector<FSw> sw_;
  std::vector<FGroup> groups_;
  std::vector<FPort> ports_;  // every group's ports, group after group (compact: routing
                              // walks them for every destination)
  std::vector<std::uint32_t> sw_of_node_;    // node -> switch index (kNone)
  std::vector<std::uint32_t> dest_of_port_;  // CA port -> destination index (kNone)
  std::vector<std::uint32_t> sw_order_;      // switch indices in GUID order
  std::vector<std::uint32_t> leaves_;        // leaf array (index-tuple order)
  std::set<Tuple> used_tuples_;
  std::uint32_t num_dests_ = 0, dummy_ = 0;
  std::uint32_t max_cn_per_leaf_ = 0;
  int leaf_rank_ = 0;
  std::vector<std::uint8_t> hops_;  // per switch, this destination (kNoHops: none)
  std::uint16_t* lft_ = nullptr;    // per switch, this destination (kNoPort: none)

  // Skipping passes that change nothing (see the top of the file); only without siblings.
  bool prune_ = false;
  std::vector<std::uint8_t> has_ca_down_;  // per switch: a CA group among its down groups
  std::vector<std::uint32_t> below_;       // per switch: id of its set of switches below
                                           // (kNone: none)
  struct Covered {
    std::uint32_t serial = kNone;  // the destination it is of (serial_)
    std::uint8_t hops = kNoHops;   // every switch of the set has a hop count <= this
  };
  std::vector<Covered> covered_;  // per set of switches below some switch
  std::uint32_t serial_ = 0;      // destinations (and dummies) routed so far
};

Tuple Ftree::new_tuple(const Tuple& from, bool down) const {
  Tuple t = from;
  std::size_t vi;
  if (down) {
    t[0] = static_cast<std::uint8_t>(t[0] + 1);
    vi = std::size_t{from[0]} + 1;
  } else {
    t[0] = static_cast<std::uint8_t>(t[0] - 1);
    vi = from[0];
  }
  for (int i = 0; i < 255; ++i) {
    t[vi] = static_cast<std::uint8_t>(i);
    if (!used_tuples_.contains(t)) return t;
  }
  return kNoTuple;
}

Result<void> Ftree::build() {
  const auto& f = f_;
  sw_of_node_.assign(f.num_nodes(), kNone);
  dest_of_port_.assign(f.num_ports(), kNone);
  for (NodeId n : f.switches()) {
    sw_of_node_[idx(n)] = static_cast<std::uint32_t>(sw_.size());
    FSw s;
    s.node = n;
    s.key = guid_order_key(f.node(n).guid);
    sw_.push_back(s);
  }
  std::vector<NodeId> cas(f.cas().begin(), f.cas().end());
  std::sort(cas.begin(), cas.end(), [&](NodeId a, NodeId b) {
    return guid_order_key(f.node(a).guid) < guid_order_key(f.node(b).guid);
  });
  sw_order_.resize(sw_.size());
  for (std::uint32_t i = 0; i < sw_.size(); ++i) sw_order_[i] = i;
  std::sort(sw_order_.begin(), sw_order_.end(),
            [&](std::uint32_t a, std::uint32_t b) { return sw_[a].key < sw_[b].key; });
  if (sw_.size() < 2 || cas.size() < 2) return unsupported("fewer than 2 switches or CAs");
  for (const auto& n : f.nodes()) {
    if (n.type == NodeType::kRouter) return unsupported("it has routers");
  }
  auto port_id = [&](const Port& p) {
    return PortId{static_cast<std::uint32_t>(&p - f.ports().data())};
  };

  // Ranks: BFS from the switches CAs hang on, reversed, then BFS again from the roots.
  std::deque<std::uint32_t> bfs;
  for (NodeId ca : cas) {
    for (const auto& p : f.ports_of(ca)) {
      if (p.link == kNoLink) continue;
      const NodeId r = f.peer_node(port_id(p));
      if (f.node(r).type != NodeType::kSwitch) return unsupported("a CA is linked to a CA");
      auto& s = sw_[sw_of(r)];
      if (s.rank != -1 && s.rank <= 0) continue;
      s.rank = 0;
      bfs.push_back(sw_of(r));
    }
  }
  auto run_bfs = [&]() {
    int max_rank = 0;
    while (!bfs.empty()) {
      const auto si = bfs.front();
      bfs.pop_front();
      const int cur = sw_[si].rank;
      for (const auto& p : f.ports_of(sw_[si].node)) {
        if (p.link == kNoLink) continue;
        const NodeId r = f.peer_node(port_id(p));
        if (f.node(r).type != NodeType::kSwitch) continue;
        auto& rs = sw_[sw_of(r)];
        if (rs.rank != -1 && rs.rank <= cur + 1) continue;
        rs.rank = cur + 1;
        max_rank = rs.rank;
        bfs.push_back(sw_of(r));
      }
    }
    return max_rank;
  };
  int max_rank = run_bfs();
  for (auto& s : sw_)
    if (s.rank != -1) s.rank = max_rank - s.rank;
  for (std::uint32_t si : sw_order_) {
    if (sw_[si].rank == 0) {
      bfs.push_back(si);
    } else {
      sw_[si].rank = -1;
    }
  }
  max_rank = run_bfs();
  std::size_t ranked = 0;
  for (const auto& s : sw_) ranked += s.rank != -1;
  if (max_rank == 0 && ranked > 1) return unsupported("its switches do not form levels");

  // Destinations: every connected CA port (compute nodes), plus one slot for dummies.
  for (NodeId ca : cas) {
    for (const auto& p : f.ports_of(ca)) {
      if (p.link == kNoLink) continue;
      const NodeId r = f.peer_node(port_id(p));
      if (sw_[sw_of(r)].rank == -1) continue;
      dest_of_port_[idx(port_id(p))] = num_dests_++;
    }
  }
  if (num_dests_ == 0) return unsupported("no compute node");
  dummy_ = num_dests_;

  // Groups: per switch, ports in ascending order; one group per CA port, one per neighbour
  // switch (up to a lower rank, down to a higher one, sibling at the same).
  std::vector<std::vector<FPort>> group_ports;
  for (std::uint32_t si : sw_order_) {
    auto& s = sw_[si];
    if (s.rank == -1) continue;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> by_remote;  // (remote key, group)
    for (const auto& p : f.ports_of(s.node)) {
      if (p.link == kNoLink) continue;
      const PortId pid = port_id(p);
      const NodeId r = f.peer_node(pid);
      if (r == s.node) continue;
      const PortNum rnum = f.port(f.peer_port(pid)).rec.number;
      std::vector<std::uint32_t>* list;
      bool is_sw = false;
      std::uint32_t remote;
      std::uint32_t remote_key;
      if (f.node(r).type == NodeType::kSwitch) {
        const auto ri = sw_of(r);
        if (sw_[ri].rank == -1) continue;
        is_sw = true;
        remote = ri;
        remote_key = ri;
        list = s.rank > sw_[ri].rank ? &s.up : (s.rank == sw_[ri].rank ? &s.sib : &s.down);
      } else {
        remote = dest_of(f.peer_port(pid));
        remote_key = static_cast<std::uint32_t>(sw_.size()) + remote;
        list = &s.down;
      }
      std::uint32_t g = kNone;
      for (auto& [k, gid] : by_remote)
        if (k == remote_key) g = gid;
      if (g == kNone) {
        g = static_cast<std::uint32_t>(groups_.size());
        FGroup grp;
        grp.remote_is_sw = is_sw;
        grp.remote = remote;
        groups_.push_back(grp);
        group_ports.emplace_back();
        list->push_back(g);
        by_remote.emplace_back(remote_key, g);
      }
      auto& ports = group_ports[g];
      if (std::none_of(ports.begin(), ports.end(),
                       [&](const FPort& x) { return x.num == p.rec.number; }))
        ports.push_back({p.rec.number, rnum, 0, 0});
    }
  }
  std::size_t num_ports = 0;
  for (const auto& ports : group_ports) num_ports += ports.size();
  ports_.reserve(num_ports);
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const std::size_t begin = ports_.size();
    ports_.insert(ports_.end(), group_ports[g].begin(), group_ports[g].end());
    groups_[g].ports = std::span<FPort>(ports_.data() + begin, group_ports[g].size());
  }

  leaf_rank_ = max_rank;
  if (leaf_rank_ + 1 < 2 || leaf_rank_ + 1 > 8) {
    return unsupported("a tree of " + std::to_string(leaf_rank_ + 1) +
                       " levels (ftree routes 2 to 8)");
  }
  for (NodeId ca : cas) {
    for (const auto& p : f.ports_of(ca)) {
      if (p.link == kNoLink) continue;
      auto& s = sw_[sw_of(f.peer_node(port_id(p)))];
      if (s.rank == -1 || s.is_leaf) continue;
      s.is_leaf = true;
      if (s.rank != leaf_rank_) {
        return unsupported("hosts hang on " + f.topology().switch_name[idx(s.node)] +
                           ", which is not at the leaf level");
      }
    }
  }

  // Index tuples, from the first leaf in GUID order.
  std::uint32_t first = kNone;
  for (std::uint32_t si : sw_order_)
    if (first == kNone && sw_[si].is_leaf) first = si;
  {
    Tuple t = kNoTuple;
    t[0] = static_cast<std::uint8_t>(sw_[first].rank);
    for (int i = 1; i <= leaf_rank_; ++i) t[static_cast<std::size_t>(i)] = 0;
    sw_[first].tuple = t;
    sw_[first].has_tuple = true;
    used_tuples_.insert(t);
  }
  bfs.push_back(first);
  auto by_tuple = [&](std::uint32_t a, std::uint32_t b) {
    return grp_index_cmp(groups_[a], groups_[b]) < 0;
  };
  while (!bfs.empty()) {
    const auto si = bfs.front();
    bfs.pop_front();
    if (sw_[si].rank < leaf_rank_) {
      for (std::uint32_t g : sw_[si].down) {
        if (!groups_[g].remote_is_sw) continue;
        auto& r = sw_[groups_[g].remote];
        if (r.has_tuple) continue;
        r.tuple = new_tuple(sw_[si].tuple, true);
        r.has_tuple = true;
        used_tuples_.insert(r.tuple);
        bfs.push_back(groups_[g].remote);
      }
      std::stable_sort(sw_[si].down.begin(), sw_[si].down.end(), by_tuple);
    }
    if (sw_[si].rank != 0) {
      for (std::uint32_t g : sw_[si].up) {
        auto& r = sw_[groups_[g].remote];
        if (r.has_tuple) continue;
        r.tuple = new_tuple(sw_[si].tuple, false);
        r.has_tuple = true;
        used_tuples_.insert(r.tuple);
        bfs.push_back(groups_[g].remote);
      }
      std::stable_sort(sw_[si].up.begin(), sw_[si].up.end(), by_tuple);
    }
  }

  // The leaf array: leaf-rank switches by tuple, trimmed to the first and last with hosts.
  std::vector<std::uint32_t> all;
  for (std::uint32_t si : sw_order_)
    if (sw_[si].rank == leaf_rank_) all.push_back(si);
  std::stable_sort(all.begin(), all.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return sw_[a].tuple < sw_[b].tuple; });
  std::size_t lo = all.size(), hi = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (!sw_[all[i]].is_leaf) continue;
    lo = std::min(lo, i);
    hi = i;
  }
  if (lo >= all.size() || lo >= hi) return unsupported("fewer than 2 leaves");
  leaves_.assign(all.begin() + static_cast<std::ptrdiff_t>(lo),
                 all.begin() + static_cast<std::ptrdiff_t>(hi) + 1);
  for (std::uint32_t si : leaves_) {
    std::uint32_t n = 0;
    for (std::uint32_t g : sw_[si].down) n += !groups_[g].remote_is_sw;
    max_cn_per_leaf_ = std::max(max_cn_per_leaf_, n);
  }

  // Validation: every switch of a rank like the first of that rank in GUID order.
  std::vector<std::uint32_t> ref(static_cast<std::size_t>(leaf_rank_) + 1, kNone);
  auto name = [&](std::uint32_t si) { return f.topology().switch_name[idx(sw_[si].node)]; };
  for (std::uint32_t si : sw_order_) {
    const auto& s = sw_[si];
    if (s.rank == -1) continue;
    auto& r = ref[static_cast<std::size_t>(s.rank)];
    if (r == kNone) {
      r = si;
      continue;
    }
    const auto& rs = sw_[r];
    if (rs.up.size() != s.up.size()) {
      return unsupported(name(si) + " has " + std::to_string(s.up.size()) + " up neighbours, " +
                         name(r) + " " + std::to_string(rs.up.size()));
    }
    if (s.rank != leaf_rank_ && rs.down.size() != s.down.size()) {
      return unsupported(name(si) + " has " + std::to_string(s.down.size()) + " down neighbours, " +
                         name(r) + " " + std::to_string(rs.down.size()));
    }
    if (!rs.up.empty()) {
      const auto n = groups_[rs.up[0]].ports.size();
      for (std::uint32_t g : s.up) {
        if (groups_[g].ports.size() != n) {
          return unsupported(name(si) + " has " + std::to_string(groups_[g].ports.size()) +
                             " links to an upper switch where " + name(r) + " has " +
                             std::to_string(n));
        }
      }
    }
    if (!rs.down.empty() && s.rank != leaf_rank_ && !s.down.empty() &&
        groups_[s.down[0]].ports.size() != groups_[rs.down[0]].ports.size()) {
      return unsupported(name(si) + " and " + name(r) +
                         " have different numbers of links to their first lower switch");
    }
  }
  // The sets of switches below each switch, for skipping passes that change nothing.
  prune_ = std::all_of(sw_.begin(), sw_.end(), [](const FSw& s) { return s.sib.empty(); });
  has_ca_down_.assign(sw_.size(), 0);
  below_.assign(sw_.size(), kNone);
  std::map<std::vector<std::uint32_t>, std::uint32_t> set_ids;
  std::vector<std::uint32_t> below;
  for (std::uint32_t si = 0; si < sw_.size(); ++si) {
    below.clear();
    for (std::uint32_t g : sw_[si].down) {
      if (groups_[g].remote_is_sw) {
        below.push_back(groups_[g].remote);
      } else {
        has_ca_down_[si] = 1;
      }
    }
    if (below.empty()) continue;
    std::sort(below.begin(), below.end());
    below_[si] =
        set_ids.try_emplace(below, static_cast<std::uint32_t>(set_ids.size())).first->second;
  }
  covered_.assign(set_ids.size(), Covered{});
  for (auto& g : groups_)
    if (g.remote_is_sw) g.key = tuple_key(sw_[g.remote].tuple);
  hops_.assign(sw_.size(), kNoHops);
  return {};
}

void Ftree::start_destination(std::uint16_t* lft_column) {
  lft_ = lft_column;
  std::fill(lft_, lft_ + sw_.size(), kNoPort);
  std::fill(hops_.begin(), hops_.end(), kNoHops);
  ++serial_;
}

// fabric_route_upgoing_by_going_down
bool Ftree::up_by_down(std::uint32_t si, std::uint32_t prev, std::uint32_t d, std::uint8_t cur) {
  if (sw_[si].down.empty()) return false;
  // A pass that can change nothing returns what the full pass would. Its bubble sort of the
  // down groups waits (counter_up_changed stays set) for the next pass that does change
  // something: only si's own passes change the counters that sort compares, and only they
  // read that order, so the sort then gives the order it would have given now.
  if (prune_ && passes_nothing(si, static_cast<std::uint8_t>(cur + 1)))
    return has_ca_down_[si] != 0;
  if (sw_[si].counter_up_changed) {
    bubble(sw_[si].down, [this](std::uint32_t a, std::uint32_t b) { return cmp_load_up(a, b); });
    sw_[si].counter_up_changed = false;
  }
  if (!sw_[si].sib.empty()) {
    bubble(sw_[si].sib, [this](std::uint32_t a, std::uint32_t b) { return cmp_load_up(a, b); });
  }
  bool created = false;
  if (prune_) {
    created = down_pass(si, prev, d, cur);
  } else {
    created = down_pass_any(si, prev, d, cur);
  }
  // Every switch below si now has hops <= cur + 1 for this destination (prev, skipped, has
  // at most cur - 1: it routed si at cur).
  if (prune_) {
    auto& c = covered_[below_[si]];
    if (c.serial != serial_ || cur + 1 < c.hops) c = {serial_, static_cast<std::uint8_t>(cur + 1)};
  }
  return created;
}

// The loop of fabric_route_upgoing_by_going_down where no switch has siblings (prune_): the
// same steps as down_pass_any, over si's down groups only, which no step below si reorders.
bool Ftree::down_pass(std::uint32_t si, std::uint32_t prev, std::uint32_t d, std::uint8_t cur) {
  bool created = false;
  const std::uint32_t* const list = sw_[si].down.data();
  const std::size_t n = sw_[si].down.size();
  FGroup* const groups = groups_.data();
  std::uint8_t* const hops = hops_.data();
  std::uint16_t* const lft = lft_;
  const std::uint8_t* const has_ca = has_ca_down_.data();
  const auto next = static_cast<std::uint8_t>(cur + 1);
  bool changed = false;
  for (std::size_t k = 0; k < n; ++k) {
    FGroup& g = groups[list[k]];
    if (!g.remote_is_sw) {
      created = true;
      continue;
    }
    const std::uint32_t r = g.remote;
    if (r == prev || g.ports.empty()) continue;
    const std::uint8_t lh = hops[r];
    if (lh != kNoHops && cur + 1 >= lh) continue;
    FPort* mp = min_port(g, true);
    lft[r] = mp->rnum;
    hops[r] = next;
    // up_by_down(r, .., next) itself, without the call where its pass would change nothing.
    const bool routed = passes_nothing(r, static_cast<std::uint8_t>(next + 1))
                            ? has_ca[r] != 0
                            : up_by_down(r, kNone, d, next);
    if (routed) {
      created = true;
      ++mp->counter_up;
      ++g.counter_up;
      changed = true;
    }
  }
  if (changed) sw_[si].counter_up_changed = true;
  return created;
}

// The loop of fabric_route_upgoing_by_going_down, step by step: down groups, then (for a
// real destination) sibling groups, re-read at every step (a sibling's pass may reorder
// si's lists).
bool Ftree::down_pass_any(std::uint32_t si, std::uint32_t prev, std::uint32_t d, std::uint8_t cur) {
  bool created = false;
  const std::size_t n = sw_[si].down.size() + (d != dummy_ ? sw_[si].sib.size() : 0);
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint32_t gid =
        k < sw_[si].down.size() ? sw_[si].down[k] : sw_[si].sib[k - sw_[si].down.size()];
    FGroup& g = groups_[gid];
    if (!g.remote_is_sw) {
      created = true;
      continue;
    }
    if (prev != kNone && g.remote == prev) continue;
    if (g.ports.empty()) continue;
    const std::uint32_t r = g.remote;
    const std::uint8_t lh = hops(r, d);
    if (lh != kNoHops && cur + 1 >= lh) continue;
    FPort* mp = min_port(g, true);
    lft_at(r, d) = mp->rnum;
    hops(r, d) = static_cast<std::uint8_t>(cur + 1);
    const bool routed = up_by_down(r, kNone, d, static_cast<std::uint8_t>(cur + 1));
    created |= routed;
    if (routed) {
      ++mp->counter_up;
      ++g.counter_up;
      sw_[si].counter_up_changed = true;
    }
  }
  return created;
}

// fabric_route_downgoing_by_going_up (no reverse hops)
bool Ftree::down_by_up(std::uint32_t si, std::uint32_t prev, std::uint32_t d, bool main,
                       std::uint8_t cur) {
  bool created = up_by_down(si, prev, d, cur);
  if (sw_[si].rank == 0) return created;
  bubble(sw_[si].up, [this](std::uint32_t a, std::uint32_t b) { return cmp_load_down(a, b); });
  const std::uint32_t min_gid = sw_[si].up[0];
  FPort* min_p = min_port(groups_[min_gid], false);
  if (main) {
    FGroup& mg = groups_[min_gid];
    const std::uint32_t r = mg.remote;
    ++mg.counter_down;
    ++min_p->counter_down;
    if (mg.counter_down == sw_[r].min_counter_down + 1) {
      std::uint32_t m = 1u << 30;
      for (std::uint32_t g : sw_[r].down) m = std::min(m, groups_[g].counter_down);
      sw_[r].min_counter_down = m;
    }
    if (lft_at(r, d) == kNoPort || cur + 1 < hops(r, d)) {
      lft_at(r, d) = min_p->rnum;
      hops(r, d) = static_cast<std::uint8_t>(cur + 1);
    }
    created |= down_by_up(r, si, d, main, static_cast<std::uint8_t>(cur + 1));
  }
  for (std::size_t i = main ? 1 : 0; i < sw_[si].up.size(); ++i) {
    FGroup& g = groups_[sw_[si].up[i]];
    const std::uint32_t r = g.remote;
    if (lft_at(r, d) != kNoPort && cur + 1 >= hops(r, d)) continue;
    if (g.ports.empty()) continue;
    FPort* mp = min_port(g, false);
    lft_at(r, d) = mp->rnum;
    hops(r, d) = static_cast<std::uint8_t>(cur + 1);
    created |= down_by_up(r, si, d, false, static_cast<std::uint8_t>(cur + 1));
  }
  if (!sw_[si].sib.empty()) {
    bubble(sw_[si].sib, [this](std::uint32_t a, std::uint32_t b) { return cmp_load_down(a, b); });
  }
  for (std::size_t i = 0; i < sw_[si].sib.size(); ++i) {
    FGroup& g = groups_[sw_[si].sib[i]];
    const std::uint32_t r = g.remote;
    if (lft_at(r, d) != kNoPort && cur + 1 >= hops(r, d)) continue;
    FPort* mp = min_port(g, false);
    lft_at(r, d) = mp->rnum;
    hops(r, d) = static_cast<std::uint8_t>(cur + 1);
    const bool routed = down_by_up(r, si, d, false, static_cast<std::uint8_t>(cur + 1));
    created |= routed;
    if (routed) {
      ++groups_[min_gid].counter_down;
      ++min_p->counter_down;
    }
  }
  return created;
}

void Ftree::route(Table& out, const std::vector<std::uint32_t>& end_of_dest) {
  // Finished destinations' columns wait in a batch and go to the switch-major table
  // together: each switch's entries for a batch (one leaf's hosts: neighbouring end ports)
  // share a few cache lines.
  constexpr std::size_t kBatch = 64;
  const std::size_t n = sw_.size();
  std::vector<std::uint16_t> columns(kBatch * n);
  std::vector<std::uint32_t> ends;
  std::vector<std::uint16_t> dummy_column(n);
  const auto flush = [&] {
    for (std::uint32_t s = 0; s < n; ++s) {
      const std::span<PortNum> row = out.row(sw_[s].node);
      for (std::size_t k = 0; k < ends.size(); ++k) {
        const std::uint16_t p = columns[k * n + s];
        if (p != kNoPort) row[ends[k]] = static_cast<PortNum>(p);
      }
    }
    ends.clear();
  };
  for (std::uint32_t si : leaves_) {
    std::uint32_t routed = 0;
    const std::vector<std::uint32_t> down = sw_[si].down;  // opensm walks a snapshot
    for (std::uint32_t gid : down) {
      const FGroup& g = groups_[gid];
      if (g.remote_is_sw) continue;
      const std::uint32_t d = g.remote;
      const std::uint32_t e = end_of_dest[d];
      start_destination(e == kNone ? dummy_column.data() : columns.data() + ends.size() * n);
      lft_at(si, d) = g.ports[0].num;
      hops(si, d) = 1;
      down_by_up(si, kNone, d, true, 1);
      ++routed;
      if (e == kNone) continue;
      ends.push_back(e);
      if (ends.size() == kBatch) flush();
    }
    for (std::uint32_t k = routed; k < max_cn_per_leaf_; ++k) {
      start_destination(dummy_column.data());
      hops(si, dummy_) = 1;
      down_by_up(si, kNone, dummy_, true, 1);
    }
  }
  flush();
}

}  // namespace

Result<Table> ftree_routes(const Fabric& f) {
  if (f.topology().rail_optimised) {
    return fail(ErrorCode::kUnsupported,
                "the ftree model is for single-rail fabrics; this one is rail-optimised (hosts "
                "reach several leaves)");
  }
  auto r = Table::empty_for(f, "opensm's ftree engine, modelled");
  if (!r) return r;
  Ftree ft(f);
  if (auto b = ft.build(); !b) return std::unexpected(b.error());
  const Ends& ends = r->ends();
  std::vector<std::uint32_t> end_of_dest(ft.num_dests(), kNone);
  for (std::uint32_t e = 0; e < ends.size(); ++e) {
    const std::uint32_t d = ft.dest_of(ends.port(e));
    if (d != kNone) end_of_dest[d] = e;
  }
  ft.route(*r, end_of_dest);
  return r;
}

}  // namespace fabricplace::routes
