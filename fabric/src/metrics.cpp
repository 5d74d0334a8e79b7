// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/fabric/metrics.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <deque>
#include <utility>
#include <vector>

#include "fabricplace/fabric/report.hpp"

namespace fabricplace::fabric {
namespace {

/// A label value as the exposition format wants it: backslash, double quote and line feed
/// escaped.
std::string escape(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (const char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  if (v == std::floor(v) && std::fabs(v) < 1e15)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

using Labels = std::vector<std::pair<std::string, std::string>>;

/// One metric family: its HELP and TYPE, then its series sorted by their label text.
struct Family {
  std::string name, help, type;
  std::vector<std::pair<std::string, double>> series;  // label text ("{a=\"b\"}"), value

  void add(const Labels& labels, double value) {
    std::string text;
    for (const auto& [k, v] : labels)
      text += (text.empty() ? "{" : ",") + k + "=\"" + escape(v) + "\"";
    if (!text.empty()) text += "}";
    series.emplace_back(std::move(text), value);
  }
};

class Writer {
 public:
  Family& family(std::string name, std::string help, std::string type = "gauge") {
    families_.push_back({std::move(name), std::move(help), std::move(type), {}});
    return families_.back();
  }
  [[nodiscard]] std::string text() {
    std::string out;
    for (auto& f : families_) {
      std::sort(f.series.begin(), f.series.end());
      // One series per label set: a port seen twice (both ends of a link to itself) once.
      f.series.erase(std::unique(f.series.begin(), f.series.end(),
                                 [](const auto& a, const auto& b) { return a.first == b.first; }),
                     f.series.end());
      out += "# HELP " + f.name + " " + f.help + "\n# TYPE " + f.name + " " + f.type + "\n";
      for (const auto& [labels, value] : f.series)
        out += f.name + labels + " " + number(value) + "\n";
    }
    return out;
  }

 private:
  std::deque<Family> families_;
};

double bytes_per_second(const LinkRate& r) {
  return r.gbps() * 1e9 / 8;
}

/// The name reports use for a node: a switch's name, a CA's host name.
std::string node_label(const Fabric& f, NodeId n) {
  const auto& rec = f.node(n);
  if (rec.type == NodeType::kSwitch) {
    const auto& name = f.topology().switch_name[idx(n)];
    return name.empty() ? rec.description : name;
  }
  return std::string(split_ca_description(rec.description).first);
}

/// guid, port, node (and device for a CA) of a port.
Labels port_labels(const Fabric& f, PortId p) {
  const auto& port = f.port(p);
  Labels l{{"guid", guid_label(port.rec.guid)},
           {"port", std::to_string(port.rec.number)},
           {"node", node_label(f, port.node)}};
  if (f.node(port.node).type != NodeType::kSwitch) {
    const auto device = split_ca_description(f.node(port.node).description).second;
    if (!device.empty()) l.emplace_back("device", std::string(device));
  }
  return l;
}

}  // namespace

std::string guid_label(Guid guid) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016" PRIx64, static_cast<std::uint64_t>(guid));
  return buf;
}

std::string to_prometheus(const Fabric& f, const MetricsRun& run) {
  const auto& t = f.topology();
  Writer w;

  w.family("fabricplace_fabric_info",
           "The fabric these metrics describe (always 1): where it came from and its link layer.")
      .add({{"origin", f.origin()}, {"link_layer", std::string(to_string(f.link_layer()))}}, 1);
  w.family("fabricplace_fabric_hosts", "Hosts in the fabric.").add({}, double(f.num_hosts()));
  w.family("fabricplace_fabric_switches", "Switches in the fabric.")
      .add({}, double(f.switches().size()));
  w.family("fabricplace_fabric_links", "Links in the fabric.").add({}, double(f.num_links()));
  w.family("fabricplace_fabric_incomplete",
           "1 when the fabric is a partial discovery (published with --allow-partial), else 0.")
      .add({}, t.incomplete.empty() ? 0 : 1);
  w.family("fabricplace_split_hosts",
           "Hosts whose HCAs reach other parts of the fabric than most hosts do.")
      .add({}, double(t.split_hosts.size()));

  // Links per tier, their nominal rate and the degraded ones.
  auto& tier_links =
      w.family("fabricplace_tier_links",
               "Links per tier (the levels it joins: host-leaf, leaf-spine, spine-core).");
  auto& tier_degraded =
      w.family("fabricplace_tier_degraded_links",
               "Links per tier below the tier's nominal width or speed, or of unknown rate.");
  auto& tier_assumed = w.family(
      "fabricplace_tier_assumed_links",
      "Links per tier whose rate or count the source assumed rather than read (docs/sources.md).");
  auto& tier_rate = w.family("fabricplace_tier_nominal_rate_bytes_per_second",
                             "The tier's nominal link rate: its most common width and speed.");
  for (const auto& tier : t.tiers) {
    const Labels l{{"tier", tier_name(tier.lower, tier.upper)}};
    tier_links.add(l, tier.links);
    tier_degraded.add(l, tier.degraded);
    tier_assumed.add(l, tier.assumed);
    tier_rate.add(l, bytes_per_second(tier.nominal));
  }

  // Degraded links: one series per end, so that either end's port joins its exporter series.
  w.family("fabricplace_degraded_links",
           "Links below their tier's nominal width or speed, or of unknown rate.")
      .add({}, double(t.degraded_links.size()));
  auto& degraded = w.family(
      "fabricplace_port_degraded",
      "1 for each end of a degraded link; reason: width, speed or rate, detail as fabric show "
      "says it.");
  auto& rate = w.family("fabricplace_port_rate_bytes_per_second",
                        "The rate of a degraded link's port (the link as discovered).");
  auto& expected =
      w.family("fabricplace_port_expected_rate_bytes_per_second",
               "The rate a degraded link's port should have: its tier's nominal rate.");
  for (const auto& d : t.degraded_links) {
    const auto& link = f.link(d.link);
    const std::string reason = d.reason.substr(0, d.reason.find(' '));
    for (const auto& [p, q] : {std::pair{link.a, link.b}, std::pair{link.b, link.a}}) {
      auto l = port_labels(f, p);
      const auto peer = port_labels(f, q);
      rate.add(l, bytes_per_second(link.rate));
      expected.add(l, bytes_per_second(d.nominal));
      l.emplace_back("peer_guid", peer[0].second);
      l.emplace_back("peer_port", peer[1].second);
      l.emplace_back("peer_node", peer[2].second);
      l.emplace_back("reason", reason);
      l.emplace_back("detail", d.reason);
      degraded.add(l, 1);
    }
  }

  // Error counters over their thresholds (fabric discover --counters): the counter's value.
  w.family("fabricplace_unhealthy_links",
           "Links with a port whose error counters passed their thresholds (health.conf) or could "
           "not be read.")
      .add({}, double(t.unhealthy_links.size()));
  auto& over =
      w.family("fabricplace_port_errors_over_threshold",
               "The value of a port error counter that passed its threshold (counter as perfquery "
               "names it).");
  auto& unknown =
      w.family("fabricplace_port_health_unknown",
               "1 for a port whose error counters could not be read (fabric discover --counters).");
  for (const auto& u : t.unhealthy_links) {
    const auto& link = f.link(u.link);
    for (const auto p : {link.a, link.b}) {
      const auto& h = f.port(p).health;
      for (const auto& problem : h.problems) {
        if (problem.ends_with("PortCounters could not be read")) {
          unknown.add(port_labels(f, p), 1);
          continue;
        }
        const auto name = problem.substr(0, problem.find(' '));
        const auto c = parse_counter(name);
        if (!c) continue;
        auto l = port_labels(f, p);
        l.emplace_back("counter", name);
        over.add(l, double(h.counters[static_cast<std::size_t>(*c)]));
      }
    }
  }

  // Links lost since the accepted fabric (discover --previous): the port and what it was on.
  w.family("fabricplace_lost_links",
           "Ports that were linked in the previous (accepted) fabric and are down now.")
      .add({}, double(t.lost_links.size()));
  auto& lost =
      w.family("fabricplace_port_lost",
               "1 for a port linked in the previous fabric and down now, with its old peer.");
  for (const auto p : t.lost_links) {
    const auto& h = f.port(p).health;
    auto l = port_labels(f, p);
    std::string was;
    if (const auto n = f.find_guid(h.was_linked_to))
      was = node_label(f, *n);
    else if (h.was_linked_type == NodeType::kSwitch)
      was = h.was_linked_desc;
    else
      was = std::string(split_ca_description(h.was_linked_desc).first);
    l.emplace_back("was_peer_guid", guid_label(h.was_linked_to));
    l.emplace_back("was_peer_port", std::to_string(h.was_linked_port));
    l.emplace_back("was_peer_node", was);
    lost.add(l, 1);
  }

  // Oversubscription: host bandwidth below : uplink bandwidth above (+Inf: no uplink).
  auto& leaf =
      w.family("fabricplace_leaf_oversubscription_ratio",
               "A leaf's host-link bandwidth over its uplink bandwidth (+Inf: no uplink).");
  auto& leaf_up = w.family("fabricplace_leaf_uplink_rate_bytes_per_second",
                           "A leaf's uplink bandwidth (the sum of its links to higher switches).");
  auto& leaf_hosts = w.family("fabricplace_leaf_hosts", "Hosts with an HCA on the leaf.");
  for (const auto& s : t.leaf_stats) {
    const Labels l{{"leaf", node_label(f, s.leaf)}, {"guid", guid_label(f.node(s.leaf).guid)}};
    leaf.add(l, s.oversubscription);
    leaf_up.add(l, s.up_gbps * 1e9 / 8);
    leaf_hosts.add(l, s.hosts);
  }
  auto& sw = w.family("fabricplace_switch_oversubscription_ratio",
                      "An upper switch's bandwidth from the level below over its bandwidth to the "
                      "level above.");
  for (const auto& s : t.switch_stats)
    sw.add({{"switch", node_label(f, s.node)},
            {"guid", guid_label(f.node(s.node).guid)},
            {"level", std::to_string(t.level[idx(s.node)])}},
           s.oversubscription);
  auto& pod = w.family("fabricplace_pod_oversubscription_ratio",
                       "A pod's host-link bandwidth over its links out of the pod.");
  for (const auto& s : t.pod_stats)
    pod.add({{"pod", std::to_string(s.pod + 1)}}, s.oversubscription);

  // What fabric watch measured.
  if (run.discovery_time)
    w.family("fabricplace_discovery_timestamp_seconds",
             "When the last discovery ended (Unix time).")
        .add({}, *run.discovery_time);
  if (run.discovery_duration)
    w.family("fabricplace_discovery_duration_seconds", "How long the last discovery took.")
        .add({}, *run.discovery_duration);
  if (run.changes)
    w.family("fabricplace_discovery_changes",
             "Changes the last discovery found against the accepted fabric (fabric diff).")
        .add({}, double(*run.changes));
  if (run.flapping)
    w.family("fabricplace_discovery_flapping_links",
             "Links the last discovery found flapping: down and up since the run before "
             "(LinkDownedCounter rose), or changed twice or more within the watch's window.")
        .add({}, double(*run.flapping));
  if (run.accepted)
    w.family("fabricplace_discovery_accepted",
             "1 when the last discovery became the accepted fabric, 0 when it was rejected.")
        .add({}, *run.accepted ? 1 : 0);
  if (run.runs)
    w.family("fabricplace_discoveries_total", "Discoveries since fabric watch started.", "counter")
        .add({}, double(*run.runs));
  return w.text();
}

}  // namespace fabricplace::fabric
