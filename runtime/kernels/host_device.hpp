// DRUN_HOST_DEVICE marks a function that the CPU's loops and the CUDA
// kernels share: compiled for both by nvcc, plain C++ elsewhere.
#pragma once

#if defined(__CUDACC__)
#define DRUN_HOST_DEVICE __host__ __device__
#else
#define DRUN_HOST_DEVICE
#endif
