// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/fabric/health.hpp"

#include <map>

#include "fabricplace/common/file_io.hpp"
#include "fabricplace/common/settings.hpp"
#include "fabricplace/common/strings.hpp"

namespace fabricplace::fabric {
namespace {

constexpr std::array<std::string_view, kNumCounters> kCounterNames{"SymbolErrorCounter",
                                                                   "LinkErrorRecoveryCounter",
                                                                   "LinkDownedCounter",
                                                                   "PortRcvErrors",
                                                                   "PortRcvRemotePhysicalErrors",
                                                                   "PortRcvSwitchRelayErrors",
                                                                   "PortXmitDiscards",
                                                                   "PortXmitConstraintErrors",
                                                                   "PortRcvConstraintErrors",
                                                                   "LocalLinkIntegrityErrors",
                                                                   "ExcessiveBufferOverrunErrors",
                                                                   "VL15Dropped",
                                                                   "PortXmitWait"};

}  // namespace

std::string_view to_string(Counter c) {
  return kCounterNames[static_cast<std::size_t>(c)];
}

std::optional<Counter> parse_counter(std::string_view name) {
  for (std::size_t i = 0; i < kNumCounters; ++i)
    if (kCounterNames[i] == name) return static_cast<Counter>(i);
  return std::nullopt;
}

HealthThresholds HealthThresholds::defaults() {
  // Why these numbers: a link that went down (LinkDownedCounter) or retrained
  // (LinkErrorRecoveryCounter) since the counters were cleared is suspect at once; physical
  // layer errors (symbol, local link integrity, remote physical, buffer overrun) are
  // tolerated in small numbers, as IB links see a few over months; receive errors likewise.
  // Discards, constraint errors, VL15 drops and xmit-wait depend on traffic and policy, so
  // they are read but not judged by default.
  HealthThresholds t;
  auto set = [&](Counter c, std::uint64_t v) { t.max[static_cast<std::size_t>(c)] = v; };
  set(Counter::kLinkDownedCounter, 0);
  set(Counter::kLinkErrorRecoveryCounter, 0);
  set(Counter::kSymbolErrorCounter, 100);
  set(Counter::kLocalLinkIntegrityErrors, 10);
  set(Counter::kExcessiveBufferOverrunErrors, 10);
  set(Counter::kPortRcvRemotePhysicalErrors, 10);
  set(Counter::kPortRcvErrors, 100);
  return t;
}

Result<HealthThresholds> load_health_config(const std::string& path) {
  auto text = read_file(path);
  if (!text) return std::unexpected(text.error());
  return parse_health_config(*text, path);
}

Result<HealthThresholds> parse_health_config(std::string_view text, const std::string& file) {
  HealthThresholds t;
  auto r = for_each_setting(
      text, file, "CounterName = N",
      [&](std::string_view name, std::string_view value, int line) -> Result<void> {
        const auto c = parse_counter(name);
        if (!c) {
          std::string all;
          for (auto n : kCounterNames) all += (all.empty() ? "" : ", ") + std::string(n);
          return fail(ErrorCode::kSyntax,
                      "unknown counter " + str::quoted(name) + ", expected one of: " + all,
                      file, line);
        }
        const auto v = str::parse_uint(value, UINT64_MAX);
        if (!v)
          return fail(ErrorCode::kSyntax,
                      str::excerpt(name, 40) + ": expected a non-negative integer threshold, got " +
                          str::quoted(value, 40),
                      file, line);
        t.max[static_cast<std::size_t>(*c)] = *v;
        return {};
      });
  if (!r) return std::unexpected(r.error());
  return t;
}

std::vector<std::string> judge(const std::array<std::uint64_t, kNumCounters>& counters,
                               const HealthThresholds& thresholds) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < kNumCounters; ++i)
    if (thresholds.max[i] && counters[i] > *thresholds.max[i])
      out.push_back(std::string(kCounterNames[i]) + " " + std::to_string(counters[i]) + " > " +
                    std::to_string(*thresholds.max[i]));
  return out;
}

std::size_t note_lost_links(FabricBuilder& builder, const Fabric& previous) {
  std::size_t lost = 0;
  for (const Link& l : previous.links()) {
    const Port& a = previous.port(l.a);
    const Port& b = previous.port(l.b);
    const Guid ga = previous.node(a.node).guid, gb = previous.node(b.node).guid;
    if (builder.is_linked(ga, a.rec.number) || builder.is_linked(gb, b.rec.number)) continue;
    bool marked = false;
    for (const auto& [self, port, peer] :
         {std::tuple(ga, a.rec.number, &b), std::tuple(gb, b.rec.number, &a)}) {
      // Only ends that are still there and whose port is known (a switch port's PortInfo);
      // a host that vanished has no ports to mark.
      if (!builder.has_port(self, port)) continue;
      PortHealth h;
      h.was_linked_to = previous.node(peer->node).guid;
      h.was_linked_port = peer->rec.number;
      h.was_linked_desc = previous.node(peer->node).description;
      h.was_linked_type = previous.node(peer->node).type;
      marked = builder.set_port_health(self, port, h).has_value() || marked;
    }
    lost += marked;
  }
  // A link already lost in `previous` stays lost while its port stays down, so the mark is
  // carried from discovery to discovery until the link comes back.
  for (const Port& p : previous.ports()) {
    const Guid g = previous.node(p.node).guid;
    if (p.link != kNoLink || p.health.was_linked_to == 0) continue;
    if (!builder.has_port(g, p.rec.number) || builder.is_linked(g, p.rec.number)) continue;
    PortHealth h;
    h.was_linked_to = p.health.was_linked_to;
    h.was_linked_port = p.health.was_linked_port;
    h.was_linked_desc = p.health.was_linked_desc;
    h.was_linked_type = p.health.was_linked_type;
    lost += builder.set_port_health(g, p.rec.number, h).has_value();
  }
  return lost;
}

}  // namespace fabricplace::fabric
