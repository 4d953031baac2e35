// The direct convolution for kernels with few taps (conv2d_direct.hpp):
// forward (+ ReLU) and the filter gradient, vectorised over output channels.
// Its tap helpers (gather_taps, tap_offsets) serve the fused convolution and
// max pooling (conv_direct_max_pool_impl.hpp) too. Included by
// kernels_impl.hpp inside its ISA namespace: W, kRegs, vec, load and store
// are that file's.

constexpr int64_t kMaxTaps = 32;  // conv2d_direct.cpp's

// The K input values under one output pixel's kernel window (0 in padding),
// in HWIO tap order.
inline void gather_taps(const ConvGeometry& g, const float* xn, int64_t oy, int64_t ox,
                        float* taps) {
  const int64_t c = g.c, row = g.kw * c;
  const int64_t iy0 = oy * g.sh - g.pad_top, ix0 = ox * g.sw - g.pad_left;
  if (iy0 >= 0 && ix0 >= 0 && iy0 + g.kh <= g.h && ix0 + g.kw <= g.w) {
    for (int64_t ky = 0; ky < g.kh; ++ky) {  // each kernel row: kw*c floats in a row of x
      const float* src = xn + ((iy0 + ky) * g.w + ix0) * c;
      for (int64_t i = 0; i < row; ++i) taps[ky * row + i] = src[i];
    }
    return;
  }
  for (int64_t ky = 0; ky < g.kh; ++ky) {
    const int64_t iy = iy0 + ky;
    for (int64_t kx = 0; kx < g.kw; ++kx) {
      const int64_t ix = ix0 + kx;
      float* t = taps + (ky * g.kw + kx) * c;
      const bool inside = iy >= 0 && iy < g.h && ix >= 0 && ix < g.w;
      const float* xp = xn + (iy * g.w + ix) * c;
      for (int64_t ci = 0; ci < c; ++ci) t[ci] = inside ? xp[ci] : 0.0f;
    }
  }
}

// Where a pixel's kernel window lies inside the image, its K taps in HWIO
// order are at these offsets from the window's first input.
inline void tap_offsets(const ConvGeometry& g, int64_t* at) {
  for (int64_t t = 0; t < g.k(); ++t)
    at[t] = ((t / (g.kw * g.c)) * g.w + (t / g.c) % g.kw) * g.c + t % g.c;
}

// Output channels are taken CB vectors at a time and P pixels at a time: P*CB
// accumulators, one weight vector and one broadcast tap live in registers.
// Several pixels in flight hide the FMA latency (each chain is only K long).
template <int CB>
constexpr int pixels_in_flight() {
  return std::max(1, std::min(4, (kRegs - 2) / CB));
}

template <int CB>
void forward_blocked(const ConvGeometry& g, const float* x, const float* w, const float* b,
                     float* y, bool relu, int64_t n0, int64_t n1) {
  constexpr int P = pixels_in_flight<CB>();
  const int64_t co = g.co, k = g.k(), blocks = co / (CB * W);
  const vec zero = {};
  float taps[P][kMaxTaps];
  for (int64_t n = n0; n < n1; ++n) {
    const float* xn = x + n * g.h * g.w * g.c;
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      for (int64_t ox = 0; ox < g.ow; ox += P) {
        const int pixels = static_cast<int>(std::min<int64_t>(P, g.ow - ox));
        for (int p = 0; p < pixels; ++p) gather_taps(g, xn, oy, ox + p, taps[p]);
        for (int p = pixels; p < P; ++p) std::memset(taps[p], 0, sizeof(taps[p]));
        float* yo = y + ((n * g.oh + oy) * g.ow + ox) * co;
        for (int64_t blk = 0; blk < blocks; ++blk) {
          const int64_t c0 = blk * CB * W;
          vec acc[P][CB];
          for (int v = 0; v < CB; ++v) {
            const vec bias = load(b + c0 + v * W);
            for (int p = 0; p < P; ++p) acc[p][v] = bias;
          }
          for (int64_t t = 0; t < k; ++t) {
            const float* wr = w + t * co + c0;
            for (int v = 0; v < CB; ++v) {
              const vec wv = load(wr + v * W);
              for (int p = 0; p < P; ++p) acc[p][v] += taps[p][t] * wv;
            }
          }
          for (int p = 0; p < pixels; ++p)
            for (int v = 0; v < CB; ++v)
              store(yo + p * co + c0 + v * W,
                    relu ? (acc[p][v] > zero ? acc[p][v] : zero) : acc[p][v]);
        }
      }
    }
  }
}

// Any channel count: one pixel at a time, plain loops.
void forward_scalar(const ConvGeometry& g, const float* x, const float* w, const float* b, float* y,
                    bool relu, int64_t n0, int64_t n1) {
  const int64_t co = g.co, k = g.k();
  float taps[kMaxTaps];
  for (int64_t n = n0; n < n1; ++n) {
    const float* xn = x + n * g.h * g.w * g.c;
    for (int64_t oy = 0; oy < g.oh; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        gather_taps(g, xn, oy, ox, taps);
        float* yo = y + ((n * g.oh + oy) * g.ow + ox) * co;
        for (int64_t j = 0; j < co; ++j) yo[j] = b[j];
        for (int64_t t = 0; t < k; ++t)
          for (int64_t j = 0; j < co; ++j) yo[j] += taps[t] * w[t * co + j];
        if (relu)
          for (int64_t j = 0; j < co; ++j) yo[j] = std::max(0.0f, yo[j]);
      }
  }
}

void conv_direct_forward(const ConvGeometry& g, const float* x, const float* w, const float* b,
                         float* y, bool relu, int64_t n0, int64_t n1) {
  if (g.co % W != 0) return forward_scalar(g, x, w, b, y, relu, n0, n1);
  const int64_t nv = g.co / W;
  if (nv % 4 == 0 && kRegs >= 16) return forward_blocked<4>(g, x, w, b, y, relu, n0, n1);
  if (nv % 2 == 0) return forward_blocked<2>(g, x, w, b, y, relu, n0, n1);
  forward_blocked<1>(g, x, w, b, y, relu, n0, n1);
}

// 3x3 kernels on one channel (K = 9): an image's taps are gathered once, then
// for each block of CB channel vectors one tight loop over its pixels keeps
// the 9 x CB filter sums, CB bias sums and CB gradients in registers.
template <int CB>
void backward_filter_9taps(const ConvGeometry& g, const float* x, const float* dy,
                           const float* relu_y, float* dw, float* db, float* taps, int64_t n0,
                           int64_t n1) {
  constexpr int K = 9;
  const int64_t co = g.co, pixels = g.out_pixels(), blocks = co / (CB * W);
  const vec zero = {};
  for (int64_t n = n0; n < n1; ++n) {
    const float* xn = x + n * g.h * g.w * g.c;
    for (int64_t oy = 0; oy < g.oh; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox) gather_taps(g, xn, oy, ox, taps + (oy * g.ow + ox) * K);
    const float* dyn = dy + n * pixels * co;
    const float* yn = relu_y ? relu_y + n * pixels * co : nullptr;
    for (int64_t blk = 0; blk < blocks; ++blk) {
      const int64_t c0 = blk * CB * W;
      vec acc[K][CB], bacc[CB];
      for (int v = 0; v < CB; ++v) {
        bacc[v] = load(db + c0 + v * W);
        for (int t = 0; t < K; ++t) acc[t][v] = load(dw + t * co + c0 + v * W);
      }
      for (int64_t p = 0; p < pixels; ++p) {
        vec dz[CB];
        for (int v = 0; v < CB; ++v) {
          dz[v] = load(dyn + p * co + c0 + v * W);
          if (yn) dz[v] = load(yn + p * co + c0 + v * W) > zero ? dz[v] : zero;
          bacc[v] += dz[v];
        }
        const float* tp = taps + p * K;
        for (int t = 0; t < K; ++t)
          for (int v = 0; v < CB; ++v) acc[t][v] += tp[t] * dz[v];
      }
      for (int v = 0; v < CB; ++v) {
        store(db + c0 + v * W, bacc[v]);
        for (int t = 0; t < K; ++t) store(dw + t * co + c0 + v * W, acc[t][v]);
      }
    }
  }
}

// Any K: one pixel at a time; the (K x CO) sums stay in L1.
void backward_filter_any(const ConvGeometry& g, const float* x, const float* dy,
                         const float* relu_y, float* __restrict dw, float* __restrict db,
                         int64_t n0, int64_t n1) {
  const int64_t co = g.co, k = g.k(), nv = co % W == 0 ? co / W : 0;
  const vec zero = {};
  float taps[kMaxTaps];
  for (int64_t n = n0; n < n1; ++n) {
    const float* xn = x + n * g.h * g.w * g.c;
    for (int64_t oy = 0; oy < g.oh; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        const int64_t o = ((n * g.oh + oy) * g.ow + ox) * co;
        gather_taps(g, xn, oy, ox, taps);
        for (int64_t v = 0; v < nv; ++v) {
          vec dz = load(dy + o + v * W);
          if (relu_y) dz = load(relu_y + o + v * W) > zero ? dz : zero;
          store(db + v * W, load(db + v * W) + dz);
          for (int64_t t = 0; t < k; ++t) {
            float* wr = dw + t * co + v * W;
            store(wr, load(wr) + taps[t] * dz);
          }
        }
        for (int64_t j = nv * W; j < co; ++j) {
          const float dz = !relu_y || relu_y[o + j] > 0.0f ? dy[o + j] : 0.0f;
          db[j] += dz;
          for (int64_t t = 0; t < k; ++t) dw[t * co + j] += taps[t] * dz;
        }
      }
  }
}

// 11 vectors per channel block: 9 filter sums, a bias sum and a gradient.
constexpr int kBlock9 = std::max(1, (kRegs - 2) / 11);

void conv_direct_backward_filter(const ConvGeometry& g, const float* x, const float* dy,
                                 const float* relu_y, float* dw, float* db, float* taps, int64_t n0,
                                 int64_t n1) {
  if (g.k() == 9 && g.co % (kBlock9 * W) == 0)
    return backward_filter_9taps<kBlock9>(g, x, dy, relu_y, dw, db, taps, n0, n1);
  if (g.k() == 9 && g.co % W == 0)
    return backward_filter_9taps<1>(g, x, dy, relu_y, dw, db, taps, n0, n1);
  backward_filter_any(g, x, dy, relu_y, dw, db, n0, n1);
}
