// SPDX-License-Identifier: GPL-2.0-or-later
#include "submit.hpp"

#include <sys/stat.h>

#include <algorithm>

#include <map>
#include <memory>
#include <mutex>

#include "fabricplace/common/strings.hpp"
#include "fabricplace/fabric/sources.hpp"
#include "fabricplace/placement/running.hpp"
#include "fabricplace/policies/policies.hpp"

namespace fabricplace::plugin {

std::vector<std::string> sbatch_directives(std::string_view script) {
  std::vector<std::string> words;
  std::size_t pos = 0;
  bool first = true;
  while (pos < script.size()) {
    const auto eol = script.find('\n', pos);
    auto line = str::trim(script.substr(pos, eol == std::string_view::npos ? eol : eol - pos));
    pos = eol == std::string_view::npos ? script.size() : eol + 1;
    if (first && line.rfind("#!", 0) == 0) {
      first = false;
      continue;
    }
    first = false;
    if (line.empty()) continue;
    if (line.front() != '#') break;  // the first command ends the directives, as in sbatch
    if (line.rfind("#SBATCH", 0) != 0) continue;
    line.remove_prefix(7);
    if (const auto hash = line.find(" #"); hash != std::string_view::npos)
      line = line.substr(0, hash);  // a trailing comment
    // "#SBATCH hetjob" (or the older "packjob") starts the next component, as ":" does
    // (sbatch looks for the word anywhere in the directive).
    if (line.find("hetjob") != std::string_view::npos ||
        line.find("packjob") != std::string_view::npos) {
      words.emplace_back(":");
      continue;
    }
    for (std::size_t i = 0; i < line.size();) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      const std::size_t b = i;
      while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
      if (i > b) words.emplace_back(line.substr(b, i - b));
    }
  }
  return words;
}

SubmitShape submit_shape(const std::vector<std::string>& directives,
                         const std::vector<std::string>& args) {
  SubmitShape s;
  for (const auto* words : {&directives, &args}) {
    const auto c = parse_srun_args(*words);
    if (c.nodes) {
      s.nodes = c.nodes;
      s.nodes_range = c.nodes_range;
    }
    if (c.ntasks) s.ntasks = c.ntasks;
    if (c.ntasks_per_node) s.ntasks_per_node = c.ntasks_per_node;
    s.nodelist = s.nodelist || c.nodelist;
    s.het = s.het || c.het;
    if (c.fabric_tp) s.fabric_tp = c.fabric_tp;
    if (c.fabric_ep) s.fabric_ep = c.fabric_ep;
    if (c.fabric_mode) s.fabric_mode = c.fabric_mode;
    if (c.segment) s.segment = c.segment;
    if (words == &args && c.command) s.script = (*words)[*c.command];
  }
  return s;
}

std::optional<std::uint32_t> SubmitShape::node_count() const {
  if (nodes) return nodes;
  if (ntasks && ntasks_per_node && *ntasks % *ntasks_per_node == 0)
    return *ntasks / *ntasks_per_node;
  if (!ntasks && script && !script_unread) return 1;  // sbatch's default: one node
  return std::nullopt;
}

Result<void> validate_submission(const placement::HostMap& m,
                                 std::optional<std::uint32_t> node_count,
                                 std::uint32_t gpus_per_node, const Groups& g) {
  const std::uint32_t nodes = node_count.value_or(0);
  if (node_count && nodes > m.names.size())
    return fail(ErrorCode::kUsage, "the job asks for " + std::to_string(nodes) +
                                       " nodes; the fabric has " + std::to_string(m.names.size()) +
                                       " hosts");
  auto spec = shape_spec(g, gpus_per_node);
  spec.nodes = node_count;  // unknown: the rules that need it wait for Slurm's count
  auto shape = placement::JobShape::make(spec, kShapeNames);
  if (!shape) return std::unexpected(shape.error());
  if (const auto n = shape->hosts_per_group(); n > 1) {
    std::size_t largest = 0;
    std::string where;
    for (std::size_t k = 0; k < m.blocks.size(); ++k)
      if (m.blocks.hosts[k].size() > largest) {
        largest = m.blocks.hosts[k].size();
        where = m.blocks.name[k];
      }
    const bool ep = shape->ep > shape->tp_size();
    const std::string one(fabric::block_noun(m.blocks.kind));
    if (n > largest)
      return fail(ErrorCode::kUsage, std::string(ep ? kShapeNames.ep : kShapeNames.tp) + " " +
                                         std::to_string(shape->group_gpus()) + ": " +
                                         (ep ? "an EP" : "a TP") + " group needs " +
                                         std::to_string(n) + " nodes in one " + one +
                                         "; the largest " + one + " (" + where + ") has " +
                                         std::to_string(largest) + " hosts");
  }
  return {};
}

BlockSegment block_segment(std::optional<std::uint32_t> nodes, std::uint32_t gpus_per_node,
                           const Groups& g) {
  auto spec = shape_spec(g, gpus_per_node);  // the job shape's rules: groups span whole nodes
  const auto shape0 = placement::JobShape::make(spec, kShapeNames);
  if (shape0 && shape0->hosts_per_group() == 1)
    return {std::nullopt, "a group fits inside one node"};
  if (!nodes) return {std::nullopt, "the node count (-N) is not known"};
  spec.nodes = nodes;  // ... and tile the job
  auto shape = placement::JobShape::make(spec, kShapeNames);
  if (!shape) return {std::nullopt, shape.error().message};
  return {shape->hosts_per_group(), {}};
}

bool in_one_block(const placement::HostMap& m, std::string_view hosts) {
  std::optional<std::uint32_t> block;
  for (const auto& h : str::split(hosts, '\n')) {
    if (h.empty()) continue;
    const auto it = m.index.find(std::string(h));
    if (it == m.index.end()) return false;
    const auto b = m.blocks.of_host[it->second];
    if (b == fabric::kNone || (block && *block != b)) return false;
    block = b;
  }
  return block.has_value();
}

Result<ExactPlacement> exact_hostfile(const ExactRequest& r) {
  // The fabric and its planner, loaded once per process (a submission runs one sbatch).
  static std::mutex mu;
  static std::map<std::string,
                  std::pair<std::unique_ptr<fabric::Fabric>, std::unique_ptr<policies::Planner>>>
      cache;
  const std::lock_guard lock(mu);
  auto& entry = cache[r.fabric_path];
  if (!entry.first) {
    // Regular files only: a FIFO or a device would hang sbatch.
    if (struct stat sb{}; ::stat(r.fabric_path.c_str(), &sb) == 0 && !S_ISREG(sb.st_mode)) {
      cache.erase(r.fabric_path);
      return fail(ErrorCode::kIo, "not a regular file (expected the fabric JSON)", r.fabric_path);
    }
    auto f = fabric::load_fabric(r.fabric_path);
    if (!f) {
      cache.erase(r.fabric_path);
      return std::unexpected(f.error());
    }
    entry.first = std::make_unique<fabric::Fabric>(std::move(*f));
    // slurm-tree as the Slurm this plugin is built for selects.
    entry.second = std::make_unique<policies::Planner>(
        *entry.first, placement::Weights{}, nullptr,
        policies::slurm_series_of(FABRICPLACE_SLURM_MAJOR, FABRICPLACE_SLURM_MINOR));
  }
  const auto& f = *entry.first;
  const auto policy = policies::parse_policy(r.policy);
  if (!policy) return fail(ErrorCode::kUsage, "--fabric-policy " + r.policy + ": unknown");
  auto states = placement::states_from_sinfo(f, r.states, "the cluster's node states");
  if (!states) return std::unexpected(states.error());
  ExactPlacement out;
  auto running = placement::running_from_lines(f, r.running, "the cluster's running jobs");
  if (running) {
    for (const auto& j : running->jobs) out.running_hosts += j.hosts.size();
    out.running_jobs = running->jobs.size();
    out.notes = std::move(running->warnings);
  } else {
    out.notes.push_back(running.error().to_string() + "; placing without the running jobs");
    running = placement::RunningJobs{};
  }
  auto spec = shape_spec(r.groups, r.gpus_per_node);
  spec.nodes = r.nodes;
  auto shape = placement::JobShape::make(spec, kShapeNames);
  if (!shape) return std::unexpected(shape.error());
  auto job = placement::request(*shape);
  job.runner_up = false;  // the choice is all a submission uses
  // The running jobs' rings load the fabric on the planner's route model; the objective
  // weighs them (a ring without a route is left out, said once).
  const auto& planner = *entry.second;
  placement::Traffic traffic(planner.routes(), planner.context().capacity,
                             &planner.context().groups);
  if (const auto unrouted = traffic.add(running->jobs).size())
    out.notes.push_back(std::to_string(unrouted) +
                        " running job(s) left out: some edge of their ring has no route");
  const auto p = planner.place(job, *states, *policy, &traffic);
  if (!p.feasible) return fail(ErrorCode::kUsage, "no placement now: " + p.reason);
  for (auto h : p.hosts) out.hostfile += f.host(h).name + "\n";
  return out;
}

}  // namespace fabricplace::plugin
