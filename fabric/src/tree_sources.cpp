// SPDX-License-Identifier: GPL-2.0-or-later
// Sources that name switches and hosts but carry no InfiniBand identity: Slurm
// topology.conf and tiers CSV. Both build a tree of links between (child, parent) pairs:
// as many and at the rate the source states (a tiers CSV's links section, topology.conf's
// LinkSpeed=), else one link at the assumed rate (--link-speed), marked assumed. Switches get
// GUIDs in order of first appearance, so the fabric keeps the file's switch order (Slurm
// breaks ties by it). Each host gets one HCA "<host> hca<K>" per leaf it is listed under.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "fabricplace/common/hostlist.hpp"
#include "fabricplace/common/limits.hpp"
#include "fabricplace/common/strings.hpp"
#include "fabricplace/fabric/diff.hpp"
#include "fabricplace/fabric/sources.hpp"

namespace fabricplace::fabric {
namespace {

constexpr Guid kTreeSwitchBase = kSyntheticSwitchGuids;  // never on a real fabric
constexpr Guid kTreeCaBase = kSyntheticCaGuids;
// Rates assumed without --link-speed: topology.conf is kept by InfiniBand sites, tiers CSV
// describe Ethernet (RoCE) fabrics.
constexpr LinkRate kDefaultInfiniBandRate{LinkWidth::k4x, LinkSpeed::kHDR};
// Parallel links per switch pair a links section may state (a 64-port switch has 64).
constexpr std::uint32_t kMaxLinksPerPair = 1024;
constexpr LinkRate kDefaultEthernetRate = LinkRate{LinkWidth::kUnknown, LinkSpeed::kUnknown, 400};

// What a source states about the links between a (child, parent) pair: their number and
// rate; what it does not state is assumed (one link, the default rate).
struct Truth {
  std::optional<std::uint32_t> count;
  std::optional<LinkRate> rate;
};

// Builds the tree once every edge is known.
class TreeBuilder {
 public:
  TreeBuilder(std::string origin, LinkRate rate) : b_(std::move(origin)), rate_(rate) {}

  /// The links between `lower` (a host or switch) and `upper`, as the source states them.
  void set_truth(const std::string& lower, const std::string& upper, Truth t) {
    truth_[{lower, upper}] = t;
  }

  Guid switch_guid(const std::string& name, int line = 0) {
    auto [it, inserted] = switches_.try_emplace(name, kTreeSwitchBase + switches_.size() + 1);
    if (inserted) {
      order_.push_back(name);
      line_of_.push_back(line);
    }
    return it->second;
  }
  void parent_of(const std::string& child, const std::string& parent, int line) {
    edges_.emplace_back(switch_guid(child, line), switch_guid(parent, line));
  }
  void host_under(const std::string& host, const std::string& leaf, int line) {
    hosts_[host].push_back(switch_guid(leaf, line));
  }
  bool has_switch(const std::string& name) const { return switches_.contains(name); }
  const std::string& name_of(Guid g) const { return order_.at(g - kTreeSwitchBase - 1); }
  int line_of(Guid g) const { return line_of_.at(g - kTreeSwitchBase - 1); }

  Result<Fabric> build() {
    std::map<Guid, PortNum> next_port;
    for (const auto& name : order_) {
      NodeRecord n;
      n.guid = switches_.at(name);
      n.type = NodeType::kSwitch;
      n.description = name;
      n.system_image_guid = n.guid;
      if (auto r = b_.add_node(n); !r) return std::unexpected(r.error());
    }
    auto take = [&](Guid g) -> Result<PortNum> {
      auto& p = next_port[g];
      if (p == std::numeric_limits<PortNum>::max())
        return fail(
            ErrorCode::kUnsupported,
            "switch " + name_of(g) + " would need more than " + std::to_string(p) + " ports", {},
            line_of(g));
      return ++p;
    };
    std::sort(edges_.begin(), edges_.end());
    edges_.erase(std::unique(edges_.begin(), edges_.end()), edges_.end());
    // Hosts in natural order, their HCAs numbered per leaf.
    std::vector<std::string> names;
    for (const auto& [h, leaves] : hosts_) names.push_back(h);
    std::sort(names.begin(), names.end(), hostlist::natural_less);
    Guid next_ca = kTreeCaBase;
    for (const auto& h : names) {
      auto leaves = hosts_.at(h);
      for (std::size_t k = 0; k < leaves.size(); ++k) {
        NodeRecord ca;
        ca.guid = next_ca;
        next_ca += 2;
        ca.type = NodeType::kCa;
        ca.description = h + " hca" + std::to_string(k);
        ca.num_ports = 1;
        ca.system_image_guid = ca.guid;
        if (auto r = b_.add_node(ca); !r) return std::unexpected(r.error());
        if (auto r = b_.add_port(ca.guid, PortRecord{1, ca.guid + 1, 0, 0}); !r)
          return std::unexpected(r.error());
        auto p = take(leaves[k]);
        if (!p) return std::unexpected(p.error());
        // A host row (or Nodes= entry) is one link: only its rate can be assumed.
        const Truth t = truth(h, name_of(leaves[k]));
        if (auto r = b_.add_link(leaves[k], *p, ca.guid, 1, t.rate.value_or(rate_),
                                 Assumed{!t.rate, false});
            !r)
          return std::unexpected(r.error());
      }
    }
    for (const auto& [child, parent] : edges_) {
      const Truth t = truth(name_of(child), name_of(parent));
      for (std::uint32_t k = 0; k < t.count.value_or(1); ++k) {
        auto pc = take(child);
        if (!pc) return std::unexpected(pc.error());
        auto pp = take(parent);
        if (!pp) return std::unexpected(pp.error());
        if (auto r = b_.add_link(child, *pc, parent, *pp, t.rate.value_or(rate_),
                                 Assumed{!t.rate, !t.count});
            !r)
          return std::unexpected(r.error());
      }
    }
    auto built = b_.build();
    // An error about one switch ("switch \"s255\" is ...") names the line it was defined on.
    if (!built && built.error().line == 0 && built.error().message.starts_with("switch \"")) {
      const std::string& m = built.error().message;
      const auto end = m.find('"', 8);
      if (const auto it = switches_.find(m.substr(8, end - 8)); it != switches_.end()) {
        Error e = built.error();
        e.line = line_of(it->second);
        return std::unexpected(std::move(e));
      }
    }
    return built;
  }

  FabricBuilder& builder() { return b_; }

 private:
  Truth truth(const std::string& lower, const std::string& upper) const {
    const auto it = truth_.find({lower, upper});
    return it == truth_.end() ? Truth{} : it->second;
  }

  FabricBuilder b_;
  LinkRate rate_;
  std::map<std::pair<std::string, std::string>, Truth> truth_;
  std::unordered_map<std::string, Guid> switches_;
  std::vector<std::string> order_;
  std::vector<int> line_of_;  // where each switch was first named
  std::vector<std::pair<Guid, Guid>> edges_;
  std::map<std::string, std::vector<Guid>> hosts_;
};

Result<void> copy_into(Result<Fabric> built, FabricBuilder& builder, const char* kind,
                       const std::string& file, LinkRate assumed_rate, const char* how) {
  if (!built) {
    Error e = built.error();
    e.file = file;
    return std::unexpected(std::move(e));
  }
  std::size_t rates = 0;
  std::set<std::pair<NodeId, NodeId>> pairs;
  for (const Link& l : built->links()) {
    rates += l.assumed.rate;
    if (l.assumed.count) pairs.emplace(l.node_a, l.node_b);
  }
  std::string what;
  if (!pairs.empty())
    what = "no link count for " + std::to_string(pairs.size()) +
           " switch pairs (one link each is assumed)";
  if (rates > 0)
    what += (what.empty() ? "no rate for " : " and no rate for ") + std::to_string(rates) +
            " links (" + assumed_rate.to_string() + " is assumed, --link-speed)";
  if (!what.empty())
    builder.add_warning(std::string(kind) + " states " + what + ": " + how +
                        "; oversubscription and bandwidth from them are marked assumed");
  return builder.merge(*built);
}

// "4xHDR", "400G", "400Gb/s", "400GbE": a known rate, or nullopt.
std::optional<LinkRate> stated_rate(std::string_view s) {
  auto r = parse_rate(s);
  if (!r || !r->known()) return std::nullopt;
  return r;
}
constexpr const char* kRateExpected =
    "expected an InfiniBand rate like 4xHDR or an Ethernet rate in Gb/s like 400G, 400Gb/s or "
    "400GbE";

// LinkSpeed=<digits> as Gb/s: N GbE when the assumed rate is Ethernet, else the 4x InfiniBand
// rate whose data rate rounds to N (kIbGbps).
std::optional<LinkRate> rate_of_gbps(std::string_view digits, LinkRate assumed) {
  if (digits.size() > 6) return std::nullopt;
  std::uint32_t n = 0;
  for (char c : digits) n = n * 10 + static_cast<std::uint32_t>(c - '0');
  if (assumed.is_ethernet()) {
    if (n == 0 || n > kMaxEthernetGbps) return std::nullopt;
    return LinkRate::ethernet(n);
  }
  for (auto speed :
       {LinkSpeed::kSDR, LinkSpeed::kDDR, LinkSpeed::kQDR, LinkSpeed::kFDR10, LinkSpeed::kFDR,
        LinkSpeed::kEDR, LinkSpeed::kHDR, LinkSpeed::kNDR, LinkSpeed::kXDR}) {
    const LinkRate r{LinkWidth::k4x, speed};
    if (std::lround(r.gbps()) == static_cast<long>(n)) return r;
  }
  return std::nullopt;
}

// A stated rate of the other link layer than the rate assumed for links without one: the
// fabric would mix InfiniBand and Ethernet.
std::optional<std::string> mixed_layers(LinkRate stated, LinkRate assumed) {
  if (stated.is_ethernet() == assumed.is_ethernet()) return std::nullopt;
  return "rate " + stated.to_string() + " is " +
         (stated.is_ethernet() ? "an Ethernet" : "an InfiniBand") +
         " rate, but links without a stated rate are assumed " + assumed.to_string() +
         ": state every rate, or give --link-speed a rate of the same kind";
}

bool valid_name(std::string_view s) {
  return !s.empty() && s.size() <= kMaxNameBytes &&
         str::invalid_utf8_at(s) == std::string_view::npos &&
         str::control_char_at(s) == std::string_view::npos &&
         str::invisible_char_at(s) == std::string_view::npos &&
         std::all_of(s.begin(), s.end(), [](char c) {
           return c != ' ' && c != ',' && c != '[' && c != ']' && c != '=' && c != '"';
         });
}

// The error for a name valid_name() refuses, as SwitchName= or in a Switches= list.
std::unexpected<Error> bad_switch_name(const char* where, std::string_view name,
                                       const std::string& file, int line) {
  return fail(ErrorCode::kSyntax,
              std::string(where) + "bad switch name " + str::quoted(name) +
                  ", expected printable text of at most " + std::to_string(kMaxNameBytes) +
                  " bytes without blanks, commas, brackets, '=' or quotes",
              file, line);
}

}  // namespace

Result<void> read_slurm_topology(std::string_view text, const std::string& file,
                                 const SourceOptions& options, FabricBuilder& builder) {
  const LinkRate assumed_rate = options.link_rate.value_or(kDefaultInfiniBandRate);
  TreeBuilder tb("slurm-topology " + file, assumed_rate);
  // LinkSpeed= of a switch: the rate of its links down (to its Nodes= and Switches=).
  struct Speed {
    LinkRate rate;
    int line;
  };
  std::map<std::string, Speed> speed;
  std::vector<std::pair<std::string, std::string>> down;  // (child or host, switch)
  std::vector<int> number_speeds;                         // lines of LinkSpeed=<number>
  struct Ref {
    std::string parent, child;
    int line;
  };
  std::vector<Ref> switch_refs;
  std::map<std::string, int> defined;
  std::map<std::string, std::pair<std::string, int>> host_leaf;
  std::uint64_t host_refs = 0;  // (host, switch) pairs: one HCA each
  int lineno = 0;
  for (std::string_view line : str::lines(text)) {
    ++lineno;
    if (const auto hash = line.find('#'); hash != std::string_view::npos)
      line = line.substr(0, hash);
    line = str::trim(line);
    if (line.empty()) continue;
    std::string name, nodes, switches, link_speed;
    std::string spaced(line);
    std::replace(spaced.begin(), spaced.end(), '\t', ' ');
    for (auto tok : str::split(spaced, ' ')) {
      tok = str::trim(tok);
      if (tok.empty()) continue;
      const auto eq = tok.find('=');
      if (eq == std::string_view::npos)
        return fail(ErrorCode::kSyntax, "expected Key=Value, got " + str::quoted(tok), file,
                    lineno);
      const auto key = tok.substr(0, eq);
      const std::string value(tok.substr(eq + 1));
      if (str::starts_with_icase(key, "SwitchName") && key.size() == 10)
        name = value;
      else if (str::starts_with_icase(key, "Nodes") && key.size() == 5)
        nodes = value;
      else if (str::starts_with_icase(key, "Switches") && key.size() == 8)
        switches = value;
      else if (str::starts_with_icase(key, "LinkSpeed") && key.size() == 9)
        link_speed = value;
      else
        return fail(ErrorCode::kSyntax,
                    "unknown key " + str::quoted(key) +
                        ", expected SwitchName, Nodes, Switches or LinkSpeed",
                    file, lineno);
    }
    if (name.empty()) return fail(ErrorCode::kSyntax, "line has no SwitchName=", file, lineno);
    if (!valid_name(name)) return bad_switch_name("", name, file, lineno);
    if (auto [it, inserted] = defined.emplace(name, lineno); !inserted)
      return fail(ErrorCode::kDuplicate,
                  "switch " + name + " already defined at line " + std::to_string(it->second), file,
                  lineno);
    if (nodes.empty() && switches.empty())
      return fail(ErrorCode::kSyntax, "switch " + name + " has neither Nodes= nor Switches=", file,
                  lineno);
    tb.switch_guid(name, lineno);
    if (!link_speed.empty()) {
      // Slurm reads LinkSpeed as a number it does not use. fabricplace reads a number as Gb/s:
      // an Ethernet rate when the assumed rate is one, else the 4x InfiniBand rate of that
      // data rate (200 = 4xHDR); another number is taken for Slurm's arbitrary units and
      // ignored. A rate written out (4xHDR, 400GbE) is read as such.
      if (link_speed.find_first_not_of("0123456789") == std::string::npos) {
        if (const auto rate = rate_of_gbps(link_speed, assumed_rate))
          speed.emplace(name, Speed{*rate, lineno});
        else
          number_speeds.push_back(lineno);
      } else if (const auto rate = stated_rate(link_speed)) {
        speed.emplace(name, Speed{*rate, lineno});
      } else {
        return fail(
            ErrorCode::kSyntax,
            "LinkSpeed=" + str::quoted(link_speed) + ": " + kRateExpected + ", or a number of Gb/s",
            file, lineno);
      }
    }
    if (!nodes.empty()) {
      auto hosts = hostlist::expand(nodes);
      if (!hosts) return fail(ErrorCode::kSyntax, "Nodes=: " + hosts.error().message, file, lineno);
      for (const auto& h : *hosts) {
        if (auto why = str::host_name_problem(h))
          return fail(ErrorCode::kSyntax, "Nodes=: host name " + str::quoted(h) + " " + *why, file,
                      lineno);
        auto [it, inserted] = host_leaf.try_emplace(h, name, lineno);
        if (!inserted && it->second.first == name)
          return fail(ErrorCode::kDuplicate, "host " + h + " listed twice under " + name, file,
                      lineno);
        tb.host_under(h, name, lineno);
        down.emplace_back(h, name);
        // Each (host, switch) pair is an HCA: count them, not distinct hosts, so the same
        // hosts listed under thousands of switches stop here too.
        if (++host_refs + defined.size() > limits().nodes)
          return fail(ErrorCode::kUnsupported,
                      "more than " + std::to_string(limits().nodes) +
                          " HCAs and switches (a host listed under K switches has K HCAs; "
                          "FABRICPLACE_MAX_NODES raises the limit)",
                      file, lineno);
      }
    }
    if (!switches.empty()) {
      auto kids = hostlist::expand(switches);
      if (!kids)
        return fail(ErrorCode::kSyntax, "Switches=: " + kids.error().message, file, lineno);
      for (const auto& k : *kids) {
        if (!valid_name(k)) return bad_switch_name("Switches=: ", k, file, lineno);
        switch_refs.push_back(Ref{name, k, lineno});
      }
      if (switch_refs.size() > limits().ports)
        return fail(ErrorCode::kUnsupported,
                    "more than " + std::to_string(limits().ports) +
                        " switch links (FABRICPLACE_MAX_PORTS raises the limit)",
                    file, lineno);
    }
  }
  if (defined.empty())
    return fail(ErrorCode::kSyntax, "no SwitchName= lines up to the end: not a Slurm topology.conf",
                file, lineno);
  for (const auto& r : switch_refs) {
    if (!defined.contains(r.child))
      return fail(
          ErrorCode::kReference,
          "switch " + r.parent + " lists child switch " + r.child + ", which is never defined",
          file, r.line);
    if (r.child == r.parent)
      return fail(ErrorCode::kReference, "switch " + r.parent + " lists itself as a child", file,
                  r.line);
  }
  // A switch that is its own ancestor makes no tree. Depth-first over child -> parent
  // edges with an explicit stack: a chain of 100,000 switches must not overflow the call
  // stack.
  std::map<std::string, std::vector<const Ref*>> parents;  // child -> referring lines
  for (const auto& r : switch_refs) parents[r.child].push_back(&r);
  std::map<std::string, int> state;  // 0 unvisited, 1 on the path, 2 done
  struct Frame {
    const std::string* sw;
    std::size_t next = 0;  // index into parents[*sw]
  };
  static const std::vector<const Ref*> kNoParents;
  auto parents_of = [&](const std::string& sw) -> const std::vector<const Ref*>& {
    const auto it = parents.find(sw);
    return it == parents.end() ? kNoParents : it->second;
  };
  for (const auto& [start, line] : defined) {
    if (state[start] != 0) continue;
    std::vector<Frame> stack{{&start}};
    state[start] = 1;
    while (!stack.empty()) {
      Frame& top = stack.back();
      const auto& ps = parents_of(*top.sw);
      if (top.next == ps.size()) {
        state[*top.sw] = 2;
        stack.pop_back();
        continue;
      }
      const Ref* r = ps[top.next++];
      int& st = state[r->parent];
      if (st == 1)
        return fail(ErrorCode::kReference,
                    "switch " + r->parent + " lists " + r->child + " as a child, but " + r->child +
                        " is already above it: a cycle, not a tree",
                    file, r->line);
      if (st == 0) {
        st = 1;
        stack.push_back(Frame{&r->parent});
      }
    }
  }
  for (const auto& r : switch_refs) {
    tb.parent_of(r.child, r.parent, r.line);
    down.emplace_back(r.child, r.parent);
  }
  // Rates stated by LinkSpeed=; one of the other link layer than the assumed rate is an
  // error unless every switch states its own.
  for (const auto& [sw, sp] : speed)
    if (auto why = mixed_layers(sp.rate, assumed_rate)) {
      const auto unstated = std::find_if(defined.begin(), defined.end(),
                                         [&](const auto& d) { return !speed.contains(d.first); });
      if (unstated != defined.end())
        return fail(ErrorCode::kSyntax,
                    "LinkSpeed=" + sp.rate.to_string() + ": " + *why + " (switch " +
                        unstated->first + ", line " + std::to_string(unstated->second) +
                        ", has no LinkSpeed=)",
                    file, sp.line);
    }
  for (const auto& [lower, upper] : down)
    if (const auto it = speed.find(upper); it != speed.end())
      tb.set_truth(lower, upper, Truth{std::nullopt, it->second.rate});
  if (!number_speeds.empty())
    builder.add_warning(
        "topology.conf: LinkSpeed= with a bare number (Slurm's arbitrary units) "
        "is ignored, first at line " +
        std::to_string(number_speeds.front()) +
        "; give a rate (4xHDR, 400GbE) to state the links' rate");
  return copy_into(tb.build(), builder, "topology.conf", file, assumed_rate,
                   "it cannot state link counts, and states rates only through LinkSpeed=");
}

Result<void> read_tiers_csv(std::string_view text, const std::string& file,
                            const SourceOptions& options, FabricBuilder& builder) {
  const LinkRate assumed_rate = options.link_rate.value_or(kDefaultEthernetRate);
  TreeBuilder tb("tiers-csv " + file, assumed_rate);
  std::size_t columns = 0;
  std::map<std::string, std::pair<int, int>> tier_of;  // name -> (tier, line)
  std::map<std::string, int> host_line;
  // Pairs the host rows link: lower name -> upper names, and the reverse.
  std::map<std::string, std::set<std::string>> up, down;
  static const char* kTier[] = {"host", "leaf", "spine", "core"};
  auto exact_icase = [](std::string_view a, std::string_view b) {
    return str::starts_with_icase(a, b) && a.size() == b.size();
  };
  // The links section: per pair and field (count, rate), the most specific statement.
  struct Stated {
    int specificity = -1, line = 0;
  };
  struct PairTruth {
    Stated count_at, rate_at;
    Truth truth;
  };
  std::map<std::pair<std::string, std::string>, PairTruth> stated;
  int links_header = 0;  // line of "links,lower,upper,count,rate", 0 before it
  bool has_domain = false;
  std::vector<std::pair<std::string, std::string>> domain_of;  // (host, domain), row order
  std::optional<std::pair<LinkRate, int>> first_rate[2];  // per layer (IB, Ethernet): rate, line
  int lineno = 0;
  for (std::string_view raw : str::lines(text)) {
    ++lineno;
    const auto line = str::trim(raw);
    if (line.empty() || line.front() == '#') continue;
    auto cells = str::split(line, ',');
    for (auto& c : cells) c = str::trim(c);
    if (columns == 0) {
      // An optional last column "domain": the host's accelerator (NVLink) domain.
      has_domain = cells.size() >= 4 && exact_icase(cells.back(), "domain");
      const std::size_t tiers = cells.size() - (has_domain ? 1 : 0);
      const bool ok =
          (tiers == 3 || tiers == 4) &&
          std::equal(cells.begin(), cells.begin() + static_cast<std::ptrdiff_t>(tiers), kTier,
                     [&](std::string_view a, const char* b) { return exact_icase(a, b); });
      if (!ok)
        return fail(ErrorCode::kSyntax,
                    "expected the header line \"host,leaf,spine\" or \"host,leaf,spine,core\" "
                    "(and optionally a last column \"domain\"), got " +
                        str::quoted(line),
                    file, lineno);
      columns = tiers;
      continue;
    }
    if (links_header == 0 && cells.size() == 5 && exact_icase(cells[0], "links")) {
      static const char* kLinksHeader[] = {"links", "lower", "upper", "count", "rate"};
      if (!std::equal(cells.begin(), cells.end(), kLinksHeader,
                      [&](std::string_view a, const char* b) { return exact_icase(a, b); }))
        return fail(
            ErrorCode::kSyntax,
            "expected the links header \"links,lower,upper,count,rate\", got " + str::quoted(line),
            file, lineno);
      if (host_line.empty())
        return fail(ErrorCode::kSyntax, "the links section comes after the host rows", file,
                    lineno);
      links_header = lineno;
      continue;
    }
    if (links_header != 0) {
      // lower,upper,count,rate: a pair of adjacent tiers, each a name or a tier word.
      if (cells.size() != 4)
        return fail(ErrorCode::kSyntax,
                    "expected 4 comma-separated columns (lower,upper,count,rate) in the links "
                    "section, got " +
                        std::to_string(cells.size()),
                    file, lineno);
      struct End {
        int tier;
        bool named;
        std::string name;
      };
      auto resolve = [&](std::string_view cell, const char* column) -> Result<End> {
        const std::string name(cell);
        if (const auto it = tier_of.find(name); it != tier_of.end())
          return End{it->second.first, true, name};
        for (std::size_t k = 0; k < columns; ++k)
          if (exact_icase(cell, kTier[k])) return End{static_cast<int>(k), false, {}};
        std::string tiers;
        for (std::size_t k = 0; k < columns; ++k) tiers += (k ? ", " : "") + std::string(kTier[k]);
        return fail(ErrorCode::kReference,
                    std::string("column ") + column + ": " + str::quoted(cell) +
                        " is neither a host or switch of the host rows nor a tier (" + tiers + ")",
                    file, lineno);
      };
      auto lo = resolve(cells[0], "lower");
      if (!lo) return std::unexpected(lo.error());
      auto hi = resolve(cells[1], "upper");
      if (!hi) return std::unexpected(hi.error());
      auto what = [&](const End& e, std::string_view cell) {
        return (e.named ? str::quoted(cell) + " is a " : std::string("tier ")) + kTier[e.tier];
      };
      if (hi->tier != lo->tier + 1)
        return fail(ErrorCode::kSyntax,
                    "expected two adjacent tiers, the lower first (host,leaf / leaf,spine / "
                    "spine,core); " +
                        what(*lo, cells[0]) + " and " + what(*hi, cells[1]),
                    file, lineno);
      Truth t;
      if (!cells[2].empty()) {
        std::uint32_t n = 0;
        const bool digits = cells[2].size() <= 6 &&
                            cells[2].find_first_not_of("0123456789") == std::string_view::npos;
        if (digits)
          for (char c : cells[2]) n = n * 10 + static_cast<std::uint32_t>(c - '0');
        if (!digits || n == 0 || n > kMaxLinksPerPair)
          return fail(ErrorCode::kSyntax,
                      "column count: expected a number of links from 1 to " +
                          std::to_string(kMaxLinksPerPair) + " (or nothing), got " +
                          str::quoted(cells[2]),
                      file, lineno);
        if (lo->tier == 0 && n != 1)
          return fail(ErrorCode::kSyntax,
                      "column count: a host row is one link between the host and its leaf; "
                      "expected 1 (or nothing), got " +
                          std::to_string(n),
                      file, lineno);
        t.count = n;
      }
      if (!cells[3].empty()) {
        t.rate = stated_rate(cells[3]);
        if (!t.rate)
          return fail(
              ErrorCode::kSyntax,
              "column rate: " + std::string(kRateExpected) + ", got " + str::quoted(cells[3]), file,
              lineno);
        auto& first = first_rate[t.rate->is_ethernet() ? 1 : 0];
        if (!first) first = std::pair(*t.rate, lineno);
        // Stated rates of both link layers: the fabric would be InfiniBand and Ethernet.
        if (const auto& other = first_rate[t.rate->is_ethernet() ? 0 : 1])
          return fail(ErrorCode::kSyntax,
                      "rate " + t.rate->to_string() + " is " +
                          (t.rate->is_ethernet() ? "Ethernet" : "InfiniBand") + " but line " +
                          std::to_string(other->second) + " states " + other->first.to_string() +
                          " (" + (other->first.is_ethernet() ? "Ethernet" : "InfiniBand") +
                          "): a fabric has one link layer",
                      file, lineno);
      }
      if (!t.count && !t.rate)
        return fail(ErrorCode::kSyntax, "expected a count, a rate or both", file, lineno);
      // The pairs this row covers. Two names must be linked by the host rows.
      std::vector<std::pair<std::string, std::string>> pairs;
      if (lo->named && hi->named) {
        const auto& ups = up[lo->name];
        if (!ups.contains(hi->name)) {
          std::vector<std::string> names(ups.begin(), ups.end());
          return fail(ErrorCode::kReference,
                      str::quoted(lo->name) + " and " + str::quoted(hi->name) +
                          " are not linked by the host rows (" + str::quoted(lo->name) + "'s " +
                          kTier[hi->tier] + ": " + hostlist::compress(names) + ")",
                      file, lineno);
        }
        pairs.emplace_back(lo->name, hi->name);
      } else if (lo->named) {
        for (const auto& u : up[lo->name]) pairs.emplace_back(lo->name, u);
      } else if (hi->named) {
        for (const auto& d : down[hi->name]) pairs.emplace_back(d, hi->name);
      } else {
        for (const auto& [name, at] : tier_of)
          if (at.first == lo->tier)
            for (const auto& u : up[name]) pairs.emplace_back(name, u);
      }
      const int specificity = int{lo->named} + int{hi->named};
      for (const auto& pair : pairs) {
        auto& pt = stated[pair];
        for (const auto& [given, at] :
             {std::pair(bool(t.count), &pt.count_at), std::pair(bool(t.rate), &pt.rate_at)}) {
          if (!given || at->specificity > specificity) continue;
          if (at->specificity == specificity)
            return fail(ErrorCode::kDuplicate,
                        std::string("the ") + (at == &pt.count_at ? "count" : "rate") +
                            " of the links between " + str::quoted(pair.first) + " and " +
                            str::quoted(pair.second) + " is already given at line " +
                            std::to_string(at->line),
                        file, lineno);
          *at = Stated{specificity, lineno};
          if (at == &pt.count_at)
            pt.truth.count = t.count;
          else
            pt.truth.rate = t.rate;
        }
      }
      continue;
    }
    if (cells.size() != columns + (has_domain ? 1 : 0))
      return fail(ErrorCode::kSyntax,
                  "expected " + std::to_string(columns + (has_domain ? 1 : 0)) +
                      " comma-separated columns, got " + std::to_string(cells.size()),
                  file, lineno);
    if (has_domain && !cells.back().empty()) {
      if (auto why = domain_name_problem(cells.back()); !why.empty())
        return fail(ErrorCode::kSyntax, "column domain: expected a domain name: " + why, file,
                    lineno);
      domain_of.emplace_back(std::string(cells[0]), std::string(cells.back()));
    }
    for (std::size_t k = 0; k < columns; ++k) {
      const std::string name(cells[k]);
      if (!valid_name(name))
        return fail(ErrorCode::kSyntax,
                    std::string("column ") + kTier[k] +
                        ": expected a printable name of at most 255 bytes without blanks, commas, "
                        "brackets or quotes, got " +
                        str::quoted(name),
                    file, lineno);
      auto [it, inserted] = tier_of.try_emplace(name, static_cast<int>(k), lineno);
      if (!inserted && it->second.first != static_cast<int>(k))
        return fail(ErrorCode::kReference,
                    str::quoted(name) + " is a " + kTier[k] + " here but a " +
                        kTier[it->second.first] + " at line " + std::to_string(it->second.second),
                    file, lineno);
    }
    const std::string host(cells[0]);
    if (auto why = str::host_name_problem(host))
      return fail(ErrorCode::kSyntax, "column host: host name " + str::quoted(host) + " " + *why,
                  file, lineno);
    if (auto [it, inserted] = host_line.emplace(host, lineno); !inserted)
      return fail(ErrorCode::kDuplicate,
                  "host " + host + " already listed at line " + std::to_string(it->second), file,
                  lineno);
    if (tier_of.size() > limits().nodes)
      return fail(ErrorCode::kUnsupported,
                  "more than " + std::to_string(limits().nodes) +
                      " hosts and switches (FABRICPLACE_MAX_NODES raises the limit)",
                  file, lineno);
    tb.host_under(host, std::string(cells[1]), lineno);
    for (std::size_t k = 1; k < columns; ++k) {
      const std::string lower(cells[k - 1]), upper(cells[k]);
      if (k >= 2) tb.parent_of(lower, upper, lineno);
      if (up[lower].insert(upper).second) down[upper].insert(lower);
    }
  }
  if (columns == 0)
    return fail(ErrorCode::kSyntax,
                "no header up to the end: expected a \"host,leaf,spine[,core]\" header", file,
                lineno);
  if (host_line.empty())
    return fail(ErrorCode::kSyntax, "no host rows after the header, up to the end", file, lineno);
  // A stated rate of the other link layer than the assumed one: every pair must state its
  // rate, or the fabric would mix InfiniBand and Ethernet.
  if (const auto& other = first_rate[assumed_rate.is_ethernet() ? 0 : 1]) {
    for (const auto& [lower, ups] : up)
      for (const auto& u : ups) {
        const auto it = stated.find({lower, u});
        if (it == stated.end() || !it->second.truth.rate)
          return fail(ErrorCode::kSyntax,
                      *mixed_layers(other->first, assumed_rate) + " (the links between " +
                          str::quoted(lower) + " and " + str::quoted(u) + " have none)",
                      file, other->second);
      }
  }
  for (const auto& [pair, pt] : stated) tb.set_truth(pair.first, pair.second, pt.truth);
  // GPU counts are not in a tiers CSV: a host's domain, not how many GPUs it has there.
  for (const auto& [host, domain] : domain_of)
    builder.add_domain_host(domain, host, 0, host_line[host]);
  return copy_into(tb.build(), builder, "the tiers CSV", file, assumed_rate,
                   "a links section (docs/sources.md) states them");
}

}  // namespace fabricplace::fabric
