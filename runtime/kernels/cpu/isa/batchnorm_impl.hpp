// Batch normalisation's loops over a range of rows (kernels/cpu/batchnorm.cpp
// splits the rows into blocks, runs these per block and combines the blocks'
// sums). They are memory-bound streams over the channel axis, and compiled
// here so that they stream with this file's vector width rather than the
// distribution baseline's (SSE2: 4 floats). Each channel's sums run over the
// rows in order, as in every variant, so the variants differ only where the
// compiler contracts differently. Included by kernels_impl.hpp inside its ISA
// namespace.
//
// Every array is reached through a __restrict pointer copied into a local:
// with this many, GCC otherwise gives up proving they do not overlap and
// does not vectorise.

// s1[j], s2[j] = the sums of d = x - x[row 0] and of d^2 over rows [r0, r1).
void bn_shifted_sums(const float* x, int64_t c, int64_t r0, int64_t r1, float* s1_out,
                     float* s2_out) {
  float* __restrict s1 = s1_out;
  float* __restrict s2 = s2_out;
  const float* __restrict sh = x;
  for (int64_t j = 0; j < c; ++j) s1[j] = s2[j] = 0.0f;
  for (int64_t r = r0; r < r1; ++r) {
    const float* __restrict xr = x + r * c;
#pragma omp simd
    for (int64_t j = 0; j < c; ++j) {
      const float d = xr[j] - sh[j];
      s1[j] += d;
      s2[j] += d * d;
    }
  }
}

// y = (x - mean) inv_std gamma + beta, then max(0, y) where relu.
void bn_normalize(const float* x, int64_t c, const float* mean, const float* inv_std,
                  const float* gamma, const float* beta, bool relu, int64_t r0, int64_t r1,
                  float* y) {
  const float* __restrict m = mean;
  const float* __restrict is = inv_std;
  const float* __restrict ga = gamma;
  const float* __restrict bt = beta;
  const float floor = relu ? 0.0f : -std::numeric_limits<float>::infinity();
  for (int64_t r = r0; r < r1; ++r) {
    const float* __restrict xr = x + r * c;
    float* __restrict yr = y + r * c;
#pragma omp simd
    for (int64_t j = 0; j < c; ++j) yr[j] = std::max(floor, (xr[j] - m[j]) * is[j] * ga[j] + bt[j]);
  }
}

// The gradient at the batch norm's own output is dy, or, with a fused ReLU,
// dy where (x - mean) inv_std gamma + relu_beta > 0 and else 0 (the forward's
// expression, so the mask is the forward's without reading its output). The
// mask is a select on values already in registers: dy is read
// unconditionally, so that the loop stays branch-free and vectorised. Written
// once for both cases and compiled once each.
template <bool kMasked>
void bn_grad_sums_as(const float* x, const float* dy, int64_t c, const float* mean,
                     const float* inv_std, const float* gamma, const float* relu_beta, int64_t r0,
                     int64_t r1, float* sb_out, float* sg_out) {
  const float* __restrict m = mean;
  const float* __restrict is = inv_std;
  const float* __restrict ga = gamma;
  const float* __restrict bt = kMasked ? relu_beta : gamma;  // unread when not masked
  float* __restrict sb = sb_out;
  float* __restrict sg = sg_out;
  for (int64_t j = 0; j < c; ++j) sb[j] = sg[j] = 0.0f;
  for (int64_t r = r0; r < r1; ++r) {
    const float* __restrict xr = x + r * c;
    const float* __restrict dyr = dy + r * c;
#pragma omp simd
    for (int64_t j = 0; j < c; ++j) {
      const float xc = xr[j] - m[j];
      float d = dyr[j];
      if constexpr (kMasked) d = xc * is[j] * ga[j] + bt[j] > 0.0f ? d : 0.0f;
      sb[j] += d;
      sg[j] += d * xc * is[j];  // grouped as the CUDA kernels
    }
  }
}

// sb[j] = the sum of the (masked) gradient, sg[j] = its sum times x-hat.
void bn_grad_sums(const float* x, const float* dy, int64_t c, const float* mean,
                  const float* inv_std, const float* gamma, const float* relu_beta, int64_t r0,
                  int64_t r1, float* sb, float* sg) {
  if (relu_beta)
    bn_grad_sums_as<true>(x, dy, c, mean, inv_std, gamma, relu_beta, r0, r1, sb, sg);
  else
    bn_grad_sums_as<false>(x, dy, c, mean, inv_std, gamma, relu_beta, r0, r1, sb, sg);
}

template <bool kMasked>
void bn_grad_input_as(const float* x, const float* dy, int64_t c, const float* mean,
                      const float* inv_std, const float* gamma, const float* relu_beta,
                      const float* dbeta, const float* dgamma, float inv_rows, int64_t r0,
                      int64_t r1, float* dx) {
  const float* __restrict m = mean;
  const float* __restrict is = inv_std;
  const float* __restrict ga = gamma;
  const float* __restrict bt = kMasked ? relu_beta : gamma;
  const float* __restrict db = dbeta;
  const float* __restrict dg = dgamma;
  for (int64_t r = r0; r < r1; ++r) {
    const float* __restrict xr = x + r * c;
    const float* __restrict dyr = dy + r * c;
    float* __restrict dxr = dx + r * c;
#pragma omp simd
    for (int64_t j = 0; j < c; ++j) {
      const float xhat = (xr[j] - m[j]) * is[j];
      float d = dyr[j];
      if constexpr (kMasked) d = xhat * ga[j] + bt[j] > 0.0f ? d : 0.0f;
      dxr[j] = ga[j] * is[j] * (d - (db[j] + xhat * dg[j]) * inv_rows);
    }
  }
}

// dx = gamma inv_std (g - (dbeta + x-hat dgamma) inv_rows), g the (masked)
// gradient; inv_rows is 0 where the statistics are constants.
void bn_grad_input(const float* x, const float* dy, int64_t c, const float* mean,
                   const float* inv_std, const float* gamma, const float* relu_beta,
                   const float* dbeta, const float* dgamma, float inv_rows, int64_t r0, int64_t r1,
                   float* dx) {
  if (relu_beta)
    bn_grad_input_as<true>(x, dy, c, mean, inv_std, gamma, relu_beta, dbeta, dgamma, inv_rows, r0,
                           r1, dx);
  else
    bn_grad_input_as<false>(x, dy, c, mean, inv_std, gamma, relu_beta, dbeta, dgamma, inv_rows, r0,
                            r1, dx);
}
