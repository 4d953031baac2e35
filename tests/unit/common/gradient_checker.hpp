// The one gradient checker every layer test uses (after Caffe's
// GradientChecker): the objective is L = sum(r * y) for a fixed random r, so
// backward(dy = r) must give dL/dx and dL/dparams; each is compared with the
// central difference (L(v + h) - L(v - h)) / 2h. Points where the function has
// a kink inside [v - h, v + h] (ReLU at 0, max-pool ties) are detected by the
// two one-sided differences disagreeing and are skipped; a test fails if more
// than `max_skip_fraction` of the points are skipped.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "base/rng.hpp"
#include "tensor/tensor.hpp"

namespace drun::testing {

struct GradCheckOptions {
  float step = 1e-3f;
  float threshold = 1e-2f;  // on |analytic - numeric| / max(|analytic|, |numeric|, 1)
  double max_skip_fraction = 0.05;
  uint64_t seed = 7;
  // At most this many elements of each probe, evenly strided (0: every
  // element): three forwards an element make large kernels slow, under
  // emulation above all.
  int64_t max_points = 0;
};

// forward(): recomputes the output from the current values of the probed
// tensors and returns it. backward(dy): computes all gradients for dy.
// probes: (name, value tensor, gradient tensor) to check.
struct Probe {
  std::string name;
  Tensor* value;
  const Tensor* grad;  // read after backward; may alias layer-owned storage
};

inline void check_gradients(const std::function<const Tensor&()>& forward,
                            const std::function<void(const Tensor&)>& backward,
                            const std::vector<Probe>& probes, GradCheckOptions opt = {}) {
  Rng rng(opt.seed);
  const Tensor& y0 = forward();
  Tensor r(y0.shape());
  for (float& v : r.span_f32()) v = rng.uniform(-1.0f, 1.0f);
  auto objective = [&]() {
    const Tensor& y = forward();
    double s = 0.0;
    for (int64_t i = 0; i < y.numel(); ++i) s += static_cast<double>(y.f32()[i]) * r.f32()[i];
    return s;
  };
  objective();
  backward(r);
  // Analytic gradients are copied now: the numeric passes overwrite buffers.
  std::vector<Tensor> analytic;
  for (const auto& p : probes) analytic.push_back(p.grad->clone());

  for (size_t pi = 0; pi < probes.size(); ++pi) {
    Tensor& v = *probes[pi].value;
    int64_t skipped = 0, checked = 0;
    double max_err = 0.0;
    const int64_t stride =
        opt.max_points > 0 ? std::max<int64_t>(1, (v.numel() + opt.max_points - 1) / opt.max_points)
                           : 1;
    const int64_t visited = (v.numel() + stride - 1) / stride;
    for (int64_t i = 0; i < v.numel(); i += stride) {
      float& x = v.f32()[i];
      const float saved = x;
      const double f0 = objective();
      x = saved + opt.step;
      const double fp = objective();
      x = saved - opt.step;
      const double fm = objective();
      x = saved;
      const double numeric = (fp - fm) / (2.0 * opt.step);
      const double right = (fp - f0) / opt.step, left = (f0 - fm) / opt.step;
      const double a = analytic[pi].f32()[i];
      const double scale = std::max({std::fabs(a), std::fabs(numeric), 1.0});
      if (std::fabs(right - left) > 10.0 * opt.threshold * scale) {
        ++skipped;  // a kink lies within the step
        continue;
      }
      ++checked;
      const double err = std::fabs(a - numeric) / scale;
      max_err = std::max(max_err, err);
      EXPECT_LE(err, opt.threshold)
          << probes[pi].name << "[" << i << "]: analytic " << a << " numeric " << numeric;
    }
    EXPECT_GT(checked, 0) << probes[pi].name << ": every point was at a kink";
    EXPECT_LE(static_cast<double>(skipped), opt.max_skip_fraction * visited + 1)
        << probes[pi].name << ": too many kinks skipped (" << skipped << " of " << visited << ")";
  }
}

inline Tensor random_tensor(const Shape& s, Rng& rng, float lo = -1.0f, float hi = 1.0f) {
  Tensor t(s);
  for (float& v : t.span_f32()) v = rng.uniform(lo, hi);
  return t;
}

}  // namespace drun::testing
