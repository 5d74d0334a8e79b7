// SPDX-License-Identifier: GPL-2.0-or-later
// Static unicast forwarding tables: which port every switch forwards each destination's
// traffic to, as a subnet manager programs them (one path per source and destination).
//
// Builders, one table type:
// - ftree_routes(): opensm's fat-tree engine (`-R ftree`), modelled from its algorithm
//   (docs/routes.md); reproduces opensm's dumps entry for entry (tests/routes).
// - minhop_routes(), updn_routes(): opensm's `-R minhop` and `-R updn` engines, modelled the
//   same way (docs/opensm-engines.md).
// - lft_routes(): the exact tables of an opensm LFT dump (`opensm -D 0x43
//   --dump_files_dir`, opensm-lfts.dump) over a fabric read from an ibnetdiscover dump taken
//   after the SM assigned LIDs.
//
// Contract
// - Destinations are end ports: every linked port of a host's HCAs, host by host (natural
//   name order), each host's HCAs in device order, each HCA's ports in port order. A
//   single-rail host has one end port; a rail-optimised host one per rail.
// - A directed link is 2 * LinkId + 0 for traffic from link.a to link.b, + 1 the other way.
// - The table holds one port per (switch, destination): switches x end ports x 2 bytes
//   (1,280 switches x 16,384 end ports = 42 MB); a table beyond kMaxTableBytes is refused.
// - Immutable once built (set() is for builders); path() may be called from several threads.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fabricplace/common/error.hpp"
#include "fabricplace/fabric/fabric.hpp"

namespace fabricplace::routes {

using fabric::Fabric;
using fabric::HostId;
using fabric::idx;
using fabric::kNone;
using fabric::NodeId;
using fabric::PortId;
using fabric::PortNum;

/// A link in one direction: 2 * LinkId, + 1 for traffic from link.b to link.a.
using DirLink = std::uint32_t;
/// The directed link leaving port `from`.
inline DirLink dir_link(const Fabric& f, PortId from) {
  const auto l = f.port(from).link;
  return 2 * idx(l) + (f.link(l).a == from ? 0u : 1u);
}
/// Whether both ends of directed link `d` are switches.
bool switch_to_switch(const Fabric& f, DirLink d);
/// A readable name: "leaf01[21] -> spine02[5]".
std::string dir_link_name(const Fabric& f, DirLink d);

/// Capacity per link (LinkId), Gb/s, as the route models count it: a link of unknown rate
/// counts at the fastest known rate (all at 1 when no rate is known).
std::vector<double> link_gbps(const Fabric& f);

/// Largest static table built (switches x end ports x 2 bytes): 1 GiB.
inline constexpr std::uint64_t kMaxTableBytes = std::uint64_t{1} << 30;

/// The end ports of a fabric's hosts (see Contract): the destinations of every route model.
class Ends {
 public:
  explicit Ends(const Fabric& f);
  [[nodiscard]] std::uint32_t size() const { return static_cast<std::uint32_t>(port_.size()); }
  /// End index of a port (kNone: not an end port).
  [[nodiscard]] std::uint32_t of_port(PortId p) const { return of_port_[idx(p)]; }
  [[nodiscard]] PortId port(std::uint32_t end) const { return port_[end]; }
  [[nodiscard]] HostId host(std::uint32_t end) const { return host_[end]; }
  /// The end indices of host h, in rail order (empty: the host has no linked HCA port).
  [[nodiscard]] std::span<const std::uint32_t> of_host(HostId h) const {
    return {ends_.data() + begin_[idx(h)], ends_.data() + begin_[idx(h) + 1]};
  }

 private:
  std::vector<std::uint32_t> of_port_;
  std::vector<PortId> port_;
  std::vector<HostId> host_;
  std::vector<std::uint32_t> begin_, ends_;
};

class Table {
 public:
  /// An empty table (every entry 0: no route) for `f`; kUnsupported beyond kMaxTableBytes.
  static Result<Table> empty_for(const Fabric& f, std::string source);
  /// What a table for `f` takes: switches x end ports x 2 bytes.
  static std::uint64_t bytes_for(const Fabric& f);

  /// What built it: "opensm's ftree engine, modelled", "opensm LFT dump FILE".
  [[nodiscard]] const std::string& source() const { return source_; }
  [[nodiscard]] const Fabric& fabric() const { return *fabric_; }
  [[nodiscard]] const Ends& ends() const { return ends_; }

  /// The port switch `sw` forwards traffic for end `dst` to (0: no route).
  [[nodiscard]] PortNum out_port(NodeId sw, std::uint32_t dst) const {
    return table_[entry(sw_index_[idx(sw)], dst)];
  }
  /// The port switch `sw` forwards traffic for host `dst`'s first end port to.
  [[nodiscard]] PortNum out_port(NodeId sw, HostId dst) const;
  void set(NodeId sw, std::uint32_t dst, PortNum port) {
    table_[entry(sw_index_[idx(sw)], dst)] = port;
  }
  /// Switch `sw`'s entries, one per end port (for builders: set() without the lookup).
  [[nodiscard]] std::span<PortNum> row(NodeId sw) {
    return {table_.data() + std::size_t{sw_index_[idx(sw)]} * ends_.size(), ends_.size()};
  }

  /// Appends the directed links from end `src` to end `dst` (empty when equal); false when
  /// the tables have no route (a hole, a loop) for the pair.
  bool path(std::uint32_t src, std::uint32_t dst, std::vector<DirLink>& out) const;
  /// The same between two hosts' first end ports.
  bool path(HostId src, HostId dst, std::vector<DirLink>& out) const;
  /// The first end port of a host (kNone: none).
  [[nodiscard]] PortId host_port(HostId h) const;
  /// The node end `end`'s own link reaches (its switch; kNoNode: not linked). path() goes
  /// on from there by the destination's entries alone.
  [[nodiscard]] NodeId attached(std::uint32_t end) const { return end_hop_[end].peer; }

 private:
  Table(const Fabric& f, std::string source) : fabric_(&f), source_(std::move(source)), ends_(f) {}
  /// Where switch index `si`'s entry for end `dst` is in table_.
  [[nodiscard]] std::size_t entry(std::size_t si, std::uint32_t dst) const {
    return si * ends_.size() + dst;
  }

  const Fabric* fabric_;
  std::string source_;
  Ends ends_;
  std::vector<std::uint32_t> sw_index_;    ///< per node: dense switch index (kNone for CAs)
  std::vector<PortNum> table_;             ///< switches x end ports
  /// A port as path() follows it: the directed link leaving through it and the node at its
  /// other end (kNone / kNoNode: no such port, or not linked). Compact, so that a hop reads
  /// one small record instead of the fabric's port and link records.
  struct Hop {
    DirLink link = kNone;
    NodeId peer = fabric::kNoNode;
  };
  std::vector<std::uint32_t> port_begin_;  ///< per switch index: its slice of hop_by_num_
  std::vector<Hop> hop_by_num_;            ///< switch ports by number
  std::vector<Hop> end_hop_;               ///< per end port: its own link up
  std::vector<NodeId> end_node_;           ///< per end port: its node
};

/// The routes of opensm's ftree engine for a fat-tree (kUnsupported when the fabric is not
/// one ftree would route: rail-optimised, or hosts not all on leaves of the lowest level).
Result<Table> ftree_routes(const Fabric& f);
/// The routes of opensm's minhop engine (`-R minhop`): least hops, then the port with the
/// fewest routes so far (docs/opensm-engines.md). Any fabric.
Result<Table> minhop_routes(const Fabric& f);
/// The routes of opensm's updn engine (`-R updn`): minhop over up*/down* paths from the roots
/// it finds (docs/opensm-engines.md). kUnsupported where opensm finds no root (it then
/// falls back to minhop).
Result<Table> updn_routes(const Fabric& f);
/// The root switches opensm's updn engine finds (ascending GUID); kUnsupported as for
/// updn_routes when there is none.
Result<std::vector<NodeId>> updn_roots(const Fabric& f);
/// The routes of an opensm LFT dump. Errors name the file and line: a switch the fabric
/// lacks, a port it does not have; destinations without an entry are holes that path()
/// reports.
Result<Table> lft_routes(const Fabric& f, std::string_view text, const std::string& file);

}  // namespace fabricplace::routes
