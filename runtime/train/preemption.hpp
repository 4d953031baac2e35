// Preemption: schedulers send SIGTERM (or Slurm, with --signal, SIGUSR1) some
// time before they stop a job. The handler only records the request; the
// training loop looks at it at the next step boundary, writes a checkpoint and
// ends every rank with kPreemptedExitCode, so a requeued job resumes.
#pragma once
#include <stdexcept>
#include <string>

namespace drun::train {

// EX_TEMPFAIL from sysexits.h: "try again later".
constexpr int kPreemptedExitCode = 75;

// What a preempted fit throws once its checkpoint is written. Neither a
// user's mistake nor a bug: it ends the script, and whoever decides the
// process's exit code (drun's script runner, a libdrun program) reports
// what() (the step, and how to resume) in one line and exits with exit_code().
class Preempted : public std::runtime_error {
 public:
  explicit Preempted(const std::string& what) : std::runtime_error(what) {}
  int exit_code() const { return kPreemptedExitCode; }
};

// Installs the SIGTERM and SIGUSR1 handlers (idempotent).
void install_preemption_handlers();
bool preemption_requested();

}  // namespace drun::train
