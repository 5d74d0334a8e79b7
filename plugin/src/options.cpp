// SPDX-License-Identifier: GPL-2.0-or-later
#include "options.hpp"

#include "fabricplace/common/strings.hpp"
#include "fabricplace/policies/policies.hpp"

namespace fabricplace::plugin {

std::optional<Mode> parse_mode(std::string_view s) {
  if (s == "constrain") return Mode::kConstrain;
  if (s == "exact") return Mode::kExact;
  if (s == "off") return Mode::kOff;
  return std::nullopt;
}

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::kConstrain:
      return "constrain";
    case Mode::kExact:
      return "exact";
    case Mode::kOff:
      return "off";
  }
  return "?";
}

const char* option_name(Option o) {
  switch (o) {
    case Option::kTp:
      return "fabric-tp";
    case Option::kMode:
      return "fabric-mode";
    case Option::kPolicy:
      return "fabric-policy";
    case Option::kRankfile:
      return "fabric-rankfile";
    case Option::kEp:
      return "fabric-ep";
  }
  return "?";
}

const std::array<OptionDoc, kOptionCount>& option_docs() {
  static const std::array<OptionDoc, kOptionCount> docs{{
      {Option::kTp, "N",
       "fabricplace: GPUs per tensor-parallel group; each group stays inside one leaf switch "
       "and ranks follow the fabric ring",
       "At submission (sbatch, salloc) the job is checked against the fabric (a TP group must "
       "tile the job's nodes and GPUs) and, by --fabric-mode, steered: constrain adds a "
       "leaf constraint through job_submit.lua (on topology/block, the TP group's nodes as "
       "--segment through cli_filter.lua), exact pins the nodes the fabric policy chooses. At "
       "launch (srun, the batch step) tasks run in the fabric ring order and get "
       "FABRICPLACE_RING_RANK, FABRICPLACE_TP_GROUP, FABRICPLACE_TP_RANK and "
       "FABRICPLACE_RING_SIZE; the batch step writes the job's rank files. On a fabric with "
       "NVLink domains (`slurm sync` of a fabric with domains), a TP group stays inside one "
       "domain instead of one leaf."},
      {Option::kEp, "N",
       "fabricplace: GPUs per expert-parallel (MoE) group; each group stays inside one leaf "
       "switch or NVLink domain",
       "An EP group is N consecutive GPUs in rank order, whose all-to-all runs among them. "
       "EP and TP groups nest (one size a multiple of the other), and the larger of the two "
       "is the group kept inside one leaf or NVLink domain: at submission as --fabric-tp "
       "does (constrain, exact, the --segment of topology/block), at launch in the ring "
       "order. Tasks also get FABRICPLACE_EP_GROUP and FABRICPLACE_EP_RANK. Without "
       "--fabric-tp, a TP group is one node's GPUs."},
      {Option::kMode, "MODE", "fabricplace: constrain (default), exact or off",
       "constrain: Slurm chooses the nodes within what job_submit.lua allows (leaves that hold "
       "whole TP groups). exact: the plugin chooses the nodes with the fabric policy from the "
       "running jobs and pins them (a node list). off: the plugin leaves the job alone. The "
       "default comes from mode= in plugstack.conf."},
      {Option::kPolicy, "NAME",
       "fabricplace: fabric (default), slurm-tree, slurm-block or first-fit",
       "The placement policy of exact mode: fabric (bandwidth-aware), or a baseline that "
       "reproduces Slurm's own choice (slurm-tree, slurm-block) or the first free nodes."},
      {Option::kRankfile, "PREFIX",
       "fabricplace: rank files PREFIX.rankfile, .hosts, .torchrun.env, .json (default: "
       "fabricplace.JOBID in the job's directory)",
       "Written by the batch step (or an srun over every node of the job), all or none, each "
       "to a temporary name and renamed: an Open MPI rank file, a host list in rank order, "
       "the torchrun environment and the layout as JSON."},
  }};
  return docs;
}

Result<void> set_option(JobOptions& o, Option which, const char* value) {
  const std::string v = value ? value : "";
  const std::string name = std::string("--") + option_name(which);
  switch (which) {
    case Option::kTp: {
      const auto n = str::parse_uint(v, 1u << 20);
      if (!n || *n == 0)
        return fail(ErrorCode::kUsage,
                    name + ": expected a positive integer (GPUs per tensor-parallel group), got " +
                        str::quoted(v));
      o.tp = static_cast<std::uint32_t>(*n);
      return {};
    }
    case Option::kEp: {
      const auto n = str::parse_uint(v, 1u << 20);
      if (!n || *n == 0)
        return fail(ErrorCode::kUsage,
                    name + ": expected a positive integer (GPUs per expert-parallel group), got " +
                        str::quoted(v));
      o.ep = static_cast<std::uint32_t>(*n);
      return {};
    }
    case Option::kMode: {
      const auto m = parse_mode(v);
      if (!m)
        return fail(ErrorCode::kUsage,
                    name + ": expected constrain, exact or off, got " + str::quoted(v));
      o.mode = *m;
      return {};
    }
    case Option::kPolicy:
      if (!policies::parse_policy(v))
        return fail(ErrorCode::kUsage,
                    name + ": expected " + policies::policy_choices() + ", got " + str::quoted(v));
      o.policy = v;
      return {};
    case Option::kRankfile:
      if (v.empty() || v.find('\n') != std::string::npos)
        return fail(ErrorCode::kUsage,
                    name + ": expected a file path prefix, got " + str::quoted(v));
      o.rankfile = v;
      return {};
  }
  return fail(ErrorCode::kUsage, "unknown option");
}

}  // namespace fabricplace::plugin
