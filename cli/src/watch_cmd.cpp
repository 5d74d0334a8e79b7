// SPDX-License-Identifier: GPL-2.0-or-later
// `fabricplace fabric watch`: discovery (or re-import) against the accepted fabric, on a
// timer or in a loop; every change said on its own line, Slurm's files kept in step
// (slurm sync), metrics kept current (docs/operations.md).
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <memory>
#include <sstream>
#include <thread>

#include "commands.hpp"
#include "fabricplace/common/file_io.hpp"
#include "fabricplace/common/strings.hpp"
#include "fabricplace/fabric/domains.hpp"
#include "fabricplace/fabric/health.hpp"
#include "fabricplace/fabric/metrics.hpp"
#include "fabricplace/fabric/sources.hpp"
#include "fabricplace/ops/watch.hpp"
#ifdef FABRICPLACE_HAVE_IBND
#include "fabricplace/fabric_ibnd/discover.hpp"
#endif

namespace fabricplace::cli {

namespace {

volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_stop(int) {
  g_stop = 1;
}

struct WatchOpts {
  InputOpts in;
  std::string state, metrics, health_config, ca;
  int port = 0;
  unsigned attempts = 3, interval = 0, flap_runs = 10;
  std::size_t expect_hosts = 0;
  bool counters = false;
  SyncCliOpts sync;  // sync.out empty: no sync
};

// One line of the log, flushed: journald (or a file) sees it as it happens.
void say(std::uint64_t run, const std::string& line) {
  std::cout << "fabric watch: run " << run << ": " << line << std::endl;
}

// The fabric now: the sources re-imported, or a live discovery (lost links marked against
// the accepted fabric either way).
Result<fabric::Fabric> fabric_now(const WatchOpts& o, const fabric::Fabric* accepted) {
  if (!o.in.sources.empty()) {
    auto f = o.in.load();
    if (!f || !accepted) return f;
    return ops::with_lost_links(*f, *accepted);
  }
#ifdef FABRICPLACE_HAVE_IBND
  fabric::ibnd::DiscoverOptions d;
  d.ca = o.ca;
  d.port = o.port;
  d.attempts = o.attempts;
  d.counters = o.counters;
  d.previous = accepted;
  if (o.expect_hosts) d.expect_hosts = o.expect_hosts;
  if (!o.health_config.empty()) {
    auto t = fabric::load_health_config(o.health_config);
    if (!t) return std::unexpected(t.error());
    d.thresholds = *t;
  }
  auto f = fabric::ibnd::discover(d);
  // The NVLink domains no discovery sees, from the nvidia-smi file (--domains).
  if (!f || o.in.domains.empty()) return f;
  return fabric::load_domains(*f, o.in.domains);
#else
  return fail(ErrorCode::kUsage,
              "no source given and this build has no live discovery (configure with "
              "-DFABRICPLACE_WITH_IBNETDISC=ON), so there is nothing to watch");
#endif
}

// Seconds since `t0`, for the progress lines ("0.42 s").
std::string seconds_since(std::chrono::steady_clock::time_point t0) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f s",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return buf;
}

// One run; 0 when it ran through (changes or not), 1 when the fabric could not be read or
// was not accepted, or Slurm's files could not be written (or the state could not be read,
// or another run held it past the wait); 2 when it cannot work as asked (no source and no
// live discovery; a file slurm sync did not write in the sync directory).
//
// The state directory is locked for the whole run, and reached without following links
// (ops::WatchDir). A long run says what it is doing as it goes: the comparison, how many
// changes, and the time of each part.
int run_once(const WatchOpts& o) {
  auto dir = ops::WatchDir::open(o.state);
  if (!dir) return report(dir.error());
  auto st = dir->read_state();
  if (!st) return report(st.error());
  const auto run = st->runs + 1;
  for (const auto& note : dir->notes()) say(run, note);
  auto accepted = dir->read_accepted();
  if (!accepted) return report(accepted.error());
  const auto t0 = std::chrono::steady_clock::now();
  auto now = fabric_now(o, accepted->get());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // This run's metrics: a fabric's health with this run's time, accepted or not.
  auto write_metrics = [&](const fabric::Fabric& f, bool accepted_run,
                           decltype(fabric::MetricsRun::changes) changes,
                           decltype(fabric::MetricsRun::flapping) flapping) {
    const fabric::MetricsRun m{.discovery_time = double(std::time(nullptr)),
                               .discovery_duration = seconds,
                               .changes = changes,
                               .runs = run,
                               .accepted = accepted_run,
                               .flapping = flapping};
    return write_metrics_to(o.metrics, fabric::to_prometheus(f, m), false);
  };
  // A run that accepts nothing: the metrics show the accepted fabric's health, marked
  // rejected.
  auto rejected_metrics = [&] {
    if (o.metrics.empty() || !*accepted) return Result<void>{};
    return write_metrics(**accepted, false, std::nullopt, std::nullopt);
  };
  if (!now) {
    say(run, "discovery failed: " + now.error().to_string() + "; the accepted fabric stays");
    st->runs = run;
    (void)dir->write_state(*st);
    if (auto ok = rejected_metrics(); !ok) return report(ok.error());
    return now.error().code == ErrorCode::kUsage ? kExitUsage : kExitError;
  }
  if (!now->topology().incomplete.empty()) {
    say(run, "INCOMPLETE discovery (" + str::excerpt(now->topology().incomplete[0], 200) +
                 "): not accepted; the accepted fabric stays");
    st->runs = run;
    (void)dir->write_state(*st);
    if (auto ok = rejected_metrics(); !ok) return report(ok.error());
    return kExitError;
  }
  const auto t1 = std::chrono::steady_clock::now();
  if (*accepted)
    say(run, "comparing " + std::to_string(now->num_links()) + " links with the accepted " +
                 std::to_string((*accepted)->num_links()) + " (fabric read in " +
                 seconds_since(t0) + ")");
  auto step = ops::watch_step(accepted->get(), *now, *st, o.flap_runs);
  if (!*accepted) {
    say(run, "first fabric accepted: " + std::to_string(now->num_hosts()) + " hosts, " +
                 std::to_string(now->switches().size()) + " switches, " +
                 std::to_string(now->num_links()) + " links (" + now->origin() + ")");
  } else if (step.change_count == 0) {
    say(run, "no change");
  } else {
    say(run, std::to_string(step.changes.size()) + " change(s), " +
                 std::to_string(step.flaps.size()) + " flap line(s) (compared in " +
                 seconds_since(t1) + ")");
  }
  for (const auto& line : step.changes) say(run, line);
  for (const auto& line : step.flaps) say(run, line);
  // Every complete discovery becomes the accepted fabric (counters included, so a flap is
  // said once); the state after it.
  const auto t2 = std::chrono::steady_clock::now();
  if (auto ok = dir->write_accepted(*now); !ok) return report(ok.error());
  if (auto ok = dir->write_state(*st); !ok) return report(ok.error());
  if (step.change_count > 0)
    say(run, "accepted and saved (" + std::to_string(st->events.size()) + " link event(s) kept; " +
                 seconds_since(t2) + ")");
  int rc = kExitOk;
  if (!o.sync.out.empty()) {
    std::ostringstream out;
    auto brief = o.sync;
    brief.brief = true;
    auto r = sync_slurm_files(*now, brief, out);
    if (!r) {
      say(run, "slurm sync failed: " + r.error().to_string());
      rc = r.error().code == ErrorCode::kUsage ? kExitUsage : kExitError;
    } else {
      const auto text = out.str();
      for (auto line : str::lines(text))
        if (!line.empty()) say(run, std::string(line));
      if (o.sync.reconfigure) {
        std::ostringstream rout;
        auto ok = reconfigure_slurmctld(o.sync.out, rout);
        if (r->changed || !ok) say(run, std::string(str::trim(rout.str())));
        if (!ok) {
          say(run, ok.error().to_string());
          rc = kExitError;
        }
      }
    }
  }
  if (!o.metrics.empty())
    if (auto ok = write_metrics(*now, true, step.change_count, step.flapping_links); !ok)
      return report(ok.error());
  std::cout.flush();
  return rc;
}

}  // namespace

void add_watch_command(CLI::App& fabric, RunFn& run) {
  auto o = std::make_shared<WatchOpts>();
  auto* cmd = fabric.add_subcommand(
      "watch",
      "discover the fabric (or re-import a dump) and compare it with the last accepted one: "
      "each change said on its own line, links that flapped between runs said too; then "
      "slurm sync and the metrics file. Once (for a systemd timer), or every --interval "
      "seconds");
  o->in.add(cmd, "re-import these instead of discovering live: dump(s), JSON, spec");
  cmd->get_option("fabric")->required(false);
  cmd->add_option("--state", o->state,
                  "the watch's directory: accepted.json (the last accepted fabric) and "
                  "watch.json (runs, recent link events)")
      ->required()
      ->check(non_empty("a directory", "--state"));
  cmd->add_option("--interval", o->interval,
                  "seconds between runs; 0 (the default): one run, then exit (systemd timer)")
      ->check(CLI::Range(0u, 86400u));
  cmd->add_option("--flap-runs", o->flap_runs,
                  "a link that changes twice or more within this many runs is flapping")
      ->capture_default_str()
      ->check(CLI::Range(2u, 10000u));
  cmd->add_option("--metrics", o->metrics,
                  "keep this Prometheus textfile current (node_exporter's textfile collector "
                  "directory, *.prom)")
      ->check(non_empty("a file", "--metrics"));
  cmd->add_option("--ca", o->ca, "live discovery: CA to discover from (default: the first)");
  cmd->add_option("--port", o->port, "live discovery: CA port (default: the first active)")
      ->check(CLI::Range(1, 254));
  cmd->add_option("--attempts", o->attempts, "live discovery: whole discoveries tried")
      ->capture_default_str()
      ->check(CLI::Range(1u, 100u));
  cmd->add_option("--expect-hosts", o->expect_hosts,
                  "live discovery: fewer hosts is a failed run (the accepted fabric stays)");
  cmd->add_flag("--counters", o->counters,
                "live discovery: read PortCounters (error thresholds; links that went down and "
                "up between runs)");
  cmd->add_option("--health-config", o->health_config, "counter thresholds");
  cmd->add_option("--sync-out", o->sync.out,
                  "after each run, `slurm sync` the fabric into this directory")
      ->check(non_empty("a directory", "--sync-out"));
  cmd->add_option("--topology", o->sync.topology, "slurm sync: tree, block or yaml")
      ->check(CLI::IsMember({"tree", "block", "yaml"}));
  cmd->add_option("--plugin", o->sync.plugin, "slurm sync: the plugin for the plugstack line");
  cmd->add_option("--plugin-args", o->sync.plugin_args, "slurm sync: more plugstack arguments");
  cmd->add_option("--node-params", o->sync.node_params,
                  "slurm sync: appended to every NodeName= line");
  cmd->add_flag("--reconfigure", o->sync.reconfigure,
                "slurm sync: `scontrol reconfigure` when topology or nodes changed");
  cmd->callback([&run, o] {
    run = [o] {
      if (o->interval == 0) return run_once(*o);
      std::signal(SIGTERM, on_stop);
      std::signal(SIGINT, on_stop);
      std::cout << "fabric watch: every " << o->interval << " s; state in " << o->state << "\n";
      while (!g_stop) {
        // A usage error (no source and no live discovery, a file sync did not write) stays
        // one at every run: stop, with its exit status.
        if (const int rc = run_once(*o); rc == kExitUsage) return rc;
        std::cout.flush();
        for (unsigned s = 0; s < o->interval * 10 && !g_stop; ++s)
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      std::cout << "fabric watch: stopped\n";
      return kExitOk;
    };
  });
}

}  // namespace fabricplace::cli
