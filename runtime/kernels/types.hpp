// The types the kernels of every backend share: activations (generated from
// the list in kernels/activation_list.hpp), convolution and pooling geometry,
// loss kinds. Plain C++ that nvcc compiles too: the CPU kernels (cpu/), the
// CUDA kernels (cuda/) and the backend interface (ops.hpp) all include it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kernels/activation_list.hpp"

namespace drun::kernels {

// ---------------------------------------------------------------------------
// Activations

enum class Activation : uint8_t {
#define DRUN_ENUM(id, functor, name) id,
  DRUN_ACTIVATIONS(DRUN_ENUM)
#undef DRUN_ENUM
};

// Every activation, in the list's order (for tests).
inline constexpr Activation kAllActivations[] = {
#define DRUN_ALL(id, functor, name) Activation::id,
    DRUN_ACTIVATIONS(DRUN_ALL)
#undef DRUN_ALL
};

// Its Keras name (what export writes).
constexpr const char* activation_name(Activation a) {
  switch (a) {
#define DRUN_NAME(id, functor, name) \
  case Activation::id:               \
    return name;
    DRUN_ACTIVATIONS(DRUN_NAME)
#undef DRUN_NAME
  }
  return "linear";
}

// Whether its backward reads the input x as well as the output y (a layer
// then keeps the pre-activation).
constexpr bool activation_reads_input(Activation a) {
  switch (a) {
#define DRUN_READS(id, functor, name) \
  case Activation::id:                \
    return act::functor::kReadsInput;
    DRUN_ACTIVATIONS(DRUN_READS)
#undef DRUN_READS
  }
  return false;
}

// Its parameter's default (elu's alpha, leaky_relu's negative slope; 0 for
// those without one).
constexpr float activation_default_alpha(Activation a) {
  switch (a) {
#define DRUN_ALPHA(id, functor, name) \
  case Activation::id:                \
    return act::default_alpha<act::functor>();
    DRUN_ACTIVATIONS(DRUN_ALPHA)
#undef DRUN_ALPHA
  }
  return 0.0f;
}

// The activation a name means (a Keras name or an alias such as "swish");
// nullopt for a name drun does not know.
std::optional<Activation> activation_from_name(std::string_view name);
// Every name activation_from_name accepts, comma-separated, for messages.
std::string activation_names();

// An activation and its parameter. Converts from a bare Activation, which
// takes the parameter's Keras default.
struct ActivationFn {
  Activation kind = Activation::linear;
  float alpha = 0.0f;
  constexpr ActivationFn() = default;
  constexpr ActivationFn(Activation k) : kind(k), alpha(activation_default_alpha(k)) {}  // NOLINT
  constexpr ActivationFn(Activation k, float a) : kind(k), alpha(a) {}
  constexpr bool reads_input() const { return activation_reads_input(kind); }
};

// Calls visit(functor) with the functor of `a` (act::make<F>(a.alpha)): the
// one switch over the list that each backend's dispatch goes through.
template <class Visitor>
decltype(auto) visit_activation(ActivationFn a, Visitor&& visit) {
  switch (a.kind) {
#define DRUN_VISIT(id, functor, name) \
  case Activation::id:                \
    return visit(act::make<act::functor>(a.alpha));
    DRUN_ACTIVATIONS(DRUN_VISIT)
#undef DRUN_VISIT
  }
  return visit(act::Linear{});
}

// ---------------------------------------------------------------------------
// Convolution and pooling geometry (NHWC)

struct ConvGeometry {
  int64_t n, h, w, c;  // input
  int64_t kh, kw, co;  // kernel
  int64_t sh, sw;      // strides
  int64_t pad_top, pad_left;
  int64_t oh, ow;  // output
  int64_t k() const { return kh * kw * c; }
  int64_t out_pixels() const { return oh * ow; }
};

// Output size and padding for Keras' 'valid' or 'same' padding (TensorFlow
// puts an odd padding pixel at the bottom/right).
ConvGeometry conv_geometry(int64_t n, int64_t h, int64_t w, int64_t c, int64_t kh, int64_t kw,
                           int64_t co, int64_t sh, int64_t sw, bool same_padding);

//   x (N, H, W, C) -> y (N, OH, OW, C) through ph x pw windows.
struct PoolGeometry {
  int64_t n, h, w, c;
  int64_t ph, pw, sh, sw;
  int64_t pad_top, pad_left;
  int64_t oh, ow;
};

PoolGeometry pool_geometry(int64_t n, int64_t h, int64_t w, int64_t c, int64_t ph, int64_t pw,
                           int64_t sh, int64_t sw, bool same_padding);

// ---------------------------------------------------------------------------
// Strided copies (kernels/strided_copy.hpp): the data movement of the shape
// layers (Permute, Concatenate, RepeatVector, UpSampling2D, padding and
// cropping) as one op. Element i of an iteration of shape `size` reads x at
// x_offset + sum(i_d * x_stride[d]) and writes y at y_offset + sum(i_d *
// y_stride[d]), after summing x over the `sum` dimensions (a broadcast's
// backward). Strides count elements; a stride of 0 repeats (x) or would
// collide (y: not allowed, the op writes each y element once); a negative
// one walks backwards from the offset (a recurrent layer's time reversal).

struct CopyGeometry {
  static constexpr int kMaxRank = 6, kMaxSumRank = 2;
  int rank = 0;
  int64_t size[kMaxRank] = {};
  int64_t x_stride[kMaxRank] = {};
  int64_t y_stride[kMaxRank] = {};
  int64_t x_offset = 0, y_offset = 0;
  int sum_rank = 0;
  int64_t sum_size[kMaxSumRank] = {};
  int64_t sum_stride[kMaxSumRank] = {};  // x's
  int64_t count() const {
    int64_t n = 1;
    for (int d = 0; d < rank; ++d) n *= size[d];
    return n;
  }
};

// ---------------------------------------------------------------------------
// Batched GEMM (batched_matmul): attention's per-head products

// Matrices inside one tensor, on a grid of batch x heads: matrix (i, j)
// starts i * outer + j * inner floats in, its rows ld floats apart. Head j
// of example i of a (batch, time, heads * dim) projection is (time * heads *
// dim, dim) with ld heads * dim: read in place, no transposed copy.
struct MatrixLayout {
  int64_t ld, outer, inner;
};
// For each (i, j): y_ij = alpha op(a_ij) op(b_ij) + beta y_ij, op(a) m x k,
// op(b) k x n, row-major as matmul.
//
// causal: the products of attention under its causal mask, whose scores
// (t x s) keep in row i their first masked_softmax_kept(true, t, i, s)
// columns; the scores are y of an nt product (Q K^T, dC V^T: m = t, n = s),
// a of an nn one (P V, dS K: m = t, k = s) and a, stored t x s, of a tn one
// (P^T dC, dS^T Q: k = t, m = s). A backend may skip what the mask hides: an
// nt product's hidden entries of y are either zero or the product, and an
// nn or tn product's a must be zero where hidden (softmax made it so), so
// that skipping its terms changes nothing.
struct BatchedGemm {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  int64_t batch = 1, heads = 1;
  MatrixLayout a{}, b{}, y{};
  bool causal = false;
};

// ---------------------------------------------------------------------------
// Losses (kernels/loss.hpp), as loss_forward_backward takes them

enum class LossKind { softmax_xent_sparse, xent_sparse, softmax_xent, xent, sigmoid_bce, bce, mse };

// Keras' gradient clipping (kernels/gradient_clip.hpp), as clip_gradient
// takes it: each variable by its own norm (clipnorm), every variable by their
// global norm (global_clipnorm), each value (clipvalue).
enum class GradientClip { norm, global_norm, value };

// Metrics (kernels/metric.hpp), as metric_sum takes them: accuracy against
// integer labels, one-hot targets, or binary targets from logits (threshold
// 0) or probabilities (0.5); the sum of squared or absolute errors.
enum class MetricKind {
  label_accuracy,
  onehot_accuracy,
  binary_accuracy_logits,
  binary_accuracy_probs,
  squared_error,
  absolute_error
};

// The thresholds of precision and recall (kernels/metric_counts.hpp), by
// value so that a GPU kernel takes them as its argument: no device memory to
// keep, nothing to copy before a captured step.
struct Thresholds {
  static constexpr int kMax = 200;
  int count = 0;
  float at[kMax] = {};
};

}  // namespace drun::kernels

// Declares the same functions in namespace cpu (on host pointers, defined in
// kernels/cpu/) and in namespace cuda (on device pointers, kernels/cuda/):
// one declaration for kernels that both backends have with one signature.
#define DRUN_CPU_AND_CUDA(...) \
  namespace cpu {              \
  __VA_ARGS__                  \
  }                            \
  namespace cuda {             \
  __VA_ARGS__                  \
  }
