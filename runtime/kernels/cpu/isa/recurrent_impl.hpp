// The LSTM's fused step (kernels/recurrent.hpp's LstmStepForward and
// LstmStepBackward) over batch rows [b0, b1), W units at a time with
// vec_math_impl.hpp's sigmoid and tanh: the functors' formulas, in the same
// order of operations, with vector transcendentals in place of libm's.
// Included by kernels_impl.hpp inside its ISA namespace, after
// vec_math_impl.hpp.

void lstm_step_forward(const LstmStepForward& f, int64_t b0, int64_t b1) {
  const int64_t u = f.s.units;
  for (int64_t b = b0; b < b1; ++b) {
    const float* x = f.xp + f.s.x_row(b) * 4 * u;
    const float* r = f.hr + b * 4 * u;
    float* a = f.gates + b * 4 * u;
    const float* cp = f.c_prev + b * u;
    float* c = f.c + b * u;
    float* h = f.h + b * u;
    float* seq = f.seq ? f.seq + f.s.y_row(b) * u : nullptr;
    for (int64_t j = 0; j < u; j += W) {
      const int64_t n = std::min<int64_t>(W, u - j);
      const vec i = vsigmoid(load_n(x + j, n) + load_n(r + j, n));
      const vec fg = vsigmoid(load_n(x + u + j, n) + load_n(r + u + j, n));
      const vec g = vtanh(load_n(x + 2 * u + j, n) + load_n(r + 2 * u + j, n));
      const vec o = vsigmoid(load_n(x + 3 * u + j, n) + load_n(r + 3 * u + j, n));
      store_n(a + j, i, n);
      store_n(a + u + j, fg, n);
      store_n(a + 2 * u + j, g, n);
      store_n(a + 3 * u + j, o, n);
      const vec ct = fg * load_n(cp + j, n) + i * g;
      const vec ht = o * vtanh(ct);
      store_n(c + j, ct, n);
      store_n(h + j, ht, n);
      if (seq) store_n(seq + j, ht, n);
    }
  }
}

void lstm_step_backward(const LstmStepBackward& f, int64_t b0, int64_t b1) {
  const int64_t u = f.s.units;
  for (int64_t b = b0; b < b1; ++b) {
    const float* a = f.gates + b * 4 * u;
    const float* dseq = f.dseq ? f.dseq + f.s.y_row(b) * u : nullptr;
    const float* c = f.c + b * u;
    const float* cp = f.c_prev + b * u;
    const float* dh = f.dh + b * u;
    float* dc = f.dc + b * u;
    float* z = f.dz + b * 4 * u;
    for (int64_t j = 0; j < u; j += W) {
      const int64_t n = std::min<int64_t>(W, u - j);
      const vec i = load_n(a + j, n), fg = load_n(a + u + j, n);
      const vec g = load_n(a + 2 * u + j, n), o = load_n(a + 3 * u + j, n);
      const vec dht = load_n(dh + j, n) + (dseq ? load_n(dseq + j, n) : vec{});
      const vec tc = vtanh(load_n(c + j, n));
      const vec dct = load_n(dc + j, n) + dht * o * (1.0f - tc * tc);
      const vec d[4] = {dct * g * i * (1.0f - i), dct * load_n(cp + j, n) * fg * (1.0f - fg),
                        dct * i * (1.0f - g * g), dht * tc * o * (1.0f - o)};
      store_n(dc + j, dct * fg, n);
      for (int q = 0; q < 4; ++q) store_n(z + q * u + j, d[q], n);
    }
  }
}
