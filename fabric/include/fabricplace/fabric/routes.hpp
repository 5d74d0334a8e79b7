// Static unicast routes between hosts: which port every switch forwards a host's traffic to,
// as the subnet manager programmed it.
//
// Two sources, one table:
// - ftree_routes(): the routes opensm's fat-tree engine (`-R ftree`) computes for a fat-tree,
//   modelled from its algorithm (docs/simulator.md): destinations in ftree order, each
//   leaf-to-spine port group's least-loaded port, and so on. On the shared ftree fabric it
//   reproduces opensm's dump for every (source, destination) pair (tests/sim).
// - lft_routes(): the exact tables of an opensm LFT dump (`opensm -D 0x43 --dump_files_dir`,
//   opensm-lfts.dump) over a fabric read from an ibnetdiscover dump taken after the SM
//   assigned LIDs.
//
// Contract
// - Routes are for single-rail fabrics: a host sends and receives through its first
//   connected HCA port (rail-optimised fabrics are refused with kUnsupported).
// - A directed link is 2 * LinkId + 0 for traffic from link.a to link.b, + 1 the other way.
// - The table holds one port per (switch, destination host): memory is switches x hosts x
//   2 bytes (1,280 switches x 16,384 hosts = 42 MB).
// - Immutable once built; path() may be called from several threads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fabricplace/common/error.hpp"
#include "fabricplace/fabric/fabric.hpp"

namespace fabricplace::fabric {

using DirLink = std::uint32_t;
inline DirLink dir_link(const Fabric& f, PortId from) {
  const auto l = f.port(from).link;
  return 2 * idx(l) + (f.link(l).a == from ? 0u : 1u);
}

class Routes {
 public:
  /// "ftree model" or "LFT dump <file>".
  [[nodiscard]] const std::string& source() const { return source_; }
  [[nodiscard]] const Fabric& fabric() const { return *fabric_; }

  /// The port switch `sw` forwards traffic for host `dst` to (0: no route).
  [[nodiscard]] PortNum out_port(NodeId sw, HostId dst) const {
    return table_[std::size_t{sw_index_[idx(sw)]} * num_hosts_ + idx(dst)];
  }
  /// Appends the directed links from host `src` to host `dst` (empty when src == dst);
  /// false when the tables have no route (a hole, a loop) for the pair.
  bool path(HostId src, HostId dst, std::vector<DirLink>& out) const;
  /// The HCA port a host sends and receives through.
  [[nodiscard]] PortId host_port(HostId h) const { return host_port_[idx(h)]; }

 private:
  friend Result<Routes> ftree_routes(const Fabric& f);
  friend Result<Routes> lft_routes(const Fabric& f, std::string_view text, const std::string& file);
  static Result<Routes> empty_for(const Fabric& f, std::string source);
  PortNum& at(NodeId sw, HostId dst) {
    return table_[std::size_t{sw_index_[idx(sw)]} * num_hosts_ + idx(dst)];
  }

  const Fabric* fabric_ = nullptr;
  std::string source_;
  std::size_t num_hosts_ = 0;
  std::vector<std::uint32_t> sw_index_;    ///< per node: dense switch index (kNone for CAs)
  std::vector<PortNum> table_;             ///< switches x hosts
  std::vector<PortId> host_port_;          ///< per host: its HCA port
  std::vector<std::uint32_t> port_begin_;  ///< per switch index: its slice of port_by_num_
  std::vector<PortId> port_by_num_;        ///< switch ports by number (kNone: no such port)
};

/// The routes of opensm's ftree engine for a fat-tree (kUnsupported when the fabric is not
/// one ftree would route: rail-optimised, or hosts not all on leaves of the lowest level).
Result<Routes> ftree_routes(const Fabric& f);
/// The routes of an opensm LFT dump. Errors name the file and line: a switch the fabric
/// lacks, a port it does not have; destinations without an entry are holes that path()
/// reports.
Result<Routes> lft_routes(const Fabric& f, std::string_view text, const std::string& file);

}  // namespace fabricplace::fabric
