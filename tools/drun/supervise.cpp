#include "supervise.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <iostream>
#include <optional>

#include "launch/rank_death.hpp"
#include "launch/resize.hpp"
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
      // A lost node outweighs the deaths it causes (the starter kills the
      // ranks left), whichever line comes first.
      if (auto d = parse_rank_death(line);
          d && (!out.death || (d->node_lost && !out.death->node_lost)))
        out.death = std::move(d);
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
  if (d.node_lost) return "node " + d.host + " stopped answering (" + d.how + ")";
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

// The newest checkpoint's step, which a rerun resumes from (none without one).
std::optional<int64_t> newest_step(const std::string& model_dir) {
  if (model_dir.empty()) return std::nullopt;
  const auto steps = train::Checkpoints(model_dir, 1).steps();
  if (steps.empty()) return std::nullopt;
  return steps.back();
}

int workers_in(const std::vector<RankInfo>& ranks) {
  return static_cast<int>(ranks.size()) - servers_in(ranks);
}

bool places_on(const std::vector<RankInfo>& ranks, const std::string& host) {
  for (const auto& r : ranks)
    if (r.host == host) return true;
  return false;
}

std::string hosts_of(const std::vector<RankInfo>& ranks) {
  std::vector<std::string> seen;
  std::string out;
  for (const auto& r : ranks) {
    if (std::find(seen.begin(), seen.end(), r.host) != seen.end()) continue;
    seen.push_back(r.host);
    out += (out.empty() ? "" : ", ") + r.host;
  }
  return out;
}

std::string resume_point(const std::string& model_dir) {
  if (model_dir.empty()) return "from the start (the script has no model_dir)";
  const auto step = newest_step(model_dir);
  if (!step) return "from the start (no checkpoint in " + model_dir + " yet)";
  return fmt::format("from step {} ({}/ckpt-{}.h5)", *step, model_dir, *step);
}

}  // namespace

int supervise(const std::vector<std::string>& first, const SuperviseOptions& opt) {
  install_pass_on();
  std::vector<std::string> cmd = first;
  std::vector<RankInfo> ranks = opt.ranks;
  std::vector<Resize> resizes;
  std::vector<std::string> lost;  // nodes left behind, oldest first
  for (int restarts = 0;; ++restarts) {
    // A rerun's ranks must not read the heartbeats the last run's left behind.
    if (!opt.stall_dir.empty())
      setenv("DRUN_STALL_DIR", fmt::format("{}-{}", opt.stall_dir, restarts).c_str(), 1);
    const Outcome out = run_once(cmd);
    if (out.code == 0 || !out.death || signalled) return out.code;
    const std::string what = describe(*out.death, ranks);
    if (restarts == opt.max_restarts) {
      std::cerr << "drun: " << what << "; no restarts left (--max-restarts " << opt.max_restarts
                << ")\n";
      return out.code;
    }
    const std::string& host = out.death->host;
    if (opt.min_workers > 0 && opt.placed_without && places_on(ranks, host)) {
      std::vector<std::string> lost_now = lost;
      lost_now.push_back(host);
      std::vector<RankInfo> next = opt.placed_without(lost_now);
      const int before = workers_in(ranks), after = workers_in(next);
      if (after >= opt.min_workers) {
        lost = std::move(lost_now);
        const int64_t step = newest_step(opt.model_dir).value_or(0);
        resizes.push_back({host, step, before, after});
        setenv("DRUN_RESIZED", resizes_text(resizes).c_str(), 1);
        setenv("DRUN_PLACEMENT", placement_json(next).dump().c_str(), 1);
        std::cerr << "drun: " << what << "; lost node " << host << " at step " << step
                  << ": going on with " << after << (after == 1 ? " worker" : " workers")
                  << " instead of " << before << " on " << hosts_of(next) << " (restart "
                  << restarts + 1 << " of " << opt.max_restarts << ") "
                  << resume_point(opt.model_dir) << "\n";
        cmd = opt.command_for(next, lost);
        ranks = std::move(next);
        continue;
      }
      // A node the starter lost is gone; one whose rank died may still
      // answer, and a restart where the job ran is worth a try.
      if (out.death->node_lost) {
        std::cerr << "drun: " << what << "; without node " << host << " " << after
                  << " worker(s) would remain, fewer than --min-workers " << opt.min_workers
                  << ": the job ends\n";
        return out.code;
      }
    }
    std::cerr << "drun: " << what << "; restarting the job (restart " << restarts + 1 << " of "
              << opt.max_restarts << ") " << resume_point(opt.model_dir) << "\n";
  }
}

}  // namespace drun::launch
