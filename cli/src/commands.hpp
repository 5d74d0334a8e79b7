// SPDX-License-Identifier: GPL-2.0-or-later
// CLI plumbing shared by the subcommands.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <ostream>
#include <string>

#include "fabricplace/common/error.hpp"
#include "fabricplace/fabric/fabric.hpp"
#include "fabricplace/ops/slurm_sync.hpp"
#include "fabricplace/placement/placement.hpp"
#include "fabricplace/routes/model.hpp"

namespace fabricplace::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;  ///< bad input, I/O failure
inline constexpr int kExitUsage = 2;  ///< bad command line

/// The selected subcommand's action, set by its callback after parsing.
using RunFn = std::function<int()>;

/// Prints "fabricplace: error: <where>: <message>" and returns kExitError (or kExitUsage).
int report(const Error& e);

/// Options every command that reads a fabric shares: the sources (positional, or
/// `--fabric` when `option` is set), --from and --link-speed.
struct InputOpts {
  std::vector<std::string> sources;
  std::string from = "auto";
  std::string link_speed;  ///< empty: the source's default (fabric::SourceOptions)
  std::string domains;     ///< --domains FILE: nvidia-smi output (fabric::SourceOptions)

  void add(CLI::App* cmd, const char* what, const char* option = nullptr);
  [[nodiscard]] Result<fabric::Fabric> load() const;
};

/// `-o,--output FILE` ('-' = stdout, the default): an empty path is a usage error when the
/// command line is parsed, before any input is read or a fabric discovered.
CLI::Option* add_output_option(CLI::App* cmd, std::string& out, const char* help);

/// A check for a path option: an empty value is a usage error ("expected <what>").
CLI::Validator non_empty(const char* what, const char* name);

/// Prints the fabric's incompleteness and classification warnings on stderr.
void print_warnings(const fabric::Fabric& f);
/// GPUs per node: `given` when the user gave --gpus-per-node (`opt` counted), else the GPUs
/// the fabric's NVLink domains say its hosts have (fabric::domain_gpus), else `given` (the
/// option's default).
std::uint32_t gpus_per_node(const CLI::Option* opt, std::uint32_t given, const fabric::Fabric& f);

void add_fabric_commands(CLI::App& app, RunFn& run);
void add_place_command(CLI::App& app, RunFn& run);
void add_rankfile_command(CLI::App& app, RunFn& run);
void add_simulate_command(CLI::App& app, RunFn& run);
/// `trace generate`: a synthetic trace (sim/synthetic.hpp) written as an SWF log.
void add_trace_commands(CLI::App& app, RunFn& run);
/// `fabric discover` (live, through libibnetdisc); a stub that explains itself in builds
/// without FABRICPLACE_WITH_IBNETDISC.
void add_discover_command(CLI::App& fabric, RunFn& run);
/// `fabric watch` (watch_cmd.cpp): discovery against the accepted fabric, sync, metrics.
void add_watch_command(CLI::App& fabric, RunFn& run);
/// The score and uplink weights of --policy-config (empty: the built-in ones).
Result<placement::Weights> load_weights(const std::string& path);
/// `--routes MODEL` and its companions (`--ecmp-flows`, `--ecmp-seed`, `--lfts FILE` for
/// `--routes lfts:FILE`), shared by simulate, place and rankfile (docs/routes.md).
struct RouteOpts {
  std::string routes = "auto";
  std::string lfts;
  std::uint32_t ecmp_flows = 2;
  std::uint64_t ecmp_seed = 1;

  /// `list`: --routes takes several comma-separated models (simulate).
  void add(CLI::App* cmd, bool list);
  /// The models named, each with the ecmp settings; kUsage for a bad name or a clash.
  [[nodiscard]] Result<std::vector<routes::Spec>> specs() const;
  /// The one model named (place, rankfile): a list is a kUsage error saying so.
  [[nodiscard]] Result<routes::Spec> one() const;
};
/// Builds the route model `spec` names on `f`.
Result<std::unique_ptr<const routes::Model>> load_routes(const fabric::Fabric& f,
                                                         const routes::Spec& spec);
/// Runs a Slurm client command (`sinfo ...`, `squeue ...`, `srun --version`) and returns its
/// standard output, at most the input limit (docs/sources.md, Limits); its own messages go to
/// our stderr. Errors start with `context` (the option or command that asked). `timeout_s`
/// > 0: at that bound the command and every process of its process group are killed
/// (SIGKILL) and the error says so.
Result<std::string> run_slurm(const std::string& context, const std::string& command,
                              unsigned timeout_s = 0);
/// `slurm check`: does the installed SPANK plugin match the Slurm that will load it?
/// `slurm sync`: every Slurm-side file from one fabric (sync_cmd.cpp).
void add_slurm_commands(CLI::App& app, RunFn& run);
void add_sync_command(CLI::App* slurm, RunFn& run);
struct SyncCliOpts {
  std::string out;
  std::string topology = "tree";
  std::string plugin = FABRICPLACE_DEFAULT_PLUGIN;
  std::string plugin_args, node_params;
  bool dry_run = false, replace = false, reconfigure = false;
  bool brief = false;  ///< report only what changed (fabric watch says the fabric's changes)
};
struct SyncOutcome {
  std::string generation;
  bool changed = false;  ///< something was (or, dry run, would be) written
};
/// `scontrol reconfigure` when what slurmctld reads of DIR's live set changed since the last
/// one that succeeded (a failed one is tried again next time); says which on `out`.
Result<void> reconfigure_slurmctld(const std::string& dir, std::ostream& out);
/// Syncs `f` into o.out (or plans it, o.dry_run) and prints what changed on `out`.
Result<SyncOutcome> sync_slurm_files(const fabric::Fabric& f, const SyncCliOpts& o,
                                     std::ostream& out);
/// `man --out DIR` (hidden): the manual pages of every command, from the same definitions as
/// --help; add it last, once every other command is defined.
void add_man_command(CLI::App& app, RunFn& run);
/// `completion` (hidden): the bash completion script of every command, the same way.
void add_completion_command(CLI::App& app, RunFn& run);
/// Every unsigned option of `app` and its subcommands, recursively, takes decimal digits only
/// (no sign, no leading zero, no hex) up to 2^64 - 1: called once every command is defined.
void check_numbers(CLI::App& app);
/// Writes `content` to `path` atomically ("-" = stdout); returns the exit status.
int write_output(const std::string& path, const std::string& content);
/// A metrics file ("-" = stdout; docs/metrics.md). In a directory only root or the running
/// user may write, written as any output (write_file_atomic: a link there is theirs and is
/// followed; a FIFO written into only when `fifo_ok`, else refused, so a run cannot hang on
/// it); in one others may write (node_exporter's textfile directory, /tmp), written by name
/// through the directory's descriptor (a link or FIFO planted there is replaced, never
/// followed or opened).
Result<void> write_metrics_to(const std::string& path, const std::string& content, bool fifo_ok);
/// `fabric metrics -o`: the same, FIFOs allowed, reported; returns the exit status.
int write_metrics_file(const std::string& path, const std::string& content);

}  // namespace fabricplace::cli
