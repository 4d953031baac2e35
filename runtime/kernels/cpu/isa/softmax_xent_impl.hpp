// Softmax cross-entropy on logits with integer labels (kernels/loss.hpp's
// softmax_xent_sparse) a vector of W classes at a time, exp as the masked
// softmax's: libm's expf one logit at a time, in a sum the compiler may not
// reorder, left a language model's loss over 2,048 x 96 logits at 0.8 ms, on
// one thread. Each row's sums run lane-wise, then across the lanes.
// Writes each row's loss into row_loss (NaN for a label outside [0, cols), with
// a zero gradient row) for the caller to sum in row order. Included by
// kernels_impl.hpp inside its ISA namespace, after vec_math_impl.hpp.

void softmax_xent_sparse_rows(const float* logits, const int32_t* labels, int64_t rows,
                              int64_t cols, float inv_rows, float* grad, float* row_loss) {
  const ivec lanes = lane_indices();
  const vec lowest = splat(-std::numeric_limits<float>::infinity());
  for (int64_t r = 0; r < rows; ++r) {
    const float* z = logits + r * cols;
    float* g = grad + r * cols;
    const int32_t label = labels[r];
    if (label < 0 || label >= cols) {
      std::fill(g, g + cols, 0.0f);
      row_loss[r] = std::numeric_limits<float>::quiet_NaN();
      continue;
    }
    vec mv = lowest;
    for (int64_t j = 0; j < cols; j += W) {
      const vec v = load_part(z, j, cols);
      mv = lanes < static_cast<int32_t>(cols - j) && v > mv ? v : mv;
    }
    const float m = lanes_max(mv);
    vec sv = splat(0.0f);
    for (int64_t j = 0; j < cols; j += W) {
      const vec e = exp_nonpositive(load_part(z, j, cols) - m);
      const vec kept = lanes < static_cast<int32_t>(cols - j) ? e : splat(0.0f);
      sv += kept;
      store_part(g, j, cols, kept);
    }
    const float sum = lanes_sum(sv);
    const float scale = 1.0f / sum * inv_rows;
    for (int64_t j = 0; j < cols; j += W) store_part(g, j, cols, load_part(g, j, cols) * scale);
    g[label] -= inv_rows;
    row_loss[r] = std::log(sum) + m - z[label];
  }
}
