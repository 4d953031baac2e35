// The activations: one elementwise functor each, compiled for the host (the
// CPU kernels' loops, kernels/cpu/activation.cpp) and for the device (the
// CUDA kernels, kernels/cuda/activation.cu), and the list below that names
// them. Everything else -- the Activation enum, the names a user may write
// ("valid: ..." included), the Keras names on export, the dispatch of both
// backends -- is generated from DRUN_ACTIVATIONS. Adding an activation means:
// its functor here, its line in the list, its case in the tests (the kernel
// test's reference formula, the harness' tolerance, a gradient check).
//
// A functor has
//   float forward(float x) const;                   y = f(x)
//   float backward(float x, float y, float dy) const;  dx = dy * f'(x)
//   static constexpr bool kReadsInput;               whether backward reads x
// backward gets y always and x only where kReadsInput (others get 0): an
// activation whose derivative is a function of y (relu, sigmoid, elu...)
// lets the layers run it in place and keep no pre-activation. A functor with
// a parameter (elu's alpha, leaky_relu's negative slope) is constructed from
// it and gives its Keras default as kDefaultAlpha. Linear and Softmax are
// markers: the backends copy for linear and run softmax over rows of the last
// dimension.
//
// The formulas are Keras 3's (its JAX backend, jax.nn) in float, so that a
// Keras model loaded into drun predicts what Keras predicts.
#pragma once
#include <math.h>  // expf, tanhf, erfcf...: the same names in host and device code

#include "kernels/host_device.hpp"

namespace drun::kernels::act {

struct Linear {
  static constexpr bool kReadsInput = false;
  DRUN_HOST_DEVICE float forward(float x) const { return x; }
  DRUN_HOST_DEVICE float backward(float, float, float dy) const { return dy; }
};

// relu as std::max(0, x) computes it: NaN gives 0.
struct Relu {
  static constexpr bool kReadsInput = false;
  DRUN_HOST_DEVICE float forward(float x) const { return x > 0.0f ? x : 0.0f; }
  DRUN_HOST_DEVICE float backward(float, float y, float dy) const { return y > 0.0f ? dy : 0.0f; }
};

struct Sigmoid {
  static constexpr bool kReadsInput = false;
  DRUN_HOST_DEVICE float forward(float x) const { return 1.0f / (1.0f + expf(-x)); }
  DRUN_HOST_DEVICE float backward(float, float y, float dy) const { return dy * y * (1.0f - y); }
};

struct Tanh {
  static constexpr bool kReadsInput = false;
  DRUN_HOST_DEVICE float forward(float x) const { return tanhf(x); }
  DRUN_HOST_DEVICE float backward(float, float y, float dy) const { return dy * (1.0f - y * y); }
};

// Over the last dimension; the backends' own row kernels.
struct Softmax {
  static constexpr bool kReadsInput = false;
};

// x > 0: x; else alpha (e^x - 1). For x <= 0, f' = alpha e^x = y + alpha.
struct Elu {
  static constexpr bool kReadsInput = false;
  static constexpr float kDefaultAlpha = 1.0f;
  float alpha;
  DRUN_HOST_DEVICE explicit Elu(float a) : alpha(a) {}
  DRUN_HOST_DEVICE float forward(float x) const { return x > 0.0f ? x : alpha * expm1f(x); }
  DRUN_HOST_DEVICE float backward(float, float y, float dy) const {
    return y > 0.0f ? dy : dy * (y + alpha);
  }
};

// scale * elu(x, alpha) with Klambauer et al.'s constants (jax.nn.selu's).
struct Selu {
  static constexpr bool kReadsInput = false;
  static constexpr float kAlpha = 1.6732632423543772848170429916717f;
  static constexpr float kScale = 1.0507009873554804934193349852946f;
  DRUN_HOST_DEVICE float forward(float x) const {
    return kScale * (x > 0.0f ? x : kAlpha * expm1f(x));
  }
  DRUN_HOST_DEVICE float backward(float, float y, float dy) const {
    return y > 0.0f ? dy * kScale : dy * (y + kScale * kAlpha);
  }
};

// log(1 + e^x), as logaddexp(x, 0) computes it without overflow; f' is the
// sigmoid of x, which is 1 - e^-y.
struct Softplus {
  static constexpr bool kReadsInput = false;
  DRUN_HOST_DEVICE float forward(float x) const { return fmaxf(x, 0.0f) + log1pf(expf(-fabsf(x))); }
  DRUN_HOST_DEVICE float backward(float, float y, float dy) const { return dy * -expm1f(-y); }
};

// x / (|x| + 1); f' = 1 / (1 + |x|)^2 = (1 - |y|)^2.
struct Softsign {
  static constexpr bool kReadsInput = false;
  DRUN_HOST_DEVICE float forward(float x) const { return x / (fabsf(x) + 1.0f); }
  DRUN_HOST_DEVICE float backward(float, float y, float dy) const {
    const float t = 1.0f - fabsf(y);
    return dy * t * t;
  }
};

// swish: x sigmoid(x); f' = s (1 + x (1 - s)) needs x.
struct Silu {
  static constexpr bool kReadsInput = true;
  DRUN_HOST_DEVICE float forward(float x) const { return x * (1.0f / (1.0f + expf(-x))); }
  DRUN_HOST_DEVICE float backward(float x, float, float dy) const {
    const float s = 1.0f / (1.0f + expf(-x));
    return dy * s * (1.0f + x * (1.0f - s));
  }
};

// The exact GELU (Keras 3's default, approximate=False): x Phi(x), written as
// jax.nn.gelu writes it, x/2 erfc(-x/sqrt(2)); f' = Phi(x) + x phi(x).
struct Gelu {
  static constexpr bool kReadsInput = true;
  static constexpr float kSqrtHalf = 0.70710678118654752440f;
  static constexpr float kInvSqrt2Pi = 0.39894228040143267794f;
  DRUN_HOST_DEVICE float forward(float x) const { return 0.5f * x * erfcf(-x * kSqrtHalf); }
  DRUN_HOST_DEVICE float backward(float x, float, float dy) const {
    return dy * (0.5f * erfcf(-x * kSqrtHalf) + x * kInvSqrt2Pi * expf(-0.5f * x * x));
  }
};

// Keras 3's hard sigmoid: relu6(x + 3) / 6 = clip(x / 6 + 1/2, 0, 1) (Keras 2
// used 0.2 x + 0.5); f' = 1/6 inside (-3, 3), where 0 < y < 1.
struct HardSigmoid {
  static constexpr bool kReadsInput = false;
  DRUN_HOST_DEVICE float forward(float x) const {
    return fminf(fmaxf(x + 3.0f, 0.0f), 6.0f) / 6.0f;
  }
  DRUN_HOST_DEVICE float backward(float, float y, float dy) const {
    return y > 0.0f && y < 1.0f ? dy / 6.0f : 0.0f;
  }
};

struct Exponential {
  static constexpr bool kReadsInput = false;
  DRUN_HOST_DEVICE float forward(float x) const { return expf(x); }
  DRUN_HOST_DEVICE float backward(float, float y, float dy) const { return dy * y; }
};

// x >= 0: x; else alpha x (alpha >= 0, the negative slope: the LeakyReLU
// layer's, default 0.3 there; the "leaky_relu" activation's default is 0.2).
struct LeakyRelu {
  static constexpr bool kReadsInput = false;
  static constexpr float kDefaultAlpha = 0.2f;
  float alpha;
  DRUN_HOST_DEVICE explicit LeakyRelu(float a) : alpha(a) {}
  DRUN_HOST_DEVICE float forward(float x) const { return x >= 0.0f ? x : alpha * x; }
  DRUN_HOST_DEVICE float backward(float, float y, float dy) const {
    return y > 0.0f ? dy : alpha * dy;
  }
};

// Whether F takes a parameter: those that do give its Keras default.
template <class F>
inline constexpr bool kHasAlpha = requires {
  F::kDefaultAlpha;
};

template <class F>
constexpr float default_alpha() {
  if constexpr (kHasAlpha<F>)
    return F::kDefaultAlpha;
  else
    return 0.0f;
}

// The functor for a parameter (ignored by those without one).
template <class F>
DRUN_HOST_DEVICE F make(float alpha) {
  if constexpr (kHasAlpha<F>) {
    return F(alpha);
  } else {
    (void)alpha;
    return F();
  }
}

}  // namespace drun::kernels::act

// X(id, functor, Keras name): every activation, in the order users see them.
// Keras serialises swish as silu; DRUN_ACTIVATION_ALIASES lists the other
// names a model may use for one of these.
#define DRUN_ACTIVATIONS(X)                    \
  X(linear, Linear, "linear")                  \
  X(relu, Relu, "relu")                        \
  X(sigmoid, Sigmoid, "sigmoid")               \
  X(tanh, Tanh, "tanh")                        \
  X(softmax, Softmax, "softmax")               \
  X(elu, Elu, "elu")                           \
  X(selu, Selu, "selu")                        \
  X(softplus, Softplus, "softplus")            \
  X(softsign, Softsign, "softsign")            \
  X(silu, Silu, "silu")                        \
  X(gelu, Gelu, "gelu")                        \
  X(hard_sigmoid, HardSigmoid, "hard_sigmoid") \
  X(exponential, Exponential, "exponential")   \
  X(leaky_relu, LeakyRelu, "leaky_relu")

// X(id, name): another name for activation id.
#define DRUN_ACTIVATION_ALIASES(X) X(silu, "swish")
