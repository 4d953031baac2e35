// The cross-backend harness for the CUDA kernels: each against the CPU
// reference on the same random inputs (GEMM in every transpose case, bias,
// ReLU, scaling, the fused softmax cross-entropy, SGD with and without
// (Nesterov) momentum, Adam, cuDNN convolutions forward and backward), and
// the device pool's promise that a warm
// allocation does not reach the driver. Without a GPU the program prints why
// and exits 77, which meson reports as skipped.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "base/rng.hpp"
#include "kernels/cpu/conv2d.hpp"
#include "kernels/cuda/conv.hpp"
#include "kernels/cuda/device.hpp"
#include "kernels/cuda/kernels.hpp"

namespace drun::kernels::cuda {
namespace {

// A device copy of host data that frees itself.
class DeviceVector {
 public:
  DeviceVector(DevicePool& pool, const std::vector<float>& host)
      : pool_(pool), bytes_(host.size() * 4), p_(pool.allocate(bytes_)) {
    copy_to_device(p_, host.data(), bytes_);
  }
  DeviceVector(DevicePool& pool, const std::vector<int32_t>& host)
      : pool_(pool), bytes_(host.size() * 4), p_(pool.allocate(bytes_)) {
    copy_to_device(p_, host.data(), bytes_);
  }
  ~DeviceVector() { pool_.release(p_, bytes_); }
  DeviceVector(const DeviceVector&) = delete;
  DeviceVector& operator=(const DeviceVector&) = delete;
  float* f() { return static_cast<float*>(p_); }
  const int32_t* i() const { return static_cast<const int32_t*>(p_); }
  std::vector<float> host() const {
    std::vector<float> out(bytes_ / 4);
    synchronize();
    copy_to_host(out.data(), p_, bytes_);
    return out;
  }

 private:
  DevicePool& pool_;
  size_t bytes_;
  void* p_;
};

std::vector<float> random(size_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = rng.uniform(-1.f, 1.f);
  return v;
}

void expect_near(const std::vector<float>& got, const std::vector<float>& want, float tol,
                 const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol * std::max(1.f, std::fabs(want[i])))
        << what << "[" << i << "]";
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
      blas.gemm(ta, tb, m, n, k, 0.5f, da.f(), db.f(), 0.25f, dc.f());
      expect_near(dc.host(), want, 1e-4f,
                  ta ? (tb ? "gemm TT" : "gemm TN") : (tb ? "gemm NT" : "gemm NN"));
    }
}

TEST(CudaKernels, BiasReluScale) {
  DevicePool pool;
  const int64_t rows = 5, cols = 300;
  const auto y0 = random(static_cast<size_t>(rows * cols), 4), bias = random(cols, 5);
  DeviceVector y(pool, y0), b(pool, bias);
  bias_add(y.f(), b.f(), rows, cols);
  std::vector<float> want = y0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; ++j) want[r * cols + j] += bias[j];
  expect_near(y.host(), want, 1e-6f, "bias_add");

  std::vector<float> db_want(cols, 0.f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; ++j) db_want[j] += y0[r * cols + j];
  DeviceVector dy(pool, y0), db(pool, std::vector<float>(cols));
  bias_grad(dy.f(), db.f(), rows, cols);
  expect_near(db.host(), db_want, 1e-5f, "bias_grad");

  DeviceVector out(pool, std::vector<float>(y0.size()));
  DeviceVector x(pool, y0);
  relu_forward(x.f(), out.f(), static_cast<int64_t>(y0.size()));
  std::vector<float> relu(y0.size());
  for (size_t i = 0; i < y0.size(); ++i) relu[i] = y0[i] > 0 ? y0[i] : 0;
  expect_near(out.host(), relu, 0, "relu_forward");
  const auto g = random(y0.size(), 6);
  DeviceVector dyv(pool, g), dx(pool, std::vector<float>(y0.size()));
  relu_backward(out.f(), dyv.f(), dx.f(), static_cast<int64_t>(y0.size()));
  std::vector<float> dx_want(y0.size());
  for (size_t i = 0; i < y0.size(); ++i) dx_want[i] = relu[i] > 0 ? g[i] : 0;
  expect_near(dx.host(), dx_want, 0, "relu_backward");
  scale(dx.f(), 0.5f, static_cast<int64_t>(y0.size()));
  for (float& v : dx_want) v *= 0.5f;
  expect_near(dx.host(), dx_want, 0, "scale");
}

TEST(CudaKernels, SoftmaxCrossEntropy) {
  DevicePool pool;
  const int64_t rows = 7, classes = 10;
  const auto z = random(static_cast<size_t>(rows * classes), 7);
  std::vector<int32_t> labels(rows);
  for (int64_t r = 0; r < rows; ++r) labels[r] = static_cast<int32_t>((r * 3) % classes);
  std::vector<float> loss_want(rows), dz_want(z.size());
  for (int64_t r = 0; r < rows; ++r) {
    double m = -1e30, s = 0;
    for (int64_t j = 0; j < classes; ++j) m = std::max(m, static_cast<double>(z[r * classes + j]));
    for (int64_t j = 0; j < classes; ++j) s += std::exp(z[r * classes + j] - m);
    loss_want[r] = static_cast<float>(std::log(s) + m - z[r * classes + labels[r]]);
    for (int64_t j = 0; j < classes; ++j)
      dz_want[r * classes + j] = static_cast<float>(
          (std::exp(z[r * classes + j] - m) / s - (j == labels[r] ? 1 : 0)) / rows);
  }
  DeviceVector dzl(pool, z), dl(pool, labels), loss(pool, std::vector<float>(rows)),
      dz(pool, std::vector<float>(z.size()));
  softmax_cross_entropy(dzl.f(), dl.i(), loss.f(), dz.f(), rows, classes);
  expect_near(loss.host(), loss_want, 1e-5f, "loss");
  expect_near(dz.host(), dz_want, 1e-5f, "dlogits");
}

TEST(CudaKernels, OptimizerUpdates) {
  DevicePool pool;
  const size_t n = 1000;
  const auto w0 = random(n, 8), g = random(n, 9), v0 = random(n, 10), m0 = random(n, 11);
  for (bool nesterov : {false, true}) {
    DeviceVector w(pool, w0), dg(pool, g), v(pool, v0);
    sgd_update(w.f(), dg.f(), v.f(), 0.1f, 0.9f, nesterov, static_cast<int64_t>(n));
    std::vector<float> ww = w0, vv = v0;
    for (size_t i = 0; i < n; ++i) {
      vv[i] = 0.9f * v0[i] - 0.1f * g[i];
      ww[i] += nesterov ? 0.9f * vv[i] - 0.1f * g[i] : vv[i];
    }
    expect_near(w.host(), ww, 1e-6f, "sgd w");
    expect_near(v.host(), vv, 1e-6f, "sgd v");
  }
  std::vector<float> vpos(n);
  for (size_t i = 0; i < n; ++i) vpos[i] = std::fabs(v0[i]);
  DeviceVector w(pool, w0), dg(pool, g), m(pool, m0), v(pool, vpos);
  adam_update(w.f(), dg.f(), m.f(), v.f(), 0.01f, 0.9f, 0.999f, 1e-7f, static_cast<int64_t>(n));
  std::vector<float> ww = w0;
  for (size_t i = 0; i < n; ++i) {
    const float mi = 0.9f * m0[i] + 0.1f * g[i];
    const float vi = 0.999f * vpos[i] + 0.001f * g[i] * g[i];
    ww[i] -= 0.01f * mi / (std::sqrt(vi) + 1e-7f);
  }
  expect_near(w.host(), ww, 1e-5f, "adam w");
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
    const auto g = cpu::conv_geometry(t.n, t.h, t.w, t.c, t.k, t.k, t.co, t.s, t.s, t.same);
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
    hwio_to_ohwi(dw_hwio.f(), dw_ohwi.f(), g.kh, g.kw, g.c, g.co);
    conv.forward(dx_.f(), dw_ohwi.f(), y.f(), ws);
    conv.backward_data(dyv.f(), dw_ohwi.f(), dxg.f(), ws);
    conv.backward_filter(dx_.f(), dyv.f(), dwg_ohwi.f(), ws);
    ohwi_to_hwio(dwg_ohwi.f(), dwg.f(), g.kh, g.kw, g.c, g.co);
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
