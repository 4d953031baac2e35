// Embedding kernels (see embedding.hpp): grid-stride loops over the n x dim
// output (or gradient) elements, so that a warp reads one table row's
// contiguous floats. The gradient's rows are summed with atomicAdd: ids
// repeat (a token seen twice), and the order of a row's additions is then
// the GPU's, within a float sum's rounding of the CPU's.
#include <cuda_runtime.h>

#include "kernels/cuda/launch.cuh"
#include "kernels/embedding.hpp"

namespace drun::kernels::cuda {

using namespace launch;

namespace {

template <class Id>
__global__ void gather_kernel(const Id* __restrict__ ids, int64_t n,
                              const float* __restrict__ table, int64_t rows, int64_t dim,
                              float* __restrict__ y) {
  for (int64_t i = first_index(); i < n * dim; i += grid_stride()) {
    const Id id = ids[i / dim];
    y[i] = embedding_id_valid(id, rows) ? table[static_cast<int64_t>(id) * dim + i % dim] : 0.0f;
  }
}

template <class Id>
__global__ void scatter_add_kernel(const Id* __restrict__ ids, int64_t n,
                                   const float* __restrict__ dy, int64_t rows, int64_t dim,
                                   float* __restrict__ dtable) {
  for (int64_t i = first_index(); i < n * dim; i += grid_stride()) {
    const Id id = ids[i / dim];
    if (embedding_id_valid(id, rows))
      atomicAdd(&dtable[static_cast<int64_t>(id) * dim + i % dim], dy[i]);
  }
}

}  // namespace

void embedding_gather(const void* ids, DType id_type, int64_t n, const float* table, int64_t rows,
                      int64_t dim, float* y) {
  if (n * dim == 0) return;
  if (id_type == DType::i32)
    gather_kernel<<<blocks_for(n * dim), kThreads>>>(static_cast<const int32_t*>(ids), n, table,
                                                     rows, dim, y);
  else
    gather_kernel<<<blocks_for(n * dim), kThreads>>>(static_cast<const float*>(ids), n, table, rows,
                                                     dim, y);
  check_launch("embedding_gather");
}

void embedding_scatter_add(const void* ids, DType id_type, int64_t n, const float* dy, int64_t rows,
                           int64_t dim, float* dtable) {
  if (rows * dim == 0) return;
  check(cudaMemsetAsync(dtable, 0, sizeof(float) * rows * dim, cudaStreamPerThread),
        "embedding_scatter_add (zero)");
  if (n * dim == 0) return;
  if (id_type == DType::i32)
    scatter_add_kernel<<<blocks_for(n * dim), kThreads>>>(static_cast<const int32_t*>(ids), n, dy,
                                                          rows, dim, dtable);
  else
    scatter_add_kernel<<<blocks_for(n * dim), kThreads>>>(static_cast<const float*>(ids), n, dy,
                                                          rows, dim, dtable);
  check_launch("embedding_scatter_add");
}

}  // namespace drun::kernels::cuda
