// An embedding table's lookup and its gradient: `n` ids (float32 that hold
// integers, as drun's data sets give them, or int32) pick rows of a (rows,
// dim) table. One declaration for both backends: kernels/cpu/embedding.cpp
// on host pointers, kernels/cuda/embedding.cu on device pointers.
//
// An id outside [0, rows) (a NaN too) is never used as an index: its output
// row is zeros and it adds nothing to the gradient. Telling the user is the
// caller's (nn's Embedding checks the ids where they are on the host,
// embedding_id_valid below), not the kernels': a kernel cannot throw, and a
// GPU's flag read back would stop every step to wait for it.
#pragma once
#include <cstdint>

#include "kernels/host_device.hpp"
#include "kernels/types.hpp"
#include "tensor/dtype.hpp"

namespace drun::kernels {

// Whether v names a row of a table of `rows`: a float id is truncated
// toward zero, as Keras casts ids to int32.
DRUN_HOST_DEVICE inline bool embedding_id_valid(float v, int64_t rows) {
  return v >= 0.0f && v < static_cast<float>(rows);  // false for NaN
}
DRUN_HOST_DEVICE inline bool embedding_id_valid(int32_t v, int64_t rows) {
  return v >= 0 && v < rows;
}

DRUN_CPU_AND_CUDA(
    // y (n, dim) = table[ids[i]] row by row.
    void embedding_gather(const void* ids, DType id_type, int64_t n, const float* table,
                          int64_t rows, int64_t dim, float* y);
    // dtable (rows, dim) = the sum of dy's rows (n, dim) into the rows their
    // ids name; overwritten (zeroed first).
    void embedding_scatter_add(const void* ids, DType id_type, int64_t n, const float* dy,
                               int64_t rows, int64_t dim, float* dtable);)

}  // namespace drun::kernels
