// What this process computes on, for `drun --version` and summary.json: the
// CPU model, the CPU kernel variant in use and those the CPU could run, the
// OpenBLAS core, the convolution engine, and whether CUDA is built.
#pragma once
#include "base/options.hpp"

namespace drun::kernels {

json describe_platform();
// The same as lines of text ("cpu: ...").
std::string platform_text();

}  // namespace drun::kernels
