// Sources that name switches and hosts but carry no InfiniBand identity: Slurm
// topology.conf and tiers CSV. Both build a tree of one link per (parent, child) pair at the
// configured rate; switches get GUIDs in order of first appearance, so the fabric keeps the
// file's switch order (Slurm breaks ties by it). Each host gets one HCA "<host> hca<K>" per
// leaf it is listed under.
#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>

#include "fabricplace/common/hostlist.hpp"
#include "fabricplace/common/limits.hpp"
#include "fabricplace/common/strings.hpp"
#include "fabricplace/fabric/sources.hpp"

namespace fabricplace::fabric {
namespace {

constexpr Guid kTreeSwitchBase = 0x0002c90000000000ULL;  // synthetic, never on a real fabric
constexpr Guid kTreeCaBase = 0x0002ca0000000000ULL;

// Builds the tree once every edge is known.
class TreeBuilder {
 public:
  TreeBuilder(std::string origin, LinkRate rate) : b_(std::move(origin)), rate_(rate) {}

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
        if (auto r = b_.add_link(leaves[k], *p, ca.guid, 1, rate_); !r)
          return std::unexpected(r.error());
      }
    }
    for (const auto& [child, parent] : edges_) {
      auto pc = take(child);
      if (!pc) return std::unexpected(pc.error());
      auto pp = take(parent);
      if (!pp) return std::unexpected(pp.error());
      if (auto r = b_.add_link(child, *pc, parent, *pp, rate_); !r)
        return std::unexpected(r.error());
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
  FabricBuilder b_;
  LinkRate rate_;
  std::unordered_map<std::string, Guid> switches_;
  std::vector<std::string> order_;
  std::vector<int> line_of_;  // where each switch was first named
  std::vector<std::pair<Guid, Guid>> edges_;
  std::map<std::string, std::vector<Guid>> hosts_;
};

Result<void> copy_into(Result<Fabric> built, FabricBuilder& builder, const char* kind,
                       const std::string& file) {
  if (!built) {
    Error e = built.error();
    e.file = file;
    return std::unexpected(std::move(e));
  }
  builder.add_warning(std::string(kind) +
                      " carries no link counts: one link per switch pair is assumed, so "
                      "oversubscription reflects host counts only");
  return builder.merge(*built);
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
  TreeBuilder tb("slurm-topology " + file, options.link_rate);
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
    std::string name, nodes, switches;
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
        continue;
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
  for (const auto& r : switch_refs) tb.parent_of(r.child, r.parent, r.line);
  return copy_into(tb.build(), builder, "topology.conf", file);
}

Result<void> read_tiers_csv(std::string_view text, const std::string& file,
                            const SourceOptions& options, FabricBuilder& builder) {
  TreeBuilder tb("tiers-csv " + file, options.link_rate);
  std::size_t columns = 0;
  std::map<std::string, std::pair<int, int>> tier_of;  // name -> (tier, line)
  std::map<std::string, int> host_line;
  static const char* kTier[] = {"host", "leaf", "spine", "core"};
  int lineno = 0;
  for (std::string_view raw : str::lines(text)) {
    ++lineno;
    const auto line = str::trim(raw);
    if (line.empty() || line.front() == '#') continue;
    auto cells = str::split(line, ',');
    for (auto& c : cells) c = str::trim(c);
    if (columns == 0) {
      const bool ok =
          (cells.size() == 3 || cells.size() == 4) &&
          std::equal(cells.begin(), cells.end(), kTier, [](std::string_view a, const char* b) {
            return str::starts_with_icase(a, b) && a.size() == std::string_view(b).size();
          });
      if (!ok)
        return fail(
            ErrorCode::kSyntax,
            "expected the header line \"host,leaf,spine\" or \"host,leaf,spine,core\", got " +
                str::quoted(line),
            file, lineno);
      columns = cells.size();
      continue;
    }
    if (cells.size() != columns)
      return fail(ErrorCode::kSyntax,
                  "expected " + std::to_string(columns) + " comma-separated columns, got " +
                      std::to_string(cells.size()),
                  file, lineno);
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
    for (std::size_t k = 2; k < columns; ++k)
      tb.parent_of(std::string(cells[k - 1]), std::string(cells[k]), lineno);
  }
  if (columns == 0)
    return fail(ErrorCode::kSyntax,
                "no header up to the end: expected a \"host,leaf,spine[,core]\" header", file,
                lineno);
  if (host_line.empty())
    return fail(ErrorCode::kSyntax, "no host rows after the header, up to the end", file, lineno);
  return copy_into(tb.build(), builder, "a tiers CSV", file);
}

}  // namespace fabricplace::fabric
