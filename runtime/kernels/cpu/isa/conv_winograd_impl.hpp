// Winograd F(m x m, 3x3) convolution, m = 2 or 4 (conv2d_winograd.hpp says
// what is computed). A block of nt tiles at a time, E = (m+2)^2 elements a
// tile: the input transform writes V (E, nt, C), the E GEMMs M = V U write
// M (E, nt, CO), the output transform reads M; for the filter gradient the
// output gradient's transform writes D (E, nt, CO) and S (E, C, CO) += V^T D.
// Vectors run over channels, so C and CO are multiples of W. The GEMMs are
// register-blocked as the implicit kernels (conv_implicit_impl.hpp, included
// before this file): the same tile sizes, now over Winograd tiles rather
// than pixels. Included by kernels_impl.hpp inside its ISA namespace.

// The one-dimensional transforms of F(m, 3): B^T d (m+2 inputs), A^T q
// (m+2 products to m outputs) and A y (m output gradients to m+2).
template <int M>
struct Wino;

template <>
struct Wino<2> {
  static constexpr int A = 4;
  [[gnu::always_inline]] static void input(const vec (&d)[A], vec (&r)[A]) {
    r[0] = d[0] - d[2];
    r[1] = d[1] + d[2];
    r[2] = d[2] - d[1];
    r[3] = d[1] - d[3];
  }
  [[gnu::always_inline]] static void output(const vec (&q)[A], vec (&o)[2]) {
    o[0] = q[0] + q[1] + q[2];
    o[1] = q[1] - q[2] - q[3];
  }
  [[gnu::always_inline]] static void grad(const vec (&y)[2], vec (&w)[A]) {
    w[0] = y[0];
    w[1] = y[0] + y[1];
    w[2] = y[0] - y[1];
    w[3] = -y[1];
  }
};

template <>
struct Wino<4> {
  static constexpr int A = 6;
  [[gnu::always_inline]] static void input(const vec (&d)[A], vec (&r)[A]) {
    const vec four = vec{} + 4.0f, five = vec{} + 5.0f, two = vec{} + 2.0f;
    r[0] = four * d[0] - five * d[2] + d[4];
    r[1] = (d[3] + d[4]) - four * (d[1] + d[2]);
    r[2] = (d[4] - d[3]) + four * (d[1] - d[2]);
    r[3] = (d[4] - d[2]) + two * (d[3] - d[1]);
    r[4] = (d[4] - d[2]) - two * (d[3] - d[1]);
    r[5] = four * d[1] - five * d[3] + d[5];
  }
  [[gnu::always_inline]] static void output(const vec (&q)[A], vec (&o)[4]) {
    const vec two = vec{} + 2.0f, four = vec{} + 4.0f, eight = vec{} + 8.0f;
    const vec s12 = q[1] + q[2], d12 = q[1] - q[2], s34 = q[3] + q[4], d34 = q[3] - q[4];
    o[0] = q[0] + s12 + s34;
    o[1] = d12 + two * d34;
    o[2] = s12 + four * s34;
    o[3] = d12 + eight * d34 + q[5];
  }
  [[gnu::always_inline]] static void grad(const vec (&y)[4], vec (&w)[A]) {
    const vec two = vec{} + 2.0f, four = vec{} + 4.0f, eight = vec{} + 8.0f;
    const vec s02 = y[0] + y[2], s13 = y[1] + y[3];
    const vec e02 = y[0] + four * y[2], e13 = two * y[1] + eight * y[3];
    w[0] = y[0];
    w[1] = s02 + s13;
    w[2] = s02 - s13;
    w[3] = e02 + e13;
    w[4] = e02 - e13;
    w[5] = y[3];
  }
};

// B^T d B of an (m+2)^2 window whose pixel (r, s) lies at p + r * row +
// s * col, stored at v + e * pitch for e = r * (m+2) + s. Column by column
// first, then row by row.
template <int M>
[[gnu::always_inline]] inline void wino_input_transform(const float* p, int64_t row, int64_t col,
                                                        float* v, int64_t pitch) {
  constexpr int A = Wino<M>::A;
  vec t[A][A];  // t[r][s]: column s transformed
  for (int s = 0; s < A; ++s) {
    vec d[A], r[A];
    for (int k = 0; k < A; ++k) d[k] = load(p + k * row + s * col);
    Wino<M>::input(d, r);
    for (int k = 0; k < A; ++k) t[k][s] = r[k];
  }
  for (int k = 0; k < A; ++k) {
    vec r[A];
    Wino<M>::input(t[k], r);
    for (int s = 0; s < A; ++s) store(v + (k * A + s) * pitch, r[s]);
  }
}

// The input transform of tile (ty, tx) of image x, all channels: v + e *
// pitch + c. A window that leaves the image is first copied, one channel
// vector at a time, into a zero-bordered window of its own.
template <int M>
inline void wino_input_tile(const ConvGeometry& g, const float* x, int64_t ty, int64_t tx, float* v,
                            int64_t pitch) {
  constexpr int A = Wino<M>::A;
  const int64_t iy0 = M * ty - g.pad_top, ix0 = M * tx - g.pad_left, c = g.c;
  if (iy0 >= 0 && ix0 >= 0 && iy0 + A <= g.h && ix0 + A <= g.w) {
    const float* p = x + (iy0 * g.w + ix0) * c;
    for (int64_t c0 = 0; c0 < c; c0 += W)
      wino_input_transform<M>(p + c0, g.w * c, c, v + c0, pitch);
    return;
  }
  float window[A * A * W];
  for (int64_t c0 = 0; c0 < c; c0 += W) {
    for (int r = 0; r < A; ++r)
      for (int s = 0; s < A; ++s) {
        const int64_t iy = iy0 + r, ix = ix0 + s;
        vec d = {};
        if (iy >= 0 && iy < g.h && ix >= 0 && ix < g.w) d = load(x + (iy * g.w + ix) * c + c0);
        store(window + (r * A + s) * W, d);
      }
    wino_input_transform<M>(window, A * W, W, v + c0, pitch);
  }
}

// A^T Q A of one tile's channels [c0, c0 + W) (q + e * pitch), plus the
// bias, ReLU if asked, into the tile's output pixels that lie in the image.
template <int M>
inline void wino_output_tile(const ConvGeometry& g, const float* q, int64_t pitch, int64_t ty,
                             int64_t tx, int64_t c0, const float* b, bool relu, float* y) {
  constexpr int A = Wino<M>::A;
  const vec zero = {};
  vec t[M][A];  // t[i][s]: column s transformed
  for (int s = 0; s < A; ++s) {
    vec col[A], o[M];
    for (int k = 0; k < A; ++k) col[k] = load(q + (k * A + s) * pitch);
    Wino<M>::output(col, o);
    for (int i = 0; i < M; ++i) t[i][s] = o[i];
  }
  const vec bias = b ? load(b + c0) : zero;
  for (int i = 0; i < M; ++i) {
    const int64_t oy = M * ty + i;
    if (oy >= g.oh) break;
    vec o[M];
    Wino<M>::output(t[i], o);
    for (int j = 0; j < M; ++j) {
      const int64_t ox = M * tx + j;
      if (ox >= g.ow) break;
      const vec out = o[j] + bias;
      store(y + (oy * g.ow + ox) * g.co + c0, relu ? (out > zero ? out : zero) : out);
    }
  }
}

// The output gradient at p, masked where the forward's ReLU output (at
// relu_y, the same offset) is not positive; unmasked where relu_y is null.
[[gnu::always_inline]] inline vec load_grad(const float* p, const float* relu_y, int64_t offset) {
  const vec dy = load(p + offset);
  if (!relu_y) return dy;
  const vec zero = {};
  return load(relu_y + offset) > zero ? dy : zero;
}

// A dY A^T of an m x m output gradient whose pixel (r, s) lies at p + r *
// row + s * col (masked by relu_y there, where given), stored at d + e *
// pitch.
template <int M>
[[gnu::always_inline]] inline void wino_grad_transform(const float* p, const float* relu_y,
                                                       int64_t row, int64_t col, float* d,
                                                       int64_t pitch) {
  constexpr int A = Wino<M>::A;
  vec t[A][M];  // t[r][s]: column s transformed
  for (int s = 0; s < M; ++s) {
    vec y[M], w[A];
    for (int k = 0; k < M; ++k) y[k] = load_grad(p, relu_y, k * row + s * col);
    Wino<M>::grad(y, w);
    for (int k = 0; k < A; ++k) t[k][s] = w[k];
  }
  for (int k = 0; k < A; ++k) {
    vec w[A];
    Wino<M>::grad(t[k], w);
    for (int s = 0; s < A; ++s) store(d + (k * A + s) * pitch, w[s]);
  }
}

// The output gradient's transform of tile (ty, tx) of image dz (masked by
// relu_y, the forward's ReLU output, where given), all channels: d + e *
// pitch + c. A tile that reaches beyond the image is first copied into a
// zero-filled window of its own.
template <int M>
inline void wino_grad_tile(const ConvGeometry& g, const float* dz, const float* relu_y, int64_t ty,
                           int64_t tx, float* d, int64_t pitch) {
  const int64_t oy = M * ty, ox = M * tx, co = g.co, at = (oy * g.ow + ox) * co;
  if (oy + M <= g.oh && ox + M <= g.ow) {
    for (int64_t c0 = 0; c0 < co; c0 += W)
      wino_grad_transform<M>(dz + at + c0, relu_y ? relu_y + at + c0 : nullptr, g.ow * co, co,
                             d + c0, pitch);
    return;
  }
  float window[M * M * W];
  for (int64_t c0 = 0; c0 < co; c0 += W) {
    for (int r = 0; r < M; ++r)
      for (int s = 0; s < M; ++s) {
        vec q = {};
        if (oy + r < g.oh && ox + s < g.ow)
          q = load_grad(dz, relu_y, ((oy + r) * g.ow + ox + s) * co + c0);
        store(window + (r * M + s) * W, q);
      }
    wino_grad_transform<M>(window, nullptr, M * W, W, d + c0, pitch);
  }
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

// m (E, nt, CO) = v (E, nt, C) times u (E, C, CO), element by element; the
// nt rows in the fewest chunks of at most P, of sizes differing by one.
template <int CB>
void wino_gemm(int elements, const float* v, const float* u, float* m, int64_t nt, int64_t c,
               int64_t co) {
  constexpr int P = implicit_pixels<CB>();
  const int64_t chunks = (nt + P - 1) / P, small = nt / chunks, big = chunks - nt % chunks;
  const int64_t v_pitch = winograd_plane_pitch(nt, c), m_pitch = winograd_plane_pitch(nt, co);
  for (int e = 0; e < elements; ++e) {
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

template <int M, int CB>
void wino_forward_image(const ConvGeometry& g, const float* x, const float* u, const float* b,
                        float* y, bool relu, float* buf) {
  constexpr int E = winograd_elements(M);
  const int64_t tiles = winograd_tiles(g, M), tw = winograd_tiles_wide(g, M);
  const int64_t block = winograd_block_tiles(g, M, false);
  float* v = buf;
  float* m = buf + E * winograd_plane_pitch(block, g.c);
  for (int64_t t0 = 0; t0 < tiles; t0 += block) {
    const int64_t nt = std::min(block, tiles - t0);
    const int64_t v_pitch = winograd_plane_pitch(nt, g.c);
    for (int64_t i = 0; i < nt; ++i)
      wino_input_tile<M>(g, x, (t0 + i) / tw, (t0 + i) % tw, v + i * g.c, v_pitch);
    wino_gemm<CB>(E, v, u, m, nt, g.c, g.co);
    const int64_t m_pitch = winograd_plane_pitch(nt, g.co);
    for (int64_t i = 0; i < nt; ++i)
      for (int64_t c0 = 0; c0 < g.co; c0 += W)
        wino_output_tile<M>(g, m + i * g.co + c0, m_pitch, (t0 + i) / tw, (t0 + i) % tw, c0, b,
                            relu, y);
  }
}

template <int M>
void wino_forward_tiled(const ConvGeometry& g, const float* x, const float* u, const float* b,
                        float* y, bool relu, float* buf) {
  switch (implicit_channel_vectors(g.co)) {
    case 4:
      return wino_forward_image<M, 4>(g, x, u, b, y, relu, buf);
    case 2:
      return wino_forward_image<M, 2>(g, x, u, b, y, relu, buf);
    default:
      return wino_forward_image<M, 1>(g, x, u, b, y, relu, buf);
  }
}

void conv_winograd_forward(const ConvGeometry& g, const float* x, const float* u, const float* b,
                           float* y, bool relu, float* buf, int m) {
  if (m == 4) return wino_forward_tiled<4>(g, x, u, b, y, relu, buf);
  wino_forward_tiled<2>(g, x, u, b, y, relu, buf);
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

// The tiles of `images` consecutive images in blocks that run on from one
// image into the next, so that small images still fill a block.
template <int M, int CB>
void wino_filter_images(const ConvGeometry& g, const float* x, const float* dz, const float* relu_y,
                        int64_t images, float* s, float* buf) {
  constexpr int CC = implicit_filter_channels<CB>();
  constexpr int E = winograd_elements(M);
  const int64_t per_image = winograd_tiles(g, M), tw = winograd_tiles_wide(g, M);
  const int64_t tiles = images * per_image, block = winograd_block_tiles(g, M, true);
  const int64_t c = g.c, co = g.co, x_image = g.h * g.w * c, dz_image = g.out_pixels() * co;
  float* v = buf;
  float* d = buf + E * winograd_plane_pitch(block, c);
  for (int64_t t0 = 0; t0 < tiles; t0 += block) {
    const int64_t nt = std::min(block, tiles - t0);
    const int64_t v_pitch = winograd_plane_pitch(nt, c), d_pitch = winograd_plane_pitch(nt, co);
    for (int64_t i = 0; i < nt; ++i) {
      const int64_t n = (t0 + i) / per_image, t = (t0 + i) % per_image;
      wino_input_tile<M>(g, x + n * x_image, t / tw, t % tw, v + i * c, v_pitch);
      wino_grad_tile<M>(g, dz + n * dz_image, relu_y ? relu_y + n * dz_image : nullptr, t / tw,
                        t % tw, d + i * co, d_pitch);
    }
    for (int e = 0; e < E; ++e)
      for (int64_t k0 = 0; k0 < co; k0 += CB * W)
        wino_filter_channels<CC, CB>(v + e * v_pitch, c, 0, d + e * d_pitch + k0, co, nt,
                                     s + e * c * co + k0);
  }
}

template <int M>
void wino_filter_tiled(const ConvGeometry& g, const float* x, const float* dz, const float* relu_y,
                       int64_t images, float* s, float* buf) {
  switch (implicit_channel_vectors(g.co)) {
    case 4:
      return wino_filter_images<M, 4>(g, x, dz, relu_y, images, s, buf);
    case 2:
      return wino_filter_images<M, 2>(g, x, dz, relu_y, images, s, buf);
    default:
      return wino_filter_images<M, 1>(g, x, dz, relu_y, images, s, buf);
  }
}

void conv_winograd_backward_filter(const ConvGeometry& g, const float* x, const float* dz,
                                   const float* relu_y, int64_t images, float* s, float* buf,
                                   int m) {
  if (m == 4) return wino_filter_tiled<4>(g, x, dz, relu_y, images, s, buf);
  wino_filter_tiled<2>(g, x, dz, relu_y, images, s, buf);
}
