// strided_copy on device tensors, the CUDA twin of ops_cpu.cpp's: one thread
// per element of the iteration, the same index arithmetic and sum order
// (kernels/strided_copy.hpp). Launches on the default stream, does not wait.
#pragma once

#include "kernels/types.hpp"

namespace drun::kernels::cuda {

void strided_copy(const CopyGeometry& g, const float* x, float beta, float* y);

}  // namespace drun::kernels::cuda
