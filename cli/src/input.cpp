// SPDX-License-Identifier: GPL-2.0-or-later
// Shared CLI plumbing: error reports, fabric input options, atomic output.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <thread>

#include "commands.hpp"
#include "fabricplace/common/file_io.hpp"
#include "fabricplace/common/limits.hpp"
#include "fabricplace/common/owned_dir.hpp"
#include "fabricplace/common/strings.hpp"
#include "fabricplace/fabric/sources.hpp"
#include "fabricplace/sim/trace.hpp"

namespace fabricplace::cli {

int report(const Error& e) {
  std::cerr << "fabricplace: error: " << e.to_string() << "\n";
  return e.code == ErrorCode::kUsage ? kExitUsage : kExitError;
}

void InputOpts::add(CLI::App* cmd, const char* what, const char* option) {
  if (option)
    cmd->add_option(option, sources, what)->required();
  else
    cmd->add_option("fabric", sources, what)->required();
  cmd->add_option("--from", from,
                  "input format: auto, ibnetdiscover, ibnetdiscover-p, json, slurm-topology, "
                  "tiers-csv, spec")
      ->capture_default_str();
  cmd->add_option("--link-speed", link_speed,
                  "link rate assumed where a topology.conf or tiers CSV states none (default "
                  "4xHDR for topology.conf, 400GbE for a tiers CSV), e.g. 4xNDR, 400G");
  cmd->add_option("--domains", domains,
                  "the hosts' NVLink domains: nvidia-smi --query-gpu=index,fabric.clusterUuid,"
                  "fabric.cliqueId output collected with pdsh (docs/sources.md, Accelerator "
                  "domains); replaces the domains the source carries")
      ->check(non_empty("a file path", "FILE"));
}

Result<fabric::Fabric> InputOpts::load() const {
  fabric::SourceOptions o;
  const auto f = fabric::parse_source_format(from);
  if (!f) return fail(ErrorCode::kUsage, "--from " + from + ": unknown format");
  o.format = *f;
  if (!link_speed.empty()) {
    const auto rate = fabric::parse_rate(link_speed);
    if (!rate || !rate->known())
      return fail(ErrorCode::kUsage, "--link-speed " + link_speed +
                                         ": expected a rate like 4xHDR (InfiniBand) or 400G "
                                         "(Ethernet, Gb/s)");
    o.link_rate = *rate;
  }
  o.domains = domains;
  return fabric::load_fabrics(sources, o);
}

void print_warnings(const fabric::Fabric& f) {
  for (const auto& m : f.topology().incomplete)
    std::cerr << "fabricplace: warning: INCOMPLETE fabric: " << m << "\n";
  for (const auto& w : f.topology().warnings) std::cerr << "fabricplace: warning: " << w << "\n";
}

std::uint32_t gpus_per_node(const CLI::Option* opt, std::uint32_t given, const fabric::Fabric& f) {
  const auto domains = fabric::domain_gpus(f);
  if (!opt || !opt->count()) return domains.value_or(given);
  // The user's figure wins, but one the domains contradict changes how many hosts a group
  // takes: said.
  if (domains && *domains != given)
    std::cerr << "fabricplace: warning: --gpus-per-node " << given << ", but the fabric's "
              << "NVLink domains say " << *domains << " GPUs per host; groups are sized by "
              << given << "\n";
  return given;
}

Result<placement::Weights> load_weights(const std::string& path) {
  if (path.empty()) return placement::Weights{};
  auto text = read_file(path);
  if (!text) return std::unexpected(text.error());
  return placement::parse_weights(*text, path);
}

void RouteOpts::add(CLI::App* cmd, bool list) {
  cmd->add_option("--routes", routes,
                  list ? "route models, comma-separated (each run under every policy): auto, "
                         "ftree, minhop, updn, ecmp, adaptive, lfts:FILE (docs/routes.md)"
                       : "route model: auto, ftree, minhop, updn, ecmp, adaptive, lfts:FILE "
                         "(docs/routes.md)")
      ->capture_default_str();
  cmd->add_option("--lfts", lfts,
                  "the same as --routes lfts:FILE: exact routes from an opensm LFT dump (the "
                  "fabric must be the ibnetdiscover dump taken after the SM ran)");
  cmd->add_option("--ecmp-flows", ecmp_flows,
                  "ecmp: flows per ring edge and rail, each hashed on its own (NCCL channels "
                  "per peer x QPs per connection)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1024u));
  cmd->add_option("--ecmp-seed", ecmp_seed, "ecmp: the hash seed")->capture_default_str();
}

Result<std::vector<routes::Spec>> RouteOpts::specs() const {
  std::string names = routes;
  if (!lfts.empty()) {
    if (routes != "auto") {
      return fail(ErrorCode::kUsage, "--lfts FILE is --routes lfts:FILE: give one or the other");
    }
    names = "lfts:" + lfts;
  }
  auto out = routes::parse_specs(names);
  if (!out) return out;
  for (auto& s : *out) {
    s.flows_per_edge = ecmp_flows;
    s.seed = ecmp_seed;
  }
  return out;
}

Result<routes::Spec> RouteOpts::one() const {
  auto all = specs();
  if (!all) return std::unexpected(all.error());
  if (all->size() != 1)
    return fail(ErrorCode::kUsage, "--routes " + str::quoted(routes, 80) +
                                       ": expected one route model here (simulate --routes "
                                       "runs several side by side)");
  return std::move(all->front());
}

Result<std::unique_ptr<const routes::Model>> load_routes(const fabric::Fabric& f,
                                                         const routes::Spec& spec) {
  return routes::make_model(f, spec);
}

CLI::Option* add_output_option(CLI::App* cmd, std::string& out, const char* help) {
  return cmd->add_option("-o,--output", out, help)
      ->capture_default_str()
      ->check(non_empty("a file path or '-'", "FILE"));
}

CLI::Validator non_empty(const char* what, const char* name) {
  return CLI::Validator([expected = std::string("expected ") + what](
                            std::string& v) { return v.empty() ? expected : std::string(); },
                        name);
}

void check_numbers(CLI::App& app) {
  // CLI11 reads an unsigned option with strtoull in base 0: "-1" wraps to 2^64 - 1, a number
  // past 2^64 - 1 becomes 2^64 - 1, "010" is 8 and "0x10" 16. Decimal digits only, then,
  // checked before CLI11 converts; what does not fit a narrower option CLI11 refuses itself.
  const CLI::Validator whole(
      [](std::string& v) -> std::string {
        if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos)
          return "expected a whole number (decimal digits, no sign), got " + str::quoted(v, 40);
        if (v.size() > 1 && v.front() == '0')
          return "expected a whole number without leading zeros, got " + str::quoted(v, 40);
        if (!str::parse_uint(v, std::numeric_limits<std::uint64_t>::max()))
          return "expected a whole number up to 18446744073709551615, got " + str::quoted(v, 40);
        return {};
      },
      "", "whole number");
  // A signed option (--port): the same, with an optional minus sign (its range says more).
  const CLI::Validator integer(
      [](std::string& v) -> std::string {
        const std::string_view digits = v.starts_with('-') ? std::string_view(v).substr(1) : v;
        if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos)
          return "expected a whole number (decimal digits), got " + str::quoted(v, 40);
        if (digits.size() > 1 && digits.front() == '0')
          return "expected a whole number without leading zeros, got " + str::quoted(v, 40);
        return {};
      },
      "", "integer");
  for (CLI::Option* o : app.get_options()) {
    const auto type = o->get_type_name();
    if (type.starts_with("UINT"))
      o->check(whole);
    else if (type.starts_with("INT"))
      o->check(integer);
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) check_numbers(*sub);
}

int write_output(const std::string& path, const std::string& content) {
  if (auto r = write_file_atomic(path, content); !r) return report(r.error());
  return kExitOk;
}

Result<void> write_metrics_to(const std::string& path, const std::string& content,
                              bool fifo_ok) {
  if (path == "-") return write_file_atomic(path, content);
  // Trusted or not is decided on the directory's descriptor, and an untrusted one is written
  // through that descriptor: nothing is resolved twice.
  const std::filesystem::path p(path);
  const std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return fail(ErrorCode::kIo, std::string("cannot open its directory: ") + std::strerror(errno), path);
  struct stat d {};
  const bool trusted = ::fstat(dfd, &d) == 0 && (d.st_uid == 0 || d.st_uid == ::geteuid()) &&
                       (d.st_mode & (S_IWGRP | S_IWOTH)) == 0;
  if (!trusted) {
    // Others may write here (node_exporter's textfile directory may be its own account's;
    // /tmp): written by name, so a link, a FIFO or a file planted at the name is replaced,
    // never followed or opened.
    auto r = write_file_by_name_at(dfd, p.filename().string(), path, content);
    ::close(dfd);
    return r;
  }
  ::close(dfd);
  // Only root or this user may write here: a link at the name is theirs and is followed, as
  // for any output (/dev/stdout, /dev/null). A FIFO is written into where the caller allows
  // it; `fabric watch` does not (it would wait for a reader while holding its lock).
  if (struct stat st {}; !fifo_ok && ::stat(path.c_str(), &st) == 0 &&
                         (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
    return fail(ErrorCode::kIo,
                "is a FIFO or a socket: fabric watch writes its metrics only to a regular file "
                "(node_exporter reads *.prom files), since a FIFO would hold the run",
                path);
  return write_file_atomic(path, content);
}

int write_metrics_file(const std::string& path, const std::string& content) {
  if (auto r = write_metrics_to(path, content, true); !r) return report(r.error());
  return kExitOk;
}

Result<std::string> run_slurm(const std::string& context, const std::string& command,
                              unsigned timeout_s) {
  const std::string program = command.substr(0, command.find(' '));
  // With a bound the command runs in a process group of its own, so that at the bound it is
  // killed with everything it started (a shell script's children too), not only the shell.
  // (Without one it stays in ours, where a terminal's Ctrl-C reaches it, as under popen.)
  const bool own_group = timeout_s > 0;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    return fail(ErrorCode::kIo, context + ": cannot run " + program + ": " + std::strerror(errno));
  const char* argv[] = {"sh", "-c", command.c_str(), nullptr};
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    close(fds[0]);
    close(fds[1]);
    return fail(ErrorCode::kIo, context + ": cannot run " + program + ": " + std::strerror(err));
  }
  if (pid == 0) {  // the child: async-signal-safe calls only
    if (own_group) setpgid(0, 0);
    if (dup2(fds[1], STDOUT_FILENO) < 0) _exit(127);
    execv("/bin/sh", const_cast<char* const*>(argv));
    _exit(127);
  }
  if (own_group) setpgid(pid, pid);  // here too: whichever runs first, the group exists
  close(fds[1]);
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::seconds(timeout_s);
  // Milliseconds to the bound (-1: no bound), 0 once it has passed.
  const auto left = [&]() -> int {
    if (timeout_s == 0) return -1;
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return ms <= 0 ? 0 : static_cast<int>(std::min<long long>(ms, 1 << 30));
  };
  std::string out;
  char buf[4096];
  bool too_long = false, timed_out = false;
  for (;;) {
    pollfd p{fds[0], POLLIN, 0};
    const int wait = left();
    const int ready = wait == 0 ? 0 : poll(&p, 1, wait);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      timed_out = true;
      break;
    }
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (out.size() + static_cast<std::size_t>(n) > limits().input_bytes) {
      too_long = true;  // read on to the end, so the command is not killed by SIGPIPE
      continue;
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  if (timed_out) kill(-pid, SIGKILL);
  // Its output ended; it may still run (a command that closed its output and hangs).
  int status = 0;
  for (;;) {
    const pid_t r = waitpid(pid, &status, timed_out || timeout_s == 0 ? 0 : WNOHANG);
    if (r < 0 && errno == EINTR) continue;
    if (r != 0) break;
    if (left() == 0) {
      timed_out = true;
      kill(-pid, SIGKILL);
      continue;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (timed_out) {
    kill(-pid, SIGKILL);  // what it started and left behind in its group
    return fail(ErrorCode::kIo, context + ": `" + command + "` did not finish within " +
                                    std::to_string(timeout_s) + " s: killed, with every process it "
                                    "started; check that slurmctld answers (`scontrol ping`)");
  }
  if (too_long)
    return fail(ErrorCode::kIo, context + ": `" + command + "` printed more than " +
                                    std::to_string(limits().input_bytes >> 20) +
                                    " MiB, the input limit (FABRICPLACE_MAX_INPUT_MB raises it)");
  if (status != 0) {
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return fail(ErrorCode::kIo, context + ": `" + command + "` failed" +
                                    (code == 127 ? ": " + program + " not found in PATH"
                                                 : " with exit status " + std::to_string(code)));
  }
  return out;
}

}  // namespace fabricplace::cli
