// SPDX-License-Identifier: GPL-2.0-or-later
// fabricplace fabric import | generate | show | diff | metrics | export
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "fabricplace/common/file_io.hpp"
#include "fabricplace/fabric/diff.hpp"
#include "fabricplace/fabric/export.hpp"
#include "fabricplace/fabric/json_io.hpp"
#include "fabricplace/fabric/metrics.hpp"
#include "fabricplace/fabric/report.hpp"
#include "fabricplace/fabric/slurm_block.hpp"
#include "fabricplace/fabric/slurm_tree.hpp"
#include "fabricplace/fabric/sources.hpp"
#include "fabricplace/fabric/spec.hpp"
#include "fabricplace/placement/rank_layout.hpp"

namespace fabricplace::cli {
namespace {

using namespace fabricplace::fabric;

void add_to_json_command(CLI::App& fabric, RunFn& run, const char* name, const char* help,
                         const char* inputs) {
  auto in = std::make_shared<InputOpts>();
  auto out = std::make_shared<std::string>("-");
  auto* cmd = fabric.add_subcommand(name, help);
  in->add(cmd, inputs);
  add_output_option(cmd, *out, "output file ('-' = stdout)");
  cmd->callback([&run, in, out] {
    run = [in, out] {
      auto f = in->load();
      if (!f) return report(f.error());
      print_warnings(*f);
      return write_output(*out, to_json(*f));
    };
  });
}

}  // namespace

void add_fabric_commands(CLI::App& app, RunFn& run) {
  auto* fabric = app.add_subcommand("fabric", "build, inspect and export the fabric graph");
  fabric->require_subcommand(1);
  add_discover_command(*fabric, run);
  add_watch_command(*fabric, run);

  // import and merge: read sources (merged by GUID), write canonical JSON.
  add_to_json_command(*fabric, run, "import",
                      "read ibnetdiscover dumps (several: one per rail plane, merged by GUID), "
                      "topology.conf, tiers CSV or JSON; write canonical JSON",
                      "input files (or a spec)");
  add_to_json_command(*fabric, run, "merge",
                      "merge fabrics by GUID (one discovery per rail plane: LIDs may repeat) into "
                      "one canonical JSON",
                      "fabrics to merge (JSON, dumps, ...)");
  {  // generate
    auto spec = std::make_shared<std::string>();
    auto out = std::make_shared<std::string>("-");
    auto* cmd = fabric->add_subcommand(
        "generate", "build a synthetic fabric from a spec; write canonical JSON");
    cmd->add_option("spec", *spec, "e.g. fat2:leaves=8,down=20,up=20 (see docs/synthetic-specs.md)")
        ->required();
    add_output_option(cmd, *out, "output file ('-' = stdout)");
    cmd->footer("Spec keys and defaults:\n" + spec_help());
    cmd->callback([&run, spec, out] {
      run = [spec, out] {
        auto f = generate(*spec);
        if (!f) return report(f.error());
        return write_output(*out, to_json(*f));
      };
    });
  }
  {  // show
    auto in = std::make_shared<InputOpts>();
    auto json = std::make_shared<bool>(false);
    auto* cmd = fabric->add_subcommand(
        "show", "classification: levels, pods, rails, oversubscription, degraded links, warnings");
    in->add(cmd, "fabric: dump(s), JSON, topology.conf, tiers CSV or spec");
    cmd->add_flag("--json", *json, "machine-readable output");
    cmd->callback([&run, in, json] {
      run = [in, json] {
        auto f = in->load();
        if (!f) return report(f.error());
        std::cout << (*json ? show_json(*f) : show_text(*f));
        return kExitOk;
      };
    });
  }
  {  // diff
    auto before = std::make_shared<std::string>();
    auto after = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    auto* cmd = fabric->add_subcommand(
        "diff",
        "what changed between two fabrics: links added, removed, degraded, recovered; hosts moved. "
        "Exit status: 0 no change, 1 changed, 2 trouble (like diff(1))");
    cmd->add_option("old", *before, "the earlier fabric")->required();
    cmd->add_option("new", *after, "the later fabric")->required();
    cmd->add_flag("--json", *json, "machine-readable output");
    cmd->callback([&run, before, after, json] {
      run = [before, after, json] {
        auto a = load_fabric(*before);
        if (!a) return report(a.error()), kExitUsage;
        auto b = load_fabric(*after);
        if (!b) return report(b.error()), kExitUsage;
        const FabricDiff d = diff(*a, *b);
        std::cout << (*json ? diff_json(d) : diff_text(d));
        return d.empty() ? kExitOk : kExitError;
      };
    });
  }
  {  // metrics
    auto in = std::make_shared<InputOpts>();
    auto out = std::make_shared<std::string>("-");
    auto* cmd = fabric->add_subcommand(
        "metrics",
        "the fabric's health as Prometheus metrics for node_exporter's textfile collector: "
        "degraded links, error counters over thresholds, lost links, oversubscription; port "
        "series labelled guid and port as the InfiniBand exporters label theirs");
    in->add(cmd, "fabric: JSON (from fabric discover --counters --previous), dump(s), spec, ...");
    add_output_option(cmd, *out,
                      "output file ('-' = stdout); written to a temporary file and renamed, as "
                      "the textfile collector wants (name it *.prom); in a directory others may "
                      "write, a link at that name is replaced, not followed");
    cmd->callback([&run, in, out] {
      run = [in, out] {
        auto f = in->load();
        if (!f) return report(f.error());
        print_warnings(*f);
        return write_metrics_file(*out, to_prometheus(*f));
      };
    });
  }
  {  // export
    auto in = std::make_shared<InputOpts>();
    auto format = std::make_shared<std::string>();
    auto out = std::make_shared<std::string>("-");
    auto allow_partial = std::make_shared<bool>(false);
    auto* cmd = fabric->add_subcommand(
        "export",
        "write the fabric as Slurm topology.conf (tree or block), per-leaf Slurm "
        "node features, DOT, JSON, an ibsim net file, an "
        "ibnetdiscover dump or a tiers CSV");
    in->add(cmd, "fabric: dump(s), JSON, topology.conf, tiers CSV or spec");
    cmd->add_option(
           "--format", *format,
           "slurm-topology | slurm-block | slurm-block-nodes | slurm-yaml | slurm-features | "
           "hostmap | "
           "lua | dot | json | ibsim-net | ibnetdiscover | ibnetdiscover-p | tiers-csv")
        ->required()
        ->check(CLI::IsMember({"slurm-topology", "slurm-block", "slurm-block-nodes", "slurm-yaml",
                               "slurm-features", "hostmap", "lua", "dot", "json", "ibsim-net",
                               "ibnetdiscover", "ibnetdiscover-p", "tiers-csv"}));
    add_output_option(cmd, *out, "output file ('-' = stdout)");
    cmd->add_flag(
        "--allow-partial", *allow_partial,
        "export a fabric marked incomplete (its missing hosts and switches would be missing from "
        "the output too)");
    cmd->callback([&run, in, format, out, allow_partial] {
      run = [in, format, out, allow_partial] {
        auto f = in->load();
        if (!f) return report(f.error());
        if (!f->topology().incomplete.empty() && *format != "json") {
          print_warnings(*f);
          if (!*allow_partial)
            return report(
                Error{ErrorCode::kUsage,
                      "the fabric is INCOMPLETE (a partial discovery): a " + *format +
                          " export would silently lack what it misses; rediscover, or pass "
                          "--allow-partial",
                      {},
                      0});
        }
        std::string text;
        if (format->starts_with("slurm-")) {
          const auto tree = slurm_tree(*f);
          for (const auto& w : tree.warnings) std::cerr << "fabricplace: warning: " << w << "\n";
          if (auto ok = check_slurm_topology(tree); !ok) return report(ok.error());
          if (*format == "slurm-topology") {
            text = to_slurm_topology(*f, tree);
          } else if (*format == "slurm-features") {
            text = to_slurm_features(*f, tree);
          } else {
            // topology/block (docs/slurm.md, "topology/block"): blocks, the placeholders'
            // State=FUTURE node lines for slurm.conf, or both views as topology.yaml.
            const auto blocks = slurm_blocks(*f, tree);
            if (*format == "slurm-yaml") {
              auto yaml = to_slurm_yaml(*f, tree, blocks);
              if (!yaml) return report(yaml.error());
              text = std::move(*yaml);
            } else {
              text = *format == "slurm-block" ? to_slurm_block(*f, blocks)
                                              : to_slurm_block_nodes(blocks);
            }
          }
        } else if (*format == "hostmap") {
          // Hosts per leaf and pod for the SPANK plugin's launch path (docs/slurm.md).
          text = placement::to_host_map_text(placement::host_map(placement::prepare(*f)));
        } else if (*format == "lua") {
          // The fabric table slurmctld's job_submit.lua reads (etc/job_submit.lua).
          text = placement::to_lua_table(placement::host_map(placement::prepare(*f)));
        } else if (*format == "dot") {
          text = to_dot(*f);
        } else if (*format == "json") {
          text = to_json(*f);
        } else if (*format == "tiers-csv") {
          auto csv = to_tiers_csv(*f);
          if (!csv) return report(csv.error());
          text = std::move(*csv);
          // One rate per pair: a degraded link among healthy ones is written at their rate.
          std::size_t mixed = 0;
          for (std::size_t at = 0;
               (at = text.find(" at another rate than ", at)) != std::string::npos; ++at)
            ++mixed;
          if (mixed > 0)
            std::cerr << "fabricplace: warning: a tiers CSV states one rate per switch pair: "
                      << mixed
                      << " pair(s) with links at other rates are written at their most common rate "
                         "(a comment in the file names each)\n";
        } else {
          if (auto ok = fits_infiniband(*f); !ok) return report(ok.error());
          text = *format == "ibsim-net"       ? to_ibsim_net(*f)
                 : *format == "ibnetdiscover" ? to_ibnetdiscover(*f)
                                              : to_ibnetdiscover_ports(*f);
        }
        return write_output(*out, text);
      };
    });
  }
}

}  // namespace fabricplace::cli
