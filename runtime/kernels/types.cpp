#include "kernels/types.hpp"

#include <algorithm>

namespace drun::kernels {

std::optional<Activation> activation_from_name(std::string_view name) {
#define DRUN_MATCH(id, functor, keras) \
  if (name == keras) return Activation::id;
  DRUN_ACTIVATIONS(DRUN_MATCH)
#undef DRUN_MATCH
#define DRUN_MATCH_ALIAS(id, alias) \
  if (name == alias) return Activation::id;
  DRUN_ACTIVATION_ALIASES(DRUN_MATCH_ALIAS)
#undef DRUN_MATCH_ALIAS
  return std::nullopt;
}

std::string activation_names() {
  std::string names;
#define DRUN_LIST(id, functor, keras) names += names.empty() ? keras : std::string(", ") + keras;
  DRUN_ACTIVATIONS(DRUN_LIST)
#undef DRUN_LIST
#define DRUN_LIST_ALIAS(id, alias) names += std::string(", ") + alias;
  DRUN_ACTIVATION_ALIASES(DRUN_LIST_ALIAS)
#undef DRUN_LIST_ALIAS
  return names;
}

ConvGeometry conv_geometry(int64_t n, int64_t h, int64_t w, int64_t c, int64_t kh, int64_t kw,
                           int64_t co, int64_t sh, int64_t sw, bool same) {
  ConvGeometry g{n, h, w, c, kh, kw, co, sh, sw, 0, 0, 0, 0};
  if (same) {
    g.oh = (h + sh - 1) / sh;
    g.ow = (w + sw - 1) / sw;
    const int64_t pad_h = std::max<int64_t>(0, (g.oh - 1) * sh + kh - h);
    const int64_t pad_w = std::max<int64_t>(0, (g.ow - 1) * sw + kw - w);
    g.pad_top = pad_h / 2;  // TensorFlow puts the odd pixel at the bottom/right
    g.pad_left = pad_w / 2;
  } else {
    g.oh = h >= kh ? (h - kh) / sh + 1 : 0;
    g.ow = w >= kw ? (w - kw) / sw + 1 : 0;
  }
  return g;
}

PoolGeometry pool_geometry(int64_t n, int64_t h, int64_t w, int64_t c, int64_t ph, int64_t pw,
                           int64_t sh, int64_t sw, bool same) {
  PoolGeometry g{n, h, w, c, ph, pw, sh, sw, 0, 0, 0, 0};
  if (same) {
    g.oh = (h + sh - 1) / sh;
    g.ow = (w + sw - 1) / sw;
    g.pad_top = std::max<int64_t>(0, (g.oh - 1) * sh + ph - h) / 2;
    g.pad_left = std::max<int64_t>(0, (g.ow - 1) * sw + pw - w) / 2;
  } else {
    g.oh = h >= ph ? (h - ph) / sh + 1 : 0;
    g.ow = w >= pw ? (w - pw) / sw + 1 : 0;
  }
  return g;
}

}  // namespace drun::kernels
