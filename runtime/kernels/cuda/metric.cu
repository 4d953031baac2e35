// The batch metrics of metric.hpp. Each block sums its threads' terms, one
// more block adds the blocks' partials in order and writes the sum into
// device memory: the same sum on every run, and nothing waits for it here.
#include <cuda_runtime.h>

#include "kernels/cuda/device.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/metric.hpp"

namespace drun::kernels::cuda {

using namespace launch;

namespace {

constexpr int64_t kMaxBlocks = 1024;  // enough to fill a GPU, few enough for one block to add

__global__ void finish_kernel(const double* partials, int blocks, float* sum) {
  double s = 0.0;
  for (int i = threadIdx.x; i < blocks; i += blockDim.x) s += partials[i];
  s = block_sum(s);
  if (threadIdx.x == 0) *sum = static_cast<float>(s);
}

// One warp per row: hits where the prediction's argmax is at the label, or
// (labels null) at the target row's argmax.
__global__ void hits_kernel(const float* pred, const int32_t* labels, const float* targets,
                            int64_t rows, int64_t cols, double* partials) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = grid_stride() / 32;
  double hits = 0.0;
  for (int64_t r = first_index() / 32; r < rows; r += warps) {
    const int32_t at = warp_argmax(pred + r * cols, cols, lane);
    const int32_t want = labels ? labels[r] : warp_argmax(targets + r * cols, cols, lane);
    if (lane == 0 && at == want) hits += 1.0;
  }
  hits = block_sum(hits);
  if (threadIdx.x == 0) partials[blockIdx.x] = hits;
}

enum class Term { hit, squared_error, absolute_error };

__global__ void elementwise_kernel(const float* pred, const float* targets, int64_t n, Term term,
                                   float threshold, double* partials) {
  double acc = 0.0;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const double d = static_cast<double>(pred[i]) - targets[i];
    if (term == Term::hit)
      acc += (pred[i] > threshold) == (targets[i] > 0.5f) ? 1.0 : 0.0;
    else
      acc += term == Term::squared_error ? d * d : fabs(d);
  }
  acc = block_sum(acc);
  if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}

// Runs launch(blocks, partials), then finish_kernel into *sum.
template <class Launch>
void reduce(int64_t threads, float* sum, const char* what, Launch launch) {
  const int blocks = blocks_for(threads, kMaxBlocks);
  Scratch scratch(static_cast<size_t>(blocks) * sizeof(double));
  auto* partials = static_cast<double*>(scratch.get());
  launch(blocks, partials);
  check_launch(what);
  finish_kernel<<<1, kThreads>>>(partials, blocks, sum);
  check_launch(what);
}

}  // namespace

void label_hits(const float* pred, const int32_t* labels, int64_t rows, int64_t cols, float* sum) {
  reduce(rows * 32, sum, "label_hits", [&](int blocks, double* partials) {
    hits_kernel<<<blocks, kThreads>>>(pred, labels, nullptr, rows, cols, partials);
  });
}

void argmax_hits(const float* pred, const float* targets, int64_t rows, int64_t cols, float* sum) {
  reduce(rows * 32, sum, "argmax_hits", [&](int blocks, double* partials) {
    hits_kernel<<<blocks, kThreads>>>(pred, nullptr, targets, rows, cols, partials);
  });
}

void threshold_hits(const float* pred, const float* targets, int64_t n, float threshold,
                    float* sum) {
  reduce(n, sum, "threshold_hits", [&](int blocks, double* partials) {
    elementwise_kernel<<<blocks, kThreads>>>(pred, targets, n, Term::hit, threshold, partials);
  });
}

void error_sum(const float* pred, const float* targets, int64_t n, bool squared, float* sum) {
  reduce(n, sum, "error_sum", [&](int blocks, double* partials) {
    elementwise_kernel<<<blocks, kThreads>>>(
        pred, targets, n, squared ? Term::squared_error : Term::absolute_error, 0.0f, partials);
  });
}

}  // namespace drun::kernels::cuda
