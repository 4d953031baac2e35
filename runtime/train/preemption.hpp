// Preemption: schedulers send SIGTERM (or Slurm, with --signal, SIGUSR1) some
// time before they stop a job. The handler only records the request; the
// training loop looks at it at the next step boundary, writes a checkpoint and
// ends every rank with kPreemptedExitCode, so a requeued job resumes.
#pragma once

namespace drun::train {

// EX_TEMPFAIL from sysexits.h: "try again later".
constexpr int kPreemptedExitCode = 75;

// Installs the SIGTERM and SIGUSR1 handlers (idempotent).
void install_preemption_handlers();
bool preemption_requested();

}  // namespace drun::train
