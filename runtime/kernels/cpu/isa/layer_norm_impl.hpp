// Layer normalisation's rows (kernels/layer_norm.hpp) a vector of W values at
// a time. A row's mean and variance are sums the compiler may not reorder,
// so at the build's target they ran one value at a time; here they run
// lane-wise and then across the lanes (kernels_impl.hpp's helpers),
// an order of its own per width. Each row's statistics are two passes (the
// mean, then the squared deviations from it: no cancellation when the mean
// is large). Included by kernels_impl.hpp inside its ISA namespace.

inline vec part_or(const float* p, int64_t j, int64_t c, float none) {
  return p ? load_part(p, j, c) : splat(none);
}

void layer_norm_forward(const float* x, int64_t rows, int64_t c, const float* gamma,
                        const float* beta, float eps, float* mean, float* inv_std, float* y) {
  const ivec lanes = lane_indices();
  const float inv_c = 1.0f / static_cast<float>(c);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * c;
    float* yr = y + r * c;
    vec sum = splat(0.0f);
    for (int64_t j = 0; j < c; j += W) sum += load_part(xr, j, c);
    const float m = lanes_sum(sum) * inv_c;
    vec sq = splat(0.0f);
    for (int64_t j = 0; j < c; j += W) {
      const vec d = load_part(xr, j, c) - m;
      sq += lanes < static_cast<int32_t>(c - j) ? d * d : splat(0.0f);
    }
    const float s = 1.0f / std::sqrt(lanes_sum(sq) * inv_c + eps);
    mean[r] = m;
    inv_std[r] = s;
    for (int64_t j = 0; j < c; j += W)
      store_part(
          yr, j, c,
          (load_part(xr, j, c) - m) * s * part_or(gamma, j, c, 1.0f) + part_or(beta, j, c, 0.0f));
  }
}

// dx = inv_std (g - mean(g) - xhat mean(g xhat)), g = dy gamma.
void layer_norm_backward_input(const float* x, const float* dy, int64_t rows, int64_t c,
                               const float* gamma, const float* mean, const float* inv_std,
                               float* dx) {
  const float inv_c = 1.0f / static_cast<float>(c);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * c;
    const float* dyr = dy + r * c;
    float* dxr = dx + r * c;
    const float m = mean[r], s = inv_std[r];
    vec sum_g = splat(0.0f), sum_gx = splat(0.0f);
    for (int64_t j = 0; j < c; j += W) {
      const vec g = load_part(dyr, j, c) * part_or(gamma, j, c, 1.0f);
      sum_g += g;
      sum_gx += g * ((load_part(xr, j, c) - m) * s);
    }
    const float mg = lanes_sum(sum_g) * inv_c, mgx = lanes_sum(sum_gx) * inv_c;
    for (int64_t j = 0; j < c; j += W) {
      const vec g = load_part(dyr, j, c) * part_or(gamma, j, c, 1.0f);
      store_part(dxr, j, c, s * (g - mg - (load_part(xr, j, c) - m) * s * mgx));
    }
  }
}

// Columns [j0, j1) (j0 a multiple of W, or j1 = c), rows in order, columns
// across the lanes: each column's sum keeps the scalar order, so a split of
// the columns over threads changes nothing.
void layer_norm_param_grads(const float* x, const float* dy, int64_t rows, int64_t c,
                            const float* mean, const float* inv_std, int64_t j0, int64_t j1,
                            float* dgamma, float* dbeta) {
  for (int64_t j = j0; j < j1; j += W) {
    vec sg = splat(0.0f), sb = splat(0.0f);
    for (int64_t r = 0; r < rows; ++r) {
      const vec d = load_part(dy + r * c, j, j1);
      sg += d * ((load_part(x + r * c, j, j1) - mean[r]) * inv_std[r]);
      sb += d;
    }
    if (dgamma) store_part(dgamma, j, j1, sg);
    if (dbeta) store_part(dbeta, j, j1, sb);
  }
}

// s = the sums over rows of x's columns [j0, j1) (j0 a multiple of W, or
// j1 = cols), each over the rows in order: a split of the columns over
// threads changes nothing. Bias gradients, as layer normalisation's dbeta.
// The sums are kept in s, a block of columns at a time that stays in L1,
// while x is read along its rows: down a column, every load was a new line
// (an LSTM's 2,048 x 1,024 gradient: 2.4 -> 1.6 % of its step, at memory speed).
void column_sums(const float* x, int64_t rows, int64_t cols, int64_t j0, int64_t j1, float* s) {
  constexpr int64_t kBlock = 2048;
  for (int64_t b0 = j0; b0 < j1; b0 += kBlock) {
    const int64_t b1 = std::min(j1, b0 + kBlock);
    for (int64_t j = b0; j < b1; j += W) store_part(s, j, b1, splat(0.0f));
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = x + r * cols;
      for (int64_t j = b0; j < b1; j += W)
        store_part(s, j, b1, load_part(s, j, b1) + load_part(xr, j, b1));
    }
  }
}
