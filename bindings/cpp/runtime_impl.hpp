// What a drun::Runtime holds: the embedded process and its runtime context,
// which models and data sets read (threads, data_dir, the job's communicators).
#pragma once
#include <memory>

#include "drun/runtime.hpp"
#include "train/job.hpp"

namespace drun {

struct Runtime::Impl {
  std::unique_ptr<train::Process> process;
  train::Context& context() const { return process->context(); }
};

}  // namespace drun
