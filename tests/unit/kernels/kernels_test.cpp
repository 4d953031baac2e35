// Every CPU kernel against a plain reference loop in double precision.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "base/rng.hpp"
#include "kernel_reference.hpp"
#include "kernels/activation.hpp"
#include "kernels/batchnorm.hpp"
#include "kernels/cpu/batchnorm_threads.hpp"
#include "kernels/cpu/conv2d.hpp"
#include "kernels/cpu/conv2d_direct.hpp"
#include "kernels/cpu/conv2d_im2col.hpp"
#include "kernels/cpu/conv2d_implicit.hpp"
#include "kernels/cpu/conv2d_winograd.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu/gemm.hpp"
#include "kernels/cpu/pool.hpp"
#include "kernels/dropout.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/loss.hpp"
#include "kernels/masked_softmax.hpp"
#include "kernels/metric.hpp"
#include "kernels/ops.hpp"

namespace drun::kernels::cpu {
namespace {

using reference::expect_close;
using reference::PoolRef;
using reference::random_vec;
using reference::ref_conv_backward;
using reference::ref_conv_forward;
using reference::ref_pool;

// ---------------------------------------------------------------- GEMM

TEST(Gemm, AllTransposesThreadsAndBeta) {
  Rng rng(1);
  struct Shape {
    int64_t m, n, k;
  };
  // 64 x 72 x 1200: more threads than blocks of 16 along either side (a grid
  // of blocks); 40 x 24 x 3000: a small C summed from pieces of K; 100 x 96 x
  // 1500: a larger C from fewer pieces, each in blocks of rows (the last short).
  // 32 x 1024 x 256 and 32 x 256 x 1024: an LSTM step's product and its
  // gradient (few rows: B read in place); 9 x 141 x 37: the same path with
  // rows, columns and K no multiple of a block or vector. 200 x 150 x 300 nt
  // goes through B's transposed copy to drun's nn kernel (x86).
  for (Shape s : {Shape{200, 150, 300}, Shape{7, 300, 5}, Shape{300, 3, 17}, Shape{1, 1, 1},
                  Shape{64, 72, 1200}, Shape{40, 24, 3000}, Shape{100, 96, 1500},
                  Shape{32, 1024, 256}, Shape{32, 256, 1024}, Shape{9, 141, 37}}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        // Stored A is (m x k) or (k x m); padded row strides check lda/ldb/ldc.
        const int64_t ar = ta ? s.k : s.m, ac = ta ? s.m : s.k;
        const int64_t br = tb ? s.n : s.k, bc = tb ? s.k : s.n;
        const int64_t lda = ac + 3, ldb = bc + 1, ldc = s.n + 2;
        const auto a = random_vec(ar * lda, rng), b = random_vec(br * ldb, rng);
        const auto c0 = random_vec(s.m * ldc, rng);
        // op(A) op(B) in double, once for every thread count and beta (under
        // qemu the reference is most of this test's time).
        std::vector<double> product(static_cast<size_t>(s.m * s.n));
        for (int64_t i = 0; i < s.m; ++i)
          for (int64_t j = 0; j < s.n; ++j) {
            double acc = 0.0;
            for (int64_t p = 0; p < s.k; ++p) {
              const double av = ta ? a[p * lda + i] : a[i * lda + p];
              const double bv = tb ? b[j * ldb + p] : b[p * ldb + j];
              acc += av * bv;
            }
            product[i * s.n + j] = acc;
          }
        for (int threads : {1, 2, 16}) {
          for (float beta : {0.0f, 1.0f}) {
            const float alpha = 0.75f;
            std::vector<float> c = c0;
            if (beta == 0.0f)  // beta 0 must ignore C, NaN included
              for (int64_t i = 0; i < s.m; ++i)
                for (int64_t j = 0; j < s.n; ++j)
                  c[i * ldc + j] = std::numeric_limits<float>::quiet_NaN();
            gemm(ta, tb, s.m, s.n, s.k, alpha, a.data(), lda, b.data(), ldb, beta, c.data(), ldc,
                 threads);
            std::vector<double> want(c0.begin(), c0.end());
            for (int64_t i = 0; i < s.m; ++i)
              for (int64_t j = 0; j < s.n; ++j)
                want[i * ldc + j] =
                    alpha * product[i * s.n + j] + beta * static_cast<double>(c0[i * ldc + j]);
            SCOPED_TRACE(testing::Message()
                         << "m=" << s.m << " n=" << s.n << " k=" << s.k << " ta=" << ta
                         << " tb=" << tb << " threads=" << threads << " beta=" << beta);
            expect_close(c, want, 1e-4, "gemm");
          }
        }
      }
    }
  }
}

// A product summed from pieces of K gives the same bits on any number of
// threads. (C's grid does not promise that: OpenBLAS picks its kernels by
// the block's shape, and a block can round unlike the whole.)
TEST(Gemm, PiecesOfKGiveTheSameBitsOnAnyThreadCount) {
  Rng rng(2);
  for (const auto [m, n, k] :
       {std::array<int64_t, 3>{64, 64, 5408}, {40, 24, 3000}, {256, 64, 5408}, {100, 96, 1500}}) {
    const auto a = random_vec(m * k, rng), b = random_vec(k * n, rng);
    std::vector<float> one(static_cast<size_t>(m * n));
    gemm(false, false, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, one.data(), n, 1);
    for (int threads : {2, 3, 16}) {
      std::vector<float> c(static_cast<size_t>(m * n));
      gemm(false, false, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c.data(), n, threads);
      EXPECT_EQ(0, std::memcmp(c.data(), one.data(), sizeof(float) * c.size()))
          << m << " x " << n << " x " << k << " on " << threads << " threads";
    }
  }
}

// So does a C of few rows (an RNN step's), split by columns over threads,
// and an nn product of more rows that drun's own kernel computes (an LSTM's
// input projection's shape, smaller), split by rows too, with a bias, and
// the same shapes nt, through B's transposed copy where B is small (x86);
// and tn products (x86: the same kernel, A read transposed).
TEST(Gemm, InPlaceGemmGivesTheSameBitsOnAnyThreadCount) {
  Rng rng(3);
  for (const auto [m, n, k] : {std::array<int64_t, 3>{32, 1024, 256},
                               {32, 256, 1024},
                               {9, 141, 37},
                               {400, 256, 64},
                               {1000, 64, 300}})
    for (bool tb : {false, true})
      for (bool with_bias : {false, true}) {
        // Only drun's own kernel takes a bias (x86's; the few-rows nn one everywhere).
        if (with_bias && !gemm_adds_bias(false, tb, m, n, k)) continue;
        const auto a = random_vec(m * k, rng), b = random_vec(k * n, rng);
        const auto bias = random_vec(n, rng);
        const float* bp = with_bias ? bias.data() : nullptr;
        const int64_t ldb = tb ? k : n;
        std::vector<float> one(static_cast<size_t>(m * n));
        gemm(false, tb, m, n, k, 1.0f, a.data(), k, b.data(), ldb, 0.0f, one.data(), n, 1, bp);
        // The bias is added to every row: against the product without it.
        if (with_bias) {
          std::vector<float> plain(one.size());
          gemm(false, tb, m, n, k, 1.0f, a.data(), k, b.data(), ldb, 0.0f, plain.data(), n, 1);
          double worst = 0.0;
          for (int64_t i = 0; i < m * n; ++i)
            worst =
                std::max(worst, std::fabs(static_cast<double>(one[i]) - plain[i] - bias[i % n]));
          EXPECT_LT(worst, 1e-5) << m << " x " << n << " x " << k << " tb=" << tb << " + bias";
        }
        for (int threads : {2, 3, 16}) {
          std::vector<float> c(static_cast<size_t>(m * n));
          gemm(false, tb, m, n, k, 1.0f, a.data(), k, b.data(), ldb, 0.0f, c.data(), n, threads,
               bp);
          EXPECT_EQ(0, std::memcmp(c.data(), one.data(), sizeof(float) * c.size()))
              << m << " x " << n << " x " << k << " tb=" << tb << " bias=" << with_bias << " on "
              << threads << " threads";
        }
      }  // A weight gradient's x^T dy (tn), split by columns: K longer and shorter
  // than the kernel's panel of B (2,048 rows).
  for (const auto [m, n, k] : {std::array<int64_t, 3>{100, 96, 700}, {40, 70, 2100}}) {
    const auto a = random_vec(k * m, rng), b = random_vec(k * n, rng);
    std::vector<float> one(static_cast<size_t>(m * n));
    gemm(true, false, m, n, k, 1.0f, a.data(), m, b.data(), n, 0.0f, one.data(), n, 1);
    for (int threads : {2, 3, 16}) {
      std::vector<float> c(static_cast<size_t>(m * n));
      gemm(true, false, m, n, k, 1.0f, a.data(), m, b.data(), n, 0.0f, c.data(), n, threads);
      EXPECT_EQ(0, std::memcmp(c.data(), one.data(), sizeof(float) * c.size()))
          << m << " x " << n << " x " << k << " tn on " << threads << " threads";
    }
  }
}

// Attention's per-head products (batched, each head read in place) under a
// causal mask against the same products without it: the probabilities zero
// where hidden, the scores' hidden entries zero or the product.
TEST(Gemm, CausalBatchedProductsAreTheFullOnes) {
  Rng rng(11);
  for (const auto& [t, s] : {std::pair<int64_t, int64_t>{20, 20}, {7, 11}, {24, 5}}) {
    const int64_t batch = 2, heads = 3, d = 8, hd = heads * d;
    const MatrixLayout q{hd, t * hd, d}, kv{hd, s * hd, d}, scores{s, heads * t * s, t * s};
    const auto x = random_vec(batch * t * hd, rng), keys = random_vec(batch * s * hd, rng);
    auto p = random_vec(batch * heads * t * s, rng);
    for (int64_t r = 0; r < batch * heads * t; ++r)
      for (int64_t j = masked_softmax_kept(true, t, r, s); j < s; ++j) p[r * s + j] = 0.0f;
    struct Case {
      const char* name;
      BatchedGemm g;
      const std::vector<float>&a, &b;
      size_t size;
    };
    for (const Case& c : {
             Case{"Q K^T", {false, true, t, s, d, batch, heads, q, kv, scores}, x, keys, p.size()},
             Case{"P V", {false, false, t, d, s, batch, heads, scores, kv, q}, p, keys, x.size()},
             Case{"P^T dC", {true, false, s, d, t, batch, heads, scores, q, kv}, p, x, keys.size()},
         }) {
      SCOPED_TRACE(::testing::Message() << c.name << ", t " << t << ", s " << s);
      std::vector<float> full(c.size), masked(c.size);
      batched_gemm(c.g, 1.0f, c.a.data(), c.b.data(), 0.0f, full.data(), 0, batch * heads);
      BatchedGemm causal = c.g;
      causal.causal = true;
      batched_gemm(causal, 1.0f, c.a.data(), c.b.data(), 0.0f, masked.data(), 0, batch * heads);
      for (size_t i = 0; i < full.size(); ++i) {
        const int64_t row = static_cast<int64_t>(i) / s, col = static_cast<int64_t>(i) % s;
        const bool hidden = c.g.trans_b && col >= masked_softmax_kept(true, t, row, s);
        if (hidden && masked[i] == 0.0f) continue;
        ASSERT_NEAR(masked[i], full[i], 1e-5 * (1.0 + std::fabs(full[i]))) << "element " << i;
      }
    }
  }
}

// ---------------------------------------------------------------- Conv2D

struct ConvCase {
  int64_t n, h, w, c, kh, kw, co, sh, sw;
  bool same;
};

// One convolution engine's entry points; backward_data may be null (the
// engine leaves that geometry's input gradient to another).
struct ConvEngine {
  const char* name;
  int64_t (*workspace_floats)(const ConvGeometry&, int);
  void (*forward)(const ConvGeometry&, const float*, const float*, const float*, float*, bool,
                  float*, int);
  void (*backward_filter)(const ConvGeometry&, const float*, const float*, const float*, float*,
                          float*, float*, int);
  void (*backward_data)(const ConvGeometry&, const float*, const float*, float*, float*, int);
};

// What conv2d_* choose; for direct-kernel geometries that is the direct engine.
const ConvEngine kDispatched = {"dispatched", conv2d_workspace_floats, conv2d_forward,
                                conv2d_backward_filter, conv2d_backward_data};
const ConvEngine kIm2col = {"im2col", conv2d_im2col_workspace_floats, conv2d_im2col_forward,
                            conv2d_im2col_backward_filter, conv2d_im2col_backward_data};
ConvEngine implicit_engine(const ConvGeometry& g) {
  return {
      "implicit", conv2d_implicit_workspace_floats,
      [](const ConvGeometry& g, const float* x, const float* w, const float* b, float* y, bool relu,
         float* ws, int threads) { conv2d_implicit_forward(g, x, w, b, y, relu, ws, threads); },
      conv2d_implicit_backward_filter,
      conv2d_implicit_backward_data_suits(g) ? conv2d_implicit_backward_data : nullptr};
}

template <int M>
ConvEngine winograd_engine() {
  return {M == 2 ? "winograd F(2x2)" : "winograd F(4x4)", conv2d_winograd_workspace_floats,
          [](const ConvGeometry& g, const float* x, const float* w, const float* b, float* y,
             bool relu, float* ws, int threads) {
            conv2d_winograd_forward(g, x, w, b, y, relu, ws, threads, nullptr, M);
          },
          [](const ConvGeometry& g, const float* x, const float* dy, const float* relu_y, float* dw,
             float* db, float* ws, int threads) {
            conv2d_winograd_backward_filter(g, x, dy, relu_y, dw, db, ws, threads, M);
          },
          [](const ConvGeometry& g, const float* dy, const float* w, float* dx, float* ws,
             int threads) { conv2d_winograd_backward_data(g, dy, w, dx, ws, threads, M); }};
}

void check_conv(const ConvCase& cc, bool expect_direct, const ConvEngine& engine = kDispatched,
                std::initializer_list<int> thread_counts = {1, 2}) {
  const ConvGeometry g =
      conv_geometry(cc.n, cc.h, cc.w, cc.c, cc.kh, cc.kw, cc.co, cc.sh, cc.sw, cc.same);
  SCOPED_TRACE(testing::Message() << engine.name << " conv n=" << cc.n << " " << cc.h << "x" << cc.w
                                  << "x" << cc.c << " k=" << cc.kh << "x" << cc.kw
                                  << " co=" << cc.co << " s=" << cc.sh << "," << cc.sw
                                  << " same=" << cc.same);
  ASSERT_EQ(conv2d_direct_suits(g), expect_direct);
  ASSERT_GT(g.oh, 0);
  ASSERT_GT(g.ow, 0);
  Rng rng(static_cast<uint64_t>(cc.h * 1000 + cc.c * 100 + cc.co * 10 + cc.sh + cc.same));
  const auto x = random_vec(g.n * g.h * g.w * g.c, rng);
  const auto w = random_vec(g.k() * g.co, rng);
  const auto b = random_vec(g.co, rng);
  const auto dy = random_vec(g.n * g.oh * g.ow * g.co, rng);
  const int64_t ny = g.n * g.oh * g.ow * g.co;

  const auto y_lin = ref_conv_forward(g, x, w, b, false);
  const auto y_relu = ref_conv_forward(g, x, w, b, true);
  // ReLU output as the kernel would see it (float) and the masked gradient.
  std::vector<float> relu_y(static_cast<size_t>(ny)), dz_masked(static_cast<size_t>(ny));
  for (int64_t i = 0; i < ny; ++i) {
    relu_y[i] = static_cast<float>(y_relu[i]);
    dz_masked[i] = relu_y[i] > 0.0f ? dy[i] : 0.0f;
  }
  std::vector<double> dw_ref, db_ref, dx_ref, dwm_ref, dbm_ref, dxm_unused;
  ref_conv_backward(g, x, dy, w, dw_ref, db_ref, dx_ref);
  ref_conv_backward(g, x, dz_masked, w, dwm_ref, dbm_ref, dxm_unused);

  for (int threads : thread_counts) {
    SCOPED_TRACE(testing::Message() << "threads=" << threads);
    std::vector<float> ws(static_cast<size_t>(engine.workspace_floats(g, threads)), 1e30f);
    std::vector<float> y(static_cast<size_t>(ny), 7.0f);
    engine.forward(g, x.data(), w.data(), b.data(), y.data(), false, ws.data(), threads);
    expect_close(y, y_lin, 1e-4, "forward");
    std::fill(y.begin(), y.end(), -7.0f);
    engine.forward(g, x.data(), w.data(), b.data(), y.data(), true, ws.data(), threads);
    expect_close(y, y_relu, 1e-4, "forward relu");

    std::vector<float> dw(static_cast<size_t>(g.k() * g.co), 9.0f), db(g.co, 9.0f);
    engine.backward_filter(g, x.data(), dy.data(), nullptr, dw.data(), db.data(), ws.data(),
                           threads);
    expect_close(dw, dw_ref, 1e-4, "backward filter dw");
    expect_close(db, db_ref, 1e-4, "backward filter db");
    std::fill(dw.begin(), dw.end(), 9.0f);
    std::fill(db.begin(), db.end(), 9.0f);
    engine.backward_filter(g, x.data(), dy.data(), relu_y.data(), dw.data(), db.data(), ws.data(),
                           threads);
    expect_close(dw, dwm_ref, 1e-4, "backward filter dw (relu)");
    expect_close(db, dbm_ref, 1e-4, "backward filter db (relu)");

    if (!engine.backward_data) continue;
    std::vector<float> dx(static_cast<size_t>(g.n * g.h * g.w * g.c), 5.0f);
    engine.backward_data(g, dy.data(), w.data(), dx.data(), ws.data(), threads);
    expect_close(dx, dx_ref, 1e-4, "backward data");
  }
}

TEST(Conv2D, GeometryMatchesKeras) {
  ConvGeometry g = conv_geometry(2, 7, 6, 3, 3, 3, 4, 2, 2, true);
  EXPECT_EQ(g.oh, 4);
  EXPECT_EQ(g.ow, 3);
  EXPECT_EQ(g.pad_top, 1);   // pad_h = 3*2+3-7 = 2
  EXPECT_EQ(g.pad_left, 0);  // pad_w = 2*2+3-6 = 1, odd pixel at the right
  g = conv_geometry(2, 7, 6, 3, 3, 3, 4, 2, 2, false);
  EXPECT_EQ(g.oh, 3);
  EXPECT_EQ(g.ow, 2);
  EXPECT_EQ(g.pad_top, 0);
  EXPECT_EQ(g.pad_left, 0);
  g = conv_geometry(1, 5, 5, 1, 5, 5, 1, 1, 1, false);
  EXPECT_EQ(g.oh, 1);
  EXPECT_EQ(g.ow, 1);
  EXPECT_EQ(g.k(), 25);
  EXPECT_EQ(g.out_pixels(), 1);
}

TEST(Conv2D, DirectPathMatchesReference) {
  // K = kh*kw*c <= 32: the direct kernels, vectorised over 16/32/64 or generic co.
  for (int64_t co : {32, 16, 5, 64}) {
    for (bool same : {false, true}) {
      for (int64_t s : {1, 2}) {
        check_conv({3, 9, 8, 1, 3, 3, co, s, s, same}, true);
        check_conv({2, 7, 6, 3, 3, 3, co, s, s, same}, true);
      }
    }
  }
  check_conv({3, 8, 9, 2, 4, 4, 16, 2, 1, true}, true);  // K = 32 exactly, mixed strides
}

TEST(Conv2D, Im2colGemmPathMatchesReference) {
  for (const ConvEngine& engine : {kDispatched, kIm2col}) {
    for (bool same : {false, true}) {
      for (int64_t s : {1, 2}) {
        check_conv({3, 9, 8, 8, 3, 3, 16, s, s, same}, false, engine);
        check_conv({2, 7, 10, 5, 3, 3, 7, s, s, same}, false, engine);
        check_conv({5, 6, 6, 4, 5, 5, 3, s, s, same}, false, engine);
      }
    }
    check_conv({3, 9, 7, 40, 1, 1, 12, 1, 1, false}, false, engine);  // pointwise, no im2col
    check_conv({3, 9, 7, 40, 1, 1, 12, 2, 2, false}, false, engine);  // strided 1x1
  }
}

// The implicit-GEMM engine with the variant DRUN_ISA picks (kernels_each_isa
// runs this binary once per variant the CPU has). Output channels are
// multiples of 16, the widest vector; row lengths that leave partial pixel
// tiles; channel counts that leave partial channel blocks; ResNet's shapes.
TEST(Conv2D, ImplicitGemmPathMatchesReference) {
  SCOPED_TRACE(cpu_kernels().name);
  for (bool same : {false, true}) {
    for (int64_t s : {1, 2}) {
      for (int64_t co : {16, 32, 48, 64}) {
        const ConvCase cc{2, 9, 17, 12, 3, 3, co, s, s, same};
        check_conv(cc, false, implicit_engine(conv_geometry(2, 9, 17, 12, 3, 3, co, s, s, same)));
      }
      const ConvCase five{3, 8, 15, 16, 5, 5, 32, s, s, same};
      check_conv(five, false, implicit_engine(conv_geometry(3, 8, 15, 16, 5, 5, 32, s, s, same)));
    }
  }
  check_conv({3, 32, 32, 16, 3, 3, 16, 1, 1, true}, false,
             implicit_engine(conv_geometry(3, 32, 32, 16, 3, 3, 16, 1, 1, true)));
  check_conv({2, 16, 16, 48, 1, 1, 64, 2, 2, true}, false,  // a strided 1x1 shortcut
             implicit_engine(conv_geometry(2, 16, 16, 48, 1, 1, 64, 2, 2, true)));
  check_conv({2, 8, 8, 64, 3, 3, 64, 1, 1, true}, false,
             implicit_engine(conv_geometry(2, 8, 8, 64, 3, 3, 64, 1, 1, true)));
  check_conv({2, 7, 6, 16, 2, 3, 16, 2, 1, true}, false,  // mixed strides, odd padding
             implicit_engine(conv_geometry(2, 7, 6, 16, 2, 3, 16, 2, 1, true)));
  // Rows of one tile, whose first and last pixel both have taps in the
  // padding, down to a single pixel; and a tile's worth of pixels plus one.
  for (int64_t w : {1, 2, 3, 7, 15})
    for (int64_t co : {16, 64})
      for (int64_t s : {1, 2}) {
        const ConvCase cc{2, 3, w, 16, 3, 3, co, s, s, true};
        check_conv(cc, false, implicit_engine(conv_geometry(2, 3, w, 16, 3, 3, co, s, s, true)));
      }
}

// The Winograd engine, both tile sizes, with the variant DRUN_ISA picks
// (kernels_each_isa runs this binary once per variant): 'same' and 'valid'
// padding (the input gradient then pads by 2), odd sizes whose last tiles
// reach beyond the image, single rows and columns, unequal channel counts,
// more tiles than one block holds, filter-gradient blocks across images,
// ResNet's shapes; through the dispatcher too where it chooses Winograd.
TEST(Conv2D, WinogradPathMatchesReference) {
  SCOPED_TRACE(cpu_kernels().name);
  const std::vector<ConvCase> cases = {
      {2, 9, 17, 16, 3, 3, 16, 1, 1, true},  {2, 9, 17, 16, 3, 3, 48, 1, 1, false},
      {2, 5, 6, 48, 3, 3, 16, 1, 1, true},   {2, 1, 7, 32, 3, 3, 32, 1, 1, true},
      {2, 7, 1, 16, 3, 3, 32, 1, 1, true},   {1, 3, 3, 16, 3, 3, 16, 1, 1, false},
      {3, 32, 32, 16, 3, 3, 16, 1, 1, true}, {2, 16, 16, 32, 3, 3, 32, 1, 1, true},
      {2, 8, 8, 64, 3, 3, 64, 1, 1, true},   {2, 11, 13, 32, 3, 3, 64, 1, 1, false}};
  for (const ConvCase& cc : cases) {
    const ConvGeometry g =
        conv_geometry(cc.n, cc.h, cc.w, cc.c, cc.kh, cc.kw, cc.co, cc.sh, cc.sw, cc.same);
    ASSERT_TRUE(conv2d_winograd_suits(g)) << cc.h << "x" << cc.w << "x" << cc.c << "->" << cc.co;
    check_conv(cc, false, winograd_engine<2>());
    check_conv(cc, false, winograd_engine<4>());
    check_conv(cc, false);  // dispatched: Winograd (the filter gradient from 64 channels)
  }
  // More tiles than a block: the 32x32 case has 256 (F(2x2)) and 64 (F(4x4))
  // tiles an image; the filter gradient's blocks run on across images.
  const ConvGeometry big = conv_geometry(3, 32, 32, 16, 3, 3, 16, 1, 1, true);
  EXPECT_LT(winograd_block_tiles(big, 2, false), winograd_tiles(big, 2));
  EXPECT_LT(winograd_block_tiles(big, 4, false), winograd_tiles(big, 4));
  EXPECT_LT(winograd_block_tiles(big, 2, true), 3 * winograd_tiles(big, 2));
  const ConvGeometry small = conv_geometry(2, 8, 8, 64, 3, 3, 64, 1, 1, true);
  EXPECT_GT(winograd_block_tiles(small, 4, true), winograd_tiles(small, 4));
  // Not Winograd's: strides, other kernel sizes, channels off the vector width.
  EXPECT_FALSE(conv2d_winograd_suits(conv_geometry(2, 8, 8, 16, 3, 3, 16, 2, 2, true)));
  EXPECT_FALSE(conv2d_winograd_suits(conv_geometry(2, 8, 8, 16, 5, 5, 16, 1, 1, true)));
  EXPECT_FALSE(conv2d_winograd_suits(conv_geometry(2, 8, 8, 3, 3, 3, 16, 1, 1, true)));
  EXPECT_FALSE(conv2d_winograd_suits(conv_geometry(2, 8, 8, 16, 3, 3, 18, 1, 1, true)));
}

// On more threads than check_conv's two, where the kernel transforms, the sums
// of the threads' filter gradients and their untransform are split over the
// threads too (each element's arithmetic as on one thread): 64 channels in
// and out, four images on four threads. (Kept small: under qemu every
// reference convolution here costs seconds.)
TEST(Conv2D, FourThreadsSplitTheTransformsAndTheFilterGradientSums) {
  SCOPED_TRACE(cpu_kernels().name);
  const ConvCase cc{4, 8, 8, 64, 3, 3, 64, 1, 1, true};
  const ConvGeometry g = conv_geometry(4, 8, 8, 64, 3, 3, 64, 1, 1, true);
  ASSERT_TRUE(conv2d_winograd_suits(g));
  check_conv(cc, false, winograd_engine<4>(), {4});
  check_conv(cc, false, implicit_engine(g), {4});
}

// The moments a following batch norm takes from the convolution: each
// image's per-channel mean and sum of squared deviations of y, against a
// double reference; on 1 and 2 threads (each image is one thread's); from
// the implicit-GEMM engine and from the dispatcher, which takes Winograd
// here (conv2d.cpp); none from the direct engine.
TEST(Conv2D, ImplicitGemmAndWinogradGiveEachImagesMoments) {
  SCOPED_TRACE(cpu_kernels().name);
  for (bool implicit : {true, false}) {
    SCOPED_TRACE(implicit ? "implicit" : "dispatched");
    const int64_t c = 16;
    const ConvGeometry g = conv_geometry(3, 10, 9, c, 3, 3, 32, 1, 1, true);
    Rng rng(21);
    const auto x = random_vec(g.n * g.h * g.w * g.c, rng);
    const auto w = random_vec(g.k() * g.co, rng);
    const auto b = random_vec(g.co, rng, 2.0f, 3.0f);  // a mean away from zero
    const auto y_ref = ref_conv_forward(g, x, w, b, false);
    const int64_t pixels = g.oh * g.ow;
    std::vector<double> want(g.n * 2 * g.co, 0.0);
    for (int64_t n = 0; n < g.n; ++n)
      for (int64_t j = 0; j < g.co; ++j) {
        double m = 0.0, m2 = 0.0;
        for (int64_t p = 0; p < pixels; ++p) m += y_ref[(n * pixels + p) * g.co + j] / pixels;
        for (int64_t p = 0; p < pixels; ++p) {
          const double d = y_ref[(n * pixels + p) * g.co + j] - m;
          m2 += d * d;
        }
        want[n * 2 * g.co + j] = m;
        want[(n * 2 + 1) * g.co + j] = m2;
      }
    for (int threads : {1, 2}) {
      SCOPED_TRACE(threads);
      std::vector<float> y(g.n * pixels * g.co), moments(g.n * 2 * g.co, -1.0f);
      std::vector<float> ws(conv2d_workspace_floats(g, threads));
      if (implicit)
        conv2d_implicit_forward(g, x.data(), w.data(), b.data(), y.data(), false, ws.data(),
                                threads, moments.data());
      else
        ASSERT_TRUE(conv2d_forward_with_moments(g, x.data(), w.data(), b.data(), y.data(), false,
                                                ws.data(), threads, moments.data()));
      expect_close(y, y_ref, 1e-4, "y");
      expect_close(moments, want, 1e-4, "moments");
    }
  }
  const ConvGeometry direct = conv_geometry(2, 8, 8, 1, 3, 3, 16, 1, 1, true);
  ASSERT_TRUE(conv2d_direct_suits(direct));
  std::vector<float> y(direct.n * direct.oh * direct.ow * direct.co), m(direct.n * 2 * 16);
  std::vector<float> ws(conv2d_workspace_floats(direct, 1)), xd(direct.n * 64, 0.5f);
  std::vector<float> wd(direct.k() * 16, 0.1f), bd(16, 0.0f);
  EXPECT_FALSE(conv2d_forward_with_moments(direct, xd.data(), wd.data(), bd.data(), y.data(), false,
                                           ws.data(), 1, m.data()));
}

// Batch statistics combined from per-image moments equal those of a pass
// over x: the same outputs and moving statistics, also where the mean is
// large against the spread (the combination must not cancel).
TEST(BatchNorm, StatisticsFromImageMomentsMatchAPassOverX) {
  SCOPED_TRACE(cpu_kernels().name);
  const int64_t images = 5, pixels = 37, c = 24, rows = images * pixels;
  for (float offset : {0.0f, 1000.0f}) {
    SCOPED_TRACE(offset);
    Rng rng(static_cast<uint64_t>(offset) + 3);
    auto x = random_vec(rows * c, rng, -2.0f, 3.0f);
    for (float& v : x) v += offset;
    const auto gamma = random_vec(c, rng, 0.5f, 1.5f), beta = random_vec(c, rng);
    std::vector<double> mean(c, 0.0), var(c, 0.0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < c; ++j) mean[j] += x[r * c + j] / static_cast<double>(rows);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < c; ++j)
        var[j] += (x[r * c + j] - mean[j]) * (x[r * c + j] - mean[j]) / static_cast<double>(rows);
    std::vector<float> moments(images * 2 * c);
    for (int64_t n = 0; n < images; ++n)
      image_moments(x.data() + n * pixels * c, pixels, c, moments.data() + n * 2 * c,
                    moments.data() + (n * 2 + 1) * c);
    for (int threads : {1, 2}) {
      SCOPED_TRACE(threads);
      std::vector<float> mm(c, 0.0f), mv(c, 1.0f), m(c), inv_std(c), y(rows * c);
      std::vector<float> mm2 = mm, mv2 = mv, m2(c), inv_std2(c), y2(rows * c);
      batchnorm_forward_train(x.data(), rows, c, gamma.data(), beta.data(), 1e-3f, 0.9f, mm.data(),
                              mv.data(), m.data(), inv_std.data(), y.data(), true, threads,
                              moments.data(), images);
      batchnorm_forward_train(x.data(), rows, c, gamma.data(), beta.data(), 1e-3f, 0.9f, mm2.data(),
                              mv2.data(), m2.data(), inv_std2.data(), y2.data(), true, threads);
      expect_close(m, mean, 1e-6, "mean");
      std::vector<float> var_from_moments(c);
      for (int64_t j = 0; j < c; ++j)
        var_from_moments[j] =
            static_cast<float>(1.0 / (static_cast<double>(inv_std[j]) * inv_std[j]) - 1e-3);
      expect_close(var_from_moments, var, 1e-4, "variance");
      expect_close(inv_std, inv_std2, 1e-5, "inv_std vs a pass over x");
      expect_close(mv, mv2, 1e-5, "moving variance vs a pass over x");
      expect_close(y, y2, 1e-4, "y vs a pass over x");
    }
  }
}

// ---------------------------------------------------------------- Pooling

void check_pool(int64_t n, int64_t h, int64_t w, int64_t c, int64_t p, int64_t s, bool same) {
  const PoolGeometry g = pool_geometry(n, h, w, c, p, p, s, s, same);
  SCOPED_TRACE(testing::Message() << "pool " << h << "x" << w << "x" << c << " p=" << p
                                  << " s=" << s << " same=" << same);
  ASSERT_GT(g.oh, 0);
  ASSERT_GT(g.ow, 0);
  Rng rng(static_cast<uint64_t>(h * 100 + w * 10 + p + s + same));
  // Distinct values so the max is unique.
  const auto x = random_vec(n * h * w * c, rng, -5.0f, 5.0f);
  const auto dy = random_vec(g.n * g.oh * g.ow * c, rng);
  const PoolRef mx = ref_pool(g, x, dy, true), av = ref_pool(g, x, dy, false);
  for (int threads : {1, 2}) {
    SCOPED_TRACE(testing::Message() << "threads=" << threads);
    std::vector<float> y(mx.y.size(), 3.0f), dx(mx.dx.size(), 3.0f);
    std::vector<int32_t> arg(mx.y.size(), -1);
    max_pool_forward(g, x.data(), y.data(), arg.data(), threads);
    expect_close(y, mx.y, 1e-6, "max forward");
    max_pool_backward(g, dy.data(), arg.data(), dx.data(), threads);
    expect_close(dx, mx.dx, 1e-6, "max backward");
    std::fill(y.begin(), y.end(), 3.0f);
    std::fill(dx.begin(), dx.end(), 3.0f);
    avg_pool_forward(g, x.data(), y.data(), threads);
    expect_close(y, av.y, 1e-5, "avg forward");
    avg_pool_backward(g, dy.data(), dx.data(), threads);
    expect_close(dx, av.dx, 1e-5, "avg backward");
  }
}

TEST(Pool, GeometryMatchesKeras) {
  PoolGeometry g = pool_geometry(1, 7, 5, 2, 2, 2, 2, 2, false);
  EXPECT_EQ(g.oh, 3);
  EXPECT_EQ(g.ow, 2);
  g = pool_geometry(1, 7, 5, 2, 2, 2, 2, 2, true);
  EXPECT_EQ(g.oh, 4);
  EXPECT_EQ(g.ow, 3);
  EXPECT_EQ(g.pad_top, 0);
  EXPECT_EQ(g.pad_left, 0);
  g = pool_geometry(1, 7, 5, 2, 3, 3, 2, 2, true);
  EXPECT_EQ(g.oh, 4);
  EXPECT_EQ(g.ow, 3);
  EXPECT_EQ(g.pad_top, 1);
  EXPECT_EQ(g.pad_left, 1);
}

TEST(Pool, TilingOddSizes) {
  check_pool(3, 7, 5, 4, 2, 2, false);  // tiling fast path, last row/column uncovered
  check_pool(3, 7, 5, 4, 2, 2, true);   // padded at bottom/right: not the tiling path
  check_pool(2, 8, 6, 3, 2, 2, false);  // exact tiling
  check_pool(2, 9, 9, 2, 3, 3, false);
}

TEST(Pool, Overlapping) {
  check_pool(3, 7, 5, 4, 3, 2, true);
  check_pool(3, 7, 5, 4, 3, 2, false);
  check_pool(2, 8, 8, 3, 3, 1, true);
}

TEST(Pool, GlobalAverage) {
  Rng rng(5);
  const int64_t n = 3, hw = 35, c = 6;
  const auto x = random_vec(n * hw * c, rng), dy = random_vec(n * c, rng);
  std::vector<double> y_ref(n * c, 0.0), dx_ref(n * hw * c);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t p = 0; p < hw; ++p)
      for (int64_t ci = 0; ci < c; ++ci) {
        y_ref[i * c + ci] += x[(i * hw + p) * c + ci] / static_cast<double>(hw);
        dx_ref[(i * hw + p) * c + ci] = dy[i * c + ci] / static_cast<double>(hw);
      }
  std::vector<float> y(n * c, 4.0f), dx(n * hw * c, 4.0f);
  global_avg_pool_forward(n, hw, c, x.data(), y.data());
  global_avg_pool_backward(n, hw, c, dy.data(), dx.data());
  expect_close(y, y_ref, 1e-5, "global avg forward");
  expect_close(dx, dx_ref, 1e-6, "global avg backward");
}

// ---------------------------------------------------------------- Activations

// Each activation of the list and its derivative in double, from x: a new
// activation without a case here is a -Wswitch warning and a failed test.
struct ActivationReference {
  double y, dydx;
};
ActivationReference reference(ActivationFn a, double v) {
  const double alpha = a.alpha, sig = 1.0 / (1.0 + std::exp(-v));
  switch (a.kind) {
    case Activation::linear:
      return {v, 1.0};
    case Activation::relu:
      return {v > 0 ? v : 0.0, v > 0 ? 1.0 : 0.0};
    case Activation::sigmoid:
      return {sig, sig * (1.0 - sig)};
    case Activation::tanh:
      return {std::tanh(v), 1.0 / (std::cosh(v) * std::cosh(v))};
    case Activation::softmax:
      break;  // over rows: in the test
    case Activation::elu:
      return {v > 0 ? v : alpha * std::expm1(v), v > 0 ? 1.0 : alpha * std::exp(v)};
    case Activation::selu: {
      const double la = 1.6732632423543772848170429916717, sc = 1.0507009873554804934193349852946;
      return {sc * (v > 0 ? v : la * std::expm1(v)), sc * (v > 0 ? 1.0 : la * std::exp(v))};
    }
    case Activation::softplus:
      return {std::log1p(std::exp(v)), sig};
    case Activation::softsign:
      return {v / (1.0 + std::fabs(v)), 1.0 / ((1.0 + std::fabs(v)) * (1.0 + std::fabs(v)))};
    case Activation::silu:
      return {v * sig, sig * (1.0 + v * (1.0 - sig))};
    case Activation::gelu: {
      const double phi = 0.5 * std::erfc(-v / std::sqrt(2.0));
      return {v * phi, phi + v * std::exp(-0.5 * v * v) / std::sqrt(2.0 * M_PI)};
    }
    case Activation::hard_sigmoid:
      return {std::clamp(v / 6.0 + 0.5, 0.0, 1.0), std::fabs(v) < 3.0 ? 1.0 / 6.0 : 0.0};
    case Activation::exponential:
      return {std::exp(v), std::exp(v)};
    case Activation::leaky_relu:
      return {v >= 0 ? v : alpha * v, v > 0 ? 1.0 : alpha};
  }
  return {0.0, 0.0};
}

TEST(Activation, ForwardAndBackward) {
  Rng rng(6);
  const int64_t rows = 5, cols = 13, n = rows * cols;
  const auto x = random_vec(n, rng, -6.0f, 6.0f), dy = random_vec(n, rng);
  // Every activation of the list; leaky_relu also with a slope of its own.
  std::vector<ActivationFn> acts(std::begin(kAllActivations), std::end(kAllActivations));
  acts.emplace_back(Activation::leaky_relu, 0.3f);
  for (const ActivationFn a : acts) {
    SCOPED_TRACE(std::string(activation_name(a.kind)) + " alpha " + std::to_string(a.alpha));
    std::vector<double> y_ref(n), dx_ref(n);
    for (int64_t r = 0; r < rows; ++r) {
      double m = -1e300, sum = 0.0;
      for (int64_t j = 0; j < cols; ++j) m = std::max(m, static_cast<double>(x[r * cols + j]));
      for (int64_t j = 0; j < cols; ++j) sum += std::exp(x[r * cols + j] - m);
      for (int64_t j = 0; j < cols; ++j) {
        const int64_t i = r * cols + j;
        if (a.kind == Activation::softmax) {
          y_ref[i] = std::exp(x[i] - m) / sum;
        } else {
          const ActivationReference ref = reference(a, x[i]);
          y_ref[i] = ref.y;
          dx_ref[i] = dy[i] * ref.dydx;  // dx = J^T dy, from the derivative in x
        }
      }
      if (a.kind == Activation::softmax)
        for (int64_t j = 0; j < cols; ++j) {
          const int64_t i = r * cols + j;
          double acc = 0.0;
          for (int64_t k = 0; k < cols; ++k) {
            const double yk = y_ref[r * cols + k];
            acc += dy[r * cols + k] * yk * ((k == j ? 1.0 : 0.0) - y_ref[i]);
          }
          dx_ref[i] = acc;
        }
    }
    // Backward gets x only where the activation reads it, as the layers call it.
    const float* xin = a.reads_input() ? x.data() : nullptr;
    std::vector<float> y(n, 2.0f), dx(n, 2.0f);
    activation_forward(a, x.data(), y.data(), rows, cols);
    expect_close(y, y_ref, 1e-5, "forward");
    activation_backward(a, xin, y.data(), dy.data(), dx.data(), rows, cols);
    expect_close(dx, dx_ref, 1e-4, "backward");
    // In place: x and y alias, dx and dy alias.
    std::vector<float> inplace = x;
    activation_forward(a, inplace.data(), inplace.data(), rows, cols);
    expect_close(inplace, y_ref, 1e-5, "forward in place");
    std::vector<float> dinplace = dy;
    activation_backward(a, xin, y.data(), dinplace.data(), dinplace.data(), rows, cols);
    expect_close(dinplace, dx_ref, 1e-4, "backward in place");
  }
}

// Keras 3's hard sigmoid is relu6(x + 3) / 6 (Keras 2's was 0.2 x + 0.5);
// exact at the corners, where the two differ.
TEST(Activation, HardSigmoidIsKeras3s) {
  const std::vector<float> x = {-4.0f, -3.0f, -2.5f, 0.0f, 1.5f, 3.0f, 7.0f};
  std::vector<float> y(x.size());
  activation_forward(Activation::hard_sigmoid, x.data(), y.data(), 1,
                     static_cast<int64_t>(x.size()));
  const std::vector<float> want = {0.0f, 0.0f, 0.5f / 6.0f, 0.5f, 4.5f / 6.0f, 1.0f, 1.0f};
  for (size_t i = 0; i < x.size(); ++i) EXPECT_FLOAT_EQ(y[i], want[i]) << "x = " << x[i];
}

// ---------------------------------------------------------------- BatchNorm

TEST(BatchNorm, TrainInferAndBackward) {
  Rng rng(7);
  const int64_t rows = 37, c = 6;
  const float eps = 1e-3f, momentum = 0.9f;
  std::vector<float> x(rows * c);
  for (int64_t r = 0; r < rows; ++r)  // per-channel offsets and scales
    for (int64_t j = 0; j < c; ++j) x[r * c + j] = 0.5f * j - 1.0f + (1.0f + j) * rng.normal();
  const auto gamma = random_vec(c, rng, 0.5f, 1.5f), beta = random_vec(c, rng);
  const auto mm0 = random_vec(c, rng), mv0 = random_vec(c, rng, 0.5f, 2.0f);
  const auto dy = random_vec(rows * c, rng);

  std::vector<double> mean(c, 0.0), var(c, 0.0);
  for (int64_t j = 0; j < c; ++j) {
    for (int64_t r = 0; r < rows; ++r) mean[j] += x[r * c + j];
    mean[j] /= rows;
    for (int64_t r = 0; r < rows; ++r)
      var[j] += (x[r * c + j] - mean[j]) * (x[r * c + j] - mean[j]);
    var[j] /= rows;
  }
  std::vector<double> y_ref(rows * c), inv_std_ref(c), mm_ref(c), mv_ref(c), yi_ref(rows * c);
  for (int64_t j = 0; j < c; ++j) {
    inv_std_ref[j] = 1.0 / std::sqrt(var[j] + eps);
    mm_ref[j] = momentum * mm0[j] + (1.0 - momentum) * mean[j];
    mv_ref[j] = momentum * mv0[j] + (1.0 - momentum) * var[j];
    for (int64_t r = 0; r < rows; ++r) {
      y_ref[r * c + j] = (x[r * c + j] - mean[j]) * inv_std_ref[j] * gamma[j] + beta[j];
      yi_ref[r * c + j] = (x[r * c + j] - mm0[j]) / std::sqrt(mv0[j] + eps) * gamma[j] + beta[j];
    }
  }

  std::vector<float> mm = mm0, mv = mv0, mean_f(c), inv_std(c), y(rows * c);
  batchnorm_forward_train(x.data(), rows, c, gamma.data(), beta.data(), eps, momentum, mm.data(),
                          mv.data(), mean_f.data(), inv_std.data(), y.data());
  expect_close(y, y_ref, 1e-4, "train y");
  expect_close(mean_f, mean, 1e-5, "batch mean");
  expect_close(inv_std, inv_std_ref, 1e-4, "batch inv_std");
  expect_close(mm, mm_ref, 1e-5, "moving mean");
  expect_close(mv, mv_ref, 1e-4, "moving var");

  std::vector<float> yi(rows * c);
  batchnorm_forward_infer(x.data(), rows, c, gamma.data(), beta.data(), eps, mm0.data(), mv0.data(),
                          yi.data());
  expect_close(yi, yi_ref, 1e-4, "infer y");

  // Standard batch-statistics backward:
  //   dx = gamma * inv_std / N * (N dy - sum dy - xhat sum(dy xhat)).
  std::vector<double> dgamma_ref(c, 0.0), dbeta_ref(c, 0.0), dx_ref(rows * c);
  for (int64_t j = 0; j < c; ++j) {
    for (int64_t r = 0; r < rows; ++r) {
      const double xhat = (x[r * c + j] - mean[j]) * inv_std_ref[j];
      dbeta_ref[j] += dy[r * c + j];
      dgamma_ref[j] += dy[r * c + j] * xhat;
    }
    for (int64_t r = 0; r < rows; ++r) {
      const double xhat = (x[r * c + j] - mean[j]) * inv_std_ref[j];
      dx_ref[r * c + j] = gamma[j] * inv_std_ref[j] / rows *
                          (rows * dy[r * c + j] - dbeta_ref[j] - xhat * dgamma_ref[j]);
    }
  }
  std::vector<float> dx(rows * c, 1.0f), dgamma(c, 1.0f), dbeta(c, 1.0f);
  batchnorm_backward(x.data(), dy.data(), rows, c, gamma.data(), mean_f.data(), inv_std.data(),
                     true, dx.data(), dgamma.data(), dbeta.data());
  expect_close(dx, dx_ref, 1e-4, "dx");
  expect_close(dgamma, dgamma_ref, 1e-4, "dgamma");
  expect_close(dbeta, dbeta_ref, 1e-5, "dbeta");

  // Finite differences of the loss sum(dy * y) confirm the formula itself.
  auto loss = [&](const std::vector<float>& xv) {
    double l = 0.0;
    for (int64_t j = 0; j < c; ++j) {
      double m = 0.0, v = 0.0;
      for (int64_t r = 0; r < rows; ++r) m += xv[r * c + j];
      m /= rows;
      for (int64_t r = 0; r < rows; ++r) v += (xv[r * c + j] - m) * (xv[r * c + j] - m);
      v /= rows;
      for (int64_t r = 0; r < rows; ++r)
        l += dy[r * c + j] * ((xv[r * c + j] - m) / std::sqrt(v + eps) * gamma[j] + beta[j]);
    }
    return l;
  };
  for (int64_t i : {0L, 7L, 100L, rows * c - 1}) {
    std::vector<float> xp = x, xm = x;
    const float h = 1e-2f;
    xp[i] += h;
    xm[i] -= h;
    const double fd = (loss(xp) - loss(xm)) / (static_cast<double>(xp[i]) - xm[i]);
    EXPECT_NEAR(fd, dx_ref[i], 1e-3 * std::max(1.0, std::fabs(dx_ref[i]))) << i;
  }
}

TEST(BatchNorm, BlockedSumsOnThreadsMatchTheReferenceAndEachOther) {
  // Many rows (sums in blocks of rows, several threads) and many channels
  // (too many for the partial sums: one block summed in place).
  for (auto [rows, c] : {std::pair<int64_t, int64_t>{6000, 16}, {16384, 16}, {40, 5000}}) {
    SCOPED_TRACE(::testing::Message() << rows << " x " << c);
    Rng rng(static_cast<uint64_t>(rows + c));
    const auto x = random_vec(rows * c, rng, -2.0f, 3.0f);
    const auto dy = random_vec(rows * c, rng);
    const auto gamma = random_vec(c, rng, 0.5f, 1.5f), beta = random_vec(c, rng);
    std::vector<double> mean(c, 0.0), var(c, 0.0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < c; ++j) mean[j] += x[r * c + j] / static_cast<double>(rows);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < c; ++j)
        var[j] += (x[r * c + j] - mean[j]) * (x[r * c + j] - mean[j]) / static_cast<double>(rows);
    std::vector<std::vector<float>> outputs;
    // relu: with a following ReLU fused; its backward masks dy by y > 0.
    for (bool relu : {false, true}) {
      for (int threads : {1, 2}) {
        SCOPED_TRACE(::testing::Message() << "relu=" << relu << " threads=" << threads);
        std::vector<float> mm(c, 0.0f), mv(c, 1.0f), m(c), inv_std(c), y(rows * c);
        batchnorm_forward_train(x.data(), rows, c, gamma.data(), beta.data(), 1e-3f, 0.9f,
                                mm.data(), mv.data(), m.data(), inv_std.data(), y.data(), relu,
                                threads);
        expect_close(m, mean, 1e-5, "mean");
        std::vector<double> y_ref(rows * c), dz(rows * c);
        std::vector<double> dbeta_ref(c, 0.0), dgamma_ref(c, 0.0);
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t j = 0; j < c; ++j) {
            const int64_t i = r * c + j;
            const double v = (x[i] - mean[j]) / std::sqrt(var[j] + 1e-3) * gamma[j] + beta[j];
            y_ref[i] = relu ? std::max(0.0, v) : v;
            dz[i] = relu && !(y[i] > 0.0f) ? 0.0 : dy[i];
            dbeta_ref[j] += dz[i];
            dgamma_ref[j] += dz[i] * (x[i] - mean[j]) / std::sqrt(var[j] + 1e-3);
          }
        expect_close(y, y_ref, 1e-4, "y");
        std::vector<float> dx(rows * c), dgamma(c), dbeta(c);
        batchnorm_backward(x.data(), dy.data(), relu ? beta.data() : nullptr, rows, c, gamma.data(),
                           m.data(), inv_std.data(), true, dx.data(), dgamma.data(), dbeta.data(),
                           threads);
        expect_close(dbeta, dbeta_ref, 1e-4, "dbeta");
        expect_close(dgamma, dgamma_ref, 1e-4, "dgamma");
        std::vector<double> dx_ref(rows * c);
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t j = 0; j < c; ++j) {
            const double is = 1.0 / std::sqrt(var[j] + 1e-3);
            const double xhat = (x[r * c + j] - mean[j]) * is;
            dx_ref[r * c + j] =
                gamma[j] * is / static_cast<double>(rows) *
                (static_cast<double>(rows) * dz[r * c + j] - dbeta_ref[j] - xhat * dgamma_ref[j]);
          }
        expect_close(dx, dx_ref, 1e-4, "dx");
        std::vector<float> all = y;
        all.insert(all.end(), dx.begin(), dx.end());
        all.insert(all.end(), inv_std.begin(), inv_std.end());
        outputs.push_back(std::move(all));
      }
    }
    EXPECT_TRUE(outputs[0] == outputs[1] && outputs[2] == outputs[3])
        << "the thread count changed the result";
  }
}

// ---------------------------------------------------------------- Elementwise

TEST(Elementwise, AddAxpyBiasColumnSums) {
  Rng rng(8);
  const int64_t rows = 11, cols = 37, n = rows * cols;
  const auto a = random_vec(n, rng), b = random_vec(n, rng), bias = random_vec(cols, rng);

  std::vector<float> y(n);
  std::vector<double> want(n);
  add(a.data(), b.data(), y.data(), n);
  for (int64_t i = 0; i < n; ++i) want[i] = static_cast<double>(a[i]) + b[i];
  expect_close(y, want, 1e-6, "add");

  add_relu(a.data(), b.data(), y.data(), n);
  for (int64_t i = 0; i < n; ++i) want[i] = std::max(0.0, static_cast<double>(a[i]) + b[i]);
  expect_close(y, want, 1e-6, "add_relu");

  const auto relu_y = random_vec(n, rng);  // about half of it positive
  add_relu_backward(a.data(), b.data(), relu_y.data(), y.data(), n);
  for (int64_t i = 0; i < n; ++i) want[i] = relu_y[i] > 0 ? static_cast<double>(a[i]) + b[i] : 0.0;
  expect_close(y, want, 1e-6, "add_relu_backward");

  y = b;
  axpy(-1.5f, a.data(), y.data(), n);
  for (int64_t i = 0; i < n; ++i) want[i] = b[i] - 1.5 * a[i];
  expect_close(y, want, 1e-6, "axpy");

  y = a;
  bias_add(y.data(), bias.data(), rows, cols);
  for (int64_t i = 0; i < n; ++i) want[i] = static_cast<double>(a[i]) + bias[i % cols];
  expect_close(y, want, 1e-6, "bias_add");

  std::vector<float> s(cols, 3.0f);
  std::vector<double> s_ref(cols, 0.0);
  column_sums(a.data(), rows, cols, s.data());
  for (int64_t i = 0; i < n; ++i) s_ref[i % cols] += a[i];
  expect_close(s, s_ref, 1e-5, "column_sums");

  y = a;
  scale(0.25f, y.data(), n);
  for (int64_t i = 0; i < n; ++i) want[i] = 0.25 * a[i];
  expect_close(y, want, 1e-7, "scale");

  mul(a.data(), b.data(), y.data(), n);
  for (int64_t i = 0; i < n; ++i) want[i] = static_cast<double>(a[i]) * b[i];
  expect_close(y, want, 1e-6, "mul");
}

TEST(Elementwise, AllFinite) {
  Rng rng(9);
  std::vector<float> v = random_vec(1000, rng, -1e30f, 1e30f);
  EXPECT_TRUE(all_finite(v.data(), static_cast<int64_t>(v.size())));
  EXPECT_TRUE(all_finite(v.data(), 0));
  v.push_back(std::numeric_limits<float>::max());
  v.push_back(-std::numeric_limits<float>::max());
  EXPECT_TRUE(all_finite(v.data(), static_cast<int64_t>(v.size())));
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()}) {
    for (size_t pos : {size_t{0}, size_t{517}, v.size() - 1}) {
      std::vector<float> w = v;
      w[pos] = bad;
      EXPECT_FALSE(all_finite(w.data(), static_cast<int64_t>(w.size()))) << bad << " at " << pos;
    }
  }
}

TEST(Elementwise, ArgmaxRows) {
  Rng rng(10);
  const int64_t rows = 20, cols = 9;
  auto x = random_vec(rows * cols, rng);
  x[3 * cols + 0] = 5.0f;                    // max in the first column
  x[4 * cols + cols - 1] = 5.0f;             // max in the last column
  x[5 * cols + 2] = x[5 * cols + 6] = 5.0f;  // tie: the first wins
  std::vector<int32_t> out(rows, -1);
  argmax_rows(x.data(), rows, cols, out.data());
  for (int64_t r = 0; r < rows; ++r) {
    int32_t best = 0;
    for (int32_t j = 1; j < cols; ++j)
      if (x[r * cols + j] > x[r * cols + best]) best = j;
    EXPECT_EQ(out[r], best) << r;
  }
  EXPECT_EQ(out[3], 0);
  EXPECT_EQ(out[4], cols - 1);
  EXPECT_EQ(out[5], 2);
}

// ---------------------------------------------------------------- Loss

TEST(Loss, SoftmaxXentSparse) {
  Rng rng(11);
  const int64_t rows = 9, cols = 7;
  auto z = random_vec(rows * cols, rng, -4.0f, 4.0f);
  z[2 * cols + 3] = 80.0f;  // large logit: must stay finite
  std::vector<int32_t> labels(rows);
  for (auto& l : labels) l = static_cast<int32_t>(rng.next() % cols);
  double loss_ref = 0.0;
  std::vector<double> g_ref(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    double m = -1e300, sum = 0.0;
    for (int64_t j = 0; j < cols; ++j) m = std::max(m, static_cast<double>(z[r * cols + j]));
    for (int64_t j = 0; j < cols; ++j) sum += std::exp(z[r * cols + j] - m);
    loss_ref += std::log(sum) + m - z[r * cols + labels[r]];
    for (int64_t j = 0; j < cols; ++j)
      g_ref[r * cols + j] =
          (std::exp(z[r * cols + j] - m) / sum - (j == labels[r] ? 1.0 : 0.0)) / rows;
  }
  loss_ref /= rows;
  std::vector<float> g(rows * cols, 9.0f);
  float loss = -1.0f;
  softmax_xent_sparse(z.data(), labels.data(), rows, cols, g.data(), &loss);
  EXPECT_NEAR(loss, loss_ref, 1e-4 * std::max(1.0, loss_ref));
  expect_close(g, g_ref, 1e-5, "grad");

  // Bad labels: the loss is NaN, their gradient rows are zeros, the others as before.
  for (int32_t wrong : {-1, static_cast<int32_t>(cols), 1000}) {
    std::vector<int32_t> bad_labels = labels;
    bad_labels[4] = wrong;
    bad_labels[7] = -5;
    std::fill(g.begin(), g.end(), 9.0f);
    softmax_xent_sparse(z.data(), bad_labels.data(), rows, cols, g.data(), &loss);
    EXPECT_TRUE(std::isnan(loss)) << wrong;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < cols; ++j) {
        const double want = r == 4 || r == 7 ? 0.0 : g_ref[r * cols + j];
        EXPECT_NEAR(g[r * cols + j], want, 1e-5) << "row " << r << " col " << j << " " << wrong;
      }
  }
}

// The op as training runs it (the instruction set's rows, chunks of rows
// over threads): a language model's 2,000 x 96 logits in chunks of 256 rows,
// equal to the scalar reference within rounding, and the same bits on 1 and 3
// threads; a bad label anywhere still makes the loss NaN.
TEST(Loss, SoftmaxXentSparseOpIsTheSameOnAnyThreads) {
  Rng rng(12);
  const int64_t rows = 2000, cols = 96;
  Tensor z(Shape{rows, cols}), labels(Shape{rows}, DType::i32), loss(Shape{});
  for (int64_t i = 0; i < rows * cols; ++i) z.f32()[i] = rng.uniform(-6.0f, 6.0f);
  for (int64_t r = 0; r < rows; ++r) labels.i32()[r] = static_cast<int32_t>(rng.next() % cols);
  std::vector<float> g_ref(rows * cols);
  float loss_ref = 0.0f;
  softmax_xent_sparse(z.f32(), labels.i32(), rows, cols, g_ref.data(), &loss_ref);
  std::vector<float> g_one;
  float loss_one = 0.0f;
  for (int threads : {1, 3}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    Tensor g(Shape{rows, cols});
    kernels::loss_forward_backward(Exec{Device::cpu, threads}, LossKind::softmax_xent_sparse, z,
                                   labels, g, loss);
    const std::vector<float> got(g.f32(), g.f32() + rows * cols);
    expect_close(got, g_ref, 1e-6, "grad");
    EXPECT_NEAR(loss.f32()[0], loss_ref, 1e-6 * loss_ref);
    if (threads == 1) {
      g_one = got, loss_one = loss.f32()[0];
    } else {
      EXPECT_EQ(got, g_one);
      EXPECT_EQ(loss.f32()[0], loss_one);
    }
  }
  labels.i32()[1500] = static_cast<int32_t>(cols);
  Tensor g(Shape{rows, cols});
  kernels::loss_forward_backward(Exec{Device::cpu, 3}, LossKind::softmax_xent_sparse, z, labels, g,
                                 loss);
  EXPECT_TRUE(std::isnan(loss.f32()[0]));
}

// Dropout's mask: about `keep` of the values kept, each kept one scaled by
// 1 / keep; the same key draws the same mask whatever the split of the
// array (a part from index `first` on), another key another mask. The key is
// read from memory, where dropout_set_key put its two halves.
TEST(Dropout, MaskFromKeyAndIndex) {
  const int64_t n = 100000;
  const float keep = 0.7f;
  Rng rng(31);
  const std::vector<float> x = random_vec(n, rng, -1.0f, 1.0f);
  std::vector<float> mask(n), y(n), mask2(n), y2(n);
  int32_t key[2], other[2];
  dropout_set_key(0x1234'0000'5678ull, key);
  EXPECT_EQ(dropout_key(key), 0x1234'0000'5678ull);
  dropout_set_key(0xFFFF'FFFF'FFFF'FFFFull, other);
  EXPECT_EQ(dropout_key(other), 0xFFFF'FFFF'FFFF'FFFFull) << "both halves, sign bits too";
  dropout_set_key(1234, key);
  dropout_set_key(1235, other);
  dropout_forward(x.data(), mask.data(), y.data(), n, key, 0, keep);
  int64_t kept = 0;
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_TRUE(mask[i] == 0.0f || mask[i] == 1.0f / keep) << i << ": " << mask[i];
    ASSERT_EQ(y[i], x[i] * mask[i]) << i;
    kept += mask[i] != 0.0f;
  }
  EXPECT_NEAR(static_cast<double>(kept) / n, keep, 0.01);
  const int64_t cut = 31337;
  dropout_forward(x.data(), mask2.data(), y2.data(), cut, key, 0, keep);
  dropout_forward(x.data() + cut, mask2.data() + cut, y2.data() + cut, n - cut, key, cut, keep);
  EXPECT_EQ(mask2, mask);
  EXPECT_EQ(y2, y);
  dropout_forward(x.data(), mask2.data(), y2.data(), n, other, 0, keep);
  int64_t same = 0;
  for (int64_t i = 0; i < n; ++i) same += mask2[i] == mask[i];
  EXPECT_LT(same, n * 2 / 3) << "key 1235 repeats key 1234's mask";  // ~0.58 by chance

  // The op splits the array over its threads: the same bits as the whole.
  Tensor xt(Shape{n}), mt(Shape{n}), yt(Shape{n}), kt(Shape{2}, DType::i32);
  std::copy(x.begin(), x.end(), xt.f32());
  kernels::dropout_set_key(Exec{Device::cpu, 4}, 1234, kt);
  kernels::dropout_forward(Exec{Device::cpu, 4}, kt, keep, xt, mt, yt);
  EXPECT_TRUE(std::equal(mask.begin(), mask.end(), mt.f32()));
  EXPECT_TRUE(std::equal(y.begin(), y.end(), yt.f32()));
}

// strided_copy's shortcuts against the elements written out one by one: a
// 1-D run longer than a thread's piece (beta 1), rows of consecutive floats
// broadcast from one row (a position embedding's add, beta 0), and a
// transpose whose sides are no multiple of its tiles (beta 0.5), each on 1
// and 3 threads.
TEST(StridedCopy, ConsecutiveRunsAndTransposesMatchTheElements) {
  struct Case {
    const char* what;
    CopyGeometry g;
    int64_t x_size, y_size;
    float beta;
    // y[at(i)] from x[from(i)] for element i of the geometry's iteration
    std::function<std::pair<int64_t, int64_t>(int64_t)> place;
  };
  const int64_t run = 40000, rows = 37, cols = 21;
  const Case cases[] = {
      {"1-D run",
       {.rank = 1, .size = {run}, .x_stride = {1}, .y_stride = {1}, .x_offset = 3},
       run + 3,
       run,
       1.0f,
       [](int64_t i) {
         return std::pair{i + 3, i};
       }},
      {"row broadcast",
       {.rank = 2, .size = {rows, cols}, .x_stride = {0, 1}, .y_stride = {cols + 2, 1}},
       cols,
       rows * (cols + 2),
       0.0f,
       [&](int64_t i) {
         return std::pair{i % cols, i / cols * (cols + 2) + i % cols};
       }},
      {"transpose",
       {.rank = 2, .size = {rows, cols}, .x_stride = {1, rows}, .y_stride = {cols, 1}},
       rows * cols,
       rows * cols,
       0.5f,
       [&](int64_t i) {
         return std::pair{i / cols + i % cols * rows, i};
       }},
  };
  Rng rng(17);
  for (const Case& c : cases)
    for (int threads : {1, 3}) {
      SCOPED_TRACE(std::string(c.what) + " on " + std::to_string(threads) + " threads");
      Tensor x(Shape{c.x_size}), y(Shape{c.y_size});
      for (int64_t i = 0; i < c.x_size; ++i) x.f32()[i] = rng.uniform(-0.5f, 0.5f);
      for (int64_t i = 0; i < c.y_size; ++i) y.f32()[i] = rng.uniform();
      std::vector<float> want(y.f32(), y.f32() + c.y_size);
      for (int64_t i = 0; i < c.g.count(); ++i) {
        const auto [from, at] = c.place(i);
        want[static_cast<size_t>(at)] =
            c.beta == 0.0f ? x.f32()[from] : c.beta * want[static_cast<size_t>(at)] + x.f32()[from];
      }
      kernels::strided_copy(Exec{Device::cpu, threads}, c.g, x, c.beta, y);
      float worst = 0.0f;  // a fused multiply-add may round beta y + x once
      for (int64_t i = 0; i < c.y_size; ++i)
        worst = std::max(worst, std::fabs(y.f32()[i] - want[static_cast<size_t>(i)]));
      EXPECT_LE(worst, 1e-6f);
    }
}

// strided_copy's shortcut for one summed dimension over consecutive floats
// (a position embedding's table gradient): rows longer than its pieces and
// no multiple of them, y's rows apart, against each element's terms added in
// order from 0 — bit for bit where beta is 0 — on 1 and 3 threads.
TEST(StridedCopy, SummedRunsAddEachElementsTermsInOrder) {
  const int64_t terms = 5, rows = 3, cols = 1100, y_stride = cols + 7;
  const int64_t term_stride = rows * cols + 11;
  CopyGeometry g{.rank = 2, .size = {rows, cols}, .x_stride = {cols, 1}, .y_stride = {y_stride, 1}};
  g.x_offset = 2;
  g.sum_rank = 1;
  g.sum_size[0] = terms;
  g.sum_stride[0] = term_stride;
  Rng rng(23);
  for (float beta : {0.0f, 0.5f})
    for (int threads : {1, 3}) {
      SCOPED_TRACE("beta " + std::to_string(beta) + " on " + std::to_string(threads) + " threads");
      Tensor x(Shape{2 + terms * term_stride}), y(Shape{rows * y_stride});
      for (int64_t i = 0; i < x.numel(); ++i) x.f32()[i] = rng.uniform(-0.5f, 0.5f);
      for (int64_t i = 0; i < y.numel(); ++i) y.f32()[i] = rng.uniform();
      std::vector<float> want(y.f32(), y.f32() + y.numel());
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < cols; ++j) {
          float s = 0.0f;
          for (int64_t a = 0; a < terms; ++a) s += x.f32()[2 + a * term_stride + r * cols + j];
          float& w = want[static_cast<size_t>(r * y_stride + j)];
          w = beta == 0.0f ? s : beta * w + s;
        }
      kernels::strided_copy(Exec{Device::cpu, threads}, g, x, beta, y);
      float worst = 0.0f;  // a fused multiply-add may round beta y + s once
      for (int64_t i = 0; i < y.numel(); ++i)
        worst = std::max(worst, std::fabs(y.f32()[i] - want[static_cast<size_t>(i)]));
      EXPECT_LE(worst, beta == 0.0f ? 0.0f : 1e-6f);
    }
}

// Batch sums of the metrics, counted by hand on a small batch (ties go to the first maximum).
TEST(Metric, BatchSums) {
  const std::vector<float> pred{0.1f, 0.7f, 0.2f,   // argmax 1
                                0.5f, 0.5f, 0.0f,   // tie: 0
                                0.0f, 0.0f, 0.9f,   // 2
                                0.3f, 0.3f, 0.3f};  // tie: 0
  const std::vector<int32_t> labels{1, 1, 2, 0};
  const std::vector<float> onehot{0, 1, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0};
  float sum = -1.0f;
  label_hits(pred.data(), labels.data(), 4, 3, &sum);
  EXPECT_EQ(sum, 3.0f);
  argmax_hits(pred.data(), onehot.data(), 4, 3, &sum);
  EXPECT_EQ(sum, 3.0f);
  const std::vector<float> scores{-0.5f, 0.2f, 0.7f, 0.0f}, binary{0.0f, 1.0f, 0.0f, 1.0f};
  threshold_hits(scores.data(), binary.data(), 4, 0.0f,
                 &sum);  // logits: right, right, wrong, wrong
  EXPECT_EQ(sum, 2.0f);
  threshold_hits(scores.data(), binary.data(), 4, 0.5f, &sum);  // probabilities: r, w, w, w
  EXPECT_EQ(sum, 1.0f);
  error_sum(scores.data(), binary.data(), 4, true, &sum);  // 0.25 + 0.64 + 0.49 + 1
  EXPECT_NEAR(sum, 2.38f, 1e-6f);
  error_sum(scores.data(), binary.data(), 4, false, &sum);  // 0.5 + 0.8 + 0.7 + 1
  EXPECT_NEAR(sum, 3.0f, 1e-6f);
}

}  // namespace
}  // namespace drun::kernels::cpu
