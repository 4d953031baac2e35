// This process's peak resident memory, as the kernel counts it (VmHWM in
// /proc/self/status): what summary.json reports, so that a run's memory is
// measured by the run itself.
#pragma once
#include <optional>

namespace drun {

// In MiB; empty where /proc is not there (not Linux).
std::optional<double> peak_resident_mib();

}  // namespace drun
