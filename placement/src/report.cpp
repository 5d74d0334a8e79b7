// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/placement/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "fabricplace/common/hostlist.hpp"
#include "fabricplace/routes/model.hpp"

namespace fabricplace::placement {
namespace {

using fabric::HostId;
using fabric::idx;
using fabric::kNone;
using ojson = nlohmann::ordered_json;

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}
double round2(double v) {
  return std::round(v * 100) / 100;
}

std::vector<std::string> names(const fabric::Fabric& f, const std::vector<HostId>& hosts) {
  std::vector<std::string> out;
  out.reserve(hosts.size());
  for (HostId h : hosts) out.push_back(f.host(h).name);
  return out;
}

// Maximal runs of consecutive ranks in one block.
std::vector<std::pair<std::uint32_t, std::vector<HostId>>> segments(
    const Context& c, const std::vector<HostId>& ranked) {
  std::vector<std::pair<std::uint32_t, std::vector<HostId>>> out;
  for (HostId h : ranked) {
    const auto k = c.blocks.of_host[idx(h)];
    if (out.empty() || out.back().first != k) out.push_back({k, {}});
    out.back().second.push_back(h);
  }
  return out;
}

// The bottleneck's rate or count is one its source assumed (fabric::Assumed).
bool bottleneck_assumed(const Context& c, const Forecast& fc) {
  return fc.bottleneck != kNone && c.fabric->link(fabric::LinkId{fc.bottleneck / 2}).assumed.any();
}

std::string slowdown_str(const Forecast& fc) {
  return fc.routed ? num(fc.slowdown) : std::string("no route");
}

// "2", or "2 (core 16.00:1)" where the ring crosses thin links to the core: the mean
// Context::pod_scarcity of its pods.
std::string core_ratio(const Measures& m) {
  if (m.pods < 2 || m.thin_core <= 0) return {};
  const auto r = num((m.pods + m.thin_core) / m.pods);
  return r == "1.00" ? std::string() : r;
}
std::string pods_str(const Measures& m) {
  std::string s = std::to_string(m.pods);
  if (const auto r = core_ratio(m); !r.empty())
    s += " (core " + r + ":1" + (m.core_assumed ? ", assumed link figures" : "") + ")";
  return s;
}

struct Row {
  const char* name;
  std::string (*get)(const Measures&);
};
const Row kRows[] = {
    {"leaves", [](const Measures& m) { return std::to_string(m.leaves); }},
    {"pods", [](const Measures& m) { return pods_str(m); }},
    {"ring inter-leaf edges", [](const Measures& m) { return std::to_string(m.ring_inter_leaf); }},
    {"ring inter-pod edges", [](const Measures& m) { return std::to_string(m.ring_inter_pod); }},
    {"predicted slowdown", [](const Measures& m) { return slowdown_str(m.bandwidth); }},
    {"bottleneck load",
     [](const Measures& m) {
       if (m.bandwidth.bottleneck == kNone) return std::string("-");
       return routes::load_str(m.bandwidth.before) + " -> " + routes::load_str(m.bandwidth.after);
     }},
    {"others slowed",
     [](const Measures& m) {
       return m.bandwidth.slowed == 0
                  ? std::string("0")
                  : std::to_string(m.bandwidth.slowed) + " (+" + num(m.bandwidth.others) + ")";
     }},
    {"leftover free hosts", [](const Measures& m) { return std::to_string(m.leftover); }},
    {"fresh blocks broken", [](const Measures& m) { return std::to_string(m.fresh_blocks); }},
    {"TP groups split", [](const Measures& m) { return std::to_string(m.tp_groups_split); }},
    {"unhealthy hosts", [](const Measures& m) { return std::to_string(m.unhealthy_hosts); }},
};
// With pipeline stages (--pp P > 1), after the ring edges.
const Row kPipelineRows[] = {
    {"pipeline inter-leaf", [](const Measures& m) { return std::to_string(m.pp_inter_leaf); }},
    {"stages in one leaf", [](const Measures& m) { return std::to_string(m.stages_in_block); }},
};

// The rows shown for a job: the pipeline's where it has stages.
// A row's name for blocks of kind `k`: "leaves", "ring inter-leaf edges", "stages in one
// leaf" name rail groups and NVLink domains as such.
std::string row_name(const Row& r, fabric::BlockKind k) {
  std::string s = r.name;
  if (k == fabric::BlockKind::kLeaf) return s;
  const auto replace = [&s](std::string_view from, std::string_view to) {
    if (const auto at = s.find(from); at != std::string::npos) s.replace(at, from.size(), to);
  };
  replace("inter-leaf", "inter-" + std::string(fabric::block_tag(k)));
  replace("leaves", fabric::block_noun(k, true));
  replace("one leaf", "one " + std::string(fabric::block_noun(k)));
  return s;
}

std::vector<const Row*> rows_for(const JobRequest& job) {
  std::vector<const Row*> out;
  for (const auto& r : kRows) {
    out.push_back(&r);
    if (job.pp > 1 && std::string_view(r.name) == "ring inter-pod edges")
      for (const auto& q : kPipelineRows) out.push_back(&q);
  }
  return out;
}

ojson bandwidth_json(const Context& c, const Forecast& fc) {
  ojson j;
  j["routed"] = fc.routed;
  j["slowdown"] = fc.routed ? ojson(round2(fc.slowdown)) : ojson(nullptr);
  j["share"] = fc.routed ? ojson(round2(fc.share())) : ojson(nullptr);
  if (fc.bottleneck == kNone) {
    j["bottleneck"] = nullptr;
  } else {
    j["bottleneck"] = bottleneck_name(*c.fabric, fc);
    j["bottleneck_gbps"] = round2(c.capacity.gbps[fc.bottleneck]);
    j["bottleneck_assumed"] = bottleneck_assumed(c, fc);
    j["load_before"] = round2(fc.before);
    j["load_after"] = round2(fc.after);
  }
  j["jobs_slowed"] = fc.slowed;
  j["others_slowdown"] = round2(fc.others);
  return j;
}

ojson measures_json(const Context& c, const Measures& m) {
  return ojson{{"leaves", m.leaves},
               {"pods", m.pods},
               {"thin_core", round2(m.thin_core)},
               {"core_assumed", m.core_assumed},
               {"ring_inter_leaf", m.ring_inter_leaf},
               {"ring_inter_pod", m.ring_inter_pod},
               {"bandwidth", bandwidth_json(c, m.bandwidth)},
               {"pp_inter_leaf", m.pp_inter_leaf},
               {"stages_in_block", m.stages_in_block},
               {"leftover", m.leftover},
               {"fresh_blocks", m.fresh_blocks},
               {"tp_groups_split", m.tp_groups_split},
               {"unhealthy_hosts", m.unhealthy_hosts}};
}

// "leaf01[33] -> spine02[1] (200 Gb/s): 1 -> 2 ring edges, ring share 50 %".
std::string bottleneck_text(const Context& c, const Forecast& fc) {
  if (!fc.routed)
    return "some ring edge has no route (a leaf without uplinks, or parts of the "
           "fabric that do not reach each other)";
  // No link loaded: one host, or every ring edge inside one NVLink domain.
  if (fc.bottleneck == kNone)
    return c.fabric && c.fabric->has_domains() ? "none (one host, or every ring edge on NVLink)"
                                               : "none (a single host)";
  char share[16];
  std::snprintf(share, sizeof share, "%.0f", 100 * fc.share());
  std::string s = bottleneck_name(*c.fabric, fc) + " (" +
                  routes::load_str(c.capacity.gbps[fc.bottleneck]) + " Gb/s" +
                  (bottleneck_assumed(c, fc) ? ", assumed" : "") +
                  "): " + routes::load_str(fc.before) + " -> " + routes::load_str(fc.after) +
                  " ring edges; the job's ring runs at " + share + " % of a host link";
  if (fc.slowed)
    s += "; slows " + std::to_string(fc.slowed) +
         (fc.slowed == 1 ? " running job" : " running jobs") + " by " + num(fc.others) +
         " node-slowdown in all";
  return s;
}

ojson job_json(const JobRequest& job) {
  return ojson{{"nodes", job.nodes},  {"gpus_per_node", job.gpus_per_node},
               {"tp", job.tp_size()}, {"ep", job.ep},
               {"pp", job.pp},        {"tp_group_nodes", job.group_nodes()}};
}

ojson to_ojson(const Context& c, const Placement& p) {
  const auto& f = *c.fabric;
  ojson j;
  j["policy"] = p.policy;
  j["feasible"] = p.feasible;
  if (!p.feasible) {
    j["reason"] = p.reason;
    return j;
  }
  j["hosts"] = names(f, p.hosts);
  j["hostlist"] = hostlist::compress(names(f, p.hosts));
  ojson groups = ojson::array();
  for (const auto& g : p.tp_groups) groups.push_back(names(f, g));
  j["tp_groups"] = std::move(groups);
  j["leaves"] = p.leaves;
  j["score"] = round2(p.score);
  j["measures"] = measures_json(c, p.measures);
  if (p.has_runner_up) {
    ojson r;
    r["leaves"] = p.runner_up_leaves;
    r["score"] = round2(p.runner_up_score);
    r["measures"] = measures_json(c, p.runner_up);
    j["runner_up"] = std::move(r);
  }
  return j;
}

// `s` padded to `w` columns, and at least one space after it (a column never runs into
// the next).
std::string pad(std::string s, std::size_t w) {
  s.append(s.size() < w ? w - s.size() : 1, ' ');
  return s;
}

// Rows of cells as aligned columns: each column as wide as `widths` says, or wider when a
// cell needs it (its longest cell and one space); the last column is not padded.
std::string columns(const std::vector<std::vector<std::string>>& rows,
                    std::vector<std::size_t> widths) {
  for (const auto& row : rows)
    for (std::size_t i = 0; i + 1 < row.size(); ++i) {
      if (widths.size() <= i) widths.push_back(widths.empty() ? 1 : widths.back());
      widths[i] = std::max(widths[i], row[i].size() + 1);
    }
  std::string out;
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i)
      out += i + 1 < row.size() ? pad(row[i], widths[i]) : row[i];
    out += "\n";
  }
  return out;
}

}  // namespace

std::string ring_text(const Context& c, const std::vector<HostId>& ranked) {
  std::string out;
  for (const auto& [k, hosts] : segments(c, ranked)) {
    if (!out.empty()) out += " -> ";
    out += (k == kNone ? std::string("(no leaf)") : c.blocks.name[k]) + " " +
           hostlist::compress(names(*c.fabric, hosts));
  }
  return out;
}

std::string placement_text(const Context& c, const JobRequest& job, const Placement& p,
                           bool explain) {
  const auto& f = *c.fabric;
  // What a block is called: an NVLink domain, a rail group or a leaf.
  const std::string one(fabric::block_noun(c.blocks.kind)),
      many(fabric::block_noun(c.blocks.kind, true));
  std::string s = "policy: " + p.policy + "\n";
  if (!p.feasible) return s + "feasible: no\nreason: " + p.reason + "\n";
  const auto& m = p.measures;
  s += "feasible: yes\n";
  s += "hosts: " + hostlist::compress(names(f, p.hosts)) + " (" + std::to_string(p.hosts.size()) +
       ")\n";
  s += many + ": ";
  for (std::size_t i = 0; i < p.leaves.size(); ++i) s += (i ? ", " : "") + p.leaves[i];
  const auto core = core_ratio(m);
  s += " (" + std::to_string(m.leaves) + " in " + std::to_string(m.pods) +
       (m.pods == 1 ? " pod" : " pods") + (core.empty() ? std::string() : ", core " + core + ":1") +
       ")\n";
  s += "ring: " + ring_text(c, p.hosts) + "\n";
  const std::string unit(fabric::block_tag(c.blocks.kind));
  s += "ring edges: " + std::to_string(m.ring_inter_leaf) + " inter-" + unit + ", " +
       std::to_string(m.ring_inter_pod) + " inter-pod\n";
  const auto T = job.group_gpus(), G = job.gpus_per_node;
  s += std::string(job.ep > job.tp_size() ? "EP" : "TP") +
       " groups: " + std::to_string(p.tp_groups.size()) +
       (T > G   ? " x " + std::to_string(job.hosts_per_group()) + " hosts"
        : T < G ? ", " + std::to_string(job.groups_per_host()) + " per host"
                : ", one per host") +
       " (TP " + std::to_string(job.tp_size()) +
       (job.ep ? ", EP " + std::to_string(job.ep) : std::string()) + ", " + std::to_string(G) +
       " GPUs per node)";
  if (m.tp_groups_split) s += "; " + std::to_string(m.tp_groups_split) + " split across " + many;
  s += "\n";
  if (job.pp > 1 && p.hosts.size() % job.pp == 0) {
    const std::size_t per = p.hosts.size() / job.pp;
    s += "pipeline: " + std::to_string(job.pp) + " stages of " + std::to_string(per) +
         (per == 1 ? " node, " : " nodes, ") + std::to_string(m.stages_in_block) + " inside one " +
         one + "; " + std::to_string(m.pp_inter_leaf) + " edges of their traffic between " + many +
         " (stage rings, stage to stage)\n";
    for (std::size_t st = 0; st < job.pp; ++st) {
      std::vector<HostId> stage(p.hosts.begin() + static_cast<long>(st * per),
                                p.hosts.begin() + static_cast<long>((st + 1) * per));
      s += "  stage " + std::to_string(st + 1) + ": " + ring_text(c, stage) + "\n";
    }
  }
  s += "bandwidth: predicted slowdown " + slowdown_str(m.bandwidth);
  if (m.bandwidth.bottleneck != kNone || !m.bandwidth.routed)
    s += "; bottleneck " + bottleneck_text(c, m.bandwidth);
  s += "\n";
  s += "score: " + num(p.score);
  if (!m.bandwidth.routed)
    s += " (a ring edge without a route counts at slowdown " + num(kNoRoute) + ")";
  s += "\n";
  if (!explain) return s;

  std::vector<std::vector<std::string>> table;
  table.push_back({"criterion", "chosen", p.has_runner_up ? "runner-up" : ""});
  for (const Row* r : rows_for(job))
    table.push_back(
        {row_name(*r, c.blocks.kind), r->get(m), p.has_runner_up ? r->get(p.runner_up) : ""});
  table.push_back({"score", num(p.score), p.has_runner_up ? num(p.runner_up_score) : ""});
  s += "\n" + columns(table, {24, 14});
  if (p.has_runner_up) {
    s += "runner-up " + many + ": ";
    for (std::size_t i = 0; i < p.runner_up_leaves.size(); ++i)
      s += (i ? ", " : "") + p.runner_up_leaves[i];
    s += "\n";
    // Equal as the fabric policy compares them (a grid of 1e-6).
    if (std::nearbyint(p.runner_up_score * 1e6) == std::nearbyint(p.score * 1e6))
      s += "(a tie: of the equal sets found, the one with the fewest faulty uplinks, then the "
           "first in topology.conf order, wins)\n";
  } else if (p.policy == "fabric") {
    s += "runner-up: none (the search found no other set of " + std::to_string(m.leaves) + " " +
         (m.leaves == 1 ? one : many) + " that holds the job)\n";
  } else {
    s += "runner-up: " + p.policy + " weighs no alternatives\n";
  }
  if (p.has_runner_up)
    s += "runner-up bottleneck: " + bottleneck_text(c, p.runner_up.bandwidth) + "\n";
  // What is wrong with the uplinks of each leaf used (and the runner-up's).
  std::vector<std::string> shown = p.leaves;
  shown.insert(shown.end(), p.runner_up_leaves.begin(), p.runner_up_leaves.end());
  std::vector<bool> done(c.blocks.size(), false);
  std::string up;
  for (const auto& name : shown)
    for (std::size_t k = 0; k < c.blocks.size(); ++k)
      if (c.blocks.name[k] == name && !done[k]) {
        done[k] = true;
        if (!c.uplinked(k))
          up += "  " + name + ": no uplink: it cannot carry ring traffic to other leaves\n";
        else if (!c.uplink_why[k].empty())
          up += "  " + name + ": " + c.uplink_why[k] + "\n";
      }
  if (!up.empty()) s += "uplinks:\n" + up;
  return s;
}

std::string placement_json(const Context& c, const JobRequest& job, const Placement& p) {
  ojson j = to_ojson(c, p);
  j["job"] = job_json(job);
  if (p.feasible && job.pp > 1 && p.hosts.size() % job.pp == 0) {
    // Pipeline stages in rank order: stage s is the s-th N / P hosts.
    const std::size_t per = p.hosts.size() / job.pp;
    ojson stages = ojson::array();
    for (std::size_t st = 0; st < job.pp; ++st) {
      std::vector<HostId> stage(p.hosts.begin() + static_cast<long>(st * per),
                                p.hosts.begin() + static_cast<long>((st + 1) * per));
      std::vector<std::string> leaves;
      for (HostId h : stage) {
        const auto k = c.blocks.of_host[idx(h)];
        const std::string name = k == kNone ? std::string() : c.blocks.name[k];
        if (std::find(leaves.begin(), leaves.end(), name) == leaves.end()) leaves.push_back(name);
      }
      stages.push_back(ojson{{"hosts", names(*c.fabric, stage)}, {"leaves", leaves}});
    }
    j["stages"] = std::move(stages);
  }
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string compare_text(const Context& c, const JobRequest& job,
                         const std::vector<Placement>& ps) {
  std::vector<std::vector<std::string>> table(1, {""});
  table.push_back({"feasible"});
  for (const auto& p : ps) {
    table[0].push_back(p.policy);
    table[1].push_back(p.feasible ? "yes" : "no");
  }
  for (const Row* r : rows_for(job)) {
    table.push_back({row_name(*r, c.blocks.kind)});
    for (const auto& p : ps) table.back().push_back(p.feasible ? r->get(p.measures) : "-");
  }
  table.push_back({"score"});
  for (const auto& p : ps) table.back().push_back(p.feasible ? num(p.score) : "-");
  // Every column is padded, the last too (as before: a trailing blank column).
  for (auto& row : table) row.emplace_back();
  std::string s = columns(table, {24, 16});
  s += "\n";
  for (const auto& p : ps) {
    s += p.policy + ": ";
    if (!p.feasible)
      s += "infeasible: " + p.reason;
    else
      s += ring_text(c, p.hosts) + "\n  bottleneck: " + bottleneck_text(c, p.measures.bandwidth);
    s += "\n";
  }
  return s;
}

std::string compare_json(const Context& c, const JobRequest& job, const std::vector<Placement>& ps,
                         const Placement& selected) {
  ojson j;
  j["policy"] = selected.policy;
  j["feasible"] = selected.feasible;
  if (!selected.feasible) j["reason"] = selected.reason;
  j["job"] = job_json(job);
  ojson all = ojson::array();
  for (const auto& p : ps) all.push_back(to_ojson(c, p));
  j["placements"] = std::move(all);
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace fabricplace::placement
