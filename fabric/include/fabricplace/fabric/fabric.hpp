// SPDX-License-Identifier: GPL-2.0-or-later
// The fabric graph: an immutable value built by FabricBuilder (builder.hpp).
//
// Contract
// - Identity: every node has a GUID; nodes are stored sorted by GUID, ports by (node, port
//   number), links by their lower end, hosts by natural name order. Dense typed ids
//   (NodeId, PortId, LinkId, HostId) index these arrays; GUIDs, LIDs and names are physical
//   identity, kept separately. Same input -> same ids -> byte-identical outputs.
// - Hosts are the CAs grouped by the hostname in their node description
//   ("node001 mlx5_3" -> host "node001", device "mlx5_3").
// - Classification (levels, leaves, pods, rails, oversubscription, degraded links,
//   components) is computed once by the builder and read through topology().
// - A Fabric is never modified after build(); share it as std::shared_ptr<const Fabric>.
//   All const member functions are safe to call from several threads.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "fabricplace/fabric/link_rate.hpp"

namespace fabricplace::fabric {

using Guid = std::uint64_t;
/// A port number. InfiniBand stops at 254 (dump parsers enforce it); sources without IB
/// identity (topology.conf, tiers CSV) may hang more hosts under one switch.
using PortNum = std::uint16_t;
inline constexpr PortNum kMaxIbPort = 254;

enum class NodeId : std::uint32_t {};
enum class PortId : std::uint32_t {};
enum class LinkId : std::uint32_t {};
enum class HostId : std::uint32_t {};

template <class Id>
constexpr std::uint32_t idx(Id id) {
  return static_cast<std::uint32_t>(id);
}
inline constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
inline constexpr NodeId kNoNode{kNone};
inline constexpr LinkId kNoLink{kNone};
inline constexpr HostId kNoHost{kNone};

enum class NodeType : std::uint8_t { kSwitch, kCa, kRouter };
std::string_view to_string(NodeType type);  ///< "switch", "ca", "router"

/// A node as discovered (NodeInfo + NodeDescription).
struct NodeRecord {
  Guid guid = 0;
  NodeType type = NodeType::kCa;
  std::string description;
  PortNum num_ports = 0;  ///< NodeInfo.NumPorts (0 when the source does not say)
  std::uint32_t vendor_id = 0;
  std::uint32_t device_id = 0;
  Guid system_image_guid = 0;
  std::uint16_t lid = 0;        ///< switches: port 0 LID
  std::uint8_t lmc = 0;         ///< switches: port 0 LMC
  bool enhanced_port0 = false;  ///< switches: enhanced switch port 0

  friend bool operator==(const NodeRecord&, const NodeRecord&) = default;
};

/// A physical port. Switch ports carry the switch's port-0 GUID and LID.
struct PortRecord {
  PortNum number = 0;
  Guid guid = 0;
  std::uint16_t lid = 0;
  std::uint8_t lmc = 0;

  friend bool operator==(const PortRecord&, const PortRecord&) = default;
};

/// The error counters of the PortCounters attribute (IBA 16.1.3.5), named as perfquery
/// names them. Read on demand (`fabric discover --counters`).
enum class Counter : std::uint8_t {
  kSymbolErrorCounter,
  kLinkErrorRecoveryCounter,
  kLinkDownedCounter,
  kPortRcvErrors,
  kPortRcvRemotePhysicalErrors,
  kPortRcvSwitchRelayErrors,
  kPortXmitDiscards,
  kPortXmitConstraintErrors,
  kPortRcvConstraintErrors,
  kLocalLinkIntegrityErrors,
  kExcessiveBufferOverrunErrors,
  kVL15Dropped,
  kPortXmitWait,
  kCount
};
inline constexpr std::size_t kNumCounters = static_cast<std::size_t>(Counter::kCount);
std::string_view to_string(Counter c);
std::optional<Counter> parse_counter(std::string_view name);

/// What is known about a port's health beyond its rate.
struct PortHealth {
  bool has_counters = false;
  std::array<std::uint64_t, kNumCounters> counters{};
  /// Counters beyond their thresholds, as judged when they were read
  /// ("LinkDownedCounter 3 > 0").
  std::vector<std::string> problems;
  /// A down port that was linked in the previous discovery: to what (0 = nothing known). The
  /// old peer may be gone (a host powered off), so its description and type are kept too.
  Guid was_linked_to = 0;
  PortNum was_linked_port = 0;
  std::string was_linked_desc;
  NodeType was_linked_type = NodeType::kSwitch;

  [[nodiscard]] bool empty() const {
    return !has_counters && problems.empty() && was_linked_to == 0;
  }
  friend bool operator==(const PortHealth&, const PortHealth&) = default;
};

struct Port {
  NodeId node;
  PortRecord rec;
  LinkId link = kNoLink;  ///< kNoLink: port known but down (no peer)
  PortHealth health;
};

/// Values of a link that its source did not read but assumed: a topology.conf or tiers CSV
/// without link truth (docs/sources.md). Sources that read links (dumps, discovery, specs)
/// assume nothing.
struct Assumed {
  bool rate = false;   ///< the rate is --link-speed (or the source's default), not read
  bool count = false;  ///< the number of parallel links between its two switches is assumed (1)

  [[nodiscard]] bool any() const { return rate || count; }
  friend bool operator==(const Assumed&, const Assumed&) = default;
};

struct Link {
  PortId a, b;  ///< a is the end with the smaller (GUID, port)
  NodeId node_a, node_b;
  LinkRate rate;
  Assumed assumed;
};

/// What the links carry: InfiniBand, or Ethernet (RoCE). A fabric's link layer is that of its
/// rates: Ethernet when its links have Ethernet rates ("400GbE"), else InfiniBand.
enum class LinkLayer : std::uint8_t { kInfiniBand, kEthernet };
std::string_view to_string(LinkLayer layer);  ///< "infiniband", "ethernet"

struct Host {
  std::string name;
  std::vector<NodeId> hcas;  ///< CAs of this host, in natural order of their device names
};

/// An accelerator (NVLink) domain: hosts whose GPUs reach each other over NVLink switches
/// (a GB200/GB300 NVL72 rack: 18 hosts of 4 GPUs). A level between host and leaf: a domain
/// may sit under one leaf or span several leaves' hosts (docs/fabric-model.md, Domains).
/// Sources give it; classification does not derive it.
/// The most GPUs a host of a domain may have, whatever the source (nvidia-smi output, a
/// spec's gpus=, the JSON's gpus_per_host): NVL72 hosts have 4, the largest nodes sold 16.
inline constexpr std::uint32_t kMaxGpusPerHost = 1024;

struct Domain {
  /// "nvl01" (specs), the tiers CSV's `domain` value, or nvidia-smi's ClusterUUID.CliqueId.
  std::string name;
  std::vector<HostId> hosts;        ///< ascending (natural host order)
  std::uint32_t gpus_per_host = 0;  ///< GPUs of each host in the domain; 0: not known
};

/// What classification found (see docs/fabric-model.md for the definitions).
struct Topology {
  /// Switch level = 1 + hops to the nearest CA (leaf 1, spine 2, core 3, ...); 0 for CAs,
  /// routers and switches with no path to any CA.
  std::vector<std::uint8_t> level;
  std::uint8_t max_level = 0;
  std::vector<NodeId> leaves;  ///< level-1 switches, ascending GUID
  /// Switch name for Slurm and humans ("leaf01" from "MF0;leaf01:MQM8700/U1"); unique,
  /// Slurm-safe. Empty for non-switches.
  std::vector<std::string> switch_name;
  /// Leaves each host reaches through its HCAs (ascending NodeId); one per host on a
  /// single-rail fabric, one per rail on a rail-optimised one.
  std::vector<std::vector<NodeId>> host_leaves;
  /// Leaf each CA's first connected port reaches (kNoNode for a CA with no link).
  std::vector<NodeId> ca_leaf;
  /// Per host: the leaf of its first connected HCA (device order); kNoNode if none. This is
  /// where a dual-homed host of a single-rail fabric is placed.
  std::vector<NodeId> host_leaf;

  /// Pods: leaves under one set of spines (2- and 3-level trees: connected parts of the
  /// leaf+spine layer); on rail-optimised fabrics the rail group / scalable unit. Numbered
  /// by their first leaf in GUID order.
  struct Pod {
    std::vector<NodeId> leaves;
    std::vector<NodeId> spines;  ///< upper-level switches whose leaves all lie in this pod
    std::vector<HostId> hosts;
  };
  std::vector<Pod> pods;
  std::vector<std::uint32_t> node_pod;  ///< per node: pod index, kNone if none
  std::vector<std::uint32_t> host_pod;  ///< per host: pod index, kNone if none

  bool rail_optimised = false;  ///< some host reaches several leaves
  /// Rails (rail-optimised fabrics only): rail k = the leaves that HCA device k (in
  /// natural order of device names, e.g. mlx5_0..mlx5_7) of every host reaches.
  struct Rail {
    std::string device;
    std::vector<NodeId> leaves;
  };
  std::vector<Rail> rails;
  std::vector<std::uint32_t> node_rail;  ///< per node: rail index, kNone if none

  /// Links and the link layer (Ethernet when the links have Ethernet rates).
  LinkLayer link_layer = LinkLayer::kInfiniBand;

  struct LeafStats {
    NodeId leaf;
    std::uint32_t hosts = 0;       ///< hosts with an HCA on this leaf
    std::uint32_t down_links = 0;  ///< links to CAs
    std::uint32_t up_links = 0;    ///< links to higher-level switches
    double down_gbps = 0, up_gbps = 0;
    /// down_gbps / up_gbps; +infinity when the leaf has no uplink.
    double oversubscription = 0;
    bool assumed = false;  ///< a link counted has an assumed rate or count
  };
  std::vector<LeafStats> leaf_stats;  ///< parallel to `leaves`
  /// Switches above the leaves that have uplinks (spine to core, ...): bandwidth from the
  /// level below : bandwidth to the level above.
  struct SwitchStats {
    NodeId node;
    std::uint32_t down_links = 0;  ///< links to switches one level down
    std::uint32_t up_links = 0;    ///< links to higher-level switches
    double down_gbps = 0, up_gbps = 0;
    double oversubscription = 0;  ///< down_gbps / up_gbps
    bool assumed = false;
  };
  std::vector<SwitchStats> switch_stats;  ///< ascending level, then GUID
  /// Pods with links out of the pod to a higher level (3-level trees: to the core; rail
  /// groups: to the shared spines): the bandwidth of the pod's hosts : the pod's uplinks.
  struct PodStats {
    std::uint32_t pod = 0;         ///< index into `pods`
    std::uint32_t host_links = 0;  ///< links between the pod's leaves and CAs
    std::uint32_t up_links = 0;    ///< links from pod switches to higher switches outside it
    double host_gbps = 0, up_gbps = 0;
    double oversubscription = 0;  ///< host_gbps / up_gbps
    bool assumed = false;
  };
  std::vector<PodStats> pod_stats;  ///< ascending pod

  /// Tier = the pair of levels a link joins (0 = CA/router): 0-1 host links, 1-2
  /// leaf-spine, 2-3 spine-core. Nominal = most common width and speed in the tier.
  /// Level used for routers in tiers, so router links form a tier of their own.
  static constexpr std::uint8_t kRouterTier = 255;
  struct Tier {
    std::uint8_t lower = 0, upper = 0;
    LinkRate nominal;
    std::uint32_t links = 0;
    std::uint32_t degraded = 0;
    std::uint32_t assumed = 0;  ///< links with an assumed rate or count
  };
  std::vector<Tier> tiers;
  struct Degraded {
    LinkId link;
    LinkRate nominal;
    std::string reason;  ///< "width 1x < 4x", "speed EDR < HDR", "rate unknown"
  };
  std::vector<Degraded> degraded_links;

  /// Connected parts of the whole fabric (separate subnets, e.g. rail planes).
  std::vector<std::uint32_t> node_component;
  std::uint32_t num_components = 0;
  /// Hosts whose HCAs reach a different set of connected parts than most hosts do (cut
  /// off from the main fabric, or from some of its planes).
  std::vector<HostId> split_hosts;

  /// Links with a port whose error counters passed their thresholds.
  struct Unhealthy {
    LinkId link;
    std::vector<std::string> problems;  ///< "leaf01[21]: LinkDownedCounter 3 > 0"
  };
  std::vector<Unhealthy> unhealthy_links;
  /// Down ports that were linked in the previous discovery (a cable out, a port off).
  std::vector<PortId> lost_links;

  /// The source could not see everything (a discovery with dropped MADs published anyway,
  /// with --allow-partial); what was missing. Empty for complete fabrics.
  std::vector<std::string> incomplete;

  std::vector<std::string> warnings;
};

class Fabric {
 public:
  [[nodiscard]] std::size_t num_nodes() const { return nodes_.size(); }
  [[nodiscard]] std::size_t num_ports() const { return ports_.size(); }
  [[nodiscard]] std::size_t num_links() const { return links_.size(); }
  [[nodiscard]] std::size_t num_hosts() const { return hosts_.size(); }

  [[nodiscard]] const NodeRecord& node(NodeId id) const { return nodes_[idx(id)]; }
  [[nodiscard]] const Port& port(PortId id) const { return ports_[idx(id)]; }
  [[nodiscard]] const Link& link(LinkId id) const { return links_[idx(id)]; }
  [[nodiscard]] const Host& host(HostId id) const { return hosts_[idx(id)]; }

  [[nodiscard]] std::span<const NodeRecord> nodes() const { return nodes_; }
  [[nodiscard]] std::span<const Port> ports() const { return ports_; }
  [[nodiscard]] std::span<const Link> links() const { return links_; }
  [[nodiscard]] std::span<const Host> hosts() const { return hosts_; }

  /// Ports of a node, in port-number order.
  [[nodiscard]] std::span<const Port> ports_of(NodeId id) const;
  [[nodiscard]] PortId first_port(NodeId id) const { return PortId{port_begin_[idx(id)]}; }
  /// The node at the other end of a port's link (kNoNode when the port is down).
  [[nodiscard]] NodeId peer_node(PortId id) const;
  [[nodiscard]] PortId peer_port(PortId id) const;

  [[nodiscard]] std::span<const NodeId> switches() const { return switches_; }
  [[nodiscard]] std::span<const NodeId> cas() const { return cas_; }

  [[nodiscard]] std::optional<NodeId> find_guid(Guid guid) const;
  [[nodiscard]] std::optional<HostId> find_host(std::string_view name) const;
  /// The switch named `name` (Topology::switch_name).
  [[nodiscard]] std::optional<NodeId> find_switch(std::string_view name) const;
  /// Host of a CA; kNoHost for switches and routers.
  [[nodiscard]] HostId host_of(NodeId id) const { return node_host_[idx(id)]; }

  /// Accelerator (NVLink) domains, ordered by their first host; empty when the fabric has
  /// none.
  [[nodiscard]] std::span<const Domain> domains() const { return domains_; }
  [[nodiscard]] bool has_domains() const { return !domains_.empty(); }
  /// The domain of a host (index into domains()); kNone when it is in none.
  [[nodiscard]] std::uint32_t domain_of(HostId h) const {
    return host_domain_.empty() ? kNone : host_domain_[idx(h)];
  }
  [[nodiscard]] std::optional<std::uint32_t> find_domain(std::string_view name) const;

  [[nodiscard]] const Topology& topology() const { return topo_; }
  /// InfiniBand, or Ethernet when the links have Ethernet rates (Topology::link_layer).
  [[nodiscard]] LinkLayer link_layer() const { return topo_.link_layer; }
  /// Where the fabric came from ("ibnetdiscover fat2.txt", "spec fat2:leaves=8"); kept by
  /// the canonical JSON.
  [[nodiscard]] const std::string& origin() const { return origin_; }

  /// Checks every invariant of the model; returns one line per violation (empty = valid).
  /// Tests run it on every fabric they build (hwloc's habit).
  [[nodiscard]] std::vector<std::string> check() const;

 private:
  friend class FabricBuilder;
  Fabric() = default;

  std::string origin_;
  std::vector<NodeRecord> nodes_;
  std::vector<std::uint32_t> port_begin_;  // CSR: ports of node i are [begin[i], begin[i+1])
  std::vector<Port> ports_;
  std::vector<Link> links_;
  std::vector<Host> hosts_;
  std::vector<HostId> node_host_;
  std::vector<NodeId> switches_, cas_;
  std::unordered_map<Guid, NodeId> by_guid_;
  std::unordered_map<std::string, HostId> by_host_;
  std::unordered_map<std::string, NodeId> by_switch_name_;
  std::vector<Domain> domains_;
  std::vector<std::uint32_t> host_domain_;  // per host; empty when there are no domains
  Topology topo_;
};

/// A port as reports name it: the switch's name (Topology::switch_name) or, for CAs and
/// routers, the node description, then the port number: "leaf01[21]", "node001 mlx5_0[1]".
std::string port_name(const Fabric& f, PortId p);

/// Hostname and device of a CA node description: "node001 mlx5_3" -> {"node001", "mlx5_3"}.
/// A description without a blank is all hostname; a domain is dropped
/// ("node001.example.org mlx5_0" -> "node001"), an IPv4 address kept whole.
std::pair<std::string_view, std::string_view> split_ca_description(std::string_view desc);

/// What a domain name may be: 1 to kMaxDomainName bytes of letters, digits and . _ : -
/// (nvidia-smi's ClusterUUID.CliqueId is 38 to 42 of them). Empty when `name` is one, else
/// what is wrong, for a message.
inline constexpr std::size_t kMaxDomainName = 128;
/// The GPUs per host the fabric's NVLink domains state, when they all state one and the same
/// count (Domain::gpus_per_host); nothing otherwise (no domains, a count not known, several).
std::optional<std::uint32_t> domain_gpus(const Fabric& f);
std::string domain_name_problem(std::string_view name);

}  // namespace fabricplace::fabric
