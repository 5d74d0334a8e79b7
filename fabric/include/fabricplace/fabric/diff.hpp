// SPDX-License-Identifier: GPL-2.0-or-later
// What changed between two discoveries of a fabric: links added, removed, degraded or
// recovered; leaves whose oversubscription moved; hosts that moved between leaves; switches
// and hosts that appeared or vanished; links that became unhealthy or healthy again; NVLink
// domains added, removed or with other hosts.
// Between fabrics with InfiniBand identity, switches are matched by GUID and links by their
// two ports (port GUID and number), so names may change. When either fabric comes from a
// source without that identity (topology.conf, tiers CSV: synthetic GUIDs), switches are
// matched by name and links by the names of their ends (switch or host), a switch pair's
// parallel links together; a link count, rate or oversubscription figure that one side only
// assumes (Assumed) is not compared, and a note says how many were not.
#pragma once

#include <string>
#include <vector>

#include "fabricplace/fabric/fabric.hpp"

namespace fabricplace::fabric {

struct FabricDiff {
  struct LinkChange {
    std::string link;           ///< "leaf01[21] - spine01[1]", lower level end first
    std::string before, after;  ///< rates ("4xHDR"), empty for added/removed
  };
  std::vector<LinkChange> added, removed, degraded, recovered, rerated;
  struct LeafChange {
    std::string leaf;
    double before = 0, after = 0;  ///< oversubscription; +inf = no uplink
  };
  std::vector<LeafChange> oversubscription;
  struct HostMove {
    std::string host, before, after;  ///< leaves ("leaf01", or "su01-r0-leaf,su01-r1-leaf")
  };
  std::vector<HostMove> moved;
  std::vector<std::string> hosts_added, hosts_removed, switches_added, switches_removed;
  std::vector<std::string> unhealthy, healthy_again;  ///< "link: problem; problem"
  /// NVLink domains (by name) whose hosts changed, appeared or went: hostlists, `before`
  /// empty for a domain added, `after` empty for one removed. A repartition or a rack
  /// re-cabled changes the blocks of placement and of topology/block.
  struct DomainChange {
    std::string domain, before, after;
  };
  std::vector<DomainChange> domains;
  /// What each side says it could not see (Topology::incomplete). Removals and moves seen
  /// against an incomplete fabric may be false; the text and JSON say so first.
  std::vector<std::string> before_incomplete, after_incomplete;
  /// Links matched by names (a side without InfiniBand identity), not by GUIDs.
  bool by_name = false;
  /// How the fabrics were compared and what was not (assumed values); not changes.
  std::vector<std::string> notes;

  [[nodiscard]] bool empty() const;
};

/// GUIDs that topology.conf and tiers CSV make up: switches from kSyntheticSwitchGuids, CAs
/// from kSyntheticCaGuids (the upper 32 bits mark them).
inline constexpr Guid kSyntheticSwitchGuids = 0x0002c90000000000ULL;
inline constexpr Guid kSyntheticCaGuids = 0x0002ca0000000000ULL;
/// True when every node has a synthetic GUID: the fabric has no InfiniBand identity.
bool synthetic_identity(const Fabric& fabric);

FabricDiff diff(const Fabric& before, const Fabric& after);
/// A link as the diff names it: lower level end first, with port numbers
/// ("leaf01[21] - spine01[1]").
std::string link_name(const Fabric& f, const Link& l);
std::string diff_text(const FabricDiff& d);
std::string diff_json(const FabricDiff& d);

}  // namespace fabricplace::fabric
