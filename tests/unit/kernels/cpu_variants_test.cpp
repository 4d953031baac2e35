// Every instruction-set variant of the dispatched CPU kernels (cpu_kernels.hpp)
// that this CPU can run, against the double-precision reference: the AVX2 and
// baseline code is tested on an AVX-512 machine too, whatever the process
// itself would choose.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernel_reference.hpp"
#include "kernels/cpu/blas_core.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/masked_softmax.hpp"
#include "kernels/recurrent.hpp"

namespace drun::kernels::cpu {
namespace {

using reference::expect_close;
using reference::random_vec;
using reference::ref_conv_backward;
using reference::ref_conv_forward;
using reference::ref_pool;

bool has(const std::vector<const CpuKernels*>& variants, const std::string& name) {
  for (const CpuKernels* k : variants)
    if (k->name == name) return true;
  return false;
}

TEST(CpuVariants, TheCpuGetsEveryVariantItCanRun) {
  const auto variants = supported_cpu_kernels();
  ASSERT_FALSE(variants.empty());
  EXPECT_EQ(std::string(variants.front()->name), "baseline");
#if defined(__x86_64__)
  __builtin_cpu_init();
#if defined(__clang__)  // clang 14 knows the features, not the levels (x86-64-v3) they make
  const bool v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                  __builtin_cpu_supports("bmi2");
  const bool v4 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#else
  const bool v3 = __builtin_cpu_supports("x86-64-v3"), v4 = __builtin_cpu_supports("x86-64-v4");
#endif
  EXPECT_EQ(has(variants, "avx2"), v3);
  EXPECT_EQ(has(variants, "avx512"), v4);
#elif defined(__powerpc64__)
  EXPECT_EQ(has(variants, "vsx"), __builtin_cpu_supports("vsx") != 0);
#endif
  // Without DRUN_ISA the process runs the best of them.
  if (!std::getenv("DRUN_ISA")) {
    EXPECT_EQ(&cpu_kernels(), variants.back());
  }
  std::printf("variants on this CPU (%s):", cpu_model_name().c_str());
  for (const CpuKernels* k : variants) std::printf(" %s", k->name);
  std::printf("\n");
}

struct ConvCase {
  int64_t n, h, w, c, kh, kw, co, s;
  bool same;
};

void check_conv(const CpuKernels& kernels, const ConvCase& cc) {
  const ConvGeometry g =
      conv_geometry(cc.n, cc.h, cc.w, cc.c, cc.kh, cc.kw, cc.co, cc.s, cc.s, cc.same);
  SCOPED_TRACE(::testing::Message()
               << kernels.name << " conv " << cc.h << "x" << cc.w << "x" << cc.c << " k=" << cc.kh
               << "x" << cc.kw << " co=" << cc.co << " s=" << cc.s << " same=" << cc.same);
  Rng rng(static_cast<uint64_t>(cc.co * 7 + cc.c * 3 + cc.s + cc.same));
  const auto x = random_vec(g.n * g.h * g.w * g.c, rng);
  const auto w = random_vec(g.k() * g.co, rng);
  const auto b = random_vec(g.co, rng);
  const int64_t ny = g.n * g.oh * g.ow * g.co;
  const auto dy = random_vec(ny, rng);
  for (bool relu : {false, true}) {
    const auto want = ref_conv_forward(g, x, w, b, relu);
    std::vector<float> y(static_cast<size_t>(ny), 7.0f);
    // Two calls over halves of the batch, as two threads would make them.
    kernels.conv_direct_forward(g, x.data(), w.data(), b.data(), y.data(), relu, 0, g.n / 2);
    kernels.conv_direct_forward(g, x.data(), w.data(), b.data(), y.data(), relu, g.n / 2, g.n);
    expect_close(y, want, 1e-4, relu ? "forward relu" : "forward");

    // The filter gradient, of dy masked by the ReLU output when relu.
    std::vector<float> relu_y(static_cast<size_t>(ny)), dz(dy);
    for (int64_t i = 0; i < ny; ++i) {
      relu_y[i] = static_cast<float>(want[i]);
      if (relu && relu_y[i] <= 0.0f) dz[i] = 0.0f;
    }
    std::vector<double> dw_ref, db_ref, dx_unused;
    ref_conv_backward(g, x, dz, w, dw_ref, db_ref, dx_unused);
    // The kernel adds to dw and db: start them at 1 and expect 1 + the sums.
    for (auto& v : dw_ref) v += 1.0;
    for (auto& v : db_ref) v += 1.0;
    std::vector<float> dw(static_cast<size_t>(g.k() * g.co), 1.0f), db(g.co, 1.0f);
    std::vector<float> taps(static_cast<size_t>(g.out_pixels() * g.k()));
    kernels.conv_direct_backward_filter(g, x.data(), dy.data(), relu ? relu_y.data() : nullptr,
                                        dw.data(), db.data(), taps.data(), 0, g.n);
    expect_close(dw, dw_ref, 1e-4, "backward filter dw");
    expect_close(db, db_ref, 1e-4, "backward filter db");
  }
}

TEST(CpuVariants, DirectConvolutionMatchesReference) {
  for (const CpuKernels* kernels : supported_cpu_kernels()) {
    // co: one, two and several vector blocks on every width, and counts that
    // are no multiple of a vector (the scalar path); K = 9 (the seed CNN's
    // first layer, its own backward kernel), 27 and 32; odd widths leave
    // pixels over after the groups of pixels in flight.
    for (int64_t co : {32, 16, 64, 128, 48, 8, 4, 5}) {
      for (bool same : {false, true}) {
        check_conv(*kernels, {4, 9, 11, 1, 3, 3, co, 1, same});
        check_conv(*kernels, {3, 7, 6, 3, 3, 3, co, 2, same});
      }
    }
    check_conv(*kernels, {3, 8, 9, 2, 4, 4, 16, 1, true});  // K = 32
  }
}

// The direct convolution and the max pooling over its output in one pass,
// against the two references one after the other.
void check_conv_max_pool(const CpuKernels& kernels, const ConvCase& cc, int64_t window) {
  const ConvGeometry g =
      conv_geometry(cc.n, cc.h, cc.w, cc.c, cc.kh, cc.kw, cc.co, cc.s, cc.s, cc.same);
  const PoolGeometry pg =
      pool_geometry(g.n, g.oh, g.ow, g.co, window, window, window, window, false);
  SCOPED_TRACE(::testing::Message()
               << kernels.name << " conv " << cc.h << "x" << cc.w << "x" << cc.c << " k=" << cc.kh
               << " co=" << cc.co << " same=" << cc.same << " + max pool " << window);
  Rng rng(static_cast<uint64_t>(cc.co * 5 + cc.c + window));
  const auto x = random_vec(g.n * g.h * g.w * g.c, rng);
  const auto w = random_vec(g.k() * g.co, rng);
  const auto b = random_vec(g.co, rng);
  const int64_t np = pg.n * pg.oh * pg.ow * pg.c;
  const auto dy = random_vec(np, rng);
  for (bool relu : {false, true}) {
    const auto z = ref_conv_forward(g, x, w, b, relu);
    const std::vector<float> zf(z.begin(), z.end());
    std::vector<float> y(static_cast<size_t>(np), 7.0f);
    std::vector<int32_t> argmax(static_cast<size_t>(np), -1);
    kernels.conv_direct_max_pool_forward(g, pg, x.data(), w.data(), b.data(), y.data(),
                                         argmax.data(), relu, 0, 1);
    kernels.conv_direct_max_pool_forward(g, pg, x.data(), w.data(), b.data(), y.data(),
                                         argmax.data(), relu, 1, g.n);
    // The pooled gradient, masked where the pooled output is 0 after a ReLU,
    // reaches the winner the reference pooling finds.
    std::vector<float> dm(dy);
    const auto pooled = ref_pool(pg, zf, dm, true);
    for (int64_t i = 0; i < np; ++i)
      if (relu && pooled.y[static_cast<size_t>(i)] <= 0.0) dm[static_cast<size_t>(i)] = 0.0f;
    expect_close(y, pooled.y, 1e-4, relu ? "forward relu" : "forward");
    for (int64_t i = 0; i < np; ++i) ASSERT_GE(argmax[static_cast<size_t>(i)], 0) << "argmax " << i;
    const auto dz = ref_pool(pg, zf, dm, true).dx;
    std::vector<double> dw_ref, db_ref, dx_unused;
    ref_conv_backward(g, x, std::vector<float>(dz.begin(), dz.end()), w, dw_ref, db_ref, dx_unused);
    for (auto& v : dw_ref) v += 1.0;  // the kernel adds to dw and db
    for (auto& v : db_ref) v += 1.0;
    std::vector<float> dw(static_cast<size_t>(g.k() * g.co), 1.0f), db(g.co, 1.0f);
    std::vector<float> taps(static_cast<size_t>(g.out_pixels() * g.k()));
    kernels.conv_direct_max_pool_backward_filter(g, pg, x.data(), dy.data(), argmax.data(),
                                                 relu ? y.data() : nullptr, dw.data(), db.data(),
                                                 taps.data(), 0, g.n);
    expect_close(dw, dw_ref, 1e-4, "backward filter dw");
    expect_close(db, db_ref, 1e-4, "backward filter db");
  }
}

TEST(CpuVariants, DirectConvolutionWithMaxPoolMatchesReference) {
  for (const CpuKernels* kernels : supported_cpu_kernels()) {
    // K = 9 (its own backward kernel) and 27, 'valid' and 'same' (taps read in
    // place or gathered), windows of 4 pixels and of 9 (more than are in
    // flight), convolution outputs the windows do not cover to the edge (9x11
    // valid: 7x9), channel counts of whole vectors and not.
    for (int64_t co : {32, 16, 64, 48, 8, 5}) {
      for (bool same : {false, true}) {
        check_conv_max_pool(*kernels, {3, 9, 11, 1, 3, 3, co, 1, same}, 2);
        check_conv_max_pool(*kernels, {2, 10, 8, 3, 3, 3, co, 1, same}, 2);
        check_conv_max_pool(*kernels, {2, 11, 9, 1, 3, 3, co, 1, same}, 3);
      }
    }
  }
}

TEST(CpuVariants, MaxPoolMatchesReference) {
  for (const CpuKernels* kernels : supported_cpu_kernels()) {
    struct Case {
      int64_t h, w, c, p, s;
      bool same;
    };
    for (Case pc : {Case{26, 26, 32, 2, 2, false}, Case{7, 5, 4, 2, 2, true},
                    Case{7, 5, 3, 3, 2, false}, Case{8, 8, 17, 3, 1, true}}) {
      const PoolGeometry g = pool_geometry(3, pc.h, pc.w, pc.c, pc.p, pc.p, pc.s, pc.s, pc.same);
      SCOPED_TRACE(::testing::Message() << kernels->name << " pool " << pc.h << "x" << pc.w << "x"
                                        << pc.c << " p=" << pc.p << " s=" << pc.s);
      Rng rng(static_cast<uint64_t>(pc.h + pc.c + pc.p));
      const auto x = random_vec(g.n * g.h * g.w * g.c, rng, -5.0f, 5.0f);
      const auto dy = random_vec(g.n * g.oh * g.ow * g.c, rng);
      const auto want = ref_pool(g, x, dy, true);
      std::vector<float> y(want.y.size(), 3.0f), dx(want.dx.size(), 3.0f);
      std::vector<int32_t> argmax(want.y.size(), -1);
      kernels->max_pool_forward(g, x.data(), y.data(), argmax.data(), 0, 1);
      kernels->max_pool_forward(g, x.data(), y.data(), argmax.data(), 1, g.n);
      expect_close(y, want.y, 1e-6, "max forward");
      kernels->max_pool_backward(g, dy.data(), argmax.data(), dx.data(), 0, g.n);
      expect_close(dx, want.dx, 1e-6, "max backward");
    }
  }
}

// The in-place GEMMs (isa/gemm_small_impl.hpp) against a double-precision
// product, C's columns in two calls as two threads would make them; padded
// row strides; rows, columns and K both whole blocks and not; with and
// without a bias.
TEST(CpuVariants, InPlaceGemmMatchesReference) {
  for (const CpuKernels* kernels : supported_cpu_kernels()) {
    struct Case {
      int64_t m, n, k;
    };
    // More rows than a tile's (the first tile copies B's strip into a panel
    // the others read), with K up to the panel's 1,024 rows and past it.
    for (Case gc : {Case{32, 256, 64}, Case{9, 141, 37}, Case{3, 40, 100}, Case{13, 70, 300},
                    Case{20, 64, 1030}, Case{150, 72, 64}}) {
      for (bool tb : {false, true}) {
        SCOPED_TRACE(::testing::Message() << kernels->name << " gemm " << gc.m << "x" << gc.n << "x"
                                          << gc.k << " tb=" << tb);
        Rng rng(static_cast<uint64_t>(gc.m + gc.n + gc.k + tb));
        const int64_t lda = gc.k + 3, ldb = (tb ? gc.k : gc.n) + 1, ldc = gc.n + 2;
        const auto a = random_vec(gc.m * lda, rng);
        const auto b = random_vec((tb ? gc.n : gc.k) * ldb, rng);
        const auto c0 = random_vec(gc.m * ldc, rng);
        const auto bias = random_vec(gc.n, rng);
        for (float beta : {0.0f, 0.5f})
          for (bool with_bias : {false, true}) {
            std::vector<double> want(c0.begin(), c0.end());
            for (int64_t i = 0; i < gc.m; ++i)
              for (int64_t j = 0; j < gc.n; ++j) {
                double acc = 0.0;
                for (int64_t p = 0; p < gc.k; ++p)
                  acc +=
                      static_cast<double>(a[i * lda + p]) * (tb ? b[j * ldb + p] : b[p * ldb + j]);
                want[i * ldc + j] = 1.5 * acc + (with_bias ? bias[j] : 0.0) +
                                    beta * static_cast<double>(c0[i * ldc + j]);
              }
            std::vector<float> c = c0;
            if (beta == 0.0f)  // beta 0 must ignore C, NaN included
              for (int64_t i = 0; i < gc.m; ++i)
                for (int64_t j = 0; j < gc.n; ++j) c[i * ldc + j] = std::nanf("");
            const auto run = tb ? kernels->gemm_nt_small_m : kernels->gemm_nn_small_m;
            const int64_t half = std::min<int64_t>(32, gc.n);
            const float* bp = with_bias ? bias.data() : nullptr;
            run(gc.m, gc.k, 1.5f, a.data(), lda, b.data(), ldb, beta, c.data(), ldc, 0, half, bp);
            run(gc.m, gc.k, 1.5f, a.data(), lda, b.data(), ldb, beta, c.data(), ldc, half, gc.n,
                bp);
            const std::string what =
                std::string(beta == 0.0f ? "beta 0" : "beta 0.5") + (with_bias ? " + bias" : "");
            expect_close(c, want, 1e-5, what.c_str());
          }
      }
    }
  }
}

// Attention's per-head products under a causal mask (row i of the t x s
// scores keeps min(i + 1, s) columns), each part against the full product
// in double: C = A B^T's kept entries (its hidden ones zero or the product),
// and C = P B, C = P^T B over a P that is zero where hidden. Tiles whose rows
// straddle the diagonal, t below and above s, and keys no query sees.
TEST(CpuVariants, CausalGemmMatchesTheFullProduct) {
  struct Case {
    int64_t t, s, d;
  };
  for (const CpuKernels* kernels : supported_cpu_kernels())
    for (Case cc : {Case{64, 64, 32}, Case{5, 7, 4}, Case{30, 19, 17}, Case{13, 40, 9}}) {
      SCOPED_TRACE(::testing::Message()
                   << kernels->name << " t " << cc.t << " s " << cc.s << " d " << cc.d);
      const int64_t t = cc.t, s = cc.s, d = cc.d, ld = d + 3, lds = s + 1;
      const auto kept = [&](int64_t i) { return masked_softmax_kept(true, t, i, s); };
      Rng rng(static_cast<uint64_t>(t * 100 + s));
      const auto q = random_vec(t * ld, rng), keys = random_vec(s * ld, rng);
      auto p = random_vec(t * lds, rng);
      for (int64_t i = 0; i < t; ++i)
        for (int64_t j = kept(i); j < s; ++j) p[i * lds + j] = 0.0f;
      const auto v = random_vec(std::max(s, t) * ld, rng);
      for (float beta : {0.0f, 0.5f}) {
        // scores = Q K^T (t x s).
        const auto c0 = random_vec(t * lds, rng);
        std::vector<float> c(c0);
        if (beta == 0.0f) std::fill(c.begin(), c.end(), std::nanf(""));
        kernels->gemm_causal(CausalPart::scores, t, s, d, 1.5f, q.data(), ld, keys.data(), ld, beta,
                             c.data(), lds);
        for (int64_t i = 0; i < t; ++i)
          for (int64_t j = 0; j < s; ++j) {
            double acc = 0.0;
            for (int64_t k = 0; k < d; ++k)
              acc += static_cast<double>(q[i * ld + k]) * keys[j * ld + k];
            const double want = 1.5 * acc + beta * static_cast<double>(c0[i * lds + j]);
            const float got = c[i * lds + j];
            if (j >= kept(i) && got == 0.0f) continue;  // hidden, and skipped
            EXPECT_NEAR(got, want, 1e-5 * (1.0 + std::fabs(want)))
                << "scores (" << i << ", " << j << ")" << (j >= kept(i) ? ", hidden" : "");
          }
        // context = P V (t x d) and dV = P^T dC (s x d).
        for (CausalPart part : {CausalPart::by_scores, CausalPart::by_scores_transposed}) {
          const bool tn = part == CausalPart::by_scores_transposed;
          const int64_t rows = tn ? s : t, inner = tn ? t : s;
          const auto y0 = random_vec(rows * ld, rng);
          std::vector<float> y(y0);
          if (beta == 0.0f)  // not read
            for (int64_t i = 0; i < rows; ++i) std::fill_n(y.begin() + i * ld, d, std::nanf(""));
          kernels->gemm_causal(part, rows, d, inner, 1.5f, p.data(), lds, v.data(), ld, beta,
                               y.data(), ld);
          std::vector<double> want(y0.begin(), y0.end());
          for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < d; ++j) {
              double acc = 0.0;
              for (int64_t k = 0; k < inner; ++k)
                acc += static_cast<double>(tn ? p[k * lds + i] : p[i * lds + k]) * v[k * ld + j];
              want[i * ld + j] = 1.5 * acc + beta * static_cast<double>(y0[i * ld + j]);
            }
          expect_close(y, want, 1e-5, tn ? "P^T dC" : "P V");
        }
      }
    }
}

// float(x)'s distance from the float nearest the exact value, in units in
// its last place.
double ulps(float got, double exact) {
  const float want = static_cast<float>(exact);
  const float ulp = std::nextafter(std::fabs(want), INFINITY) - std::fabs(want);
  return std::fabs(static_cast<double>(got) - static_cast<double>(want)) / ulp;
}

// The LSTM step's gates are sigmoid, sigmoid, tanh, sigmoid of xp + hr: with
// hr and the state zero, each variant's vector sigmoid and tanh against the
// exact functions, over a sweep of inputs near zero (tanh's polynomial),
// across the range either saturates in, and beyond it.
TEST(CpuVariants, LstmGateFunctionsAreWithinThreeUlps) {
  std::vector<float> xs;
  for (float x = -30.0f; x <= 30.0f; x += 0.00731f) xs.push_back(x);
  for (float x = 1e-6f; x < 1.0f; x *= 1.01f) xs.insert(xs.end(), {x, -x});
  xs.insert(xs.end(), {0.0f, -0.0f, 0.625f, -0.625f, 0.62499f, 88.0f, -88.0f, 100.0f, -100.0f});
  const int64_t u = static_cast<int64_t>(xs.size());  // no multiple of a vector: the tail too
  std::vector<float> xp(static_cast<size_t>(4 * u)), zero(static_cast<size_t>(4 * u), 0.0f);
  for (int q = 0; q < 4; ++q) std::copy(xs.begin(), xs.end(), xp.begin() + q * u);
  for (const CpuKernels* kernels : supported_cpu_kernels()) {
    SCOPED_TRACE(kernels->name);
    std::vector<float> gates(xp.size()), c(xs.size()), h(xs.size());
    const LstmStepForward f{{1, 1, u, 0, 0}, xp.data(), zero.data(), zero.data(),
                            gates.data(),    c.data(),  h.data(),    nullptr};
    kernels->lstm_step_forward(f, 0, 1);
    double worst_sigmoid = 0.0, worst_tanh = 0.0;
    for (int64_t j = 0; j < u; ++j) {
      const double x = xs[j];
      if (x > -87.0) {  // below, exp(-x) is out of float's range and so are tiny results
        worst_sigmoid = std::max(worst_sigmoid, ulps(gates[j], 1.0 / (1.0 + std::exp(-x))));
        worst_sigmoid = std::max(worst_sigmoid, ulps(gates[u + j], 1.0 / (1.0 + std::exp(-x))));
      } else {
        EXPECT_LT(gates[j], 1e-37f) << "sigmoid(" << x << ")";
      }
      worst_tanh = std::max(worst_tanh, ulps(gates[2 * u + j], std::tanh(x)));
    }
    std::printf("%s: sigmoid within %.2f ulp, tanh within %.2f ulp\n", kernels->name, worst_sigmoid,
                worst_tanh);
    EXPECT_LE(worst_sigmoid, 3.0);
    EXPECT_LE(worst_tanh, 3.0);
    const float nan = std::nanf("");
    std::vector<float> nan_xp(4 * 16, nan), nan_gates(4 * 16), c16(16), h16(16);
    const LstmStepForward fn{{1, 1, 16, 0, 0}, nan_xp.data(), zero.data(), zero.data(),
                             nan_gates.data(), c16.data(),    h16.data(),  nullptr};
    kernels->lstm_step_forward(fn, 0, 1);
    for (float g : nan_gates) EXPECT_TRUE(std::isnan(g)) << "NaN in, NaN out";
  }
}

// A whole LSTM step, forward and backward, each variant against the scalar
// functors of kernels/recurrent.hpp (libm's expf and tanhf): batch rows in
// two calls, the step's time in xp and in the sequence apart (go_backwards),
// the sequence and its gradient given and not.
TEST(CpuVariants, LstmStepMatchesTheFunctors) {
  const int64_t batch = 5, steps = 3, t_x = 2, t_y = 0;
  for (int64_t u : {int64_t{64}, int64_t{37}}) {
    Rng rng(static_cast<uint64_t>(u));
    const auto xp = random_vec(batch * steps * 4 * u, rng, -3.0f, 3.0f);
    const auto hr = random_vec(batch * 4 * u, rng, -2.0f, 2.0f);
    const auto c_prev = random_vec(batch * u, rng, -2.0f, 2.0f);
    const auto dseq = random_vec(batch * steps * u, rng);
    const auto dh = random_vec(batch * u, rng);
    const auto dc0 = random_vec(batch * u, rng);
    const size_t nu = static_cast<size_t>(batch * u), ng = 4 * nu;
    for (bool with_seq : {true, false}) {
      struct Out {
        std::vector<float> gates, c, h, seq, dc, dz;
      };
      const auto run = [&](const CpuKernels* kernels) {
        Out o{std::vector<float>(ng),
              std::vector<float>(nu),
              std::vector<float>(nu),
              std::vector<float>(nu * steps, 0.0f),
              dc0,
              std::vector<float>(ng)};
        const RnnStepShape s{batch, steps, u, t_x, t_y};
        const LstmStepForward f{s,
                                xp.data(),
                                hr.data(),
                                c_prev.data(),
                                o.gates.data(),
                                o.c.data(),
                                o.h.data(),
                                with_seq ? o.seq.data() : nullptr};
        const LstmStepBackward bw{s,
                                  with_seq ? dseq.data() : nullptr,
                                  o.gates.data(),
                                  o.c.data(),
                                  c_prev.data(),
                                  dh.data(),
                                  o.dc.data(),
                                  o.dz.data()};
        if (!kernels) {
          for (int64_t b = 0; b < batch; ++b)
            for (int64_t j = 0; j < u; ++j) f(b, j);
          for (int64_t b = 0; b < batch; ++b)
            for (int64_t j = 0; j < u; ++j) bw(b, j);
        } else {
          kernels->lstm_step_forward(f, 0, 2);
          kernels->lstm_step_forward(f, 2, batch);
          kernels->lstm_step_backward(bw, 0, 3);
          kernels->lstm_step_backward(bw, 3, batch);
        }
        return o;
      };
      const Out want = run(nullptr);
      for (const CpuKernels* kernels : supported_cpu_kernels()) {
        SCOPED_TRACE(::testing::Message()
                     << kernels->name << " units " << u << " seq " << with_seq);
        const Out got = run(kernels);
        expect_close(got.gates, want.gates, 1e-6, "gates");
        expect_close(got.c, want.c, 1e-6, "c");
        expect_close(got.h, want.h, 1e-6, "h");
        expect_close(got.seq, want.seq, 1e-6, "seq");
        expect_close(got.dc, want.dc, 1e-6, "dc");
        expect_close(got.dz, want.dz, 1e-6, "dz");
      }
    }
  }
}

// The exact GELU against erfc in double: every length up to past two
// vectors (the tails), in place too, and the far negative side to a
// relative 1e-5, where x Phi(x) is tiny and an absolute error would hide.
TEST(CpuVariants, GeluMatchesReference) {
  for (const CpuKernels* kernels : supported_cpu_kernels()) {
    SCOPED_TRACE(kernels->name);
    Rng rng(8);
    for (int64_t n : {1, 3, 16, 37}) {
      const auto x = random_vec(n, rng, -9.0f, 9.0f), dy = random_vec(n, rng);
      std::vector<double> y_ref(x.size()), dx_ref(x.size());
      for (size_t i = 0; i < x.size(); ++i) {
        const double v = x[i], phi = 0.5 * std::erfc(-v / std::sqrt(2.0));
        y_ref[i] = v * phi;
        dx_ref[i] = dy[i] * (phi + v * std::exp(-0.5 * v * v) / std::sqrt(2.0 * M_PI));
      }
      std::vector<float> y(x.size(), 3.0f), dx = dy;
      kernels->gelu_forward(x.data(), y.data(), n);
      expect_close(y, y_ref, 1e-6, "forward");
      kernels->gelu_backward(x.data(), dx.data(), dx.data(), n);
      expect_close(dx, dx_ref, 1e-6, "backward in place");
    }
    for (float v = -12.0f; v <= -3.0f; v += 0.25f) {
      float y = 0.0f;
      kernels->gelu_forward(&v, &y, 1);
      const double want = v * 0.5 * std::erfc(-v / std::sqrt(2.0));
      EXPECT_NEAR(y / want, 1.0, 1e-5) << "x " << v;
    }
  }
}

// Attention's masked softmax, causal (two groups of t rows, the mask
// counting from each group's start) and not, rows shorter and longer than a
// vector, and its backward, against double sums.
TEST(CpuVariants, MaskedSoftmaxMatchesReference) {
  for (const CpuKernels* kernels : supported_cpu_kernels()) {
    for (int64_t cols : {5, 16, 37}) {
      for (bool causal : {false, true}) {
        SCOPED_TRACE(::testing::Message()
                     << kernels->name << " cols " << cols << " causal " << causal);
        const int64_t t = cols, rows = 2 * t;
        const float scale = 0.3f;
        Rng rng(static_cast<uint64_t>(cols));
        const auto x = random_vec(rows * cols, rng, -8.0f, 8.0f);
        const auto dy = random_vec(rows * cols, rng);
        std::vector<double> y_ref(x.size(), 0.0), dx_ref(x.size(), 0.0);
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t kept = causal ? r % t + 1 : cols;
          double m = -1e300, sum = 0.0, dot = 0.0;
          for (int64_t j = 0; j < kept; ++j) m = std::max(m, scale * double(x[r * cols + j]));
          for (int64_t j = 0; j < kept; ++j) sum += std::exp(scale * double(x[r * cols + j]) - m);
          for (int64_t j = 0; j < kept; ++j)
            y_ref[r * cols + j] = std::exp(scale * double(x[r * cols + j]) - m) / sum;
          for (int64_t j = 0; j < cols; ++j) dot += dy[r * cols + j] * y_ref[r * cols + j];
          for (int64_t j = 0; j < cols; ++j)
            dx_ref[r * cols + j] = scale * y_ref[r * cols + j] * (dy[r * cols + j] - dot);
        }
        std::vector<float> y = x;  // in place, as attention runs it
        kernels->masked_softmax_forward(scale, causal, t, y.data(), y.data(), rows, cols);
        expect_close(y, y_ref, 1e-6, "forward");
        std::vector<float> dx(x.size(), 3.0f);
        kernels->masked_softmax_backward(scale, y.data(), dy.data(), dx.data(), rows, cols);
        expect_close(dx, dx_ref, 1e-5, "backward");
      }
    }
  }
}

// Layer normalisation's rows and parameter gradients, with and without
// gamma and beta, on rows around a vector's width and a large mean.
TEST(CpuVariants, LayerNormMatchesReference) {
  for (const CpuKernels* kernels : supported_cpu_kernels()) {
    for (int64_t c : {3, 16, 45}) {
      for (bool affine : {false, true}) {
        SCOPED_TRACE(::testing::Message() << kernels->name << " c " << c << " affine " << affine);
        const int64_t rows = 7;
        const float eps = 1e-3f;
        Rng rng(static_cast<uint64_t>(c));
        const auto x = random_vec(rows * c, rng, 95.0f, 105.0f), dy = random_vec(rows * c, rng);
        const auto gamma = random_vec(c, rng, 0.5f, 1.5f), beta = random_vec(c, rng);
        std::vector<double> y_ref(x.size()), dx_ref(x.size()), dg_ref(c, 0.0), db_ref(c, 0.0);
        for (int64_t r = 0; r < rows; ++r) {
          double m = 0.0, var = 0.0, sum_g = 0.0, sum_gx = 0.0;
          for (int64_t j = 0; j < c; ++j) m += x[r * c + j] / double(c);
          for (int64_t j = 0; j < c; ++j) var += (x[r * c + j] - m) * (x[r * c + j] - m) / c;
          const double s = 1.0 / std::sqrt(var + eps);
          for (int64_t j = 0; j < c; ++j) {
            const int64_t i = r * c + j;
            const double xhat = (x[i] - m) * s, g = affine ? dy[i] * gamma[j] : dy[i];
            y_ref[i] = affine ? xhat * gamma[j] + beta[j] : xhat;
            sum_g += g;
            sum_gx += g * xhat;
            dg_ref[j] += dy[i] * xhat;
            db_ref[j] += dy[i];
          }
          for (int64_t j = 0; j < c; ++j) {
            const int64_t i = r * c + j;
            const double g = affine ? dy[i] * gamma[j] : dy[i];
            dx_ref[i] = s * (g - sum_g / c - (x[i] - m) * s * sum_gx / c);
          }
        }
        const float* g = affine ? gamma.data() : nullptr;
        std::vector<float> y(x.size(), 3.0f), mean(rows), inv_std(rows);
        kernels->layer_norm_forward(x.data(), rows, c, g, affine ? beta.data() : nullptr, eps,
                                    mean.data(), inv_std.data(), y.data());
        expect_close(y, y_ref, 1e-4, "forward");
        std::vector<float> dx(x.size(), 3.0f), dg(c, 3.0f), db(c, 3.0f);
        kernels->layer_norm_backward_input(x.data(), dy.data(), rows, c, g, mean.data(),
                                           inv_std.data(), dx.data());
        expect_close(dx, dx_ref, 1e-4, "backward");
        // In two ranges of columns, as threads split them.
        const int64_t split = std::min<int64_t>(c, 16);
        kernels->layer_norm_param_grads(x.data(), dy.data(), rows, c, mean.data(), inv_std.data(),
                                        0, split, dg.data(), db.data());
        kernels->layer_norm_param_grads(x.data(), dy.data(), rows, c, mean.data(), inv_std.data(),
                                        split, c, dg.data(), db.data());
        expect_close(dg, dg_ref, 1e-4, "dgamma");
        expect_close(db, db_ref, 1e-5, "dbeta");
      }
    }
  }
}

// Column sums run each column over the rows in order, whatever the width and
// however the columns are split (and past the 2,048 columns summed at a
// time): the same bits as a scalar loop.
TEST(CpuVariants, ColumnSumsAreTheScalarSums) {
  for (const CpuKernels* kernels : supported_cpu_kernels()) {
    for (int64_t cols : {1, 16, 45, 2100}) {
      SCOPED_TRACE(::testing::Message() << kernels->name << " cols " << cols);
      const int64_t rows = 33, split = std::min<int64_t>(cols, 16);
      Rng rng(static_cast<uint64_t>(cols));
      const auto x = random_vec(rows * cols, rng, -3.0f, 3.0f);
      std::vector<float> want(cols, 0.0f), s(cols, 7.0f);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < cols; ++j) want[j] += x[r * cols + j];
      kernels->column_sums(x.data(), rows, cols, split, cols, s.data());
      kernels->column_sums(x.data(), rows, cols, 0, split, s.data());
      EXPECT_EQ(s, want);
    }
  }
}

// The softmax cross-entropy's rows against a double-precision softmax: class
// counts around a vector's width, logits far apart (the max subtracted),
// and a label outside [0, cols) (a zero gradient row, a NaN loss).
TEST(CpuVariants, SoftmaxXentSparseMatchesReference) {
  for (const CpuKernels* kernels : supported_cpu_kernels()) {
    for (int64_t cols : {1, 7, 16, 96}) {
      SCOPED_TRACE(::testing::Message() << kernels->name << " cols " << cols);
      const int64_t rows = 9;
      const float inv_rows = 1.0f / static_cast<float>(rows);
      Rng rng(static_cast<uint64_t>(cols));
      const auto z = random_vec(rows * cols, rng, -40.0f, 40.0f);
      std::vector<int32_t> labels(rows);
      for (int64_t r = 0; r < rows; ++r) labels[r] = static_cast<int32_t>((r * 5) % cols);
      labels[4] = static_cast<int32_t>(cols);  // out of range
      std::vector<double> grad_ref(z.size(), 0.0), loss_ref(rows, 0.0);
      for (int64_t r = 0; r < rows; ++r) {
        if (r == 4) continue;
        const float* zr = z.data() + r * cols;
        const double m = *std::max_element(zr, zr + cols);
        double sum = 0.0;
        for (int64_t j = 0; j < cols; ++j) sum += std::exp(zr[j] - m);
        for (int64_t j = 0; j < cols; ++j)
          grad_ref[r * cols + j] = std::exp(zr[j] - m) / sum / rows;
        grad_ref[r * cols + labels[r]] -= 1.0 / rows;
        loss_ref[r] = std::log(sum) + m - zr[labels[r]];
      }
      std::vector<float> grad(z.size(), 5.0f), loss(rows, 0.0f);
      kernels->softmax_xent_sparse_rows(z.data(), labels.data(), rows, cols, inv_rows, grad.data(),
                                        loss.data());
      expect_close(grad, grad_ref, 1e-6, "gradient");
      EXPECT_TRUE(std::isnan(loss[4]));
      loss[4] = 0.0f;
      expect_close(loss, loss_ref, 1e-6, "row losses");
    }
  }
}

TEST(BlasCore, AGenericCoreGivesWayToTheCpusOwn) {
  // Debian's OpenBLAS 0.3.21 reports Prescott on a recent Xeon it does not know.
  EXPECT_EQ(better_blas_core("Prescott", "avx512"), "SkylakeX");
  EXPECT_EQ(better_blas_core("Prescott", "avx2"), "Haswell");
  EXPECT_EQ(better_blas_core("Nehalem", "avx2"), "Haswell");
  EXPECT_EQ(better_blas_core("Prescott", "baseline"), "");  // nothing better to ask for
  EXPECT_EQ(better_blas_core("SkylakeX", "avx512"), "");
  EXPECT_EQ(better_blas_core("Cooperlake", "avx512"), "");
  EXPECT_EQ(better_blas_core("Zen", "avx2"), "");
  EXPECT_FALSE(blas_core().empty());
  EXPECT_FALSE(cpu_model_name().empty());
}

}  // namespace
}  // namespace drun::kernels::cpu
