// The direct convolution and the max pooling after it, fused
// (conv2d_direct.hpp, conv2d_direct_max_pool_*). Included by kernels_impl.hpp
// inside its ISA namespace, after conv_direct_impl.hpp (kMaxTaps, gather_taps,
// tap_offsets): W, kRegs, vec, load and store are kernels_impl.hpp's.

constexpr int64_t kMaxPoolWindow = 64;  // conv2d_direct.cpp's, for the fused max pooling

// Convolution (+ ReLU) and max pooling over windows that tile the
// convolution's output (stride = window, no padding; conv2d_direct.hpp), in
// one pass: the convolution's output is never written, only each window's
// maximum and, as max_pool_forward records it, the output pixel that won.
// Values are compared after the ReLU, so winners agree with the two ops run
// one after the other. P of a window's pixels are computed at a time, CB
// channel vectors each; a running maximum and winner per vector stay in
// registers beside the P * CB sums.
typedef int32_t ivec __attribute__((vector_size(W * sizeof(int32_t))));
typedef int32_t ivec_unaligned __attribute__((vector_size(W * sizeof(int32_t)), aligned(4)));

template <int CB>
constexpr int pooled_pixels_in_flight() {
  return std::max(1, std::min(4, (kRegs - 2 - 2 * CB) / CB));
}

template <int CB>
void max_pool_forward_blocked(const ConvGeometry& g, const PoolGeometry& pg, const float* x,
                              const float* w, const float* b, float* y, int32_t* argmax, bool relu,
                              int64_t n0, int64_t n1) {
  constexpr int P = pooled_pixels_in_flight<CB>();
  const int64_t co = g.co, k = g.k(), blocks = co / (CB * W), window = pg.ph * pg.pw;
  const vec zero = {}, lowest = zero - std::numeric_limits<float>::infinity();
  // Where a pixel's window lies inside the image its taps are read in place,
  // at these offsets from its first input; elsewhere they are gathered.
  int64_t tap_at[kMaxTaps];
  tap_offsets(g, tap_at);
  int64_t window_y[kMaxPoolWindow], window_x[kMaxPoolWindow];
  for (int64_t q = 0; q < window; ++q) {
    window_y[q] = q / pg.pw;
    window_x[q] = q % pg.pw;
  }
  float taps[P][kMaxTaps] = {};
  const float* src[P];
  int32_t pix[P];
  for (int64_t n = n0; n < n1; ++n) {
    const float* xn = x + n * g.h * g.w * g.c;
    for (int64_t py = 0; py < pg.oh; ++py)
      for (int64_t px = 0; px < pg.ow; ++px) {
        const int64_t o = ((n * pg.oh + py) * pg.ow + px) * co;
        for (int64_t blk = 0; blk < blocks; ++blk) {
          const int64_t c0 = blk * CB * W;
          vec top[CB];
          ivec won[CB];
          for (int v = 0; v < CB; ++v) {
            top[v] = lowest;
            won[v] = ivec{} + 0;
          }
          for (int64_t q0 = 0; q0 < window; q0 += P) {
            const int count = static_cast<int>(std::min<int64_t>(P, window - q0));
            bool inside = true;
            for (int p = 0; p < count; ++p) {
              const int64_t oy = py * pg.sh + window_y[q0 + p];
              const int64_t ox = px * pg.sw + window_x[q0 + p];
              pix[p] = static_cast<int32_t>(oy * g.ow + ox);
              const int64_t iy0 = oy * g.sh - g.pad_top, ix0 = ox * g.sw - g.pad_left;
              src[p] = xn + (iy0 * g.w + ix0) * g.c;
              inside = inside && iy0 >= 0 && ix0 >= 0 && iy0 + g.kh <= g.h && ix0 + g.kw <= g.w;
            }
            if (!inside)
              for (int p = 0; p < count; ++p)
                gather_taps(g, xn, pix[p] / g.ow, pix[p] % g.ow, taps[p]);
            for (int p = count; p < P; ++p) src[p] = src[0];  // sums that are not kept
            vec acc[P][CB];
            for (int v = 0; v < CB; ++v) {
              const vec bias = load(b + c0 + v * W);
              for (int p = 0; p < P; ++p) acc[p][v] = bias;
            }
            const auto sums = [&](auto tap) {
              for (int64_t t = 0; t < k; ++t) {
                const float* wr = w + t * co + c0;
                for (int v = 0; v < CB; ++v) {
                  const vec wv = load(wr + v * W);
                  for (int p = 0; p < P; ++p) acc[p][v] += tap(p, t) * wv;
                }
              }
            };
            if (inside)
              sums([&](int p, int64_t t) { return src[p][tap_at[t]]; });
            else
              sums([&](int p, int64_t t) { return taps[p][t]; });
            for (int p = 0; p < count; ++p)  // in window order: the first maximum wins
              for (int v = 0; v < CB; ++v) {
                const vec z = relu ? (acc[p][v] > zero ? acc[p][v] : zero) : acc[p][v];
                const ivec more = z > top[v];
                top[v] = more ? z : top[v];
                won[v] = more ? ivec{} + pix[p] : won[v];
              }
          }
          for (int v = 0; v < CB; ++v) {
            store(y + o + c0 + v * W, top[v]);
            *reinterpret_cast<ivec_unaligned*>(argmax + o + c0 + v * W) = won[v];
          }
        }
      }
  }
}

// Any channel count: one window pixel at a time, plain loops.
void max_pool_forward_scalar(const ConvGeometry& g, const PoolGeometry& pg, const float* x,
                             const float* w, const float* b, float* y, int32_t* argmax, bool relu,
                             int64_t n0, int64_t n1) {
  const int64_t co = g.co, k = g.k();
  float taps[kMaxTaps], z[256];  // conv2d_direct_suits: co <= 256
  for (int64_t n = n0; n < n1; ++n) {
    const float* xn = x + n * g.h * g.w * g.c;
    for (int64_t py = 0; py < pg.oh; ++py)
      for (int64_t px = 0; px < pg.ow; ++px) {
        const int64_t o = ((n * pg.oh + py) * pg.ow + px) * co;
        for (int64_t j = 0; j < co; ++j) {
          y[o + j] = -std::numeric_limits<float>::infinity();
          argmax[o + j] = 0;
        }
        for (int64_t ky = 0; ky < pg.ph; ++ky)
          for (int64_t kx = 0; kx < pg.pw; ++kx) {
            const int64_t oy = py * pg.sh + ky, ox = px * pg.sw + kx;
            gather_taps(g, xn, oy, ox, taps);
            for (int64_t j = 0; j < co; ++j) z[j] = b[j];
            for (int64_t t = 0; t < k; ++t)
              for (int64_t j = 0; j < co; ++j) z[j] += taps[t] * w[t * co + j];
            const auto pixel = static_cast<int32_t>(oy * g.ow + ox);
            for (int64_t j = 0; j < co; ++j) {
              const float v = relu ? std::max(0.0f, z[j]) : z[j];
              if (v > y[o + j]) {
                y[o + j] = v;
                argmax[o + j] = pixel;
              }
            }
          }
      }
  }
}

void conv_direct_max_pool_forward(const ConvGeometry& g, const PoolGeometry& pg, const float* x,
                                  const float* w, const float* b, float* y, int32_t* argmax,
                                  bool relu, int64_t n0, int64_t n1) {
  if (g.co % W != 0) return max_pool_forward_scalar(g, pg, x, w, b, y, argmax, relu, n0, n1);
  const int64_t nv = g.co / W;
  if (nv % 4 == 0 && kRegs >= 32)
    return max_pool_forward_blocked<4>(g, pg, x, w, b, y, argmax, relu, n0, n1);
  if (nv % 2 == 0) return max_pool_forward_blocked<2>(g, pg, x, w, b, y, argmax, relu, n0, n1);
  max_pool_forward_blocked<1>(g, pg, x, w, b, y, argmax, relu, n0, n1);
}

// The filter gradient behind conv_direct_max_pool_forward: each window's
// gradient (masked by its pooled output > 0 where relu_y is given) reaches
// its winner only, so the sums visit each window pixel with the gradient or
// zero, selected by the winner's index, and the convolution's output
// gradient is never written (nor the max pooling's backward pass made).
// 13 vectors per channel block: 9 filter sums, a bias sum, the window's
// gradient, its winners and one pixel's share.
constexpr int kBlock9Pool = std::max(1, (kRegs - 2) / 13);

template <int CB>
void max_pool_backward_filter_9taps(const ConvGeometry& g, const PoolGeometry& pg, const float* x,
                                    const float* dy, const int32_t* argmax, const float* relu_y,
                                    float* dw, float* db, float* taps, int64_t n0, int64_t n1) {
  constexpr int K = 9;
  const int64_t co = g.co, blocks = co / (CB * W), pooled = pg.oh * pg.ow;
  const vec zero = {};
  // Without padding (Keras' 'valid') every pixel's taps are read in place, at
  // these offsets from its first input; else the image's are gathered first.
  const bool in_place = g.pad_top == 0 && g.pad_left == 0 && (g.oh - 1) * g.sh + g.kh <= g.h &&
                        (g.ow - 1) * g.sw + g.kw <= g.w;
  int64_t tap_at[kMaxTaps];
  tap_offsets(g, tap_at);
  for (int64_t n = n0; n < n1; ++n) {
    const float* xn = x + n * g.h * g.w * g.c;
    if (!in_place)
      for (int64_t oy = 0; oy < pg.oh * pg.ph; ++oy)  // the pixels some window covers
        for (int64_t ox = 0; ox < pg.ow * pg.pw; ++ox)
          gather_taps(g, xn, oy, ox, taps + (oy * g.ow + ox) * K);
    const int64_t base = n * pooled * co;
    for (int64_t blk = 0; blk < blocks; ++blk) {
      const int64_t c0 = blk * CB * W;
      vec acc[K][CB], bacc[CB];
      for (int v = 0; v < CB; ++v) {
        bacc[v] = load(db + c0 + v * W);
        for (int t = 0; t < K; ++t) acc[t][v] = load(dw + t * co + c0 + v * W);
      }
      for (int64_t py = 0; py < pg.oh; ++py)
        for (int64_t px = 0; px < pg.ow; ++px) {
          const int64_t o = base + (py * pg.ow + px) * co + c0;
          vec dz[CB];
          ivec won[CB];
          for (int v = 0; v < CB; ++v) {
            dz[v] = load(dy + o + v * W);
            if (relu_y) dz[v] = load(relu_y + o + v * W) > zero ? dz[v] : zero;
            bacc[v] += dz[v];
            won[v] = *reinterpret_cast<const ivec_unaligned*>(argmax + o + v * W);
          }
          for (int64_t ky = 0; ky < pg.ph; ++ky)
            for (int64_t kx = 0; kx < pg.pw; ++kx) {
              const int64_t oy = py * pg.sh + ky, ox = px * pg.sw + kx, pixel = oy * g.ow + ox;
              vec share[CB];
              for (int v = 0; v < CB; ++v)
                share[v] = won[v] == static_cast<int32_t>(pixel) ? dz[v] : zero;
              if (in_place) {
                const float* tp = xn + (oy * g.sh * g.w + ox * g.sw) * g.c;
                for (int t = 0; t < K; ++t)
                  for (int v = 0; v < CB; ++v) acc[t][v] += tp[tap_at[t]] * share[v];
              } else {
                const float* tp = taps + pixel * K;
                for (int t = 0; t < K; ++t)
                  for (int v = 0; v < CB; ++v) acc[t][v] += tp[t] * share[v];
              }
            }
        }
      for (int v = 0; v < CB; ++v) {
        store(db + c0 + v * W, bacc[v]);
        for (int t = 0; t < K; ++t) store(dw + t * co + c0 + v * W, acc[t][v]);
      }
    }
  }
}

// Any K and channel count: each window's gradient added at its winners'
// taps, one channel at a time; the (K x CO) sums stay in L1.
void max_pool_backward_filter_any(const ConvGeometry& g, const PoolGeometry& pg, const float* x,
                                  const float* dy, const int32_t* argmax, const float* relu_y,
                                  float* __restrict dw, float* __restrict db, int64_t n0,
                                  int64_t n1) {
  const int64_t co = g.co, k = g.k();
  float taps[kMaxTaps];
  for (int64_t n = n0; n < n1; ++n) {
    const float* xn = x + n * g.h * g.w * g.c;
    for (int64_t po = 0; po < pg.oh * pg.ow; ++po) {
      const int64_t o = (n * pg.oh * pg.ow + po) * co;
      for (int64_t j = 0; j < co; ++j) {
        const float dz = !relu_y || relu_y[o + j] > 0.0f ? dy[o + j] : 0.0f;
        db[j] += dz;
        gather_taps(g, xn, argmax[o + j] / g.ow, argmax[o + j] % g.ow, taps);
        for (int64_t t = 0; t < k; ++t) dw[t * co + j] += taps[t] * dz;
      }
    }
  }
}

void conv_direct_max_pool_backward_filter(const ConvGeometry& g, const PoolGeometry& pg,
                                          const float* x, const float* dy, const int32_t* argmax,
                                          const float* relu_y, float* dw, float* db, float* taps,
                                          int64_t n0, int64_t n1) {
  if (g.k() == 9 && g.co % (kBlock9Pool * W) == 0)
    return max_pool_backward_filter_9taps<kBlock9Pool>(g, pg, x, dy, argmax, relu_y, dw, db, taps,
                                                       n0, n1);
  if (g.k() == 9 && g.co % W == 0)
    return max_pool_backward_filter_9taps<1>(g, pg, x, dy, argmax, relu_y, dw, db, taps, n0, n1);
  max_pool_backward_filter_any(g, pg, x, dy, argmax, relu_y, dw, db, n0, n1);
}
