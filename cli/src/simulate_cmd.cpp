// SPDX-License-Identifier: GPL-2.0-or-later
// fabricplace simulate: replays job traces on a fabric under several placement policies
// and writes jobs.csv, summary.csv and report.html into --out (docs/simulator.md).
//
// Exit status: 0 done, 1 bad input or an output that could not be written, 2 bad command
// line. Progress goes to stderr; the summary table to stdout.
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include "commands.hpp"
#include "fabricplace/common/file_io.hpp"
#include "fabricplace/sim/degrade.hpp"
#include "fabricplace/sim/report.hpp"
#include "fabricplace/sim/simulator.hpp"

namespace fabricplace::cli {
namespace {

struct SimulateOpts {
  InputOpts in;
  std::vector<std::string> traces;
  std::string trace_format = "auto";
  std::string policies = "fabric,slurm-tree,first-fit";
  CLI::Option* gpus_opt = nullptr;
  std::string slurm_version = "22.05";
  std::string out;
  RouteOpts routes;
  std::string policy_config;
  sim::TraceOptions topt;
  sim::SimOptions sopt;
  std::uint32_t degrade = 0;
  std::uint64_t seed = 1;
  unsigned threads = 0;
  bool quiet = false;
};

int usage(const std::string& message) {
  return report(Error{ErrorCode::kUsage, message, {}, 0});
}

std::string fmt(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// A setting as given: the shortest form that reads back as the same double (0.0625, 2, 1e-05).
std::string exact(double v) {
  char buf[64];
  for (int p = 1; p <= 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*g", p, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

int run_simulate(const SimulateOpts& o) {
  const auto t0 = std::chrono::steady_clock::now();
  auto fmt_opt = std::optional<sim::TraceFormat>{};
  for (auto f : {sim::TraceFormat::kAuto, sim::TraceFormat::kPhilly, sim::TraceFormat::kItp,
                 sim::TraceFormat::kSwf}) {
    if (sim::to_string(f) == o.trace_format) fmt_opt = f;
  }
  if (!fmt_opt) {
    return usage("--trace-format '" + o.trace_format + "': expected auto, philly, itp or swf");
  }
  auto pols = sim::parse_sim_policies(o.policies);
  if (!pols) return report(pols.error());
  const auto series = policies::parse_slurm_series(o.slurm_version);
  if (!series) return usage("--slurm-version " + o.slurm_version + ": expected 22.05 or 24.11");
  if (!(o.sopt.comm_fraction >= 0 && o.sopt.comm_fraction <= 1)) {
    return usage("--comm-fraction must be between 0 and 1");
  }
  if (!(o.sopt.estimate_factor > 0) || !std::isfinite(o.sopt.estimate_factor)) {
    return usage("--estimate-factor must be a positive number");
  }
  if (o.out.empty()) return usage("--out must name a directory");
  auto specs = o.routes.specs();
  if (!specs) return report(specs.error());
  auto loaded = o.in.load();
  if (!loaded) return report(loaded.error());
  std::optional<fabric::Fabric> degraded;
  std::vector<std::string> notes;
  const fabric::Fabric* f = &*loaded;
  if (o.degrade > 0) {
    for (const auto& s : *specs) {
      if (!s.automatic && s.kind == routes::Kind::kLfts) {
        return usage(
            "--degrade-links rebuilds the fabric, which an LFT dump no longer matches: give it "
            "with a route model, not lfts:FILE");
      }
    }
    auto d = sim::degrade_random_links(*loaded, o.degrade, o.seed);
    if (!d) return report(d.error());
    degraded.emplace(std::move(d->fabric));
    f = &*degraded;
    std::string list;
    for (const auto& l : d->links) list += (list.empty() ? "" : ", ") + l;
    notes.push_back(std::string(loaded->link_layer() == fabric::LinkLayer::kEthernet
                                    ? "degraded to a quarter of their rate (seed "
                                    : "degraded to 1x (seed ") +
                    std::to_string(o.seed) + "): " + list);
  }

  auto weights_or = load_weights(o.policy_config);
  if (!weights_or) return report(weights_or.error());
  const placement::Weights weights = *weights_or;
  std::vector<std::unique_ptr<const routes::Model>> models;
  for (const auto& s : *specs) {
    auto m = load_routes(*f, s);
    if (!m) return report(m.error());
    models.push_back(std::move(*m));
  }
  // Two names that come to one model ("ftree,auto" on a fabric ftree routes) would give two
  // runs of the same label: refuse them.
  for (std::size_t a = 0; a < models.size(); ++a) {
    for (std::size_t b = a + 1; b < models.size(); ++b) {
      if (models[a]->label() == models[b]->label()) {
        return usage("--routes " + (*specs)[a].name() + " and " + (*specs)[b].name() +
                     " are the same model here (" + models[a]->label() + ")");
      }
    }
  }
  const bool with_routes = models.size() > 1;

  sim::TraceOptions topt = o.topt;
  topt.format = *fmt_opt;
  topt.gpus_per_node = gpus_per_node(o.gpus_opt, topt.gpus_per_node, *f);
  auto trace = sim::read_traces(o.traces, topt);
  if (!trace) return report(trace.error());
  for (const auto& n : trace->notes) notes.push_back(n);
  // What the fabric only assumes (link counts, rates) shapes every contention figure: say so.
  for (const auto& w : f->topology().warnings) notes.push_back("fabric: " + w);
  if (trace->jobs.empty()) {
    // The file holds no job rows, or every row was skipped (the notes above say why): a
    // fault of the input, like any file that does not give what its format promises.
    std::string files;
    for (const auto& t : trace->files) files += (files.empty() ? "" : ", ") + t;
    for (const auto& n : trace->notes) std::cerr << "fabricplace: note: " << n << "\n";
    return report(Error{ErrorCode::kSyntax, "no jobs to run in the trace", files, 0});
  }

  // One planner per route model: the fabric policy decides on the model in force.
  std::vector<std::unique_ptr<policies::Planner>> planners;
  std::vector<sim::Simulator> simulators;
  simulators.reserve(models.size());
  for (const auto& m : models) {
    planners.push_back(std::make_unique<policies::Planner>(*f, weights, m.get(), *series));
    simulators.emplace_back(*planners.back(), o.sopt);
  }
  // Every (route model, policy) pair is a run.
  struct Job {
    const sim::Simulator* simulator;
    sim::SimPolicy policy;
    std::string label;
  };
  std::vector<Job> jobs;
  for (std::size_t m = 0; m < models.size(); ++m) {
    for (const auto& p : *pols) {
      jobs.push_back(
          {&simulators[m], p, with_routes ? p.name() + " [" + models[m]->label() + "]" : p.name()});
    }
  }
  // Jobs some policy can never place are dropped from every run, so all compare on the
  // same jobs.
  std::vector<std::uint8_t> skip(trace->jobs.size(), 0);
  for (const auto& p : *pols) {
    auto u = simulators.front().unplaceable(*trace, p);
    for (std::size_t i = 0; i < skip.size(); ++i) skip[i] |= u[i];
  }
  std::size_t dropped = 0;
  for (auto s : skip) dropped += s;
  if (dropped) {
    notes.push_back(std::to_string(dropped) +
                    " jobs dropped: larger than the fabric, or with a TP group no leaf holds");
    if (!o.quiet) std::cerr << "simulate: " << notes.back() << "\n";
  }
  if (dropped == trace->jobs.size()) {
    return usage(
        "no job of the trace fits this fabric: each is larger than it, or has a TP group no "
        "leaf holds; give a larger fabric, a lower --tp-cap, or other jobs (--skip-jobs, "
        "--max-jobs)");
  }
  // Inputs are good: make sure the outputs can be written before spending time.
  std::error_code ec;
  std::filesystem::create_directories(o.out, ec);
  if (ec || !std::filesystem::is_directory(o.out, ec)) {
    return report(Error{ErrorCode::kIo,
                        "--out: cannot create the directory" +
                            (ec ? ": " + ec.message() : std::string(": a file is in the way")),
                        o.out, 0});
  }
  if (!o.quiet) {
    std::cerr << "simulate: " << trace->jobs.size() - dropped << " jobs on " << f->num_hosts()
              << " hosts, " << pols->size() << " policies\n";
    for (const auto& m : models) std::cerr << "simulate: routes: " << m->description() << "\n";
  }

  std::vector<sim::Run> runs(jobs.size());
  std::mutex mu;
  // Progress at most every 2 s per run (long runs only); each run's end is reported.
  std::vector<std::chrono::steady_clock::time_point> last_print(jobs.size(),
                                                                std::chrono::steady_clock::now());
  auto worker = [&](std::size_t k) {
    auto start = std::chrono::steady_clock::now();
    sim::Progress progress;
    if (!o.quiet) {
      progress = [&, k](std::size_t done, std::size_t total) {
        const auto now = std::chrono::steady_clock::now();
        if (done == total || now - last_print[k] < std::chrono::seconds(2)) return;
        std::lock_guard lock(mu);
        last_print[k] = now;
        const int pct = static_cast<int>(100 * done / total);
        std::cerr << "simulate: " << jobs[k].label << " " << pct << "% (" << done << "/" << total
                  << " jobs)\n";
      };
    }
    runs[k] = jobs[k].simulator->run(*trace, jobs[k].policy, skip, progress);
    if (!o.quiet) {
      const double s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::lock_guard lock(mu);
      std::cerr << "simulate: " << jobs[k].label << " done in " << fmt(s, 2) << " s ("
                << fmt(static_cast<double>(trace->jobs.size() - dropped) / s * 60, 0)
                << " jobs/min)\n";
    }
  };
  // At most one thread per run helps (each replay is sequential), and a thread that cannot
  // be started leaves its share to the others: --threads 100000 is 4 threads for 4 runs.
  const unsigned wanted = o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  const unsigned threads =
      std::max(1u, std::min<unsigned>(wanted, static_cast<unsigned>(jobs.size())));
  std::atomic<std::size_t> next{0};
  auto drain = [&] {
    for (std::size_t k; (k = next++) < jobs.size();) worker(k);
  };
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < threads; ++i) {
    try {
      pool.emplace_back(drain);
    } catch (const std::system_error&) {
      break;  // the threads already started, and this one, do the rest
    }
  }
  drain();
  for (auto& th : pool) th.join();

  for (const auto& r : runs) {
    if (r.never_started > 0) {
      notes.push_back(sim::run_label(r, with_routes) + ": " + std::to_string(r.never_started) +
                      " jobs could never start (the hosts they need are not usable)");
    }
  }
  // Rings with an edge that has no route ran as if alone: said in the report and below the
  // summary table (docs/routes.md: callers say so).
  std::vector<std::string> unrouted;
  for (const auto& r : runs)
    if (auto n = sim::unrouted_note(r, with_routes); !n.empty()) {
      notes.push_back(n);
      unrouted.push_back(std::move(n));
    }
  std::vector<sim::Summary> sums;
  for (const auto& r : runs)
    sums.push_back(sim::summarize(*trace, r, f->num_hosts(), o.sopt, with_routes));

  sim::ReportInfo info;
  info.title = "fabricplace simulation";
  info.fabric = f->origin() + " (" + std::to_string(f->num_hosts()) + " hosts, " +
                std::to_string(f->topology().leaves.size()) + " leaves, " +
                std::to_string(f->switches().size()) + " switches)";
  for (const auto& m : models) info.routes.push_back(m->description());
  info.traces = trace->files;
  info.settings = {
      "GPUs per node " + std::to_string(topt.gpus_per_node) + "; TP cap " +
          std::to_string(topt.tp_cap) + " GPUs; arrival scale " + exact(topt.arrival_scale),
      "communication fraction " + exact(o.sopt.comm_fraction) +
          "; run-time estimate = " + exact(o.sopt.estimate_factor) +
          " x duration; bf_max_job_test " + std::to_string(o.sopt.bf_max_job_test),
  };
  info.notes = notes;

  // All three files or none: each is written to a temporary name first, then all renamed.
  const std::string dir = o.out + "/";
  const std::vector<std::pair<std::string, std::string>> outputs{
      {"jobs.csv", sim::jobs_csv(*trace, runs, *f, with_routes)},
      {"summary.csv", sim::summary_csv(sums)},
      {"report.html", sim::html_report(*trace, runs, sums, info, *f, with_routes)}};
  const std::string tmp_suffix = ".partial";
  auto remove_temps = [&] {
    for (const auto& [name, text] : outputs) std::filesystem::remove(dir + name + tmp_suffix, ec);
  };
  // A destination that cannot be replaced by a file (a directory in the way) fails the run
  // before anything is replaced; after that a rename within one directory does not fail.
  for (const auto& [name, text] : outputs) {
    if (std::filesystem::exists(dir + name, ec) &&
        !std::filesystem::is_regular_file(dir + name, ec)) {
      return report(Error{ErrorCode::kIo, "not a regular file: cannot replace it", dir + name, 0});
    }
  }
  for (const auto& [name, text] : outputs) {
    if (auto r = write_file_atomic(dir + name + tmp_suffix, text); !r) {
      remove_temps();
      return report(r.error());
    }
  }
  for (const auto& [name, text] : outputs) {
    std::filesystem::rename(dir + name + tmp_suffix, dir + name, ec);
    if (ec) {
      remove_temps();
      return report(
          Error{ErrorCode::kIo, "cannot rename into place: " + ec.message(), dir + name, 0});
    }
  }

  for (const auto& m : models) std::cout << "routes: " << m->description() << "\n";
  std::size_t width = 16;
  for (const auto& s : sums) width = std::max(width, s.policy.size());
  std::cout << std::string("policy") + std::string(width - 6, ' ') +
                   "   jobs  tp-split  mean-wait-s  p95-wait-s  util   comm-slowdown  max-load\n";
  for (const auto& s : sums) {
    char line[256];
    std::snprintf(line, sizeof line, "%-*s %6zu %9zu %12.0f %11.0f %5.1f%% %14.3f %9s\n",
                  static_cast<int>(width), s.policy.c_str(), s.jobs, s.jobs_tp_split, s.mean_wait_s,
                  s.p95_wait_s, 100 * s.utilization, s.mean_comm_slowdown,
                  routes::load_str(s.max_link_load).c_str());
    std::cout << line;
  }
  for (const auto& n : unrouted) std::cout << "warning: " << n << "\n";
  if (!o.quiet) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cerr << "simulate: wrote " << dir << "{jobs.csv,summary.csv,report.html} in " << fmt(s, 2)
              << " s\n";
  }
  return kExitOk;
}

}  // namespace

void add_simulate_command(CLI::App& app, RunFn& run) {
  auto o = std::make_shared<SimulateOpts>();
  auto* cmd = app.add_subcommand("simulate",
                                 "replay job traces on a fabric and compare placement policies");
  o->in.add(cmd, "the fabric (file or spec)", "--fabric");
  cmd->add_option("--trace", o->traces,
                  "job trace: Philly CSV, ITP CSV or SWF (.gz read as is), or a generator "
                  "spec (llm:jobs=2000,load=0.8,hosts=N; see trace generate --help); repeat "
                  "to merge")
      ->required();
  cmd->add_option("--trace-format", o->trace_format, "auto | philly | itp | swf")
      ->capture_default_str();
  cmd->add_option("--policies", o->policies,
                  "comma-separated: fabric, slurm-tree, slurm-block, first-fit")
      ->capture_default_str();
  cmd->add_option("--slurm-version", o->slurm_version,
                  "the Slurm whose topology/tree selection slurm-tree reproduces: 22.05 or 24.11")
      ->capture_default_str();
  cmd->add_option("--out", o->out, "directory for jobs.csv, summary.csv, report.html")
      ->required()
      ->check(non_empty("a directory", "DIR"));
  o->routes.add(cmd, true);
  cmd->add_option("--policy-config", o->policy_config,
                  "the objective's weights (etc/fabricplace/policy.conf)");
  o->gpus_opt = cmd->add_option("--gpus-per-node", o->topt.gpus_per_node,
                                "GPUs per node (default: the fabric's NVLink domains' count, "
                                "else 8)")
                    ->check(CLI::Range(1u, 1024u));
  cmd->add_option("--tp-cap", o->topt.tp_cap, "largest TP group, in GPUs")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1u << 20));
  cmd->add_option("--comm-fraction", o->sopt.comm_fraction,
                  "share of a job's uncontended run time spent in AllReduce")
      ->capture_default_str();
  cmd->add_option("--arrival-scale", o->topt.arrival_scale,
                  "multiply inter-arrival times (0.5: twice the load)")
      ->capture_default_str();
  cmd->add_option("--max-jobs", o->topt.max_jobs, "simulate at most N jobs (0: all)");
  cmd->add_option("--skip-jobs", o->topt.skip_jobs, "start after the first N jobs");
  cmd->add_option("--estimate-factor", o->sopt.estimate_factor,
                  "run-time estimate = duration x this (EASY reservations)")
      ->capture_default_str();
  cmd->add_option("--bf-max-job-test", o->sopt.bf_max_job_test,
                  "jobs tested for backfill per pass (Slurm's bf_max_job_test)")
      ->capture_default_str();
  cmd->add_option("--swf-procs-per-gpu", o->topt.swf_procs_per_gpu,
                  "SWF processors that make one GPU slot")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1u << 20));
  cmd->add_option("--degrade-links", o->degrade,
                  "degrade N random switch-to-switch links to 1x (chosen by --seed)");
  cmd->add_option("--seed", o->seed, "seed for --degrade-links")->capture_default_str();
  cmd->add_option("--threads", o->threads, "policies simulated at once (default: cores)");
  cmd->add_flag("-q,--quiet", o->quiet, "no progress on stderr");
  cmd->callback([o, &run] { run = [o] { return run_simulate(*o); }; });
}

}  // namespace fabricplace::cli
