// Implicit-GEMM convolution, one image at a time (conv2d_implicit.hpp): the
// product of the (pixels x KH*KW*C) patch matrix and the (KH*KW*C x CO) HWIO
// kernel without writing the patch matrix out. The image is read where it
// lies, unpadded: a kernel row that falls in the top or bottom padding is
// skipped, and of a tile's pixels only the first and the last can have a tap
// in the left or right padding (at most one padded column each side, which
// the caller makes sure of), so those taps are left out by one of four
// instantiations of the inner loop rather than by a bounds check per tap.
// Included by kernels_impl.hpp inside its ISA namespace: W, kRegs, vec, load
// and store are that file's.

// Forward: P output pixels of a row times CB vectors of output channels in
// P*CB accumulators; per input channel CB weight vectors are loaded and each
// pixel's tap is broadcast. Fourteen pixels at most: a CIFAR row of 32 then
// takes three tiles, and more accumulators than registers would spill.
template <int CB>
constexpr int implicit_pixels() {
  return std::min(14, (kRegs - CB - 1) / CB);
}

// The widest channel block whose tile still has enough pixels in flight to
// hide the FMA latency (AVX-512: 4 vectors x 6 pixels; AVX2/SSE: 2 x 6).
// (Choosing by the accumulators a row's tiles keep busy, e.g. 2 x 8 rather
// than 4 x 4 on rows of 8, measured no faster.)
inline int implicit_channel_vectors(int64_t co) {
  const int64_t nv = co / W;
  if (nv % 4 == 0 && implicit_pixels<4>() >= 6) return 4;
  if (nv % 2 == 0 && implicit_pixels<2>() >= 6) return 2;
  return 1;
}

// One tap (ky, kx) of the tile's pixels [First, P - Last): s points at pixel
// First's tap, wt at the tap's (C x CO) weights.
template <int P, int CB, int First, int Last>
[[gnu::always_inline]] inline void implicit_tap(vec (&acc)[P][CB], const float* s, int64_t step,
                                                const float* wt, int64_t c, int64_t co) {
  for (int64_t ci = 0; ci < c; ++ci) {
    vec wv[CB];
    for (int v = 0; v < CB; ++v) wv[v] = load(wt + ci * co + v * W);
    for (int p = First; p < P - Last; ++p) {
      const float xv = s[(p - First) * step + ci];
      for (int v = 0; v < CB; ++v) acc[p][v] += xv * wv[v];
    }
  }
}

// The P pixels of output row oy from column ox on.
template <int P, int CB>
void implicit_forward_tile(const ConvGeometry& g, const float* x, int64_t oy, int64_t ox,
                           const float* w, const float* b, float* y, bool relu) {
  const int64_t c = g.c, co = g.co, step = g.sw * c, pitch = g.w * c;
  const vec zero = {};
  vec acc[P][CB];
  for (int v = 0; v < CB; ++v) {
    const vec bias = b ? load(b + v * W) : zero;
    for (int p = 0; p < P; ++p) acc[p][v] = bias;
  }
  const int64_t iy0 = oy * g.sh - g.pad_top, ix0 = ox * g.sw - g.pad_left;
  const int64_t ky0 = std::max<int64_t>(0, -iy0), ky1 = std::min<int64_t>(g.kh, g.h - iy0);
  for (int64_t ky = ky0; ky < ky1; ++ky) {
    const float* row = x + (iy0 + ky) * pitch;
    for (int64_t kx = 0; kx < g.kw; ++kx) {
      const int64_t col = ix0 + kx;  // the first pixel's input column
      const bool first_out = col < 0, last_out = col + (P - 1) * g.sw >= g.w;
      if (P - first_out - last_out <= 0) continue;
      const float* s = row + (first_out ? col + g.sw : col) * c;
      const float* wt = w + (ky * g.kw + kx) * c * co;
      if (!first_out && !last_out)
        implicit_tap<P, CB, 0, 0>(acc, s, step, wt, c, co);
      else if (!last_out)
        implicit_tap<P, CB, 1, 0>(acc, s, step, wt, c, co);
      else if (!first_out)
        implicit_tap<P, CB, 0, 1>(acc, s, step, wt, c, co);
      else
        implicit_tap<P, CB, 1, 1>(acc, s, step, wt, c, co);
    }
  }
  for (int p = 0; p < P; ++p)
    for (int v = 0; v < CB; ++v)
      store(y + p * co + v * W, relu ? (acc[p][v] > zero ? acc[p][v] : zero) : acc[p][v]);
}

// A tile of `pixels` <= P pixels: the instantiation for exactly that many.
template <int P, int CB>
void implicit_forward_pixels(int pixels, const ConvGeometry& g, const float* x, int64_t oy,
                             int64_t ox, const float* w, const float* b, float* y, bool relu) {
  if constexpr (P > 1) {
    if (pixels < P) return implicit_forward_pixels<P - 1, CB>(pixels, g, x, oy, ox, w, b, y, relu);
  }
  implicit_forward_tile<P, CB>(g, x, oy, ox, w, b, y, relu);
}

// Each row in the fewest tiles of at most P pixels, of sizes that differ by
// one at most: a row of 8 as 4 + 4 rather than 6 + 2, whose 2-pixel tile
// loads as many weights as a full one for a third of the work.
template <int CB>
void implicit_forward_image(const ConvGeometry& g, const float* x, const float* w, const float* b,
                            float* y, bool relu) {
  constexpr int P = implicit_pixels<CB>();
  const int64_t co = g.co;
  const int64_t tiles = (g.ow + P - 1) / P, small = g.ow / tiles, big = tiles - g.ow % tiles;
  for (int64_t oy = 0; oy < g.oh; ++oy) {
    float* yr = y + oy * g.ow * co;
    for (int64_t c0 = 0; c0 < co; c0 += CB * W) {
      const float* bc = b ? b + c0 : nullptr;
      for (int64_t t = 0, ox = 0; t < tiles; ++t) {
        const int pixels = static_cast<int>(t < big ? small : small + 1);
        implicit_forward_pixels<P, CB>(pixels, g, x, oy, ox, w + c0, bc, yr + ox * co + c0, relu);
        ox += pixels;
      }
    }
  }
}

void conv_implicit_forward(const ConvGeometry& g, const float* x, const float* w, const float* b,
                           float* y, bool relu) {
  switch (implicit_channel_vectors(g.co)) {
    case 4:
      return implicit_forward_image<4>(g, x, w, b, y, relu);
    case 2:
      return implicit_forward_image<2>(g, x, w, b, y, relu);
    default:
      return implicit_forward_image<1>(g, x, w, b, y, relu);
  }
}

// Filter gradient: for one tap, CC input channels times CB vectors of output
// channels in CC*CB accumulators, summed over the output pixels whose tap
// falls inside the image (padding contributes zeros, so it is skipped rather
// than copied in); per pixel CB gradient vectors are loaded and each
// channel's tap broadcast.
template <int CB>
constexpr int implicit_filter_channels() {
  int cc = 1;
  while (cc * 2 <= std::min(16, (kRegs - CB - 2) / CB)) cc *= 2;
  return cc;
}

// The output pixels [oy0, oy1) x [ox0, ox1) whose tap (ky, kx) lies inside
// the image; x points at the tap of pixel (oy0, ox0), dz at that pixel.
struct TapWindow {
  int64_t rows, cols;
  const float* x;
  const float* dz;
};

inline TapWindow tap_window(const ConvGeometry& g, const float* x, const float* dz, int64_t ky,
                            int64_t kx) {
  // First and one-past-last output index whose input index o*s + k - pad is in [0, n).
  auto range = [](int64_t k, int64_t pad, int64_t s, int64_t n, int64_t out) {
    const int64_t lo = std::max<int64_t>(0, (pad - k + s - 1) / s);
    const int64_t last = n - 1 + pad - k;  // floor(last / s) + 1 outputs; none where negative
    const int64_t hi = last < 0 ? 0 : std::min<int64_t>(out, last / s + 1);
    return std::pair<int64_t, int64_t>{lo, std::max(lo, hi)};
  };
  const auto [oy0, oy1] = range(ky, g.pad_top, g.sh, g.h, g.oh);
  const auto [ox0, ox1] = range(kx, g.pad_left, g.sw, g.w, g.ow);
  TapWindow t{oy1 - oy0, ox1 - ox0, x, dz + (oy0 * g.ow + ox0) * g.co};
  if (t.rows > 0 && t.cols > 0)
    t.x = x + ((oy0 * g.sh + ky - g.pad_top) * g.w + ox0 * g.sw + kx - g.pad_left) * g.c;
  return t;
}

template <int CC, int CB>
void implicit_filter_block(const ConvGeometry& g, const TapWindow& t, int64_t c0, int64_t k0,
                           float* dw) {
  const int64_t co = g.co, step = g.sw * g.c, pitch = g.sh * g.w * g.c;
  vec acc[CC][CB];
  for (int i = 0; i < CC; ++i)
    for (int v = 0; v < CB; ++v) acc[i][v] = load(dw + i * co + v * W);
  for (int64_t r = 0; r < t.rows; ++r) {
    const float* sr = t.x + r * pitch + c0;
    const float* dr = t.dz + r * g.ow * co + k0;
    for (int64_t p = 0; p < t.cols; ++p) {
      const float* sp = sr + p * step;
      vec d[CB];
      for (int v = 0; v < CB; ++v) d[v] = load(dr + p * co + v * W);
      for (int i = 0; i < CC; ++i)
        for (int v = 0; v < CB; ++v) acc[i][v] += sp[i] * d[v];
    }
  }
  for (int i = 0; i < CC; ++i)
    for (int v = 0; v < CB; ++v) store(dw + i * co + v * W, acc[i][v]);
}

// Channels [c0, C) of one tap, CC at a time, then the rest in halving blocks.
template <int CC, int CB>
void implicit_filter_tap(const ConvGeometry& g, const TapWindow& t, int64_t c0, int64_t k0,
                         float* dw) {
  for (; c0 + CC <= g.c; c0 += CC) implicit_filter_block<CC, CB>(g, t, c0, k0, dw + c0 * g.co);
  if constexpr (CC > 1) {
    if (c0 < g.c) implicit_filter_tap<CC / 2, CB>(g, t, c0, k0, dw);
  }
}

template <int CB>
void implicit_filter_image(const ConvGeometry& g, const float* x, const float* dz, float* dw) {
  constexpr int CC = implicit_filter_channels<CB>();
  for (int64_t ky = 0; ky < g.kh; ++ky)
    for (int64_t kx = 0; kx < g.kw; ++kx) {
      const TapWindow t = tap_window(g, x, dz, ky, kx);
      if (t.rows == 0 || t.cols == 0) continue;
      float* dwt = dw + (ky * g.kw + kx) * g.c * g.co;
      for (int64_t k0 = 0; k0 < g.co; k0 += CB * W)
        implicit_filter_tap<CC, CB>(g, t, 0, k0, dwt + k0);
    }
}

void conv_implicit_backward_filter(const ConvGeometry& g, const float* x, const float* dz,
                                   float* dw) {
  switch (implicit_channel_vectors(g.co)) {
    case 4:
      return implicit_filter_image<4>(g, x, dz, dw);
    case 2:
      return implicit_filter_image<2>(g, x, dz, dw);
    default:
      return implicit_filter_image<1>(g, x, dz, dw);
  }
}
