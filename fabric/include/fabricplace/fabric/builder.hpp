// SPDX-License-Identifier: GPL-2.0-or-later
// FabricBuilder: the one way to make a Fabric. Every source (ibnetdiscover dumps, canonical
// JSON, Slurm topology.conf, tiers CSV, synthetic specs, libibnetdisc) feeds one.
//
// Nodes are identified by GUID. Adding a node twice with different attributes, or linking a
// port that is already linked elsewhere, is an error; repeating an identical node or link is
// not (ibnetdiscover lists every link from both ends, and merging rail planes meets the
// same node again). build() sorts everything into the deterministic order described in
// fabric.hpp, then classifies.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "fabricplace/common/error.hpp"
#include "fabricplace/fabric/fabric.hpp"

namespace fabricplace::fabric {

class FabricBuilder {
 public:
  explicit FabricBuilder(std::string origin = {});

  /// Adds a node. An existing GUID is accepted when the record is identical (merge), or
  /// when one of the two records is a placeholder (description empty, no ports known):
  /// the fuller record wins. Otherwise kDuplicate.
  Result<void> add_node(const NodeRecord& node);
  /// Declares a port and its attributes (port GUID, LID). A port that is never linked is a
  /// down port. Re-declaring with different attributes is kDuplicate.
  Result<void> add_port(Guid node, const PortRecord& port);
  /// Links (a, pa) with (b, pb). Both nodes must exist; missing ports are created with the
  /// switch's port GUID or a zero GUID. kReference when either port is already linked to a
  /// different peer. The same link again with another rate (two sources reading it
  /// differently) keeps the lower reading (lower_rate) and adds a warning; a rate read wins
  /// over one assumed, and a value stays assumed only if both say so. `assumed`: what the
  /// source did not read (topology.conf, tiers CSV).
  Result<void> add_link(Guid a, PortNum pa, Guid b, PortNum pb, LinkRate rate,
                        Assumed assumed = {});
  /// Health of a port (counters read, their verdicts, a link lost since the previous
  /// discovery). The port is created if needed; health given twice is merged.
  Result<void> set_port_health(Guid node, PortNum port, const PortHealth& health);
  /// Puts host `host` in accelerator (NVLink) domain `domain` with `gpus` GPUs there (0: not
  /// known). Checked at build(): the host must exist (kReference), the name must be valid
  /// (domain_name_problem, kSyntax), a host is in one domain and every host of a domain has
  /// the same GPU count (kSyntax). Sources that read domains from a file check these first,
  /// to name its line; these are the backstop. Repeating a pair is not an error. `line`: the
  /// source's line naming the pair (0: none), for build()'s errors about the domain's name,
  /// which name the first line of the domain (a domain named as a switch, or as a Slurm
  /// switch that merges several: slurm_tree()).
  void add_domain_host(std::string_view domain, std::string_view host, std::uint32_t gpus,
                       int line = 0);
  /// Records that the source is incomplete and why (kept by the canonical JSON).
  void add_incomplete(std::string_view what);
  /// Merges a built fabric into this one (union by GUID; conflicts as above), and its
  /// accelerator domains unless `with_domains` is false.
  Result<void> merge(const Fabric& other, bool with_domains = true);

  [[nodiscard]] bool has_node(Guid guid) const { return nodes_.contains(guid); }
  [[nodiscard]] bool has_port(Guid guid, PortNum port) const;
  [[nodiscard]] bool is_linked(Guid guid, PortNum port) const;
  [[nodiscard]] const NodeRecord* find_node(Guid guid) const;
  /// The hosts the nodes added so far make (their CAs' hostnames, as build() groups them).
  [[nodiscard]] std::unordered_set<std::string> host_names() const;

  /// Free text (origin, notes, warnings) is kept printable: control characters and bytes
  /// that are not UTF-8 become \xNN (str::sanitize), so none can add a line to an output.
  void set_origin(std::string_view origin);
  /// A caveat of the source, reported with the classification warnings.
  void add_warning(std::string_view warning);

  /// Sorts, validates and classifies. The builder is left empty.
  Result<Fabric> build();

 private:
  struct PortEntry {
    PortRecord rec;
    Guid peer = 0;
    PortNum peer_port = 0;
    LinkRate rate;
    Assumed assumed;
    bool linked = false;
    PortHealth health;
  };
  struct NodeEntry {
    NodeRecord rec;
    std::vector<PortEntry> ports;  // sorted by port number, only the ports named
  };
  static const PortEntry* find_port(const NodeEntry& node, PortNum number);
  /// The entry of port `number`, created if new (kUnsupported past limits().ports).
  Result<PortEntry*> port_entry(NodeEntry& node, PortNum number);
  Result<void> build_domains(Fabric& f);
  std::uint64_t num_ports_ = 0;

  std::string origin_;
  std::vector<std::string> warnings_;
  std::vector<std::string> incomplete_;
  struct DomainHost {
    std::string domain, host;
    std::uint32_t gpus = 0;
    int line = 0;
  };
  /// Per domain: the first source line naming it (0: none); set by build_domains().
  std::unordered_map<std::string, int> domain_line_;
  std::vector<DomainHost> domain_hosts_;
  std::unordered_map<Guid, NodeEntry> nodes_;
};

/// Runs classification on a fabric under construction (used by FabricBuilder::build).
void classify(const Fabric& fabric, Topology& topo);

}  // namespace fabricplace::fabric
