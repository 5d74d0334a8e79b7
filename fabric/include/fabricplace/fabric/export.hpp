// SPDX-License-Identifier: GPL-2.0-or-later
// Writers. All are byte-stable (same fabric -> same bytes). Canonical JSON is in
// json_io.hpp and Slurm topology.conf in slurm_tree.hpp.
#pragma once

#include <string>

#include "fabricplace/common/error.hpp"
#include "fabricplace/fabric/fabric.hpp"

namespace fabricplace::fabric {

/// Graphviz DOT: switches by level (leaves at the bottom), hosts as ellipses, parallel links
/// folded into one edge labelled "N x 4xHDR", degraded links red.
std::string to_dot(const Fabric& fabric);

/// An ibsim net file. Every node carries its exact GUID (switchguid=/caguid= before each
/// record) and every port line its active rate in ibnetdiscover's comment form, which
/// ibsim (>= 0.10) turns into the port's enabled width and speed, so degraded links stay
/// degraded. Node ids are switch names and "host_dev" for HCAs; ibsim derives CA port GUIDs
/// as node GUID + port number. The header gives the exact `ibsim -N -S -P` limits.
/// NDR needs ibsim >= 0.12; XDR is not supported by ibsim.
std::string to_ibsim_net(const Fabric& fabric);

/// The fabric in plain `ibnetdiscover` output format (what read_ibnetdiscover reads).
std::string to_ibnetdiscover(const Fabric& fabric);
/// The fabric as `ibnetdiscover -p` prints it: one line per port, every link from both
/// ends, down ports with their description (what read_ibnetdiscover_ports reads). Like the
/// real thing it names CAs by port GUID and drops NodeInfo fields (vendor, device, port
/// count).
std::string to_ibnetdiscover_ports(const Fabric& fabric);

/// A tiers CSV (docs/sources.md): one row per host (host, leaf, spine[, core]) and a links
/// section stating each switch pair's link count and rate, tier-wide where the tier agrees
/// (`leaf,spine,4,4xHDR`) and per pair where it does not; values the fabric only assumes are
/// left empty. Reading it back gives the same hosts, switches, pairs, counts and rates. A
/// tiers CSV holds 2- and 3-level trees of single-homed hosts; kUnsupported names what does
/// not fit (a host on several leaves, a leaf with more spines than hosts to name them, a
/// link that skips a level). A pair whose links differ in rate is written at its most
/// common rate, with a comment.
Result<std::string> to_tiers_csv(const Fabric& fabric);

/// The InfiniBand writers (to_ibsim_net, to_ibnetdiscover) need every node to fit IB's
/// 8-bit port numbers; fabrics from topology.conf or a tiers CSV may hang more hosts under
/// one switch, and Ethernet fabrics have no InfiniBand rates. kUnsupported names the first
/// node (or Ethernet link) that does not fit.
Result<void> fits_infiniband(const Fabric& fabric);

/// Exact ibsim limits for a fabric: nodes, switches, ports (switch ports + port 0, CA ports).
struct IbsimSizes {
  std::size_t nodes = 0, switches = 0, ports = 0;
};
IbsimSizes ibsim_sizes(const Fabric& fabric);

}  // namespace fabricplace::fabric
