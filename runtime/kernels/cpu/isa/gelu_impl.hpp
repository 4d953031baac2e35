// The exact GELU, x Phi(x), and its gradient over whole vectors: the scalar
// functor (kernels/activation_list.hpp) calls libm's erfcf and expf once per
// value, which cost a transformer's MLP more than its GEMMs. Here erfc is
// Numerical Recipes' erfcc (Chebyshev fit: t exp(-z^2 + P(t)), t = 1/(1 + z/2),
// fractional error under 1.2e-7 for every z >= 0, so the tail keeps its
// relative accuracy) and exp is Cephes' expf (a degree-6 polynomial after
// reduction by ln 2), both branch-free so that each runs W values at once
// (exp_nonpositive: kernels_impl.hpp). Included by kernels_impl.hpp inside
// its ISA namespace.

// Phi(x) = erfc(-x / sqrt 2) / 2, and exp(-x^2 / 2) for the gradient.
inline vec gelu_phi(vec x, vec* gauss) {
  const vec z = x * 0.70710678118654752440f;
  const vec a = z < 0.0f ? -z : z;
  const vec t = 1.0f / (1.0f + 0.5f * a);
  vec p = splat(0.17087277f);
  p = p * t - 0.82215223f;
  p = p * t + 1.48851587f;
  p = p * t - 1.13520398f;
  p = p * t + 0.27886807f;
  p = p * t - 0.18628806f;
  p = p * t + 0.09678418f;
  p = p * t + 0.37409196f;
  p = p * t + 1.00002368f;
  p = p * t - 1.26551223f;
  const vec a2 = a * a;
  const vec tail = 0.5f * t * exp_nonpositive(p - a2);  // Phi(-|x|)
  if (gauss) *gauss = exp_nonpositive(-a2);
  return z < 0.0f ? tail : 1.0f - tail;
}

// y = x Phi(x); y may be x.
void gelu_forward(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    const vec v = load(x + i);
    store(y + i, v * gelu_phi(v, nullptr));
  }
  if (i == n) return;
  float tail[W] = {};
  std::copy(x + i, x + n, tail);
  const vec v = load(tail);
  store(tail, v * gelu_phi(v, nullptr));
  std::copy(tail, tail + (n - i), y + i);
}

inline vec gelu_grad(vec x, vec dy) {
  vec gauss;
  const vec phi = gelu_phi(x, &gauss);
  return dy * (phi + x * 0.39894228040143267794f * gauss);
}

// dx = dy (Phi(x) + x phi(x)); dx may be dy.
void gelu_backward(const float* x, const float* dy, float* dx, int64_t n) {
  int64_t i = 0;
  for (; i + W <= n; i += W) store(dx + i, gelu_grad(load(x + i), load(dy + i)));
  if (i == n) return;
  float xt[W] = {}, dt[W] = {};
  std::copy(x + i, x + n, xt);
  std::copy(dy + i, dy + n, dt);
  store(dt, gelu_grad(load(xt), load(dt)));
  std::copy(dt, dt + (n - i), dx + i);
}
