// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/sim/degrade.hpp"

#include <random>

#include "fabricplace/fabric/builder.hpp"

namespace fabricplace::sim {

using namespace fabricplace::fabric;

Result<Degraded> degrade_random_links(const Fabric& f, std::uint32_t count, std::uint64_t seed) {
  std::vector<LinkId> candidates;
  for (std::uint32_t l = 0; l < f.num_links(); ++l) {
    const auto& link = f.link(LinkId{l});
    if (f.node(link.node_a).type == NodeType::kSwitch &&
        f.node(link.node_b).type == NodeType::kSwitch && link.rate.width != LinkWidth::k1x) {
      candidates.push_back(LinkId{l});
    }
  }
  if (count > candidates.size()) {
    return fail(ErrorCode::kUsage,
                "cannot degrade " + std::to_string(count) + " links: the fabric has " +
                    std::to_string(candidates.size()) + " switch-to-switch links above 1x");
  }
  // A partial Fisher-Yates shuffle with plain modulo: mt19937_64's output is specified by
  // the standard, std::uniform_int_distribution's is not.
  std::mt19937_64 rng(seed);
  for (std::uint32_t i = 0; i < count; ++i) {
    const auto j = i + static_cast<std::size_t>(rng() % (candidates.size() - i));
    std::swap(candidates[i], candidates[j]);
  }
  std::vector<std::uint8_t> hit(f.num_links(), 0);
  std::vector<std::string> names;
  for (std::uint32_t i = 0; i < count; ++i) {
    hit[idx(candidates[i])] = 1;
    const auto& l = f.link(candidates[i]);
    names.push_back(port_name(f, l.a) + " <-> " + port_name(f, l.b));
  }

  FabricBuilder b(f.origin() + ", " + std::to_string(count) + " random links at 1x (seed " +
                  std::to_string(seed) + ")");
  for (const auto& n : f.nodes())
    if (auto r = b.add_node(n); !r) return std::unexpected(r.error());
  for (const auto& p : f.ports()) {
    if (auto r = b.add_port(f.node(p.node).guid, p.rec); !r) return std::unexpected(r.error());
    if (!p.health.empty()) {
      if (auto r = b.set_port_health(f.node(p.node).guid, p.rec.number, p.health); !r) {
        return std::unexpected(r.error());
      }
    }
  }
  for (const auto& what : f.topology().incomplete) b.add_incomplete(what);
  for (const auto& d : f.domains())
    for (auto h : d.hosts) b.add_domain_host(d.name, f.host(h).name, d.gpus_per_host);
  for (std::uint32_t i = 0; i < f.num_links(); ++i) {
    const auto& l = f.link(LinkId{i});
    LinkRate rate = l.rate;
    fabric::Assumed assumed = l.assumed;
    if (hit[i]) {
      // One lane of four: 1x InfiniBand, a quarter of an Ethernet port's rate (a 400G port
      // come up at 100G). The what-if states the rate: it is no longer assumed.
      if (rate.is_ethernet())
        rate.ethernet_gbps = std::max<std::uint32_t>(1, rate.ethernet_gbps / 4);
      else
        rate.width = LinkWidth::k1x;
      assumed.rate = false;
    }
    const auto& pa = f.port(l.a);
    const auto& pb = f.port(l.b);
    if (auto r = b.add_link(f.node(pa.node).guid, pa.rec.number, f.node(pb.node).guid,
                            pb.rec.number, rate, assumed);
        !r) {
      return std::unexpected(r.error());
    }
  }
  auto built = b.build();
  if (!built) return std::unexpected(built.error());
  return Degraded{std::move(*built), std::move(names)};
}

}  // namespace fabricplace::sim
