// Winograd F(2x2, 3x3) convolution of one image (conv2d_winograd.hpp says
// what is computed). A block of nt tiles at a time: the input transform
// writes V (16, nt, C), the 16 GEMMs M = V U write M (16, nt, CO), the
// output transform reads M; for the filter gradient the output gradient's
// transform writes D (16, nt, CO) and S (16, C, CO) += V^T D. Vectors run over
// channels, so C and CO are multiples of W. The GEMMs are register-blocked as
// the implicit kernels (conv_implicit_impl.hpp, included before this file):
// the same tile sizes, now over tiles rather than pixels. Included by
// kernels_impl.hpp inside its ISA namespace.

// B^T d B of a 4x4 window whose pixel (r, s) lies at p + r * row + s * col,
// stored at v + e * pitch for e = 0..15. Column by column, so that only the
// 16 intermediate vectors and one column's four stay in registers.
[[gnu::always_inline]] inline void wino_input_transform(const float* p, int64_t row, int64_t col,
                                                        float* v, int64_t pitch) {
  vec t[4][4];
  for (int s = 0; s < 4; ++s) {
    const float* ps = p + s * col;
    const vec d0 = load(ps), d1 = load(ps + row), d2 = load(ps + 2 * row), d3 = load(ps + 3 * row);
    t[0][s] = d0 - d2;
    t[1][s] = d1 + d2;
    t[2][s] = d2 - d1;
    t[3][s] = d1 - d3;
  }
  for (int r = 0; r < 4; ++r) {
    store(v + (r * 4 + 0) * pitch, t[r][0] - t[r][2]);
    store(v + (r * 4 + 1) * pitch, t[r][1] + t[r][2]);
    store(v + (r * 4 + 2) * pitch, t[r][2] - t[r][1]);
    store(v + (r * 4 + 3) * pitch, t[r][1] - t[r][3]);
  }
}

// The input transform of tile (ty, tx), all channels: v + e * pitch + c.
// A window that leaves the image is first copied, one channel vector at a
// time, into a zero-bordered 4x4 window of its own.
inline void wino_input_tile(const ConvGeometry& g, const float* x, int64_t ty, int64_t tx, float* v,
                            int64_t pitch) {
  const int64_t iy0 = 2 * ty - g.pad_top, ix0 = 2 * tx - g.pad_left, c = g.c;
  if (iy0 >= 0 && ix0 >= 0 && iy0 + 4 <= g.h && ix0 + 4 <= g.w) {
    const float* p = x + (iy0 * g.w + ix0) * c;
    for (int64_t c0 = 0; c0 < c; c0 += W) wino_input_transform(p + c0, g.w * c, c, v + c0, pitch);
    return;
  }
  float window[16 * W];
  for (int64_t c0 = 0; c0 < c; c0 += W) {
    for (int r = 0; r < 4; ++r)
      for (int s = 0; s < 4; ++s) {
        const int64_t iy = iy0 + r, ix = ix0 + s;
        const bool inside = iy >= 0 && iy < g.h && ix >= 0 && ix < g.w;
        store(window + (r * 4 + s) * W, inside ? load(x + (iy * g.w + ix) * c + c0) : vec{});
      }
    wino_input_transform(window, 4 * W, W, v + c0, pitch);
  }
}

// A^T M A of one tile's channels [c0, c0 + W) (m + e * pitch), plus the
// bias, ReLU if asked, into the tile's output pixels that lie in the image.
inline void wino_output_tile(const ConvGeometry& g, const float* m, int64_t pitch, int64_t ty,
                             int64_t tx, int64_t c0, const float* b, bool relu, float* y) {
  const vec zero = {};
  vec t[2][4];
  for (int s = 0; s < 4; ++s) {
    const vec q0 = load(m + s * pitch), q1 = load(m + (4 + s) * pitch);
    const vec q2 = load(m + (8 + s) * pitch), q3 = load(m + (12 + s) * pitch);
    t[0][s] = q0 + q1 + q2;
    t[1][s] = q1 - q2 - q3;
  }
  const vec bias = b ? load(b + c0) : zero;
  for (int r = 0; r < 2; ++r) {
    const int64_t oy = 2 * ty + r;
    if (oy >= g.oh) break;
    vec o[2] = {t[r][0] + t[r][1] + t[r][2] + bias, t[r][1] - t[r][2] - t[r][3] + bias};
    for (int s = 0; s < 2; ++s) {
      const int64_t ox = 2 * tx + s;
      if (ox >= g.ow) break;
      store(y + (oy * g.ow + ox) * g.co + c0, relu ? (o[s] > zero ? o[s] : zero) : o[s]);
    }
  }
}

// A dY A^T of a 2x2 output gradient whose pixel (r, s) lies at
// p + r * row + s * col, stored at d + e * pitch.
[[gnu::always_inline]] inline void wino_grad_transform(const float* p, int64_t row, int64_t col,
                                                       float* d, int64_t pitch) {
  const vec q00 = load(p), q01 = load(p + col), q10 = load(p + row), q11 = load(p + row + col);
  const vec t[4][2] = {{q00, q01}, {q00 + q10, q01 + q11}, {q00 - q10, q01 - q11}, {-q10, -q11}};
  for (int r = 0; r < 4; ++r) {
    store(d + (r * 4 + 0) * pitch, t[r][0]);
    store(d + (r * 4 + 1) * pitch, t[r][0] + t[r][1]);
    store(d + (r * 4 + 2) * pitch, t[r][0] - t[r][1]);
    store(d + (r * 4 + 3) * pitch, -t[r][1]);
  }
}

// The output gradient's transform of tile (ty, tx), all channels: d + e *
// pitch + c. A tile that reaches beyond the image (odd output sizes) is
// first copied into a zero-filled 2x2 window of its own.
inline void wino_grad_tile(const ConvGeometry& g, const float* dz, int64_t ty, int64_t tx, float* d,
                           int64_t pitch) {
  const int64_t oy = 2 * ty, ox = 2 * tx, co = g.co;
  if (oy + 2 <= g.oh && ox + 2 <= g.ow) {
    const float* p = dz + (oy * g.ow + ox) * co;
    for (int64_t c0 = 0; c0 < co; c0 += W)
      wino_grad_transform(p + c0, g.ow * co, co, d + c0, pitch);
    return;
  }
  float window[4 * W];
  for (int64_t c0 = 0; c0 < co; c0 += W) {
    for (int r = 0; r < 2; ++r)
      for (int s = 0; s < 2; ++s) {
        const bool inside = oy + r < g.oh && ox + s < g.ow;
        store(window + (r * 2 + s) * W,
              inside ? load(dz + ((oy + r) * g.ow + ox + s) * co + c0) : vec{});
      }
    wino_grad_transform(window, 2 * W, W, d + c0, pitch);
  }
}

// The input transforms of tiles [t0, t0 + nt) into v (16, nt, C), planes
// winograd_plane_pitch apart.
inline void wino_input_block(const ConvGeometry& g, const float* x, int64_t t0, int64_t nt,
                             float* v) {
  const int64_t tw = winograd_tiles_wide(g), c = g.c, pitch = winograd_plane_pitch(nt, c);
  for (int64_t i = 0; i < nt; ++i)
    wino_input_tile(g, x, (t0 + i) / tw, (t0 + i) % tw, v + i * c, pitch);
}

// P rows of one element's M: m = a u over the C input channels, CB vectors
// of output channels from u's column on.
template <int P, int CB>
void wino_gemm_rows(const float* a, int64_t c, const float* u, int64_t co, float* m) {
  // The first channel sets the accumulators (no zeroing, which GCC would
  // turn into a memset of an array it then keeps on the stack).
  vec acc[P][CB];
  vec wv[CB];
  for (int v = 0; v < CB; ++v) wv[v] = load(u + v * W);
#pragma GCC unroll 16
  for (int p = 0; p < P; ++p)
    for (int v = 0; v < CB; ++v) acc[p][v] = a[p * c] * wv[v];
  for (int64_t ci = 1; ci < c; ++ci) {
    for (int v = 0; v < CB; ++v) wv[v] = load(u + ci * co + v * W);
#pragma GCC unroll 16
    for (int p = 0; p < P; ++p) {
      const float xv = a[p * c + ci];
      for (int v = 0; v < CB; ++v) acc[p][v] += xv * wv[v];
    }
  }
#pragma GCC unroll 16
  for (int p = 0; p < P; ++p)
    for (int v = 0; v < CB; ++v) store(m + p * co + v * W, acc[p][v]);
}

template <int P, int CB>
void wino_gemm_rows_n(int rows, const float* a, int64_t c, const float* u, int64_t co, float* m) {
  if constexpr (P > 1) {
    if (rows < P) return wino_gemm_rows_n<P - 1, CB>(rows, a, c, u, co, m);
  }
  wino_gemm_rows<P, CB>(a, c, u, co, m);
}

// m (16, nt, CO) = v (16, nt, C) times u (16, C, CO), element by element;
// the nt rows in the fewest chunks of at most P, of sizes differing by one.
template <int CB>
void wino_gemm(const float* v, const float* u, float* m, int64_t nt, int64_t c, int64_t co) {
  constexpr int P = implicit_pixels<CB>();
  const int64_t chunks = (nt + P - 1) / P, small = nt / chunks, big = chunks - nt % chunks;
  const int64_t v_pitch = winograd_plane_pitch(nt, c), m_pitch = winograd_plane_pitch(nt, co);
  for (int e = 0; e < 16; ++e) {
    const float* ve = v + e * v_pitch;
    const float* ue = u + e * c * co;
    float* me = m + e * m_pitch;
    for (int64_t k0 = 0; k0 < co; k0 += CB * W)
      for (int64_t i = 0, row = 0; i < chunks; ++i) {
        const int rows = static_cast<int>(i < big ? small : small + 1);
        wino_gemm_rows_n<P, CB>(rows, ve + row * c, c, ue + k0, co, me + row * co + k0);
        row += rows;
      }
  }
}

template <int CB>
void wino_forward_image(const ConvGeometry& g, const float* x, const float* u, const float* b,
                        float* y, bool relu, float* buf) {
  const int64_t tiles = winograd_tiles(g), block = winograd_block_tiles(g, false),
                tw = winograd_tiles_wide(g);
  float* v = buf;
  float* m = buf + 16 * winograd_plane_pitch(block, g.c);
  for (int64_t t0 = 0; t0 < tiles; t0 += block) {
    const int64_t nt = std::min(block, tiles - t0);
    wino_input_block(g, x, t0, nt, v);
    wino_gemm<CB>(v, u, m, nt, g.c, g.co);
    const int64_t pitch = winograd_plane_pitch(nt, g.co);
    for (int64_t i = 0; i < nt; ++i)
      for (int64_t c0 = 0; c0 < g.co; c0 += W)
        wino_output_tile(g, m + i * g.co + c0, pitch, (t0 + i) / tw, (t0 + i) % tw, c0, b, relu, y);
  }
}

void conv_winograd_forward(const ConvGeometry& g, const float* x, const float* u, const float* b,
                           float* y, bool relu, float* buf) {
  switch (implicit_channel_vectors(g.co)) {
    case 4:
      return wino_forward_image<4>(g, x, u, b, y, relu, buf);
    case 2:
      return wino_forward_image<2>(g, x, u, b, y, relu, buf);
    default:
      return wino_forward_image<1>(g, x, u, b, y, relu, buf);
  }
}

// s (CC rows of C x CO, from channel c0 and CB vectors from column k0) +=
// the nt tiles' v^T d for one element: CC x CB accumulators, per tile CB
// gradient vectors loaded and CC transformed inputs broadcast.
template <int CC, int CB>
void wino_filter_block(const float* v, int64_t c, const float* d, int64_t co, int64_t nt,
                       float* s) {
  vec acc[CC][CB];
  for (int i = 0; i < CC; ++i)
    for (int k = 0; k < CB; ++k) acc[i][k] = load(s + i * co + k * W);
  for (int64_t t = 0; t < nt; ++t) {
    vec dv[CB];
    for (int k = 0; k < CB; ++k) dv[k] = load(d + t * co + k * W);
    for (int i = 0; i < CC; ++i)
      for (int k = 0; k < CB; ++k) acc[i][k] += v[t * c + i] * dv[k];
  }
  for (int i = 0; i < CC; ++i)
    for (int k = 0; k < CB; ++k) store(s + i * co + k * W, acc[i][k]);
}

// Channels [c0, C), CC at a time, then the rest in halving blocks.
template <int CC, int CB>
void wino_filter_channels(const float* v, int64_t c, int64_t c0, const float* d, int64_t co,
                          int64_t nt, float* s) {
  for (; c0 + CC <= c; c0 += CC) wino_filter_block<CC, CB>(v + c0, c, d, co, nt, s + c0 * co);
  if constexpr (CC > 1) {
    if (c0 < c) wino_filter_channels<CC / 2, CB>(v, c, c0, d, co, nt, s);
  }
}

template <int CB>
void wino_filter_image(const ConvGeometry& g, const float* x, const float* dz, float* s,
                       float* buf) {
  constexpr int CC = implicit_filter_channels<CB>();
  const int64_t tiles = winograd_tiles(g), block = winograd_block_tiles(g, true),
                tw = winograd_tiles_wide(g);
  const int64_t c = g.c, co = g.co;
  float* v = buf;
  float* d = buf + 16 * winograd_plane_pitch(block, c);
  for (int64_t t0 = 0; t0 < tiles; t0 += block) {
    const int64_t nt = std::min(block, tiles - t0);
    const int64_t v_pitch = winograd_plane_pitch(nt, c), d_pitch = winograd_plane_pitch(nt, co);
    wino_input_block(g, x, t0, nt, v);
    for (int64_t i = 0; i < nt; ++i)
      wino_grad_tile(g, dz, (t0 + i) / tw, (t0 + i) % tw, d + i * co, d_pitch);
    for (int e = 0; e < 16; ++e)
      for (int64_t k0 = 0; k0 < co; k0 += CB * W)
        wino_filter_channels<CC, CB>(v + e * v_pitch, c, 0, d + e * d_pitch + k0, co, nt,
                                     s + e * c * co + k0);
  }
}

void conv_winograd_backward_filter(const ConvGeometry& g, const float* x, const float* dz, float* s,
                                   float* buf) {
  switch (implicit_channel_vectors(g.co)) {
    case 4:
      return wino_filter_image<4>(g, x, dz, s, buf);
    case 2:
      return wino_filter_image<2>(g, x, dz, s, buf);
    default:
      return wino_filter_image<1>(g, x, dz, s, buf);
  }
}
