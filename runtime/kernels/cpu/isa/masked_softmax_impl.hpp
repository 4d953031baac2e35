// Attention's masked softmax (kernels/masked_softmax.hpp) a vector of W
// columns at a time, exp as gelu_impl.hpp's: libm's expf, one score at a
// time, and sums the compiler may not reorder otherwise left these rows at
// scalar speed. Each row's sums run lane-wise and then across the lanes, an
// order of its own per width, so the variants agree to rounding. Included by
// kernels_impl.hpp inside its ISA namespace.

void masked_softmax_forward(float scale, bool causal, int64_t t, const float* x, float* y,
                            int64_t rows, int64_t cols) {
  const ivec lanes = lane_indices();
  const vec lowest = splat(-std::numeric_limits<float>::infinity());
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    const int64_t kept = masked_softmax_kept(causal, t, r, cols);
    vec mv = lowest;
    for (int64_t j = 0; j < kept; j += W) {
      const vec v = load_part(xr, j, cols) * scale;
      mv = lanes < static_cast<int32_t>(kept - j) && v > mv ? v : mv;
    }
    const float m = lanes_max(mv);
    vec sv = splat(0.0f);
    for (int64_t j = 0; j < kept; j += W) {
      const vec e = exp_nonpositive(load_part(xr, j, cols) * scale - m);
      const vec kept_e = lanes < static_cast<int32_t>(kept - j) ? e : splat(0.0f);
      sv += kept_e;
      store_part(yr, j, cols, kept_e);
    }
    const float inv = 1.0f / lanes_sum(sv);
    int64_t j = 0;
    for (; j < kept; j += W) store_part(yr, j, cols, load_part(yr, j, cols) * inv);
    std::fill(yr + std::min(j, cols), yr + cols, 0.0f);
  }
}

void masked_softmax_backward(float scale, const float* y, const float* dy, float* dx, int64_t rows,
                             int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* yr = y + r * cols;
    const float* dyr = dy + r * cols;
    float* dxr = dx + r * cols;
    vec dv = splat(0.0f);
    for (int64_t j = 0; j < cols; j += W) dv += load_part(dyr, j, cols) * load_part(yr, j, cols);
    const float dot = lanes_sum(dv);
    for (int64_t j = 0; j < cols; j += W)
      store_part(dxr, j, cols, scale * load_part(yr, j, cols) * (load_part(dyr, j, cols) - dot));
  }
}
