// e^x, the logistic sigmoid and tanh on whole vectors, for the recurrent
// cells' gates (recurrent_impl.hpp): libm's expf and tanhf are calls, one
// value each, and were a fifth of an LSTM's training step. Cephes' single-
// precision algorithms (S. Moshier), branch-free so that every lane takes the
// same path: within 3 ulp of the exact values over the range tests sweep
// (cpu_variants_test.cpp). NaN stays NaN. Included by kernels_impl.hpp inside
// its ISA namespace.

// e^x: x = n ln2 + r, |r| <= ln2 / 2, e^r by a degree-7 polynomial, 2^n
// by the exponent bits. x is clamped to where 2^n is a normal float, so tiny
// results are the smallest normal's neighbourhood rather than denormals
// (below 1.2e-38, nothing here tells them apart).
inline vec vexp(vec x) {
  const vec lo = splat(-87.3f), hi = splat(88.3f);
  x = x < lo ? lo : x;
  x = x > hi ? hi : x;
  // Adding 1.5 * 2^23 rounds to an integer and leaves it in the low bits.
  const vec magic = splat(12582912.0f);
  const vec t = x * 1.44269504088896341f + magic;
  const vec n = t - magic;
  const vec r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
  vec p = splat(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const vec y = p * (r * r) + r + 1.0f;
  const ivec two_n = ((ivec)t - 0x4B400000 + 127) << 23;
  return y * (vec)two_n;
}

// e^a for a <= 0, 0 below e^-87 (the smallest normal float): GELU's and
// the masked softmax's exponentials, whose arguments are never positive.
inline vec exp_nonpositive(vec a) {
  const vec e = vexp(a);
  return a < splat(-87.0f) ? splat(0.0f) : e;
}

inline vec vsigmoid(vec x) {
  return 1.0f / (1.0f + vexp(-x));
}

// Near zero an odd polynomial (1 - 2 / (e^2|x| + 1) would cancel there),
// elsewhere that expression with x's sign.
inline vec vtanh(vec x) {
  const ivec sign = (ivec)x & (int32_t)0x80000000;
  const vec ax = (vec)((ivec)x & 0x7fffffff);
  const vec z = x * x;
  vec p = splat(-5.70498872745e-3f);
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const vec small = p * z * x + x;
  const vec large = (vec)((ivec)(1.0f - 2.0f / (vexp(ax + ax) + 1.0f)) | sign);
  return ax < splat(0.625f) ? small : large;
}

// The first `count` (<= W) floats at p, the other lanes zero; and back.
inline vec load_n(const float* p, int64_t count) {
  if (count == W) return load(p);
  vec v{};
  std::memcpy(&v, p, static_cast<size_t>(count) * sizeof(float));
  return v;
}
inline void store_n(float* p, vec v, int64_t count) {
  if (count == W)
    store(p, v);
  else
    std::memcpy(p, &v, static_cast<size_t>(count) * sizeof(float));
}
