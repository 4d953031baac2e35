// The CPU side of each op of kernels/op_list.hpp (cpu/ops_cpu.hpp), on host
// tensors, after ops.cpp's checks: each adapts the op's tensors to a kernel of
// kernels/cpu/ (or of kernels/mixed_reference.hpp for mixed precision) and
// splits the work over ex's threads where the kernel's rows are independent.
// The CUDA side of the same ops is cuda/ops_cuda.cpp.
#include "kernels/cpu/ops_cpu.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "kernels/activation.hpp"
#include "kernels/batchnorm.hpp"
#include "kernels/cast.hpp"
#include "kernels/cpu/batchnorm_threads.hpp"
#include "kernels/cpu/conv2d.hpp"
#include "kernels/cpu/conv2d_direct.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu/depthwise_conv2d.hpp"
#include "kernels/cpu/gemm.hpp"
#include "kernels/cpu/pool.hpp"
#include "kernels/cpu/split.hpp"
#include "kernels/dropout.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/embedding.hpp"
#include "kernels/gradient_clip.hpp"
#include "kernels/layer_norm.hpp"
#include "kernels/loss.hpp"
#include "kernels/masked_softmax.hpp"
#include "kernels/metric.hpp"
#include "kernels/metric_counts.hpp"
#include "kernels/mixed_reference.hpp"
#include "kernels/optimizer_update.hpp"
#include "kernels/recurrent_args.hpp"
#include "kernels/strided_copy.hpp"

namespace drun::kernels {

namespace {

int64_t last_dim(const Tensor& t) {
  return t.rank() ? t.dim(-1) : 1;
}

// Splits `rows` rows into one contiguous range per thread of ex's budget and
// runs f(first_row, row_count) on each, for kernels whose rows are
// independent: the result is the same, bit for bit, whatever the split.
// Small inputs stay on one thread (a parallel region costs microseconds).
template <class F>
void by_rows(const Exec& ex, int64_t rows, int64_t cols, F&& f) {
  constexpr int64_t kMinPerThread = 1 << 14;  // floats
  const int64_t most = std::max<int64_t>(1, rows * cols / kMinPerThread);
  cpu::for_each_range(rows, static_cast<int>(std::min<int64_t>(ex.threads, most)),
                      [&](int64_t, int64_t r0, int64_t r1) {
                        if (r1 > r0) f(r0, r1 - r0);
                      });
}

// Splits the columns of a rows x cols sum into whole blocks of 16 per thread
// and runs f(first_column, end_column) on each: each column's sum runs over
// the rows in order on one thread, so the result is the same, bit for bit,
// whatever the split.
template <class F>
void by_columns(const Exec& ex, int64_t rows, int64_t cols, F&& f) {
  const int64_t blocks = (cols + 15) / 16;
  by_rows(ex, blocks, rows * 16,
          [&](int64_t b0, int64_t n) { f(b0 * 16, std::min(cols, (b0 + n) * 16)); });
}

}  // namespace

void on_cpu::synchronize(const Exec&) {}

void on_cpu::matmul(const Exec& ex, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
                    const Tensor& a, const Tensor& b, float beta, Tensor& y) {
  if (mixed_reference::mixed(a, b))
    return mixed_reference::matmul(ex, ta, tb, m, n, k, alpha, a, b, beta, y);
  if (a.numel() < m * k || b.numel() < k * n || y.numel() < m * n)
    throw std::logic_error("matmul: operands smaller than " + std::to_string(m) + "x" +
                           std::to_string(k) + " * " + std::to_string(k) + "x" + std::to_string(n));
  cpu::gemm(ta, tb, m, n, k, alpha, a.f32(), ta ? m : k, b.f32(), tb ? k : n, beta, y.f32(), n,
            ex.threads);
}

// The bias is added as C is written where drun's own GEMM computes the
// product (cpu/gemm.cpp).
void on_cpu::affine(const Exec& ex, int64_t rows, int64_t in, int64_t cols, const Tensor& x,
                    const Tensor& w, const Tensor& b, Tensor& y) {
  if (mixed_reference::mixed(x, w)) {
    mixed_reference::matmul(ex, false, false, rows, cols, in, 1.0f, x, w, 0.0f, y);
    on_cpu::bias_add(ex, y, b);
    return;
  }
  if (x.numel() < rows * in || w.numel() < in * cols || b.numel() != cols ||
      y.numel() < rows * cols)
    throw std::logic_error("affine: operands smaller than " + std::to_string(rows) + "x" +
                           std::to_string(in) + " * " + std::to_string(in) + "x" +
                           std::to_string(cols) + " + " + std::to_string(cols));
  if (cpu::gemm_adds_bias(false, false, rows, cols, in)) {
    cpu::gemm(false, false, rows, cols, in, 1.0f, x.f32(), in, w.f32(), cols, 0.0f, y.f32(), cols,
              ex.threads, b.f32());
    return;
  }
  // y's rows = b, then the product added: with beta 0 OpenBLAS zeroes y
  // first, and the bias would be a second pass over y (an LSTM 256's input
  // projection at batch 32 x 64 steps: 8 MiB).
  CopyGeometry rows_of_b;
  rows_of_b.rank = 2;
  rows_of_b.size[0] = rows, rows_of_b.size[1] = cols;
  rows_of_b.x_stride[0] = 0, rows_of_b.x_stride[1] = 1;
  rows_of_b.y_stride[0] = cols, rows_of_b.y_stride[1] = 1;
  on_cpu::strided_copy(ex, rows_of_b, b, 0.0f, y);
  cpu::gemm(false, false, rows, cols, in, 1.0f, x.f32(), in, w.f32(), cols, 1.0f, y.f32(), cols,
            ex.threads);
}

// One single-threaded GEMM per matrix of the grid, the grid split over ex's
// threads: attention's heads are small products, each too small to split.
void on_cpu::batched_matmul(const Exec& ex, const BatchedGemm& g, float alpha, const Tensor& a,
                            const Tensor& b, float beta, Tensor& y) {
  const float *ap = a.f32(), *bp = b.f32();
  float* yp = y.f32();
  by_rows(ex, g.batch * g.heads, g.m * g.n * g.k, [&](int64_t first, int64_t count) {
    cpu::batched_gemm(g, alpha, ap, bp, beta, yp, first, first + count);
  });
}

void on_cpu::masked_softmax_forward(const Exec& ex, float scale, bool causal, int64_t t,
                                    const Tensor& x, Tensor& y) {
  const int64_t cols = last_dim(x);
  const float* xp = x.f32();
  float* yp = y.f32();
  // Whole groups of t rows per thread: the causal mask counts rows from a group's start.
  by_rows(ex, x.numel() / (cols * t), cols * t, [&](int64_t g0, int64_t n) {
    cpu::masked_softmax_forward(scale, causal, t, xp + g0 * t * cols, yp + g0 * t * cols, n * t,
                                cols);
  });
}

void on_cpu::masked_softmax_backward(const Exec& ex, float scale, const Tensor& y, const Tensor& dy,
                                     Tensor& dx) {
  const int64_t cols = last_dim(y);
  const float *yp = y.f32(), *dyp = dy.f32();
  float* dxp = dx.f32();
  by_rows(ex, y.numel() / cols, cols, [&](int64_t r0, int64_t n) {
    const int64_t o = r0 * cols;
    cpu::masked_softmax_backward(scale, yp + o, dyp + o, dxp + o, n, cols);
  });
}

void on_cpu::bias_add(const Exec& ex, Tensor& y, const Tensor& b) {
  const int64_t cols = b.numel();
  float* yp = y.f32();
  by_rows(ex, y.numel() / cols, cols,
          [&](int64_t r0, int64_t n) { cpu::bias_add(yp + r0 * cols, b.f32(), n, cols); });
}

void on_cpu::column_sums(const Exec& ex, const Tensor& x, Tensor& s) {
  const int64_t cols = s.numel(), rows = x.numel() / cols;
  const float* xp = x.f32();
  float* sp = s.f32();
  by_columns(ex, rows, cols, [&](int64_t j0, int64_t j1) {
    cpu::cpu_kernels().column_sums(xp, rows, cols, j0, j1, sp);
  });
}

void on_cpu::activation_forward(const Exec& ex, ActivationFn a, const Tensor& x, Tensor& y) {
  const int64_t cols = last_dim(x);
  const float* xp = x.f32();
  float* yp = y.f32();
  by_rows(ex, x.numel() / cols, cols, [&](int64_t r0, int64_t n) {
    cpu::activation_forward(a, xp + r0 * cols, yp + r0 * cols, n, cols);
  });
}

void on_cpu::activation_backward(const Exec& ex, ActivationFn a, const Tensor& x, const Tensor& y,
                                 const Tensor& dy, Tensor& dx) {
  const int64_t cols = last_dim(y);
  const float* xp = x.defined() ? x.f32() : nullptr;
  const float *yp = y.f32(), *dyp = dy.f32();
  float* dxp = dx.f32();
  by_rows(ex, y.numel() / cols, cols, [&](int64_t r0, int64_t n) {
    const int64_t o = r0 * cols;
    cpu::activation_backward(a, xp ? xp + o : nullptr, yp + o, dyp + o, dxp + o, n, cols);
  });
}

void on_cpu::add(const Exec& ex, const Tensor& a, const Tensor& b, Tensor& y) {
  const float *ap = a.f32(), *bp = b.f32();
  float* yp = y.f32();
  by_rows(ex, a.numel(), 1, [&](int64_t i, int64_t n) { cpu::add(ap + i, bp + i, yp + i, n); });
}

void on_cpu::add_relu(const Exec& ex, const Tensor& a, const Tensor& b, Tensor& y) {
  const float *ap = a.f32(), *bp = b.f32();
  float* yp = y.f32();
  by_rows(ex, a.numel(), 1,
          [&](int64_t i, int64_t n) { cpu::add_relu(ap + i, bp + i, yp + i, n); });
}

void on_cpu::add_relu_backward(const Exec& ex, const Tensor& a, const Tensor& b, const Tensor& y,
                               Tensor& dx) {
  const float *ap = a.f32(), *bp = b.f32(), *yp = y.f32();
  float* dxp = dx.f32();
  by_rows(ex, a.numel(), 1, [&](int64_t i, int64_t n) {
    cpu::add_relu_backward(ap + i, bp + i, yp + i, dxp + i, n);
  });
}

void on_cpu::axpy(const Exec& ex, float alpha, const Tensor& x, Tensor& y) {
  const float* xp = x.f32();
  float* yp = y.f32();
  by_rows(ex, x.numel(), 1, [&](int64_t i, int64_t n) { cpu::axpy(alpha, xp + i, yp + i, n); });
}

void on_cpu::fill(const Exec&, float value, Tensor& y) {
  std::fill_n(y.f32(), y.numel(), value);
}

void on_cpu::scale(const Exec& ex, float alpha, Tensor& y) {
  float* yp = y.f32();
  by_rows(ex, y.numel(), 1, [&](int64_t i, int64_t n) { cpu::scale(alpha, yp + i, n); });
}

void on_cpu::scale_by(const Exec& ex, const Tensor& alpha, Tensor& y) {
  const float* a = alpha.f32();
  float* yp = y.f32();
  by_rows(ex, y.numel(), 1, [&](int64_t i, int64_t n) { cpu::scale_by(a, yp + i, n); });
}

void on_cpu::mul(const Exec& ex, const Tensor& a, const Tensor& b, Tensor& y) {
  const float *ap = a.f32(), *bp = b.f32();
  float* yp = y.f32();
  by_rows(ex, a.numel(), 1, [&](int64_t i, int64_t n) { cpu::mul(ap + i, bp + i, yp + i, n); });
}

void on_cpu::dropout_set_key(const Exec&, uint64_t key, Tensor& stored) {
  cpu::dropout_set_key(key, stored.i32());
}

void on_cpu::dropout_forward(const Exec& ex, const Tensor& stored, float keep, const Tensor& x,
                             Tensor& mask, Tensor& y) {
  const float* xp = x.f32();
  float *mp = mask.f32(), *yp = y.f32();
  by_rows(ex, x.numel(), 1, [&](int64_t i, int64_t n) {
    cpu::dropout_forward(xp + i, mp + i, yp + i, n, stored.i32(), i, keep);
  });
}

void on_cpu::cast(const Exec& ex, const Tensor& x, Tensor& y) {
  const auto* xp = static_cast<const char*>(x.raw());
  auto* yp = static_cast<char*>(y.raw());
  const size_t from = dtype_size(x.dtype()), to = dtype_size(y.dtype());
  by_rows(ex, x.numel(), 1, [&](int64_t i, int64_t n) {
    cpu::cast(xp + i * from, x.dtype(), yp + i * to, y.dtype(), n);
  });
}

void on_cpu::mark_nonfinite(const Exec&, const Tensor& x, Tensor& flag) {
  cpu::mark_nonfinite(x.f32(), x.numel(), flag.f32());
}

namespace {

// A convolution without bias on the CPU: its engines add zeros and sum the
// bias gradient into a sink, both the CO floats that on_cpu's workspace has
// after the engines' part (no allocation in a step).
float* bias_room(const Exec& ex, const ConvGeometry& g, Tensor& ws) {
  return ws.f32() + cpu::conv2d_workspace_floats(g, ex.threads);
}
const float* bias_or_zeros(const Exec& ex, const ConvGeometry& g, const Tensor& b, Tensor& ws) {
  if (b.defined()) return b.f32();
  float* zeros = bias_room(ex, g, ws);
  std::fill_n(zeros, g.co, 0.0f);
  return zeros;
}
float* db_or_sink(const Exec& ex, const ConvGeometry& g, Tensor& db, Tensor& ws) {
  return db.defined() ? db.f32() : bias_room(ex, g, ws);
}

}  // namespace

int64_t on_cpu::conv2d_workspace_floats(const Exec& ex, const ConvGeometry& g) {
  return cpu::conv2d_workspace_floats(g, ex.threads) + g.co;
}

bool on_cpu::conv2d_forward(const Exec& ex, const ConvGeometry& g, const Tensor& x, const Tensor& w,
                            const Tensor& b, Tensor& y, bool relu, Tensor& ws, Tensor* moments) {
  if (mixed_reference::mixed(x, w)) {
    mixed_reference::conv2d_forward(ex, g, x, w, b, y, relu, ws);
    return false;
  }
  const float* bias = bias_or_zeros(ex, g, b, ws);
  return cpu::conv2d_forward_with_moments(g, x.f32(), w.f32(), bias, y.f32(), relu, ws.f32(),
                                          ex.threads, moments ? moments->f32() : nullptr);
}

void on_cpu::conv2d_backward_filter(const Exec& ex, const ConvGeometry& g, const Tensor& x,
                                    const Tensor& dy, const Tensor* relu_y, Tensor& dw, Tensor& db,
                                    Tensor& ws) {
  if (mixed_reference::mixed(x, dy))
    return mixed_reference::conv2d_backward_filter(ex, g, x, dy, relu_y, dw, db, ws);
  cpu::conv2d_backward_filter(g, x.f32(), dy.f32(), relu_y ? relu_y->f32() : nullptr, dw.f32(),
                              db_or_sink(ex, g, db, ws), ws.f32(), ex.threads);
}

void on_cpu::conv2d_backward_data(const Exec& ex, const ConvGeometry& g, const Tensor& dy,
                                  const Tensor& w, Tensor& dx, Tensor& ws) {
  if (mixed_reference::mixed(dy, w))
    return mixed_reference::conv2d_backward_data(ex, g, dy, w, dx, ws);
  cpu::conv2d_backward_data(g, dy.f32(), w.f32(), dx.f32(), ws.f32(), ex.threads);
}

bool on_cpu::conv2d_max_pool_forward(const Exec& ex, const ConvGeometry& g, const PoolGeometry& pg,
                                     const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                                     Tensor& argmax, bool relu, Tensor& ws) {
  if (x.dtype() != DType::f32 || w.dtype() != DType::f32 ||
      !cpu::conv2d_direct_max_pool_suits(g, pg))
    return false;
  cpu::conv2d_direct_max_pool_forward(g, pg, x.f32(), w.f32(), bias_or_zeros(ex, g, b, ws), y.f32(),
                                      argmax.i32(), relu, ex.threads);
  return true;
}

void on_cpu::conv2d_max_pool_backward_filter(const Exec& ex, const ConvGeometry& g,
                                             const PoolGeometry& pg, const Tensor& x,
                                             const Tensor& dy, const Tensor& argmax,
                                             const Tensor* relu_y, Tensor& dw, Tensor& db,
                                             Tensor& ws) {
  cpu::conv2d_direct_max_pool_backward_filter(g, pg, x.f32(), dy.f32(), argmax.i32(),
                                              relu_y ? relu_y->f32() : nullptr, dw.f32(),
                                              db_or_sink(ex, g, db, ws), ws.f32(), ex.threads);
}

void on_cpu::depthwise_conv2d_forward(const Exec& ex, const ConvGeometry& g, const Tensor& x,
                                      const Tensor& w, const Tensor& b, Tensor& y) {
  cpu::depthwise_conv2d_forward(g, x.f32(), w.f32(), b.defined() ? b.f32() : nullptr, y.f32(),
                                ex.threads);
}

void on_cpu::depthwise_conv2d_backward_data(const Exec& ex, const ConvGeometry& g, const Tensor& dy,
                                            const Tensor& w, Tensor& dx) {
  cpu::depthwise_conv2d_backward_data(g, dy.f32(), w.f32(), dx.f32(), ex.threads);
}

void on_cpu::depthwise_conv2d_backward_filter(const Exec& ex, const ConvGeometry& g,
                                              const Tensor& x, const Tensor& dy, Tensor& dw) {
  cpu::depthwise_conv2d_backward_filter(g, x.f32(), dy.f32(), dw.f32(), ex.threads);
}

void on_cpu::max_pool_forward(const Exec& ex, const PoolGeometry& g, const Tensor& x, Tensor& y,
                              Tensor& argmax) {
  cpu::max_pool_forward(g, x.f32(), y.f32(), argmax.i32(), ex.threads);
}

void on_cpu::max_pool_backward(const Exec& ex, const PoolGeometry& g, const Tensor& dy,
                               const Tensor& argmax, Tensor& dx) {
  cpu::max_pool_backward(g, dy.f32(), argmax.i32(), dx.f32(), ex.threads);
}

void on_cpu::avg_pool_forward(const Exec& ex, const PoolGeometry& g, const Tensor& x, Tensor& y) {
  cpu::avg_pool_forward(g, x.f32(), y.f32(), ex.threads);
}

void on_cpu::avg_pool_backward(const Exec& ex, const PoolGeometry& g, const Tensor& dy,
                               Tensor& dx) {
  cpu::avg_pool_backward(g, dy.f32(), dx.f32(), ex.threads);
}

void on_cpu::global_avg_pool_forward(const Exec&, const Tensor& x, Tensor& y) {
  const int64_t n = x.dim(0), c = x.dim(-1);
  cpu::global_avg_pool_forward(n, x.numel() / (n * c), c, x.f32(), y.f32());
}

void on_cpu::global_avg_pool_backward(const Exec&, const Tensor& dy, Tensor& dx) {
  const int64_t n = dx.dim(0), c = dx.dim(-1);
  cpu::global_avg_pool_backward(n, dx.numel() / (n * c), c, dy.f32(), dx.f32());
}

namespace {
// dst = src (beta 0) or beta dst + src over len consecutive floats.
void store_run(const float* src, int64_t len, float beta, float* dst) {
  if (beta == 0.0f)
    std::copy(src, src + len, dst);
  else
    for (int64_t j = 0; j < len; ++j) dst[j] = beta * dst[j] + src[j];
}
}  // namespace

// One place computed per run of the last dimension, which is then walked by
// its strides: the divisions of copy_place once per row, not per element.
void on_cpu::strided_copy(const Exec& ex, const CopyGeometry& g, const Tensor& x, float beta,
                          Tensor& y) {
  const int64_t total = g.count();
  if (total == 0) return;
  const int64_t inner = g.rank ? g.size[g.rank - 1] : 1;
  const int64_t xs = g.rank ? g.x_stride[g.rank - 1] : 0, ys = g.rank ? g.y_stride[g.rank - 1] : 0;
  const float* xp = x.f32();
  float* yp = y.f32();
  // Runs of consecutive floats on both sides and nothing summed (a position
  // embedding's copy and broadcast add, concatenation, padding): plain loops
  // the compiler vectorises, where the general loop below costs a call per
  // element. A single run is cut into pieces so that threads share it.
  if (g.sum_rank == 0 && xs == 1 && ys == 1) {
    const int64_t piece = g.rank == 1 ? std::min<int64_t>(inner, 1 << 14) : inner;
    const int64_t runs = g.rank == 1 ? (inner + piece - 1) / piece : total / inner;
    by_rows(ex, runs, piece, [&](int64_t r0, int64_t count) {
      for (int64_t r = r0; r < r0 + count; ++r) {
        const int64_t at = r * piece;
        const CopyPlace p =
            g.rank == 1 ? CopyPlace{g.x_offset + at, g.y_offset + at} : copy_place(g, at);
        const int64_t len = g.rank == 1 ? std::min(piece, inner - at) : inner;
        store_run(xp + p.x, len, beta, yp + p.y);
      }
    });
    return;
  }
  // One summed dimension over runs of consecutive floats (a position
  // embedding's table gradient: 32 examples' (64, 128) summed): each piece
  // of a run summed a whole row of x at a time into a buffer, so the loads
  // stream and vectorise where copy_source walks x down a column per element
  // (0.70 -> 0.07 ms there on a Zen 4 core). Each element still adds its
  // terms in order from 0, as copy_source does.
  if (g.sum_rank == 1 && xs == 1 && ys == 1) {
    constexpr int64_t kPiece = 512;
    const int64_t pieces = (inner + kPiece - 1) / kPiece, runs = total / inner;
    const int64_t terms = g.sum_size[0], term_stride = g.sum_stride[0];
    by_rows(ex, runs * pieces, kPiece * terms, [&](int64_t first, int64_t count) {
      alignas(64) float s[kPiece];
      for (int64_t i = first; i < first + count; ++i) {
        const int64_t r = i / pieces, at = i % pieces * kPiece;
        const int64_t len = std::min(kPiece, inner - at);
        const CopyPlace p = copy_place(g, r * inner + at);
        std::fill(s, s + len, 0.0f);
        for (int64_t a = 0; a < terms; ++a) {
          const float* src = xp + p.x + a * term_stride;
          for (int64_t j = 0; j < len; ++j) s[j] += src[j];
        }
        store_run(s, len, beta, yp + p.y);
      }
    });
    return;
  }
  // A transpose (y's rows read down x's columns; the LSTM's R^T each
  // backward, 1 MiB): tiles of 8 x 8, so that the lines of x and of y a tile
  // touches stay in the cache until it is done (16 rows 4 KiB apart share one
  // set of an L1 with 12 ways), whole tiles with loops of constant length and
  // beta decided outside them, which the compiler unrolls: 256 x 1024 on a
  // Zen 4 core, 0.22 -> 0.09 ms.
  if (g.rank == 2 && g.sum_rank == 0 && g.x_stride[0] == 1 && ys == 1) {
    constexpr int64_t kTile = 8;
    const int64_t rows = g.size[0], cols = inner, yr = g.y_stride[0];
    const float* x0 = xp + g.x_offset;
    float* y0 = yp + g.y_offset;
    auto tiles = [&](auto update, int64_t b0, int64_t count) {
      for (int64_t r0 = b0 * kTile; r0 < std::min(rows, (b0 + count) * kTile); r0 += kTile)
        for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
          if (r0 + kTile <= rows && c0 + kTile <= cols) {
            for (int64_t r = r0; r < r0 + kTile; ++r)
              for (int64_t c = c0; c < c0 + kTile; ++c) update(y0[r * yr + c], x0[r + c * xs]);
          } else {
            for (int64_t r = r0; r < std::min(rows, r0 + kTile); ++r)
              for (int64_t c = c0; c < std::min(cols, c0 + kTile); ++c)
                update(y0[r * yr + c], x0[r + c * xs]);
          }
        }
    };
    by_rows(ex, (rows + kTile - 1) / kTile, kTile * cols, [&](int64_t b0, int64_t count) {
      if (beta == 0.0f)
        tiles([](float& out, float v) { out = v; }, b0, count);
      else
        tiles([beta](float& out, float v) { out = beta * out + v; }, b0, count);
    });
    return;
  }
  by_rows(ex, total / inner, inner, [&](int64_t r0, int64_t rows) {
    for (int64_t r = r0; r < r0 + rows; ++r) {
      const CopyPlace p = copy_place(g, r * inner);
      for (int64_t j = 0; j < inner; ++j) {
        const float v = copy_source(g, xp, p.x + j * xs);
        float& out = yp[p.y + j * ys];
        out = beta == 0.0f ? v : beta * out + v;
      }
    }
  });
}

void on_cpu::batchnorm_forward_train(const Exec& ex, const Tensor& x, const Tensor& gamma,
                                     const Tensor& beta, float eps, float momentum,
                                     Tensor& moving_mean, Tensor& moving_var, Tensor& mean,
                                     Tensor& inv_std, Tensor& y, bool relu, const Tensor* moments) {
  const int64_t c = gamma.numel();
  cpu::batchnorm_forward_train(x.f32(), x.numel() / c, c, gamma.f32(), beta.f32(), eps, momentum,
                               moving_mean.f32(), moving_var.f32(), mean.f32(), inv_std.f32(),
                               y.f32(), relu, ex.threads, moments ? moments->f32() : nullptr,
                               moments ? moments->dim(0) : 0);
}

void on_cpu::batchnorm_forward_infer(const Exec& ex, const Tensor& x, const Tensor& gamma,
                                     const Tensor& beta, float eps, const Tensor& moving_mean,
                                     const Tensor& moving_var, Tensor& y, bool relu) {
  const int64_t c = gamma.numel();
  const float* xp = x.f32();
  float* yp = y.f32();
  by_rows(ex, x.numel() / c, c, [&](int64_t r0, int64_t n) {
    cpu::batchnorm_forward_infer(xp + r0 * c, n, c, gamma.f32(), beta.f32(), eps, moving_mean.f32(),
                                 moving_var.f32(), yp + r0 * c, relu);
  });
}

void on_cpu::batchnorm_backward(const Exec& ex, const Tensor& x, const Tensor& dy,
                                const Tensor* relu_y, const Tensor& gamma, const Tensor& beta,
                                const Tensor& mean, const Tensor& inv_std, bool batch_statistics,
                                Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  const int64_t c = gamma.numel();
  cpu::batchnorm_backward(x.f32(), dy.f32(), relu_y ? beta.f32() : nullptr, x.numel() / c, c,
                          gamma.f32(), mean.f32(), inv_std.f32(), batch_statistics, dx.f32(),
                          dgamma.f32(), dbeta.f32(), ex.threads);
}

namespace {

// An optional tensor's data: null where it is undefined.
template <class T>
auto data_or_null(T& t) {
  return t.defined() ? t.f32() : nullptr;
}

}  // namespace

void on_cpu::layer_norm_forward(const Exec& ex, const Tensor& x, const Tensor& gamma,
                                const Tensor& beta, float eps, Tensor& mean, Tensor& inv_std,
                                Tensor& y) {
  const int64_t c = x.dim(-1);
  const float *xp = x.f32(), *g = data_or_null(gamma), *b = data_or_null(beta);
  float *yp = y.f32(), *mp = mean.f32(), *sp = inv_std.f32();
  by_rows(ex, x.numel() / c, c, [&](int64_t r0, int64_t n) {
    cpu::layer_norm_forward(xp + r0 * c, n, c, g, b, eps, mp + r0, sp + r0, yp + r0 * c);
  });
}

void on_cpu::layer_norm_backward(const Exec& ex, const Tensor& x, const Tensor& dy,
                                 const Tensor& gamma, const Tensor& mean, const Tensor& inv_std,
                                 Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  const int64_t c = x.dim(-1), rows = x.numel() / c;
  const float *xp = x.f32(), *dyp = dy.f32(), *g = data_or_null(gamma);
  const float *mp = mean.f32(), *sp = inv_std.f32();
  if (dgamma.defined() || dbeta.defined())
    by_columns(ex, rows, c, [&](int64_t j0, int64_t j1) {
      cpu::cpu_kernels().layer_norm_param_grads(xp, dyp, rows, c, mp, sp, j0, j1,
                                                data_or_null(dgamma), data_or_null(dbeta));
    });
  if (!dx.defined()) return;
  float* dxp = dx.f32();
  by_rows(ex, rows, c, [&](int64_t r0, int64_t n) {
    cpu::layer_norm_backward_input(xp + r0 * c, dyp + r0 * c, n, c, g, mp + r0, sp + r0,
                                   dxp + r0 * c);
  });
}

void on_cpu::embedding_gather(const Exec& ex, const Tensor& ids, const Tensor& table, Tensor& y) {
  const int64_t dim = table.dim(1);
  const auto* idp = static_cast<const char*>(ids.raw());
  const size_t id_bytes = dtype_size(ids.dtype());
  float* yp = y.f32();
  by_rows(ex, ids.numel(), dim, [&](int64_t i, int64_t n) {
    cpu::embedding_gather(idp + i * id_bytes, ids.dtype(), n, table.f32(), table.dim(0), dim,
                          yp + i * dim);
  });
}

void on_cpu::embedding_scatter_add(const Exec&, const Tensor& ids, const Tensor& dy,
                                   Tensor& dtable) {
  cpu::embedding_scatter_add(ids.raw(), ids.dtype(), ids.numel(), dy.f32(), dtable.dim(0),
                             dtable.dim(1), dtable.f32());
}

namespace {

// The instruction set's softmax_xent_sparse_rows over chunks of rows split
// over the threads. The mean sums each chunk's row losses, then the chunks'
// sums, in order, in double: chunks of a size that depends on rows alone (at
// most kChunks of them, on the stack), so the loss is the same on any
// number of threads.
void softmax_xent_sparse(const Exec& ex, const float* logits, const int32_t* labels, int64_t rows,
                         int64_t cols, float* grad, float* loss) {
  constexpr int64_t kChunks = 4096, kMinChunk = 256;
  const int64_t chunk = std::max(kMinChunk, (rows + kChunks - 1) / kChunks);
  const int64_t chunks = (rows + chunk - 1) / chunk;
  double sums[kChunks];
  const float inv_rows = 1.0f / static_cast<float>(rows);
  by_rows(ex, chunks, chunk * cols, [&](int64_t first, int64_t count) {
    float row_loss[kMinChunk];
    for (int64_t c = first; c < first + count; ++c) {
      sums[c] = 0.0;
      for (int64_t r0 = c * chunk; r0 < std::min(rows, (c + 1) * chunk); r0 += kMinChunk) {
        const int64_t n = std::min({kMinChunk, rows - r0, (c + 1) * chunk - r0});
        cpu::cpu_kernels().softmax_xent_sparse_rows(logits + r0 * cols, labels + r0, n, cols,
                                                    inv_rows, grad + r0 * cols, row_loss);
        for (int64_t r = 0; r < n; ++r) sums[c] += static_cast<double>(row_loss[r]);
      }
    }
  });
  double total = 0.0;
  for (int64_t c = 0; c < chunks; ++c) total += sums[c];
  *loss = static_cast<float>(total / static_cast<double>(rows));
}

}  // namespace

void on_cpu::loss_forward_backward(const Exec& ex, LossKind kind, const Tensor& pred,
                                   const Tensor& target, Tensor& grad, Tensor& loss) {
  const auto [rows, cols] = class_rows(pred.shape());
  float* out = loss.f32();
  switch (kind) {
    case LossKind::softmax_xent_sparse:
      return softmax_xent_sparse(ex, pred.f32(), target.i32(), rows, cols, grad.f32(), out);
    case LossKind::xent_sparse:
      return cpu::xent_sparse_probs(pred.f32(), target.i32(), rows, cols, grad.f32(), out);
    case LossKind::softmax_xent:
      return cpu::softmax_xent_dense(pred.f32(), target.f32(), rows, cols, grad.f32(), out);
    case LossKind::xent:
      return cpu::xent_dense_probs(pred.f32(), target.f32(), rows, cols, grad.f32(), out);
    case LossKind::sigmoid_bce:
      return cpu::sigmoid_bce(pred.f32(), target.f32(), pred.numel(), grad.f32(), out);
    case LossKind::bce:
      return cpu::bce_probs(pred.f32(), target.f32(), pred.numel(), grad.f32(), out);
    case LossKind::mse:
      return cpu::mse(pred.f32(), target.f32(), pred.numel(), grad.f32(), out);
  }
}

void on_cpu::metric_sum(const Exec&, MetricKind kind, const Tensor& pred, const Tensor& target,
                        Tensor& sum) {
  const auto [rows, cols] = class_rows(pred.shape());
  float* out = sum.f32();
  switch (kind) {
    case MetricKind::label_accuracy:
      return cpu::label_hits(pred.f32(), target.i32(), rows, cols, out);
    case MetricKind::onehot_accuracy:
      return cpu::argmax_hits(pred.f32(), target.f32(), rows, cols, out);
    case MetricKind::binary_accuracy_logits:
      return cpu::threshold_hits(pred.f32(), target.f32(), pred.numel(), 0.0f, out);
    case MetricKind::binary_accuracy_probs:
      return cpu::threshold_hits(pred.f32(), target.f32(), pred.numel(), 0.5f, out);
    case MetricKind::squared_error:
      return cpu::error_sum(pred.f32(), target.f32(), pred.numel(), true, out);
    case MetricKind::absolute_error:
      return cpu::error_sum(pred.f32(), target.f32(), pred.numel(), false, out);
  }
}

void on_cpu::top_k_hits(const Exec&, int k, const Tensor& pred, const Tensor& target, Tensor& sum) {
  const auto [rows, cols] = class_rows(pred.shape());
  const bool labels = target.dtype() == DType::i32;
  cpu::top_k_hits(pred.f32(), labels ? target.i32() : nullptr, labels ? nullptr : target.f32(),
                  rows, cols, k, sum.f32());
}

void on_cpu::threshold_counts(const Exec&, const Thresholds& thresholds, const Tensor& pred,
                              const Tensor& target, Tensor& counts) {
  cpu::threshold_counts(pred.f32(), target.f32(), pred.numel(), thresholds, counts.f32());
}

void on_cpu::bucket_counts(const Exec&, const Tensor& pred, const Tensor& target, Tensor& counts) {
  cpu::bucket_counts(pred.f32(), target.f32(), pred.numel(), counts.numel() / 2, counts.f32());
}

void on_cpu::class_counts(const Exec&, std::optional<float> threshold, const Tensor& pred,
                          const Tensor& target, Tensor& counts) {
  const auto [rows, cols] = class_rows(pred.shape());
  cpu::class_counts(pred.f32(), target.f32(), rows, cols, !threshold, threshold.value_or(0.0f),
                    counts.f32());
}

namespace {

// p + offset, or null for an unused optional slot.
float* at(Tensor* t, int64_t offset) {
  return t ? t->f32() + offset : nullptr;
}

}  // namespace

// The updates are elementwise, so a large variable is cut into one range per
// thread (by_rows over one column): each element's arithmetic is the same as
// in one pass, bit-identical for any thread count. Measured on a 16-core Xeon
// (seed CNN, 347k parameters): on one thread the update took 0.6 ms of a
// 1.5 ms step, reading gradients that the GEMM's threads had left in the
// other cores' caches.
void on_cpu::sgd_update(const Exec& ex, const Tensor& g, Tensor& w, const Tensor& step,
                        float weight_decay) {
  by_rows(ex, w.numel(), 1, [&](int64_t o, int64_t n) {
    cpu::sgd(w.f32() + o, g.f32() + o, n, step.f32(), weight_decay);
  });
}

void on_cpu::sgd_momentum_update(const Exec& ex, const Tensor& g, Tensor& w, Tensor& v,
                                 const Tensor& step, float momentum, bool nesterov,
                                 float weight_decay) {
  by_rows(ex, w.numel(), 1, [&](int64_t o, int64_t n) {
    cpu::sgd_momentum(w.f32() + o, g.f32() + o, v.f32() + o, n, step.f32(), momentum, nesterov,
                      weight_decay);
  });
}

void on_cpu::adagrad_update(const Exec& ex, const Tensor& g, Tensor& w, Tensor& acc,
                            const Tensor& step, float epsilon, float weight_decay) {
  by_rows(ex, w.numel(), 1, [&](int64_t o, int64_t n) {
    cpu::adagrad(w.f32() + o, g.f32() + o, acc.f32() + o, n, step.f32(), epsilon, weight_decay);
  });
}

void on_cpu::adam_update(const Exec& ex, const Tensor& g, Tensor& w, Tensor& m, Tensor& v,
                         Tensor* vhat, const Tensor& step, float one_minus_b1, float one_minus_b2,
                         float epsilon, float weight_decay) {
  by_rows(ex, w.numel(), 1, [&](int64_t o, int64_t n) {
    cpu::adam(w.f32() + o, g.f32() + o, m.f32() + o, v.f32() + o, at(vhat, o), n, step.f32(),
              one_minus_b1, one_minus_b2, epsilon, weight_decay);
  });
}

void on_cpu::rmsprop_update(const Exec& ex, const Tensor& g, Tensor& w, Tensor& rms, Tensor* mg,
                            const Tensor& step, float rho, float epsilon, float weight_decay) {
  by_rows(ex, w.numel(), 1, [&](int64_t o, int64_t n) {
    cpu::rmsprop(w.f32() + o, g.f32() + o, rms.f32() + o, at(mg, o), n, step.f32(), rho, epsilon,
                 weight_decay);
  });
}

void on_cpu::rmsprop_momentum_update(const Exec& ex, const Tensor& g, Tensor& w, Tensor& rms,
                                     Tensor* mg, Tensor& mom, const Tensor& step, float rho,
                                     float momentum, float epsilon, float weight_decay) {
  by_rows(ex, w.numel(), 1, [&](int64_t o, int64_t n) {
    cpu::rmsprop_momentum(w.f32() + o, g.f32() + o, rms.f32() + o, at(mg, o), mom.f32() + o, n,
                          step.f32(), rho, momentum, epsilon, weight_decay);
  });
}

// Split as the updates are; each part computes the clip's scalar itself.
void on_cpu::clip_gradient(const Exec& ex, GradientClip kind, float limit,
                           const Tensor& sum_squares, const Tensor& step, Tensor& g) {
  const float* ss = sum_squares.defined() ? sum_squares.f32() : nullptr;
  by_rows(ex, g.numel(), 1, [&](int64_t o, int64_t n) {
    cpu::clip_gradient(kind, limit, ss, step.f32(), g.f32() + o, n);
  });
}

}  // namespace drun::kernels

namespace drun::kernels {

void on_cpu::lstm_step_forward(const Exec& ex, int64_t t_x, int64_t t_y, const Tensor& xp,
                               const Tensor& hr, const Tensor& c_prev, Tensor& gates, Tensor& c,
                               Tensor& h, Tensor* seq) {
  cpu::rnn_step(rnn_args::lstm_forward(t_x, t_y, xp, hr, c_prev, gates, c, h, seq), ex.threads);
}

void on_cpu::lstm_step_backward(const Exec& ex, int64_t t_y, const Tensor* dseq,
                                const Tensor& gates, const Tensor& c, const Tensor& c_prev,
                                const Tensor& dh, Tensor& dc, Tensor& dz) {
  cpu::rnn_step(rnn_args::lstm_backward(t_y, dseq, gates, c, c_prev, dh, dc, dz), ex.threads);
}

void on_cpu::gru_step_forward(const Exec& ex, bool reset_after, int64_t t_x, int64_t t_y,
                              const Tensor& xp, const Tensor& hr, const Tensor& hrh,
                              const Tensor& h_prev, Tensor& gates, Tensor& h, Tensor* seq) {
  cpu::rnn_step(rnn_args::gru_forward(reset_after, t_x, t_y, xp, hr, hrh, h_prev, gates, h, seq),
                ex.threads);
}

void on_cpu::gru_reset_forward(const Exec& ex, int64_t t_x, const Tensor& xp, const Tensor& hr,
                               const Tensor& h_prev, Tensor& rh) {
  cpu::rnn_step(rnn_args::gru_reset_forward(t_x, xp, hr, h_prev, rh), ex.threads);
}

void on_cpu::gru_step_backward(const Exec& ex, bool reset_after, int64_t t_x, int64_t t_y,
                               const Tensor* dseq, const Tensor& gates, const Tensor& h_prev,
                               Tensor& dh, Tensor& dzx, Tensor& dzr, Tensor* dzh) {
  cpu::rnn_step(
      rnn_args::gru_backward(reset_after, t_x, t_y, dseq, gates, h_prev, dh, dzx, dzr, dzh),
      ex.threads);
}

void on_cpu::gru_reset_backward(const Exec& ex, int64_t t_x, const Tensor& gates,
                                const Tensor& h_prev, const Tensor& drh, Tensor& dh, Tensor& dzx,
                                Tensor& dzr) {
  cpu::rnn_step(rnn_args::gru_reset_backward(t_x, gates, h_prev, drh, dh, dzx, dzr), ex.threads);
}

void on_cpu::simple_rnn_step_forward(const Exec& ex, ActivationFn a, int64_t t_x, int64_t t_y,
                                     const Tensor& xp, const Tensor& hr, Tensor& h, Tensor* seq) {
  cpu::simple_rnn_step_forward(a, rnn_args::shape(xp, h, t_x, t_y), xp.f32(), hr.f32(), h.f32(),
                               rnn_args::data(seq), ex.threads);
}

void on_cpu::simple_rnn_step_backward(const Exec& ex, ActivationFn a, int64_t t_x, int64_t t_y,
                                      const Tensor* dseq, const Tensor& h, const Tensor& dh,
                                      Tensor& dz, Tensor& dzx) {
  cpu::simple_rnn_step_backward(a, rnn_args::shape(dzx, h, t_x, t_y), rnn_args::data(dseq), h.f32(),
                                dh.f32(), dz.f32(), dzx.f32(), ex.threads);
}

}  // namespace drun::kernels
