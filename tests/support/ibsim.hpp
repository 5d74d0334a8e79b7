// SPDX-License-Identifier: GPL-2.0-or-later
// A private ibsim instance for one test: OFA's InfiniBand fabric simulator with a console on
// a FIFO, and clients (fabricplace, opensm, ibnetdiscover) run against it through the
// umad2sim preload. Facts it relies on (DESIGN.md section 7): ibsim needs exact -N/-S/-P
// limits; at EOF on stdin it spins, so the FIFO is held open for writing by the test; a
// client with no ibsim waits forever, so every client runs under `timeout`; umad2sim leaves
// ./sys-<pid>/ in the client's working directory, so clients run in the instance's private
// directory, which is removed at the end. Each instance has its own IBSIM_SOCKNAME; it is
// stopped by PID.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace fabricplace::test {

inline constexpr const char* kUmad2sim = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so";

struct ProcResult {
  int status = -1;  ///< exit status; 124 = killed by timeout
  std::string out, err;
};

class Ibsim {
 public:
  /// Starts ibsim on `net_file`. On failure `ok()` is false and `error()` says why.
  Ibsim(const std::string& net_file, std::size_t nodes, std::size_t switches, std::size_t ports) {
    static int counter = 0;
    char tmpl[] = "/tmp/fp-ibsim-XXXXXX";
    if (!::mkdtemp(tmpl)) {
      error_ = "mkdtemp failed";
      return;
    }
    dir_ = tmpl;
    sock_ = "fpt" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    const std::string fifo = dir_ + "/console";
    if (::mkfifo(fifo.c_str(), 0600) != 0) {
      error_ = "mkfifo failed";
      return;
    }
    // Read-write: opening does not block, and ibsim never sees end-of-file while we live.
    console_ = ::open(fifo.c_str(), O_RDWR);
    const std::string log = dir_ + "/ibsim.log";
    std::vector<std::string> args = {"ibsim", "-s",
                                     "-N",    std::to_string(nodes),
                                     "-S",    std::to_string(switches),
                                     "-P",    std::to_string(ports),
                                     net_file};
    auto env = environment({{"IBSIM_SOCKNAME", sock_}});
    std::vector<char*> argv, envp;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ == 0) {
      // ibsim dies with the test process, however that ends (a crash, an abort, a timeout
      // kill by ctest): a leaked ibsim would spin and hold its client slots.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);
      ::dup2(console_, 0);
      ::dup2(log_fd, 1);
      ::dup2(log_fd, 2);
      ::execve("/usr/bin/ibsim", argv.data(), envp.data());
      ::_exit(127);
    }
    ::close(log_fd);
    if (pid_ < 0) {
      error_ = "fork failed";
      return;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      if (log_text().find("Network simulator ready") != std::string::npos) {
        ok_ = true;
        return;
      }
      int st = 0;
      if (::waitpid(pid_, &st, WNOHANG) == pid_) {
        pid_ = -1;
        error_ = "ibsim exited: " + log_text();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    error_ = "ibsim did not become ready in 60 s: " + log_text();
  }

  Ibsim(const Ibsim&) = delete;
  Ibsim& operator=(const Ibsim&) = delete;

  ~Ibsim() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      for (int i = 0; i < 100; ++i) {
        int st = 0;
        if (::waitpid(pid_, &st, WNOHANG) == pid_) {
          pid_ = -1;
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      if (pid_ > 0) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
      }
    }
    if (console_ >= 0) ::close(console_);
    if (!dir_.empty() && !std::getenv("FABRICPLACE_KEEP_IBSIM")) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
  }

  [[nodiscard]] bool ok() const { return ok_; }
  [[nodiscard]] const std::string& error() const { return error_; }
  [[nodiscard]] const std::string& dir() const { return dir_; }
  [[nodiscard]] const std::string& socket_name() const { return sock_; }

  /// Sends one console command ("Unlink \"leaf01\"[21]") and returns what ibsim printed.
  std::string command(const std::string& line) {
    const auto before = log_text().size();
    const std::string l = line + "\n";
    if (::write(console_, l.data(), l.size()) != static_cast<ssize_t>(l.size()))
      return "(write failed)";
    // The console answers with output and a new "sim> " prompt; wait for it.
    for (int i = 0; i < 150; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      const auto text = log_text();
      if (text.size() > before && text.rfind("sim> ") != std::string::npos &&
          text.rfind("sim> ") >= before)
        return text.substr(before);
    }
    return log_text().substr(before);
  }

  /// Runs a client against this ibsim (umad2sim preloaded), in the private directory, under
  /// `timeout`. `sim_host` picks the node the client sits on ("node001 mlx5_3").
  ProcResult run(const std::vector<std::string>& argv, const std::string& sim_host = "",
                 int timeout_s = 120, const std::map<std::string, std::string>& extra_env = {}) {
    // An ASan-built client (the asan preset) runs behind the preload only when ASan allows
    // the preload first, and umad2sim itself (ibsim's, not ours) over-reads in its read()
    // memcpy: its reports are suppressed, by library, and nothing else is.
    // Likewise libibnetdisc 44 leaks duplicate LID-hash entries once LIDs are assigned (fixed
    // upstream in rdma-core v49, "ibnetdisc: Fix leak in add_to_portlid_hash").
    const std::string supp = dir_ + "/asan.supp", lsupp = dir_ + "/lsan.supp";
    if (!std::filesystem::exists(supp))
      std::ofstream(supp) << "interceptor_via_lib:libumad2sim.so\n";
    if (!std::filesystem::exists(lsupp)) std::ofstream(lsupp) << "leak:libibnetdisc.so\n";
    const char* asan = std::getenv("ASAN_OPTIONS");
    const char* lsan = std::getenv("LSAN_OPTIONS");
    std::map<std::string, std::string> vars = {
        {"IBSIM_SOCKNAME", sock_},
        {"LD_PRELOAD", kUmad2sim},
        {"ASAN_OPTIONS", std::string(asan ? std::string(asan) + ":" : "") +
                             "verify_asan_link_order=0:suppressions=" + supp},
        {"LSAN_OPTIONS",
         std::string(lsan ? std::string(lsan) + ":" : "") + "suppressions=" + lsupp}};
    if (!sim_host.empty()) vars["SIM_HOST"] = sim_host;
    for (const auto& [k, v] : extra_env) vars[k] = v;
    return run_in(dir_, argv, vars, timeout_s);
  }

  /// Runs a command with no simulator and no preload (in a scratch directory).
  static ProcResult run_plain(const std::vector<std::string>& argv, int timeout_s = 60) {
    char tmpl[] = "/tmp/fp-plain-XXXXXX";
    if (!::mkdtemp(tmpl)) return {};
    auto r = run_in(tmpl, argv, {}, timeout_s);
    std::error_code ec;
    std::filesystem::remove_all(tmpl, ec);
    return r;
  }

  [[nodiscard]] std::string log_text() const { return slurp(dir_ + "/ibsim.log"); }

 private:
  static ProcResult run_in(const std::string& dir, const std::vector<std::string>& argv,
                           const std::map<std::string, std::string>& vars, int timeout_s) {
    ProcResult r;
    static int n = 0;
    const std::string out = dir + "/client" + std::to_string(n) + ".out";
    const std::string err = dir + "/client" + std::to_string(n++) + ".err";
    auto env = environment(vars);
    std::vector<std::string> args = {"timeout", std::to_string(timeout_s)};
    args.insert(args.end(), argv.begin(), argv.end());
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addchdir_np(&fa, dir.c_str());
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid = -1;
    const int rc = spawn("/usr/bin/timeout", args, env, &fa, pid);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
      r.err = "cannot start " + argv.front();
      return r;
    }
    int st = 0;
    ::waitpid(pid, &st, 0);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }

  static std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  static std::vector<std::string> environment(const std::map<std::string, std::string>& set) {
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) {
      const std::string kv = *e;
      const auto name = kv.substr(0, kv.find('='));
      if (!set.contains(name)) env.push_back(kv);
    }
    for (const auto& [k, v] : set) env.push_back(k + "=" + v);
    return env;
  }

  static int spawn(const char* path, const std::vector<std::string>& args,
                   const std::vector<std::string>& env, posix_spawn_file_actions_t* fa,
                   pid_t& pid) {
    std::vector<char*> argv, envp;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    return posix_spawn(&pid, path, fa, nullptr, argv.data(), envp.data());
  }

  bool ok_ = false;
  std::string error_, dir_, sock_;
  int console_ = -1;
  pid_t pid_ = -1;
};

}  // namespace fabricplace::test
