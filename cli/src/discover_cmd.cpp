// SPDX-License-Identifier: GPL-2.0-or-later
// fabricplace fabric discover: live discovery through libibnetdisc, in process.
#include <cstdio>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "fabricplace/common/file_io.hpp"
#include "fabricplace/fabric/domains.hpp"
#include "fabricplace/fabric/json_io.hpp"
#include "fabricplace/fabric/sources.hpp"
#include "fabricplace/fabric_ibnd/discover.hpp"

namespace fabricplace::cli {

void add_discover_command(CLI::App& fabric, RunFn& run) {
  struct Opts {
    fabric::ibnd::DiscoverOptions d;
    std::size_t expect_hosts = 0;
    std::string previous, health_config, domains, out = "-";
    bool quiet = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = fabric.add_subcommand(
      "discover",
      "discover the fabric live through libibnetdisc (in process) and write canonical JSON; "
      "checks completeness and retries, optionally reads port error counters");
  cmd->add_option("--ca", o->d.ca, "CA to discover from (default: the first)");
  cmd->add_option("--port", o->d.port, "CA port (default: the first active)")
      ->check(CLI::Range(1, 254));
  cmd->add_option("--max-smps", o->d.max_smps, "SMPs in flight (libibnetdisc's default is 2)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 512u));
  cmd->add_option("--timeout-ms", o->d.timeout_ms, "per-MAD timeout (0: libibnetdisc's default)");
  cmd->add_option("--retries", o->d.retries, "per-MAD retries (0: libibnetdisc's default)");
  cmd->add_option("--attempts", o->d.attempts, "whole discoveries tried until one is complete")
      ->capture_default_str()
      ->check(CLI::Range(1u, 100u));
  cmd->add_option("--expect-hosts", o->expect_hosts,
                  "fail (after retries) when fewer hosts are found");
  cmd->add_option(
      "--previous", o->previous,
      "an earlier fabric: its switches are expected, and links it had that are down now are "
      "marked as lost");
  cmd->add_flag("--counters", o->d.counters,
                "read PortCounters of every linked port (needs an SM: LIDs)");
  cmd->add_option("--health-config", o->health_config,
                  "counter thresholds (default: etc/fabricplace/health.conf values)");
  cmd->add_option("--domains", o->domains,
                  "the hosts' NVLink domains (nvidia-smi output collected with pdsh; "
                  "docs/sources.md, Accelerator domains), added to the discovered fabric")
      ->check(non_empty("a file path", "FILE"));
  cmd->add_flag("--allow-partial", o->d.allow_partial,
                "publish an incomplete discovery anyway, marked incomplete in the JSON");
  cmd->add_flag("-q,--quiet", o->quiet, "no summary on stderr");
  add_output_option(cmd, o->out, "output file ('-' = stdout)");
  cmd->callback([&run, o] {
    run = [o] {
      std::unique_ptr<fabric::Fabric> previous;
      if (!o->previous.empty()) {
        auto p = fabric::load_fabric(o->previous);
        if (!p) return report(p.error());
        previous = std::make_unique<fabric::Fabric>(std::move(*p));
        o->d.previous = previous.get();
      }
      if (!o->health_config.empty()) {
        auto t = fabric::load_health_config(o->health_config);
        if (!t) return report(t.error());
        o->d.thresholds = *t;
      }
      if (o->expect_hosts) o->d.expect_hosts = o->expect_hosts;
      fabric::ibnd::DiscoverReport rep;
      auto f = fabric::ibnd::discover(o->d, &rep);
      if (!f) return report(f.error());
      if (!o->domains.empty()) {
        auto g = fabric::load_domains(*f, o->domains);
        if (!g) return report(g.error());
        f = std::move(g);
      }
      if (!o->quiet) {
        std::fprintf(
            stderr,
            "fabricplace: discovered %zu switches, %zu HCAs, %zu links, %zu hosts in %.3f s "
            "(%u MADs, max_smps %u, attempt %u)%s\n",
            f->switches().size(), f->cas().size(), f->num_links(), f->num_hosts(), rep.seconds,
            rep.mads, o->d.max_smps, rep.attempts,
            o->d.counters
                ? (", counters of " + std::to_string(rep.counters_read) + " ports").c_str()
                : "");
        for (const auto& m : f->topology().incomplete)
          std::cerr << "fabricplace: warning: INCOMPLETE: " << m << "\n";
        for (const auto& w : f->topology().warnings)
          std::cerr << "fabricplace: warning: " << w << "\n";
      }
      return write_output(o->out, fabric::to_json(*f));
    };
  });
}

}  // namespace fabricplace::cli
