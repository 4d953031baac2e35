#include "train/preemption.hpp"

#include <csignal>

namespace drun::train {

namespace {
// A signal handler can only reach a flag of static storage: this is the one
// piece of process-wide state outside the runtime context, and only the
// handler writes it.
volatile std::sig_atomic_t requested = 0;

extern "C" void on_preemption_signal(int) {
  requested = 1;
}
}  // namespace

void install_preemption_handlers() {
  struct sigaction action {};
  action.sa_handler = on_preemption_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGUSR1, &action, nullptr);
}

bool preemption_requested() {
  return requested != 0;
}

}  // namespace drun::train
