// The embedding table's lookup and gradient on the CPU (kernels/embedding.hpp).
#include "kernels/embedding.hpp"

#include <algorithm>

namespace drun::kernels::cpu {

namespace {

template <class Id>
void gather(const Id* ids, int64_t n, const float* table, int64_t rows, int64_t dim, float* y) {
  for (int64_t i = 0; i < n; ++i) {
    float* yr = y + i * dim;
    if (!embedding_id_valid(ids[i], rows)) {
      std::fill_n(yr, dim, 0.0f);
      continue;
    }
    std::copy_n(table + static_cast<int64_t>(ids[i]) * dim, dim, yr);
  }
}

template <class Id>
void scatter_add(const Id* ids, int64_t n, const float* dy, int64_t rows, int64_t dim,
                 float* dtable) {
  std::fill_n(dtable, rows * dim, 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    if (!embedding_id_valid(ids[i], rows)) continue;
    float* __restrict dr = dtable + static_cast<int64_t>(ids[i]) * dim;
    const float* __restrict g = dy + i * dim;
    for (int64_t j = 0; j < dim; ++j) dr[j] += g[j];
  }
}

}  // namespace

void embedding_gather(const void* ids, DType id_type, int64_t n, const float* table, int64_t rows,
                      int64_t dim, float* y) {
  if (id_type == DType::i32)
    return gather(static_cast<const int32_t*>(ids), n, table, rows, dim, y);
  gather(static_cast<const float*>(ids), n, table, rows, dim, y);
}

void embedding_scatter_add(const void* ids, DType id_type, int64_t n, const float* dy, int64_t rows,
                           int64_t dim, float* dtable) {
  if (id_type == DType::i32)
    return scatter_add(static_cast<const int32_t*>(ids), n, dy, rows, dim, dtable);
  scatter_add(static_cast<const float*>(ids), n, dy, rows, dim, dtable);
}

}  // namespace drun::kernels::cpu
