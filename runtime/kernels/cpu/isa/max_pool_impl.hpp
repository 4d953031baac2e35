// Max pooling (pool.hpp): forward, recording each window's winner, and
// backward to the winners. The channel loops are branch-free so that they
// vectorise with the including file's instruction set. Included by
// kernels_impl.hpp inside its ISA namespace.

void max_pool_forward(const PoolGeometry& g, const float* x, float* y, int32_t* argmax, int64_t n0,
                      int64_t n1) {
  const int64_t c = g.c;
  for (int64_t n = n0; n < n1; ++n) {
    const float* xn = x + n * g.h * g.w * c;
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        const int64_t o = ((n * g.oh + oy) * g.ow + ox) * c;
        float* yo = y + o;
        int32_t* ao = argmax + o;
        for (int64_t ci = 0; ci < c; ++ci) {
          yo[ci] = -std::numeric_limits<float>::infinity();
          ao[ci] = 0;
        }
        const WindowSpan ys = window_rows(g, oy), xs = window_cols(g, ox);
        for (int64_t iy = ys.begin; iy < ys.end; ++iy)
          for (int64_t ix = xs.begin; ix < xs.end; ++ix) {
            const float* xp = xn + (iy * g.w + ix) * c;
            const int32_t pix = static_cast<int32_t>(iy * g.w + ix);
            for (int64_t ci = 0; ci < c; ++ci) {
              const bool more = xp[ci] > yo[ci];
              yo[ci] = more ? xp[ci] : yo[ci];
              ao[ci] = more ? pix : ao[ci];
            }
          }
      }
    }
  }
}

void max_pool_backward(const PoolGeometry& g, const float* dy, const int32_t* argmax, float* dx,
                       int64_t n0, int64_t n1) {
  const int64_t c = g.c;
  // Windows that tile the input (stride = pool, no padding) cover each input
  // pixel at most once: write every pixel directly instead of zero + scatter.
  const bool tiles = g.sh == g.ph && g.sw == g.pw && g.pad_top == 0 && g.pad_left == 0;
  for (int64_t n = n0; n < n1; ++n) {
    float* dxn = dx + n * g.h * g.w * c;
    const int64_t base = n * g.oh * g.ow * c;
    if (!tiles) {
      std::memset(dxn, 0, sizeof(float) * g.h * g.w * c);
      for (int64_t o = 0; o < g.oh * g.ow; ++o) {
        const float* d = dy + base + o * c;
        const int32_t* a = argmax + base + o * c;
        for (int64_t ci = 0; ci < c; ++ci) dxn[a[ci] * c + ci] += d[ci];
      }
      continue;
    }
    for (int64_t iy = 0; iy < g.h; ++iy) {
      const int64_t oy = iy / g.ph;
      for (int64_t ix = 0; ix < g.w; ++ix) {
        const int64_t ox = ix / g.pw;
        float* dp = dxn + (iy * g.w + ix) * c;
        if (oy >= g.oh || ox >= g.ow) {  // rows or columns no window reaches
          for (int64_t ci = 0; ci < c; ++ci) dp[ci] = 0.0f;
          continue;
        }
        const int64_t o = base + (oy * g.ow + ox) * c;
        const int32_t pix = static_cast<int32_t>(iy * g.w + ix);
        for (int64_t ci = 0; ci < c; ++ci) dp[ci] = argmax[o + ci] == pix ? dy[o + ci] : 0.0f;
      }
    }
  }
}
