// SPDX-License-Identifier: GPL-2.0-or-later
// `fabricplace slurm sync`: every Slurm-side file from one fabric source, as one set
// (ops/slurm_sync.hpp, docs/operations.md).
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "fabricplace/common/strings.hpp"
#include "fabricplace/fabric/builder.hpp"
#include "fabricplace/fabric/diff.hpp"
#include "fabricplace/fabric/json_io.hpp"

namespace fabricplace::cli {

namespace {

// The live set's fabric.json against the new fabric, as `fabric diff` says it.
std::string fabric_changes(const std::string& old_json, const fabric::Fabric& now) {
  fabric::FabricBuilder b;
  if (!fabric::read_json(old_json, "fabric.json", b)) return {};
  auto before = b.build();
  if (!before) return {};
  return fabric::diff_text(fabric::diff(*before, now));
}

// How long `scontrol reconfigure` may take before it is killed: 60 s, or
// FABRICPLACE_RECONFIGURE_TIMEOUT seconds (docs/operations.md).
Result<unsigned> reconfigure_bound() {
  const char* v = std::getenv("FABRICPLACE_RECONFIGURE_TIMEOUT");
  if (!v || !*v) return 60u;
  const auto s = str::parse_uint(v, 3600);
  if (!s || *s == 0)
    return fail(ErrorCode::kUsage, "FABRICPLACE_RECONFIGURE_TIMEOUT=" + str::quoted(v, 40) +
                                       ": expected seconds from 1 to 3600 (unset: 60)");
  return static_cast<unsigned>(*s);
}

}  // namespace

Result<SyncOutcome> sync_slurm_files(const fabric::Fabric& f, const SyncCliOpts& o,
                                     std::ostream& out) {
  ops::SyncOptions so;
  so.topology = o.topology == "block"  ? ops::SlurmTopology::kBlock
                : o.topology == "yaml" ? ops::SlurmTopology::kYaml
                                       : ops::SlurmTopology::kTree;
  // The plugstack line names the files by absolute path (slurmstepd's working directory is
  // the job's).
  std::error_code ec;
  so.dir = std::filesystem::absolute(o.out, ec).lexically_normal().string();
  if (so.dir.size() > 1 && so.dir.back() == '/') so.dir.pop_back();
  so.plugin = o.plugin;
  so.plugin_args = o.plugin_args;
  so.node_params = o.node_params;
  auto set = ops::slurm_files(f, so);
  if (!set) return std::unexpected(set.error());
  for (const auto& w : set->warnings) std::cerr << "fabricplace: warning: " << w << "\n";
  const std::string& dir = so.dir;
  auto plan = o.dry_run ? ops::plan_sync(dir, *set) : ops::commit_sync(dir, *set, o.replace);
  if (!plan) return std::unexpected(plan.error());
  SyncOutcome r;
  r.generation = set->generation;
  r.changed = plan->changed();
  const std::string verb = o.dry_run ? "would be " : "";
  if (!r.changed) {
    out << "slurm sync: " << dir << ": no change (generation " << set->generation << ")\n";
    if (!o.brief)  // what a kept plugin line lacks, at every sync until it is edited
      for (const auto& [name, why] : plan->kept)
        out << "  kept  " << dir << "/" << name << ": " << why << "\n";
    return r;
  }
  out << "slurm sync: " << dir << ": generation " << set->generation;
  if (!plan->old_generation.empty() && plan->old_generation != set->generation)
    out << " (was " << plan->old_generation << ")";
  else if (plan->old_generation.empty())
    out << " (first sync)";
  out << (o.dry_run ? "; dry run, nothing written" : "") << "\n";
  for (const auto& c : plan->files)
    if (!o.brief || c.kind != ops::FileChange::Kind::kUnchanged)
      out << "  " << (c.kind == ops::FileChange::Kind::kUnchanged ? "" : verb)
          << ops::to_string(c.kind) << "  " << c.name << "\n";
  for (const auto& n : plan->links_to_fix)
    out << "  " << verb << "linked  " << dir << "/" << n << " -> .fabricplace/current/" << n
        << (std::ranges::find(plan->conflicts, n) == plan->conflicts.end() ? ""
            : o.replace ? " (the file there " + verb + "kept in .fabricplace/replaced/)"
                        : " (CONFLICT: a file sync did not write is there; --replace keeps it in "
                          ".fabricplace/replaced/)")
        << "\n";
  for (const auto& [name, why] : plan->kept)
    out << "  kept  " << dir << "/" << name << ": " << why << "\n";
  if (o.dry_run && !plan->conflicts.empty() && !o.replace) {
    std::string names;
    for (const auto& c : plan->conflicts) names += (names.empty() ? "" : ", ") + dir + "/" + c;
    return fail(ErrorCode::kUsage,
                "not written by slurm sync, so a real run refuses them "
                "without --replace: " +
                    names);
  }
  if (!o.brief && !plan->old_fabric_json.empty() && plan->changed("fabric.json")) {
    const auto d = fabric_changes(plan->old_fabric_json, f);
    if (!d.empty()) {
      out << "fabric.json changes:\n";
      for (auto line : str::lines(d)) out << "  " << line << "\n";
    }
  }
  return r;
}

Result<void> reconfigure_slurmctld(const std::string& out_dir, std::ostream& out) {
  std::error_code ec;
  const auto dir = std::filesystem::absolute(out_dir, ec).lexically_normal().string();
  const auto now = ops::slurmctld_digest(dir);
  if (now.empty() || now == ops::reconfigured_digest(dir)) {
    out << "reconfigure: not needed (slurmctld has read this topology and these nodes)\n";
    return {};
  }
  const auto bound = reconfigure_bound();
  if (!bound) return std::unexpected(bound.error());
  out << "reconfigure: scontrol reconfigure (topology or node definitions changed since the "
         "last reconfigure)\n";
  out.flush();
  if (auto ok = run_slurm("--reconfigure", "scontrol reconfigure", *bound); !ok)
    return fail(ErrorCode::kIo, ok.error().message +
                                    " (the files are written; the next sync with --reconfigure "
                                    "tries again)");
  return ops::record_reconfigured(dir, now);
}

void add_sync_command(CLI::App* slurm, RunFn& run) {
  auto in = std::make_shared<InputOpts>();
  auto o = std::make_shared<SyncCliOpts>();
  auto* cmd = slurm->add_subcommand(
      "sync",
      "write every Slurm-side file from one fabric into a directory as one set: fabric.json, "
      "fabric.hostmap, fabric.lua, topology.conf (or topology.yaml), fabricplace-nodes.conf "
      "and plugstack.conf.d/fabricplace.conf, each stamped with one generation id; switched "
      "in atomically, so a killed sync leaves the previous set whole; prints what changed");
  in->add(cmd, "fabric: JSON, dump(s), topology.conf, tiers CSV or spec", "--fabric");
  cmd->add_option("--out", o->out, "the directory (e.g. /etc/slurm, beside slurm.conf)")
      ->required()
      ->check(non_empty("a directory", "--out"));
  cmd->add_flag("--dry-run", o->dry_run, "print what would change; write nothing");
  cmd->add_option("--topology", o->topology,
                  "the cluster's topology plugin: tree (topology.conf, topology/tree), block "
                  "(topology.conf, topology/block; the plugin line gets topology=block) or yaml "
                  "(topology.yaml, Slurm 25.05+)")
      ->check(CLI::IsMember({"tree", "block", "yaml"}));
  cmd->add_option("--plugin", o->plugin, "the plugin for the plugstack line")
      ->check(non_empty("a file", "--plugin"));
  cmd->add_option("--plugin-args", o->plugin_args,
                  "more arguments for the plugstack line: \"policy=fabric mode=constrain "
                  "gpus_per_node=8\" (fabric=, hostmap= and topology= are sync's)");
  cmd->add_option("--node-params", o->node_params,
                  "appended to every NodeName= line of fabricplace-nodes.conf: \"CPUs=128 "
                  "RealMemory=1000000 Gres=gpu:8\" (or a NodeName=DEFAULT line before the "
                  "Include)");
  cmd->add_flag("--replace", o->replace,
                "take over files sync did not write (kept in DIR/.fabricplace/replaced/)");
  cmd->add_flag("--reconfigure", o->reconfigure,
                "run `scontrol reconfigure` when topology or node definitions changed since the "
                "last one that succeeded (job_submit.lua and the plugin pick up their files by "
                "themselves)");
  cmd->callback([&run, in, o] {
    run = [in, o] {
      if (o->reconfigure && !o->dry_run)  // a bad bound is refused before anything is written
        if (auto b = reconfigure_bound(); !b) return report(b.error());
      auto f = in->load();
      if (!f) return report(f.error());
      print_warnings(*f);
      auto r = sync_slurm_files(*f, *o, std::cout);
      if (!r) return report(r.error());
      if (o->reconfigure && !o->dry_run)
        if (auto ok = reconfigure_slurmctld(o->out, std::cout); !ok) return report(ok.error());
      return kExitOk;
    };
  });
}

}  // namespace fabricplace::cli
