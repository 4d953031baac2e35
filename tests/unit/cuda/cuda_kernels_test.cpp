// The cross-backend harness for the CUDA kernels: each against its CPU
// namesake (kernels/cpu) on the same random inputs: GEMM in every transpose
// case, the elementwise ops and reductions, the activations forward and
// backward, every fused loss, every optimizer rule and variant, and the cuDNN
// convolutions forward and backward; and the device pool's promise that a warm
// allocation does not reach the driver. Without a GPU the program prints why
// and exits 77, which meson reports as skipped.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "base/rng.hpp"
#include "kernels/activation.hpp"
#include "kernels/cpu/conv2d.hpp"
#include "kernels/cuda/blas.hpp"
#include "kernels/cuda/conv.hpp"
#include "kernels/cuda/device.hpp"
#include "kernels/dropout.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/loss.hpp"
#include "kernels/metric.hpp"
#include "kernels/optimizer_update.hpp"

// Calls are qualified (cuda:: or cpu::): the two backends' functions share
// names and signatures (one declaration, kernels/*.hpp).
namespace drun::kernels::cuda {
namespace {

// A device copy of host data that frees itself.
template <class T>
class DeviceVector {
 public:
  DeviceVector(DevicePool& pool, const std::vector<T>& host)
      : pool_(pool), size_(host.size()), p_(pool.allocate(bytes())) {
    copy_to_device(p_, host.data(), bytes());
  }
  ~DeviceVector() { pool_.release(p_, bytes()); }
  DeviceVector(const DeviceVector&) = delete;
  DeviceVector& operator=(const DeviceVector&) = delete;
  T* get() const { return static_cast<T*>(p_); }
  std::vector<T> host() const {
    std::vector<T> out(size_);
    synchronize();
    copy_to_host(out.data(), p_, bytes());
    return out;
  }

 private:
  size_t bytes() const { return size_ * sizeof(T); }
  DevicePool& pool_;
  size_t size_;
  void* p_;
};

std::vector<float> random(size_t n, uint64_t seed, float lo = -1.f, float hi = 1.f) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = rng.uniform(lo, hi);
  return v;
}

// A matrix of `rows` rows of `cols` values.
struct Shape {
  int64_t rows, cols;
};

// |got - want| <= tol (|want| + the mean |want|): relative, yet not blind to
// the entries near zero. tol 0 asks for equality.
void expect_near(const std::vector<float>& got, const std::vector<float>& want, float tol,
                 const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double mean = 0;
  for (float w : want) mean += std::fabs(w);
  mean /= std::max<size_t>(want.size(), 1);
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol * (std::fabs(want[i]) + mean)) << what << "[" << i << "]";
}

TEST(CudaKernels, GemmEveryTranspose) {
  DevicePool pool;
  Blas blas;
  const int64_t m = 37, n = 23, k = 41;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      const auto a = random(static_cast<size_t>(m * k), 1),
                 b = random(static_cast<size_t>(k * n), 2);
      auto c = random(static_cast<size_t>(m * n), 3);
      std::vector<float> want(c.size());
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double s = 0;
          for (int64_t p = 0; p < k; ++p)
            s += static_cast<double>(ta ? a[p * m + i] : a[i * k + p]) *
                 (tb ? b[j * k + p] : b[p * n + j]);
          want[i * n + j] = static_cast<float>(0.5 * s + 0.25 * c[i * n + j]);
        }
      DeviceVector da(pool, a), db(pool, b), dc(pool, c);
      blas.gemm(ta, tb, m, n, k, 0.5f, da.get(), db.get(), 0.25f, dc.get());
      expect_near(dc.host(), want, 1e-4f,
                  ta ? (tb ? "gemm TT" : "gemm TN") : (tb ? "gemm NT" : "gemm NN"));
    }
}

TEST(CudaKernels, ElementwiseMatchTheCpu) {
  DevicePool pool;
  const int64_t n = 1000;
  const auto a = random(n, 4), b = random(n, 5);
  DeviceVector da(pool, a), db(pool, b), dy(pool, std::vector<float>(n));
  std::vector<float> y(n);
  cuda::add(da.get(), db.get(), dy.get(), n);
  cpu::add(a.data(), b.data(), y.data(), n);
  expect_near(dy.host(), y, 0, "add");
  cuda::axpy(0.3f, da.get(), dy.get(), n);
  cpu::axpy(0.3f, a.data(), y.data(), n);
  expect_near(dy.host(), y, 1e-6f, "axpy");
  cuda::scale(-1.5f, dy.get(), n);
  cpu::scale(-1.5f, y.data(), n);
  expect_near(dy.host(), y, 1e-6f, "scale");
  cuda::mul(da.get(), db.get(), dy.get(), n);
  cpu::mul(a.data(), b.data(), y.data(), n);
  expect_near(dy.host(), y, 0, "mul");

  for (const Shape t : {Shape{5, 300}, Shape{1000, 16}, Shape{3, 1}}) {
    const int64_t rows = t.rows, cols = t.cols;
    auto y0 = random(static_cast<size_t>(rows * cols), 6);
    const auto bias = random(static_cast<size_t>(cols), 7);
    DeviceVector dy0(pool, y0), dbias(pool, bias);
    cuda::bias_add(dy0.get(), dbias.get(), rows, cols);
    cpu::bias_add(y0.data(), bias.data(), rows, cols);
    expect_near(dy0.host(), y0, 0, "bias_add");
  }
}

// Multiples of 1/64 in [-1, 1]: every partial sum of up to 2^17 of them is
// exact in float, so any order of summation gives the CPU's answer exactly.
TEST(CudaKernels, ColumnSumsMatchTheCpu) {
  DevicePool pool;
  for (const Shape t : {Shape{0, 7}, Shape{5, 300}, Shape{1000, 16}, Shape{100000, 16},
                        Shape{20000, 513}, Shape{70000, 128}}) {
    const int64_t rows = t.rows, cols = t.cols;
    auto x = random(static_cast<size_t>(rows * cols), 8);
    for (float& v : x) v = std::round(v * 64.f) / 64.f;
    std::vector<float> s(static_cast<size_t>(cols));
    cpu::column_sums(x.data(), rows, cols, s.data());
    DeviceVector dx(pool, x), ds(pool, random(static_cast<size_t>(cols), 9));
    cuda::column_sums(dx.get(), rows, cols, ds.get());
    expect_near(ds.host(), s, 0, "column_sums");
  }
}

// The flag is set where a value is not finite and left alone otherwise.
TEST(CudaKernels, MarkNonfiniteMatchesTheCpu) {
  DevicePool pool;
  const size_t n = 300001;
  auto x = random(n, 10);
  const std::vector<float> zero{0.0f};
  {
    DeviceVector dx(pool, x), flag(pool, zero);
    cuda::mark_nonfinite(dx.get(), static_cast<int64_t>(n), flag.get());
    cuda::mark_nonfinite(nullptr, 0, flag.get());
    EXPECT_EQ(flag.host(), zero);
  }
  for (const float bad :
       {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
        -std::numeric_limits<float>::infinity()})
    for (const size_t at : {size_t{0}, size_t{77777}, n - 1}) {
      auto y = x;
      y[at] = bad;
      DeviceVector dy(pool, y), flag(pool, zero);
      cuda::mark_nonfinite(dy.get(), static_cast<int64_t>(n), flag.get());
      float want = 0.0f;
      cpu::mark_nonfinite(y.data(), static_cast<int64_t>(n), &want);
      EXPECT_EQ(flag.host(), std::vector<float>{want}) << bad << " at " << at;
      EXPECT_EQ(want, 1.0f);
    }
}

// Four levels make ties common, where the first maximum must win; NaNs go
// where the CPU's left-to-right scan treats them differently (first column or not).
TEST(CudaKernels, ArgmaxRowsMatchTheCpu) {
  DevicePool pool;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (const int64_t cols : {int64_t{1}, int64_t{10}, int64_t{100}}) {
    const int64_t rows = 300;
    auto x = random(static_cast<size_t>(rows * cols), 11, 0.f, 4.f);
    for (float& v : x) v = std::floor(v);
    x[0] = nan;
    if (cols > 5) {
      x[1 * cols + 5] = nan;
      x[2 * cols + cols - 1] = nan;
      x[2 * cols] = 7.f;
      std::fill(x.begin() + 3 * cols, x.begin() + 4 * cols, -inf);
      std::fill(x.begin() + 4 * cols, x.begin() + 5 * cols, nan);
      x[4 * cols] = 0.5f;
      x[4 * cols + 3] = 1.f;
    }
    std::vector<int32_t> want(rows), init(rows, -7);
    cpu::argmax_rows(x.data(), rows, cols, want.data());
    DeviceVector dx(pool, x);
    DeviceVector out(pool, init);
    cuda::argmax_rows(dx.get(), rows, cols, out.get());
    EXPECT_EQ(out.host(), want) << "cols " << cols;
  }
}

TEST(CudaKernels, ActivationsMatchTheCpu) {
  DevicePool pool;
  // Every activation of the list, with a negative slope of its own for leaky_relu.
  for (const Activation kind : kAllActivations)
    for (const int64_t cols : {int64_t{10}, int64_t{100}}) {
      const ActivationFn a =
          kind == Activation::leaky_relu ? ActivationFn(kind, 0.3f) : ActivationFn(kind);
      SCOPED_TRACE(activation_name(kind));
      const int64_t rows = 37;
      const size_t n = static_cast<size_t>(rows * cols);
      const auto x = random(n, 12, -4.f, 4.f), dy = random(n, 13);
      const bool selects =
          kind == Activation::linear || kind == Activation::relu || kind == Activation::leaky_relu;
      const float tol = selects ? 0.f : 1e-5f;
      std::vector<float> y(n), dx(n);
      cpu::activation_forward(a, x.data(), y.data(), rows, cols);
      cpu::activation_backward(a, x.data(), y.data(), dy.data(), dx.data(), rows, cols);

      DeviceVector dxv(pool, x), dyv(pool, std::vector<float>(n)), ddy(pool, dy),
          ddx(pool, std::vector<float>(n));
      cuda::activation_forward(a, dxv.get(), dyv.get(), rows, cols);
      expect_near(dyv.host(), y, tol, "activation_forward");
      // The backward pass on the CPU's y (and x), so that only its own error shows.
      DeviceVector yv(pool, y), xv(pool, x);
      cuda::activation_backward(a, xv.get(), yv.get(), ddy.get(), ddx.get(), rows, cols);
      expect_near(ddx.host(), dx, tol, "activation_backward");
      // In place, as the headers allow.
      cuda::activation_forward(a, dxv.get(), dxv.get(), rows, cols);
      expect_near(dxv.host(), y, tol, "activation_forward in place");
      cuda::activation_backward(a, xv.get(), yv.get(), ddy.get(), ddy.get(), rows, cols);
      expect_near(ddy.host(), dx, tol, "activation_backward in place");
    }
}

// Each loss's value and gradient against the CPU. The gradient buffers start
// from the same noise, so that every row a loss must write (zeros for a bad
// label) is checked too; a bad label makes both losses NaN.
TEST(CudaKernels, LossesMatchTheCpu) {
  DevicePool pool;
  for (const Shape t : {Shape{7, 10}, Shape{1000, 10}, Shape{20000, 3}, Shape{64, 100}}) {
    const int64_t rows = t.rows, cols = t.cols;
    const size_t n = static_cast<size_t>(rows * cols);
    const auto logits = random(n, 14, -5.f, 5.f), noise = random(n, 15);
    std::vector<float> probs(n), targets = random(n, 16, 0.f, 1.f);
    cpu::activation_forward(Activation::softmax, logits.data(), probs.data(), rows, cols);
    // Probabilities at the clipping edges; row 0's label is 0, so one is a label's.
    probs[0] = 0.f;
    probs[1] = 1.f;
    probs[n - 1] = 1e-8f;
    std::vector<int32_t> labels(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) labels[r] = static_cast<int32_t>((r * 7) % cols);
    std::vector<int32_t> bad_labels = labels;
    bad_labels[rows - 1] = static_cast<int32_t>(cols);
    bad_labels[rows / 2] = -1;
    bad_labels[rows / 2 + 1] = static_cast<int32_t>(cols) + 5;

    DeviceVector dlogits(pool, logits), dprobs(pool, probs), dtargets(pool, targets);
    DeviceVector dlabels(pool, labels), dbad(pool, bad_labels);
    const auto check = [&](const char* what, const auto& on_cpu, const auto& on_gpu) {
      std::vector<float> grad = noise;
      DeviceVector dgrad(pool, noise), dloss(pool, std::vector<float>{-7.0f});
      float want = -7.0f;
      on_cpu(grad.data(), &want);
      on_gpu(dgrad.get(), dloss.get());
      const float got = dloss.host()[0];
      if (std::isnan(want))
        EXPECT_TRUE(std::isnan(got)) << what << " rows " << rows << ": " << got;
      else
        EXPECT_NEAR(got, want, 1e-5 * (std::fabs(want) + 1e-3)) << what << " rows " << rows;
      expect_near(dgrad.host(), grad, 1e-5f, what);
      return want;
    };
    for (const bool with_bad : {false, true}) {
      const std::vector<int32_t>& lab = with_bad ? bad_labels : labels;
      const int32_t* dlab = with_bad ? dbad.get() : dlabels.get();
      const float a = check(
          "softmax_xent_sparse",
          [&](float* g, float* l) {
            cpu::softmax_xent_sparse(logits.data(), lab.data(), rows, cols, g, l);
          },
          [&](float* g, float* l) {
            cuda::softmax_xent_sparse(dlogits.get(), dlab, rows, cols, g, l);
          });
      const float b = check(
          "xent_sparse_probs",
          [&](float* g, float* l) {
            cpu::xent_sparse_probs(probs.data(), lab.data(), rows, cols, g, l);
          },
          [&](float* g, float* l) {
            cuda::xent_sparse_probs(dprobs.get(), dlab, rows, cols, g, l);
          });
      EXPECT_EQ(std::isnan(a), with_bad);
      EXPECT_EQ(std::isnan(b), with_bad);
    }
    check(
        "softmax_xent_dense",
        [&](float* g, float* l) {
          cpu::softmax_xent_dense(logits.data(), targets.data(), rows, cols, g, l);
        },
        [&](float* g, float* l) {
          cuda::softmax_xent_dense(dlogits.get(), dtargets.get(), rows, cols, g, l);
        });
    check(
        "xent_dense_probs",
        [&](float* g, float* l) {
          cpu::xent_dense_probs(probs.data(), targets.data(), rows, cols, g, l);
        },
        [&](float* g, float* l) {
          cuda::xent_dense_probs(dprobs.get(), dtargets.get(), rows, cols, g, l);
        });
    const auto count = static_cast<int64_t>(n);
    check(
        "sigmoid_bce",
        [&](float* g, float* l) { cpu::sigmoid_bce(logits.data(), targets.data(), count, g, l); },
        [&](float* g, float* l) { cuda::sigmoid_bce(dlogits.get(), dtargets.get(), count, g, l); });
    check(
        "bce_probs",
        [&](float* g, float* l) { cpu::bce_probs(probs.data(), targets.data(), count, g, l); },
        [&](float* g, float* l) { cuda::bce_probs(dprobs.get(), dtargets.get(), count, g, l); });
    check(
        "mse", [&](float* g, float* l) { cpu::mse(logits.data(), targets.data(), count, g, l); },
        [&](float* g, float* l) { cuda::mse(dlogits.get(), dtargets.get(), count, g, l); });
  }
}

// Dropout's mask and output, bit for bit: the same hash of (key, index) on both.
TEST(CudaKernels, DropoutMatchesTheCpu) {
  DevicePool pool;
  for (const int64_t n : {int64_t{1}, int64_t{1000}, int64_t{300001}}) {
    const auto x = random(static_cast<size_t>(n), 27);
    std::vector<float> mask(x.size()), y(x.size());
    int32_t key[2];
    cpu::dropout_set_key(0xC0FFEE'0000'0099ull, key);
    cpu::dropout_forward(x.data(), mask.data(), y.data(), n, key, 0, 0.6f);
    DeviceVector dx(pool, x), dmask(pool, x), dy(pool, x);
    DeviceVector<int32_t> dkey(pool, std::vector<int32_t>(2, 0));
    cuda::dropout_set_key(0xC0FFEE'0000'0099ull, dkey.get());
    EXPECT_EQ(dkey.host(), std::vector<int32_t>(key, key + 2)) << "the key's halves";
    cuda::dropout_forward(dx.get(), dmask.get(), dy.get(), n, dkey.get(), 0, 0.6f);
    EXPECT_EQ(dmask.host(), mask) << n;
    EXPECT_EQ(dy.host(), y) << n;
  }
}

// Every metric's batch sum against the CPU's: hits exactly, error sums to
// float rounding. Four levels make argmax ties common.
TEST(CudaKernels, MetricSumsMatchTheCpu) {
  DevicePool pool;
  for (const Shape t : {Shape{7, 10}, Shape{1000, 10}, Shape{20000, 3}, Shape{64, 1}}) {
    const int64_t rows = t.rows, cols = t.cols;
    const size_t n = static_cast<size_t>(rows * cols);
    auto pred = random(n, 25, 0.f, 4.f), targets = random(n, 26, 0.f, 4.f);
    for (float& v : pred) v = std::floor(v);
    for (float& v : targets) v = std::floor(v) / 3.0f;
    std::vector<int32_t> labels(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) labels[r] = static_cast<int32_t>((r * 7) % cols);
    DeviceVector dpred(pool, pred), dtargets(pool, targets);
    DeviceVector dlabels(pool, labels);
    const auto count = static_cast<int64_t>(n);
    const auto check = [&](const char* what, float tolerance, const auto& on_cpu,
                           const auto& on_gpu) {
      DeviceVector dsum(pool, std::vector<float>{-7.0f});
      float want = -7.0f;
      on_cpu(&want);
      on_gpu(dsum.get());
      EXPECT_NEAR(dsum.host()[0], want, tolerance * std::fabs(want)) << what << " rows " << rows;
    };
    check(
        "label_hits", 0.0f,
        [&](float* s) { cpu::label_hits(pred.data(), labels.data(), rows, cols, s); },
        [&](float* s) { cuda::label_hits(dpred.get(), dlabels.get(), rows, cols, s); });
    check(
        "argmax_hits", 0.0f,
        [&](float* s) { cpu::argmax_hits(pred.data(), targets.data(), rows, cols, s); },
        [&](float* s) { cuda::argmax_hits(dpred.get(), dtargets.get(), rows, cols, s); });
    for (const float threshold : {0.0f, 0.5f, 2.0f})
      check(
          "threshold_hits", 0.0f,
          [&](float* s) { cpu::threshold_hits(pred.data(), targets.data(), count, threshold, s); },
          [&](float* s) {
            cuda::threshold_hits(dpred.get(), dtargets.get(), count, threshold, s);
          });
    for (const bool squared : {true, false})
      check(
          "error_sum", 1e-6f,
          [&](float* s) { cpu::error_sum(pred.data(), targets.data(), count, squared, s); },
          [&](float* s) { cuda::error_sum(dpred.get(), dtargets.get(), count, squared, s); });
  }
}

// Three steps of every rule and variant, with and without weight decay; the
// slots that feed a square root start positive, and the centered ones with
// rms well above mg^2.
TEST(CudaKernels, OptimizerUpdatesMatchTheCpu) {
  DevicePool pool;
  const int64_t n = 1000;
  const size_t un = static_cast<size_t>(n);
  const auto w0 = random(un, 17), a0 = random(un, 18, 1.f, 2.f), b0 = random(un, 19, -0.1f, 0.1f),
             c0 = random(un, 20, 0.f, 0.01f), d0 = random(un, 21);
  const std::vector<std::vector<float>> grads{random(un, 22), random(un, 23), random(un, 24)};
  // Runs `step` at rate `lr` (the step's values, read from memory on each
  // side) on host copies (CPU) and device copies (GPU) of w and four slots,
  // then compares all five.
  const auto run = [&](const char* what, float lr, const auto& step) {
    std::vector<std::vector<float>> h{w0, a0, b0, c0, d0};
    DeviceVector dw(pool, w0), da(pool, a0), db(pool, b0), dc(pool, c0), dd(pool, d0);
    std::vector<float> rate(kStepValues, 0.f);
    rate[kRate] = lr;
    rate[kLearningRate] = lr;
    rate[kGradFactor] = 1.f;
    DeviceVector drate(pool, rate);
    for (const auto& g : grads) {
      DeviceVector dg(pool, g);
      step(false, rate.data(), h[0].data(), g.data(), h[1].data(), h[2].data(), h[3].data(),
           h[4].data());
      step(true, drate.get(), dw.get(), dg.get(), da.get(), db.get(), dc.get(), dd.get());
    }
    expect_near(dw.host(), h[0], 1e-5f, what);
    expect_near(da.host(), h[1], 1e-5f, what);
    expect_near(db.host(), h[2], 1e-5f, what);
    expect_near(dc.host(), h[3], 1e-5f, what);
    expect_near(dd.host(), h[4], 1e-5f, what);
  };
  for (const float wd : {0.f, 0.01f}) {
    run("sgd", 0.1f,
        [&](bool gpu, const float* lr, float* w, const float* g, float*, float*, float*, float*) {
          gpu ? cuda::sgd(w, g, n, lr, wd) : cpu::sgd(w, g, n, lr, wd);
        });
    for (const bool nesterov : {false, true})
      run("sgd_momentum", 0.1f,
          [&](bool gpu, const float* lr, float* w, const float* g, float* v, float*, float*,
              float*) {
            gpu ? cuda::sgd_momentum(w, g, v, n, lr, 0.9f, nesterov, wd)
                : cpu::sgd_momentum(w, g, v, n, lr, 0.9f, nesterov, wd);
          });
    run("adagrad", 0.1f,
        [&](bool gpu, const float* lr, float* w, const float* g, float* acc, float*, float*,
            float*) {
          gpu ? cuda::adagrad(w, g, acc, n, lr, 1e-7f, wd)
              : cpu::adagrad(w, g, acc, n, lr, 1e-7f, wd);
        });
    for (const bool amsgrad : {false, true})
      run("adam", 0.01f,
          [&](bool gpu, const float* lr, float* w, const float* g, float*, float* m, float* v,
              float* vhat) {
            float* h = amsgrad ? vhat : nullptr;
            gpu ? cuda::adam(w, g, m, v, h, n, lr, 0.9f, 0.999f, 1e-7f, wd)
                : cpu::adam(w, g, m, v, h, n, lr, 0.9f, 0.999f, 1e-7f, wd);
          });
    for (const bool centered : {false, true}) {
      run("rmsprop", 0.01f,
          [&](bool gpu, const float* lr, float* w, const float* g, float* rms, float* mg, float*,
              float*) {
            float* c = centered ? mg : nullptr;
            gpu ? cuda::rmsprop(w, g, rms, c, n, lr, 0.9f, 1e-7f, wd)
                : cpu::rmsprop(w, g, rms, c, n, lr, 0.9f, 1e-7f, wd);
          });
      run("rmsprop_momentum", 0.01f,
          [&](bool gpu, const float* lr, float* w, const float* g, float* rms, float* mg, float*,
              float* mom) {
            float* c = centered ? mg : nullptr;
            gpu ? cuda::rmsprop_momentum(w, g, rms, c, mom, n, lr, 0.9f, 0.5f, 1e-7f, wd)
                : cpu::rmsprop_momentum(w, g, rms, c, mom, n, lr, 0.9f, 0.5f, 1e-7f, wd);
          });
    }
  }
}

// cuDNN convolutions against the CPU im2col path, in the geometries ResNet
// and the seed CNN use, including TensorFlow's asymmetric 'same' padding.
TEST(CudaKernels, ConvolutionsMatchTheCpu) {
  DevicePool pool;
  Dnn dnn;
  struct Case {
    int64_t n, h, w, c, k, co, s;
    bool same;
  };
  for (const Case t : {Case{2, 8, 8, 3, 3, 4, 1, true}, Case{2, 8, 8, 4, 3, 6, 2, true},
                       Case{3, 7, 9, 2, 1, 5, 2, false}, Case{2, 12, 12, 1, 3, 8, 1, false},
                       Case{1, 9, 9, 3, 5, 2, 2, true}}) {
    const auto g = conv_geometry(t.n, t.h, t.w, t.c, t.k, t.k, t.co, t.s, t.s, t.same);
    const auto x = random(static_cast<size_t>(g.n * g.h * g.w * g.c), 21);
    const auto w = random(static_cast<size_t>(g.kh * g.kw * g.c * g.co), 22);
    const auto dy = random(static_cast<size_t>(g.n * g.oh * g.ow * g.co), 23);
    std::vector<float> cpu_ws(static_cast<size_t>(cpu::conv2d_workspace_floats(g, 1)));
    std::vector<float> y_want(dy.size()), dx_want(x.size()), dw_want(w.size()),
        db(static_cast<size_t>(g.co)), zero_bias(static_cast<size_t>(g.co), 0.f);
    cpu::conv2d_forward(g, x.data(), w.data(), zero_bias.data(), y_want.data(), false,
                        cpu_ws.data(), 1);
    cpu::conv2d_backward_data(g, dy.data(), w.data(), dx_want.data(), cpu_ws.data(), 1);
    cpu::conv2d_backward_filter(g, x.data(), dy.data(), nullptr, dw_want.data(), db.data(),
                                cpu_ws.data(), 1);

    Convolution conv(dnn, g);
    void* ws = pool.allocate(std::max<size_t>(conv.workspace_bytes(), 1));
    DeviceVector dx_(pool, x), dw_hwio(pool, w), dw_ohwi(pool, std::vector<float>(w.size())),
        dyv(pool, dy), y(pool, std::vector<float>(dy.size())),
        dxg(pool, std::vector<float>(x.size())), dwg_ohwi(pool, std::vector<float>(w.size())),
        dwg(pool, std::vector<float>(w.size()));
    hwio_to_ohwi(dw_hwio.get(), dw_ohwi.get(), g.kh, g.kw, g.c, g.co);
    conv.forward(dx_.get(), dw_ohwi.get(), y.get(), ws);
    conv.backward_data(dyv.get(), dw_ohwi.get(), dxg.get(), ws);
    conv.backward_filter(dx_.get(), dyv.get(), dwg_ohwi.get(), ws);
    ohwi_to_hwio(dwg_ohwi.get(), dwg.get(), g.kh, g.kw, g.c, g.co);
    expect_near(y.host(), y_want, 1e-4f, "conv forward");
    expect_near(dxg.host(), dx_want, 1e-4f, "conv backward data");
    expect_near(dwg.host(), dw_want, 1e-4f, "conv backward filter");
    pool.release(ws, std::max<size_t>(conv.workspace_bytes(), 1));
  }
}

TEST(CudaDevicePool, WarmAllocationsDoNotReachTheDriver) {
  DevicePool pool;
  for (int step = 0; step < 3; ++step) {
    void* a = pool.allocate(1000);
    void* b = pool.allocate(70000);
    pool.release(a, 1000);
    pool.release(b, 70000);
  }
  EXPECT_EQ(pool.driver_allocations(), 2);
  EXPECT_EQ(DevicePool::size_class(1000), 1024u);
  EXPECT_EQ(DevicePool::size_class(1), 256u);
}

}  // namespace
}  // namespace drun::kernels::cuda

int main(int argc, char** argv) {
  if (drun::kernels::cuda::device_count() == 0) {
    std::printf("skipped: %s; the CUDA kernels were built but cannot run here\n",
                drun::kernels::cuda::no_device_reason().c_str());
    return 77;  // meson's "skipped"
  }
  std::printf("GPU: %s\n", drun::kernels::cuda::device_name(0).c_str());
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
