#include "supervise.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <iostream>
#include <optional>

#include "launch/rank_death.hpp"
#include "train/checkpoint.hpp"

namespace drun::launch {
namespace {

volatile sig_atomic_t child_pid = 0;
volatile sig_atomic_t signalled = 0;

// A signal for drun is meant for the job: pass it on, and restart no more.
extern "C" void pass_on(int sig) {
  signalled = sig;
  if (child_pid > 0) kill(child_pid, sig);
}

void install_pass_on() {
  struct sigaction action {};
  action.sa_handler = pass_on;
  sigemptyset(&action.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGUSR1, SIGUSR2, SIGHUP}) sigaction(sig, &action, nullptr);
}

struct Outcome {
  int code = 0;
  std::optional<RankDeath> death;
};

// Runs cmd with its stderr through a pipe: echoed as it comes, each line
// read for a rank's death.
Outcome run_once(const std::vector<std::string>& cmd) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> argv;
    for (const auto& a : cmd) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "drun: cannot start %s: %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  child_pid = pid;
  close(fds[1]);
  Outcome out;
  std::string line;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    ssize_t written = 0;
    while (written < n) {
      const ssize_t w = write(STDERR_FILENO, buf + written, static_cast<size_t>(n - written));
      if (w < 0 && errno != EINTR) break;
      if (w > 0) written += w;
    }
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[i] != '\n') {
        line += buf[i];
        continue;
      }
      if (!out.death) out.death = parse_rank_death(line);
      line.clear();
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  child_pid = 0;
  out.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return out;
}

std::string describe(const RankDeath& d, const std::vector<RankInfo>& ranks) {
  std::string who = fmt::format("rank {}", d.rank);
  if (d.rank >= 0 && d.rank < static_cast<int>(ranks.size())) {
    const RankInfo& r = ranks[static_cast<size_t>(d.rank)];
    who += fmt::format(" ({} {}", r.role, r.task_index);
    who += fmt::format(" on {})", d.host.empty() ? r.host : d.host);
  } else if (!d.host.empty()) {
    who += " on " + d.host;
  }
  return who + " died (" + d.how + ")";
}

std::string resume_point(const std::string& model_dir) {
  if (model_dir.empty()) return "from the start (the script has no model_dir)";
  const auto steps = train::Checkpoints(model_dir, 1).steps();
  if (steps.empty()) return "from the start (no checkpoint in " + model_dir + " yet)";
  return fmt::format("from step {} ({}/ckpt-{}.h5)", steps.back(), model_dir, steps.back());
}

}  // namespace

int supervise(const std::vector<std::string>& cmd, const SuperviseOptions& opt) {
  install_pass_on();
  for (int restarts = 0;; ++restarts) {
    // A rerun's ranks must not read the heartbeats the last run's left behind.
    if (!opt.stall_dir.empty())
      setenv("DRUN_STALL_DIR", fmt::format("{}-{}", opt.stall_dir, restarts).c_str(), 1);
    const Outcome out = run_once(cmd);
    if (out.code == 0 || !out.death || signalled) return out.code;
    const std::string what = describe(*out.death, opt.ranks);
    if (restarts == opt.max_restarts) {
      std::cerr << "drun: " << what << "; no restarts left (--max-restarts " << opt.max_restarts
                << ")\n";
      return out.code;
    }
    std::cerr << "drun: " << what << "; restarting the job (restart " << restarts + 1 << " of "
              << opt.max_restarts << ") " << resume_point(opt.model_dir) << "\n";
  }
}

}  // namespace drun::launch
