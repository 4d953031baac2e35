// What the emulated GPU (emulated_gpu.cpp) lets the tests observe.
#pragma once
#include <cstdint>

namespace drun::testing {

// Copies between host and "device" memory so far (device_memory::copy): a
// host reader of device memory, or an input batch on its way in.
int64_t emulated_copies();

}  // namespace drun::testing
