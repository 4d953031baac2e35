// drun's public C++ API (libdrun): the one exception type it throws (and its
// one kind, a preempted fit). Its message says what was wrong (a bad option,
// a missing file, a shape that does not fit), as drun's command line would.
#pragma once
#include <stdexcept>
#include <string>

namespace drun {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// What Model::fit throws when a scheduler's SIGTERM (or SIGUSR1) stopped it
// after a checkpoint: no mistake, but the end of this run. Exit with
// exit_code() (75, "try again later") so that a requeued job resumes.
class Preempted : public Error {
 public:
  Preempted(const std::string& what, int exit_code) : Error(what), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

}  // namespace drun
