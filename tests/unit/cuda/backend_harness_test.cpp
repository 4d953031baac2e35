// The cross-backend harness (docs/architecture.md, "Tests"): every op of the
// backend interface (kernels/ops.hpp) runs on the CPU, the reference, and on
// the GPU with the same random inputs, and the GPU's outputs must match the
// CPU's within a float tolerance, forward and backward.
//
// Table-driven, in the manner of ggml's test-backend-ops: each TEST walks a
// table of cases (shapes, geometries, options) and, for each case,
//   1. makes its tensors on the host from a fixed seed (drun::Rng) and copies
//      each to both backends (`both`); outputs too are preset to the same
//      random values on both, so a backend that leaves an element unwritten,
//      or adds into what it should overwrite, differs from the other;
//   2. runs the op once per backend (`on_both`), the CPU with
//      Exec{Device::cpu} and the GPU with Exec{Device::cuda, 1, context};
//   3. reads the GPU's outputs back and compares them elementwise with the
//      CPU's (`matches`): |gpu - cpu| <= rel * |cpu| + abs * max |cpu|, with
//      rel and abs by the kind of arithmetic (`Tol`). A failure names the
//      op, the case and the worst element with both values.
// A backward pass gets the same upstream tensors on both backends (the CPU's
// forward outputs where it needs them), so each comparison checks one op.
//
// Without a CUDA build or a visible GPU the program says so and exits 77,
// which meson reports as skipped.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <iomanip>
#include <iterator>
#include <limits>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "base/rng.hpp"
#include "kernels/masked_softmax.hpp"
#include "kernels/ops.hpp"
#include "kernels/optimizer_update.hpp"
#include "tensor/tensor.hpp"

namespace drun::kernels {
namespace {

// ---------------------------------------------------------------------------
// The two backends

// The GPU's handles, opened once in main before any test runs.
cuda::Context* g_context = nullptr;

Exec cpu_exec() {
  return Exec{Device::cpu, 1, nullptr};
}
Exec gpu_exec() {
  return Exec{Device::cuda, 1, g_context};
}

// One value per backend: a tensor (the same values on the CPU and on the
// GPU), or an op's scalar result.
template <typename T>
struct PerBackend {
  T cpu{}, gpu{};
  T& on(const Exec& ex) { return ex.device == Device::cpu ? cpu : gpu; }
  const T& on(const Exec& ex) const { return ex.device == Device::cpu ? cpu : gpu; }
};
using Both = PerBackend<Tensor>;

// A host tensor on both backends (each side its own copy).
Both both(const Tensor& host) {
  return {host.clone(), host.to(Device::cuda)};
}

// Two host tensors of float32 with the same bits.
bool same_bits(const Tensor& a, const Tensor& b) {
  return a.numel() == b.numel() && std::memcmp(a.raw(), b.raw(), a.numel() * sizeof(float)) == 0;
}

// Runs `op(ex)` on the CPU, then on the GPU, and waits for the GPU.
void on_both(const std::function<void(const Exec&)>& op) {
  op(cpu_exec());
  op(gpu_exec());
  synchronize(gpu_exec());
}

// ---------------------------------------------------------------------------
// Inputs

Tensor uniform(Rng& rng, const Shape& shape, float lo = -1.0f, float hi = 1.0f) {
  Tensor t(shape);
  for (float& v : t.span_f32()) v = rng.uniform(lo, hi);
  return t;
}

// Sparse class labels in [0, classes).
Tensor labels(Rng& rng, int64_t rows, int64_t classes) {
  Tensor t(Shape{rows}, DType::i32);
  for (int64_t r = 0; r < rows; ++r)
    t.i32()[r] = static_cast<int32_t>(rng.next() % static_cast<uint64_t>(classes));
  return t;
}

// An output tensor preset to the same values on both backends (random
// floats; for int outputs negative numbers, never a valid index): an op must
// overwrite it, or where it accumulates, start from the same values.
Both output(Rng& rng, const Shape& shape, DType dtype = DType::f32) {
  if (dtype == DType::f32) return both(uniform(rng, shape, -5.0f, 5.0f));
  Tensor t(shape, DType::i32);
  for (int64_t i = 0; i < t.numel(); ++i) t.i32()[i] = -1000 - static_cast<int32_t>(i % 77);
  return both(t);
}

// Rows of probabilities (softmax of random logits), as the probability losses
// receive them.
Tensor probabilities(Rng& rng, int64_t rows, int64_t cols) {
  const Tensor logits = uniform(rng, Shape{rows, cols}, -3.0f, 3.0f);
  Tensor p(Shape{rows, cols});
  activation_forward(cpu_exec(), Activation::softmax, logits, p);
  return p;
}

// ---------------------------------------------------------------------------
// Comparison

// Per element, |gpu - cpu| <= rel * |cpu| + abs * scale, where scale is the
// largest |cpu| of the tensor: a float sum errs relative to the size of its
// terms, so an element that cancels to near zero is held to what its
// neighbours allow, and a tensor of small values (a loss gradient scaled by
// 1/batch) gets a bound its own size, not a fixed 1e-6 that would pass
// anything. A scalar result uses its own magnitude as scale.
struct Tol {
  double rel, abs;
};
// Selections and copies (ReLU, max pooling's forward, argmax, int outputs):
// bit-exact.
constexpr Tol kExact{0.0, 0.0};
// One or two roundings per element, where the GPU may contract a * b + c
// into one FMA and the CPU not (add, axpy, scale, mul, bias, masks).
constexpr Tol kElementwise{1e-6, 1e-7};
// exp/log/tanh/sqrt/division from two math libraries, and short sums (a
// pooling window, a softmax row, an optimizer rule, a loss's mean).
constexpr Tol kMath{1e-5, 1e-6};
// Long sums in another order (cuBLAS and cuDNN against OpenBLAS and
// im2col): GEMM, convolutions, column sums, batch statistics.
constexpr Tol kSum{1e-4, 2e-5};

// "[n, h, w, c]" of a flat index in a row-major shape.
std::string index_str(const Shape& shape, int64_t flat) {
  std::vector<int64_t> idx(static_cast<size_t>(shape.rank()));
  for (int d = shape.rank() - 1; d >= 0; --d) {
    idx[static_cast<size_t>(d)] = flat % shape[d];
    flat /= shape[d];
  }
  std::ostringstream out;
  out << "[";
  for (size_t d = 0; d < idx.size(); ++d) out << (d ? ", " : "") << idx[d];
  out << "]";
  return out.str();
}

// Whether t's GPU copy matches its CPU copy within `tol`. NaN matches only
// NaN and an infinity only itself. On failure: what, how many elements
// differ, and the worst (by how far past its tolerance it is).
::testing::AssertionResult matches(const std::string& what, const Both& t, Tol tol) {
  if (t.gpu.device() != Device::cuda)
    return ::testing::AssertionFailure()
           << what << ": the GPU output is on the " << device_name(t.gpu.device());
  const Tensor want = t.cpu;
  const Tensor got = t.gpu.to(Device::cpu);
  if (got.shape() != want.shape() || got.dtype() != want.dtype())
    return ::testing::AssertionFailure()
           << what << ": GPU gives " << dtype_name(got.dtype()) << got.shape().str() << ", CPU "
           << dtype_name(want.dtype()) << want.shape().str();
  const int64_t n = want.numel();
  double scale = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double c = want.dtype() == DType::f32 ? want.f32()[i] : want.i32()[i];
    if (std::isfinite(c)) scale = std::max(scale, std::fabs(c));
  }
  int64_t bad = 0, worst = -1;
  double worst_excess = 0.0;  // |diff| / allowed of the worst element
  for (int64_t i = 0; i < n; ++i) {
    const double c = want.dtype() == DType::f32 ? want.f32()[i] : want.i32()[i];
    const double g = got.dtype() == DType::f32 ? got.f32()[i] : got.i32()[i];
    if (c == g || (std::isnan(c) && std::isnan(g))) continue;
    const double diff = std::fabs(g - c), allowed = tol.rel * std::fabs(c) + tol.abs * scale;
    if (diff <= allowed) continue;  // false for NaN or an infinity against a number
    ++bad;
    const double excess = allowed > 0 && std::isfinite(diff)
                              ? diff / allowed
                              : std::numeric_limits<double>::infinity();
    if (worst < 0 || excess > worst_excess) worst = i, worst_excess = excess;
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  const double c = want.dtype() == DType::f32 ? want.f32()[worst] : want.i32()[worst];
  const double g = got.dtype() == DType::f32 ? got.f32()[worst] : got.i32()[worst];
  // Built here: gtest's own stream would print the tolerances with 17 digits.
  std::ostringstream out;
  out << what << " " << want.shape().str() << ": " << bad << " of " << n
      << " elements differ by more than " << tol.rel << " |cpu| + " << tol.abs << " * "
      << std::setprecision(3) << scale << " (max |cpu|); worst at "
      << index_str(want.shape(), worst) << std::setprecision(9) << ": cpu " << c << ", gpu " << g
      << " (diff " << std::setprecision(3) << std::fabs(g - c) << ")";
  return ::testing::AssertionFailure() << out.str();
}

const char* name(Activation a) {
  return activation_name(a);
}

const char* name(LossKind k) {
  switch (k) {
    case LossKind::softmax_xent_sparse:
      return "softmax_xent_sparse";
    case LossKind::xent_sparse:
      return "xent_sparse";
    case LossKind::softmax_xent:
      return "softmax_xent";
    case LossKind::xent:
      return "xent";
    case LossKind::sigmoid_bce:
      return "sigmoid_bce";
    case LossKind::bce:
      return "bce";
    case LossKind::mse:
      return "mse";
  }
  return "?";
}

// ---------------------------------------------------------------------------
// Which ops the cases cover

// Every op of kernels/op_list.hpp: an enumerator and its name.
enum class Op {
#define DRUN_OP(ret, name, params, args, device, checks) name,
#include "kernels/op_list.hpp"
#undef DRUN_OP
};
const char* const kOpNames[] = {
#define DRUN_OP(ret, name, params, args, device, checks) #name,
#include "kernels/op_list.hpp"
#undef DRUN_OP
};

// The ops that the TESTs below compare: each TEST names its ops in a COVERS
// line above it, registered at start-up (before any test runs, whatever the
// filter), so that an op added to the list without a case fails
// EveryOpHasACase.
std::set<Op>& covered_ops() {
  static std::set<Op> ops;
  return ops;
}
bool covers(std::initializer_list<Op> ops) {
  covered_ops().insert(ops.begin(), ops.end());
  return true;
}
#define HARNESS_CONCAT_(a, b) a##b
#define HARNESS_CONCAT(a, b) HARNESS_CONCAT_(a, b)
#define COVERS(...) \
  [[maybe_unused]] const bool HARNESS_CONCAT(covers_, __LINE__) = covers({__VA_ARGS__})

// The ops no case compares, each with the reason it cannot be.
const Op kNoCase[] = {
    // Waits for the GPU and computes nothing to compare; every case calls it
    // (on_both) before reading the GPU's outputs.
    Op::synchronize,
};

TEST(BackendHarness, EveryOpHasACase) {
  for (size_t i = 0; i < std::size(kOpNames); ++i) {
    const auto op = static_cast<Op>(i);
    const bool has_case = covered_ops().count(op) > 0;
    const bool exempt = std::find(std::begin(kNoCase), std::end(kNoCase), op) != std::end(kNoCase);
    EXPECT_TRUE(has_case || exempt)
        << kOpNames[i] << " (kernels/op_list.hpp) has no case in the harness: add one that "
        << "compares it with the CPU and name it in that case's COVERS line";
    EXPECT_FALSE(has_case && exempt) << kOpNames[i] << " has a case: take it out of kNoCase";
  }
}

// ---------------------------------------------------------------------------
// GEMM and the dense layer's helpers

COVERS(Op::matmul);
TEST(BackendHarness, MatmulEveryTransposeAndScaling) {
  struct Case {
    int64_t m, n, k;
    float alpha, beta;
  };
  const Case cases[] = {
      {37, 23, 41, 1.0f, 0.0f},    // odd sizes, plain product
      {37, 23, 41, 0.5f, 0.25f},   // both scalings
      {1, 10, 64, 1.0f, 0.0f},     // one row (batch-1 inference)
      {64, 1, 33, -1.0f, 0.5f},    // one column, negative alpha
      {128, 96, 200, 1.0f, 1.0f},  // beta 1: accumulating gradients
  };
  int seed = 100;
  for (const Case& c : cases)
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        Rng rng(static_cast<uint64_t>(++seed));
        std::ostringstream label;
        label << "matmul " << (ta ? "T" : "N") << (tb ? "T" : "N") << " m=" << c.m << " n=" << c.n
              << " k=" << c.k << " alpha=" << c.alpha << " beta=" << c.beta;
        const Both a = both(uniform(rng, ta ? Shape{c.k, c.m} : Shape{c.m, c.k}));
        const Both b = both(uniform(rng, tb ? Shape{c.n, c.k} : Shape{c.k, c.n}));
        // With beta 0 y is not read (BLAS): the layers' reused buffers may
        // hold anything, NaN included.
        Tensor y0 = uniform(rng, Shape{c.m, c.n});
        if (c.beta == 0.0f) y0.fill(std::numeric_limits<float>::quiet_NaN());
        Both y = both(y0);
        on_both([&](const Exec& ex) {
          matmul(ex, ta, tb, c.m, c.n, c.k, c.alpha, a.on(ex), b.on(ex), c.beta, y.on(ex));
        });
        EXPECT_TRUE(matches(label.str() + ": y", y, kSum));
        // NaN matches NaN above; the reference itself must not have read y.
        EXPECT_TRUE(std::ranges::all_of(y.cpu.span_f32(), [](float v) { return std::isfinite(v); }))
            << label.str() << " (cpu)";
      }
}

COVERS(Op::affine);
TEST(BackendHarness, AffineAddsTheBiasToEveryRow) {
  // Odd sizes; a Dense layer's forward at 300 rows (the CPU's own GEMM adds
  // the bias as it writes C); one row.
  const std::array<int64_t, 3> cases[] = {{37, 23, 41}, {300, 128, 64}, {1, 10, 64}};
  int seed = 150;
  for (const auto& shape : cases) {
    const int64_t rows = shape[0], in = shape[1], cols = shape[2];
    Rng rng(static_cast<uint64_t>(++seed));
    std::ostringstream label;
    label << "affine " << rows << "x" << in << " * " << in << "x" << cols;
    const Both x = both(uniform(rng, Shape{rows, in}));
    const Both w = both(uniform(rng, Shape{in, cols}));
    const Both b = both(uniform(rng, Shape{cols}));
    Tensor y0 = uniform(rng, Shape{rows, cols});
    y0.fill(std::numeric_limits<float>::quiet_NaN());  // y is not read
    Both y = both(y0);
    on_both([&](const Exec& ex) {
      affine(ex, rows, in, cols, x.on(ex), w.on(ex), b.on(ex), y.on(ex));
    });
    EXPECT_TRUE(matches(label.str() + ": y", y, kSum));
    EXPECT_TRUE(std::ranges::all_of(y.cpu.span_f32(), [](float v) { return std::isfinite(v); }))
        << label.str() << " (cpu)";
  }
}

COVERS(Op::batched_matmul);
TEST(BackendHarness, BatchedMatmulReadsHeadsInPlace) {
  // Attention's products (nn/multi_head_attention.cpp) on query length 5,
  // key length 7, heads of 4: each head read in place from a (batch, time,
  // heads * dim) projection or a (batch, heads, t, s) score. Batch 2 with 3
  // heads and batch 5 with 2: the GPU batches along the longer axis.
  const int64_t T = 5, S = 7, D = 4;
  for (const auto& grid : {std::pair<int64_t, int64_t>{2, 3}, {5, 2}}) {
    const int64_t B = grid.first, H = grid.second;
    const MatrixLayout q{H * D, T * H * D, D}, k{H * D, S * H * D, D}, scores{S, H * T * S, T * S};
    struct Case {
      const char* name;
      BatchedGemm g;
      Shape a, b, y;
      float beta;
    };
    const Case cases[] = {
        {"scores = Q K^T",
         {false, true, T, S, D, B, H, q, k, scores},
         {B, T, H * D},
         {B, S, H * D},
         {B, H, T, S},
         0.0f},
        {"context = P V",
         {false, false, T, D, S, B, H, scores, k, q},
         {B, H, T, S},
         {B, S, H * D},
         {B, T, H * D},
         0.0f},
        {"dK = dS^T Q",
         {true, false, S, D, T, B, H, scores, q, k},
         {B, H, T, S},
         {B, T, H * D},
         {B, S, H * D},
         0.0f},
        {"dV = P^T dC, accumulating",
         {true, false, S, D, T, B, H, scores, q, k},
         {B, H, T, S},
         {B, T, H * D},
         {B, S, H * D},
         0.5f},
        // Under the causal mask the CPU skips the terms of P's hidden zeros
        // (kernels/types.hpp); the GPU computes them all.
        {"context = P V, causal",
         {false, false, T, D, S, B, H, scores, k, q, true},
         {B, H, T, S},
         {B, S, H * D},
         {B, T, H * D},
         0.0f},
        {"dV = P^T dC, causal, accumulating",
         {true, false, S, D, T, B, H, scores, q, k, true},
         {B, H, T, S},
         {B, T, H * D},
         {B, S, H * D},
         0.5f},
        {"a grid of its own, both transposed",
         {true, true, 3, 6, 4, 2, 2, {3, 40, 12}, {4, 50, 24}, {6, 40, 18}},
         {2, 80},
         {2, 100},
         {2, 80},
         0.0f},
    };
    int seed = 250;
    for (const Case& c : cases) {
      Rng rng(static_cast<uint64_t>(++seed));
      Tensor a0 = uniform(rng, c.a);
      if (c.g.causal)  // P, zero where the mask hides it
        for (int64_t r = 0; r < B * H * T; ++r)
          for (int64_t j = masked_softmax_kept(true, T, r, S); j < S; ++j)
            a0.f32()[r * S + j] = 0.0f;
      const Both a = both(a0), b = both(uniform(rng, c.b));
      Tensor y0 = uniform(rng, c.y);
      if (c.beta == 0.0f) y0.fill(std::numeric_limits<float>::quiet_NaN());  // not read
      Both y = both(y0);
      on_both([&](const Exec& ex) {
        batched_matmul(ex, c.g, 0.75f, a.on(ex), b.on(ex), c.beta, y.on(ex));
      });
      const std::string label = std::string("batched_matmul ") + c.name + ", batch " +
                                std::to_string(B) + ", heads " + std::to_string(H);
      // Elements outside every matrix keep y's values (NaN matches NaN).
      EXPECT_TRUE(matches(label + ": y", y, kSum));
    }
  }
}

COVERS(Op::masked_softmax_forward, Op::masked_softmax_backward);
TEST(BackendHarness, MaskedSoftmaxForwardAndBackward) {
  struct Case {
    Shape s;
    int64_t t;
    bool causal;
    float scale;
  };
  // Scores (batch, heads, t, s): square and not, a 1000-wide row across a
  // warp's lanes, a causal t longer than s (the later rows keep every key).
  const Case cases[] = {{{2, 3, 5, 5}, 5, true, 0.5f},  {{2, 3, 5, 7}, 5, true, 0.5f},
                        {{2, 2, 4, 7}, 4, false, 0.3f}, {{1, 2, 3, 1000}, 3, true, 1.0f},
                        {{2, 1, 6, 4}, 6, true, 0.25f}, {{1, 1, 1, 1}, 1, true, 1.0f}};
  int seed = 350;
  for (const Case& c : cases) {
    Rng rng(static_cast<uint64_t>(++seed));
    const std::string label = "masked_softmax " + c.s.str() + (c.causal ? " causal" : "");
    const Tensor x_host = uniform(rng, c.s, -4.0f, 4.0f);
    const Both x = both(x_host);
    Both y = output(rng, c.s);
    on_both([&](const Exec& ex) {
      masked_softmax_forward(ex, c.scale, c.causal, c.t, x.on(ex), y.on(ex));
    });
    EXPECT_TRUE(matches(label + " forward: y", y, kMath));
    Both inplace = both(x_host);
    on_both([&](const Exec& ex) {
      masked_softmax_forward(ex, c.scale, c.causal, c.t, inplace.on(ex), inplace.on(ex));
    });
    EXPECT_TRUE(matches(label + " forward in place: y", inplace, kMath));

    const Both y_ref = both(y.cpu);
    const Both dy = both(uniform(rng, c.s));
    Both dx = output(rng, c.s);
    on_both([&](const Exec& ex) {
      masked_softmax_backward(ex, c.scale, y_ref.on(ex), dy.on(ex), dx.on(ex));
    });
    EXPECT_TRUE(matches(label + " backward: dx", dx, kMath));
  }
}

COVERS(Op::bias_add, Op::column_sums);
TEST(BackendHarness, BiasAddAndColumnSums) {
  const Shape shapes[] = {Shape{1, 1}, Shape{5, 300}, Shape{64, 10}, Shape{2, 7, 7, 16}};
  int seed = 200;
  for (const Shape& s : shapes) {
    Rng rng(static_cast<uint64_t>(++seed));
    const int64_t cols = s[-1];
    Both y = both(uniform(rng, s));
    const Both b = both(uniform(rng, Shape{cols}));
    on_both([&](const Exec& ex) { bias_add(ex, y.on(ex), b.on(ex)); });
    EXPECT_TRUE(matches("bias_add " + s.str() + ": y", y, kElementwise));

    const Both x = both(uniform(rng, s));
    Both sums = output(rng, Shape{cols});
    on_both([&](const Exec& ex) { column_sums(ex, x.on(ex), sums.on(ex)); });
    EXPECT_TRUE(matches("column_sums " + s.str() + ": s", sums, kSum));
  }
}

// ---------------------------------------------------------------------------
// Activations

// The activations' cases: each activation of kernels/activation_list.hpp
// with the tolerances of its arithmetic (a missing one fails the test).
struct ActivationCase {
  ActivationFn act;
  Tol forward, backward;
};
const ActivationCase kActivationCases[] = {
    {Activation::linear, kExact, kExact},      // copies
    {Activation::relu, kExact, kExact},        // selections
    {Activation::leaky_relu, kExact, kExact},  // selections and one product
    {{Activation::leaky_relu, 0.3f}, kExact, kExact},
    {Activation::sigmoid, kMath, kElementwise},  // backward from y: products
    {Activation::tanh, kMath, kElementwise},
    {Activation::softmax, kMath, kMath},     // row sums
    {Activation::elu, kMath, kElementwise},  // expm1; backward from y
    {Activation::selu, kMath, kElementwise},
    {Activation::softplus, kMath, kMath},  // log1p, exp; backward expm1
    {Activation::softsign, kElementwise, kElementwise},
    {Activation::silu, kMath, kMath},  // exp; backward from x
    {Activation::gelu, kMath, kMath},  // erfc, exp; backward from x
    {Activation::hard_sigmoid, kElementwise, kElementwise},
    {Activation::exponential, kMath, kElementwise},
};

TEST(BackendHarness, EveryActivationHasACase) {
  for (const Activation a : kAllActivations)
    EXPECT_TRUE(std::any_of(std::begin(kActivationCases), std::end(kActivationCases),
                            [&](const ActivationCase& c) { return c.act.kind == a; }))
        << name(a) << " has no case in kActivationCases";
}

COVERS(Op::activation_forward, Op::activation_backward);
TEST(BackendHarness, ActivationsForwardAndBackward) {
  // Softmax works over the last dimension: a 1000-wide row needs the GPU's
  // row reduction to span several threads.
  const Shape shapes[] = {Shape{4, 10}, Shape{3, 1000}, Shape{2, 5, 5, 8}, Shape{1, 1}};
  int seed = 300;
  for (const ActivationCase& c : kActivationCases)
    for (const Shape& s : shapes) {
      const ActivationFn act = c.act;
      Rng rng(static_cast<uint64_t>(++seed));
      const std::string label = std::string("activation ") + name(act.kind) + " (alpha " +
                                std::to_string(act.alpha) + ") " + s.str();

      const Tensor x_host = uniform(rng, s, -4.0f, 4.0f);
      const Both x = both(x_host);
      Both y = output(rng, s);
      on_both([&](const Exec& ex) { activation_forward(ex, act, x.on(ex), y.on(ex)); });
      EXPECT_TRUE(matches(label + " forward: y", y, c.forward));

      // In place, as the dense and conv layers call it.
      Both inplace = both(x_host);
      on_both([&](const Exec& ex) { activation_forward(ex, act, inplace.on(ex), inplace.on(ex)); });
      EXPECT_TRUE(matches(label + " forward in place: y", inplace, c.forward));

      // Backward from the CPU's forward output (and the input, where the
      // activation reads it; an empty tensor otherwise, as the layers pass), on both.
      const Both y_ref = both(y.cpu);
      const Both x_in = act.reads_input() ? x : Both{};
      const Both dy = both(uniform(rng, s));
      Both dx = output(rng, s);
      on_both([&](const Exec& ex) {
        activation_backward(ex, act, x_in.on(ex), y_ref.on(ex), dy.on(ex), dx.on(ex));
      });
      EXPECT_TRUE(matches(label + " backward: dx", dx, c.backward));

      // In place (dx and dy alias), as the activation layer may.
      Both d_inplace = both(dy.cpu);
      on_both([&](const Exec& ex) {
        activation_backward(ex, act, x_in.on(ex), y_ref.on(ex), d_inplace.on(ex), d_inplace.on(ex));
      });
      EXPECT_TRUE(matches(label + " backward in place: dx", d_inplace, c.backward));
    }
}

// ---------------------------------------------------------------------------
// Elementwise ops and the finiteness check

COVERS(Op::add, Op::add_relu, Op::add_relu_backward, Op::axpy, Op::scale, Op::scale_by, Op::fill,
       Op::mul);
TEST(BackendHarness, ElementwiseOps) {
  // Odd lengths leave tails past any vector width; 65537 spans many blocks.
  const int64_t sizes[] = {1, 7, 1000, 65537};
  int seed = 400;
  for (const int64_t n : sizes) {
    Rng rng(static_cast<uint64_t>(++seed));
    const std::string len = " n=" + std::to_string(n);
    const Both a = both(uniform(rng, Shape{n})), b = both(uniform(rng, Shape{n}));

    Both sum = output(rng, Shape{n});
    on_both([&](const Exec& ex) { add(ex, a.on(ex), b.on(ex), sum.on(ex)); });
    EXPECT_TRUE(matches("add" + len + ": y", sum, kElementwise));

    Both sum_relu = output(rng, Shape{n});
    on_both([&](const Exec& ex) { add_relu(ex, a.on(ex), b.on(ex), sum_relu.on(ex)); });
    EXPECT_TRUE(matches("add_relu" + len + ": y", sum_relu, kElementwise));

    const Both relu_y = both(uniform(rng, Shape{n}));
    Both grad = output(rng, Shape{n});
    on_both([&](const Exec& ex) {
      add_relu_backward(ex, a.on(ex), b.on(ex), relu_y.on(ex), grad.on(ex));
    });
    EXPECT_TRUE(matches("add_relu_backward" + len + ": dx", grad, kElementwise));

    Both acc = both(uniform(rng, Shape{n}));
    on_both([&](const Exec& ex) { axpy(ex, -0.7f, a.on(ex), acc.on(ex)); });
    EXPECT_TRUE(matches("axpy" + len + ": y", acc, kElementwise));

    Both scaled = both(uniform(rng, Shape{n}));
    on_both([&](const Exec& ex) { scale(ex, 1.5f, scaled.on(ex)); });
    EXPECT_TRUE(matches("scale" + len + ": y", scaled, kElementwise));

    Both scaled_by = both(uniform(rng, Shape{n}));
    const Both factor = both(uniform(rng, Shape{1}, 0.5f, 2.0f));
    on_both([&](const Exec& ex) { scale_by(ex, factor.on(ex), scaled_by.on(ex)); });
    EXPECT_TRUE(matches("scale_by" + len + ": y", scaled_by, kElementwise));

    Both filled = output(rng, Shape{n});
    on_both([&](const Exec& ex) { fill(ex, -2.25f, filled.on(ex)); });
    EXPECT_TRUE(matches("fill" + len + ": y", filled, kElementwise));
    EXPECT_EQ(filled.cpu.f32()[n - 1], -2.25f);

    Both prod = output(rng, Shape{n});
    on_both([&](const Exec& ex) { mul(ex, a.on(ex), b.on(ex), prod.on(ex)); });
    EXPECT_TRUE(matches("mul" + len + ": y", prod, kElementwise));
  }
}

COVERS(Op::mark_nonfinite);
TEST(BackendHarness, MarkNonfinite) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  struct Case {
    int64_t n;
    int64_t at;  // where the bad value goes; -1: nowhere
    float value;
  };
  // Finite values, then the bad value first, in the middle and last: a
  // reduction's first block, an inner one and its tail.
  const Case cases[] = {
      {1, -1, 0.0f},          // one finite value
      {1000, -1, 0.0f},       // one block
      {100003, -1, 0.0f},     // many blocks and a tail
      {1, 0, nan},            // a lone NaN
      {1000, 0, nan},         // NaN first
      {100003, 50001, nan},   // NaN inside
      {100003, 100002, nan},  // NaN in the tail
      {1000, 999, inf},       // +Inf last of one block
      {100003, 7, -inf},      // -Inf in the first block
      {100003, 100002, inf},  // +Inf in the tail
  };
  int seed = 500;
  for (const Case& c : cases) {
    Rng rng(static_cast<uint64_t>(++seed));
    Tensor host = uniform(rng, Shape{c.n}, -1e30f, 1e30f);  // large but finite
    if (c.at >= 0) host.f32()[c.at] = c.value;
    const Both x = both(host);
    const bool want = c.at < 0;
    std::ostringstream label;
    label << "mark_nonfinite n=" << c.n;
    if (c.at >= 0) label << " with " << c.value << " at " << c.at;
    // mark_nonfinite sets a flag without waiting, and leaves a set flag set.
    for (const float preset : {0.0f, 1.0f}) {
      Tensor start(Shape{1});
      start.f32()[0] = preset;
      Both flag = both(start);
      on_both([&](const Exec& ex) { mark_nonfinite(ex, x.on(ex), flag.on(ex)); });
      const float expect = want ? preset : 1.0f;
      EXPECT_EQ(flag.cpu.f32()[0], expect) << label.str() << " flag from " << preset << " (cpu)";
      EXPECT_EQ(flag.gpu.to(Device::cpu).f32()[0], expect)
          << label.str() << " flag from " << preset << " (gpu)";
    }
  }
}

// Dropout's key is stored alike, and its forward draws the same mask on both
// sides, in place (x = y) too.
COVERS(Op::dropout_set_key, Op::dropout_forward);
TEST(BackendHarness, DropoutForward) {
  int seed = 600;
  for (const int64_t n : {int64_t{1}, int64_t{4097}, int64_t{100003}}) {
    Rng rng(static_cast<uint64_t>(++seed));
    const Both x = both(uniform(rng, Shape{n}));
    Both mask = output(rng, Shape{n}), y = output(rng, Shape{n});
    Both key = both(Tensor::zeros(Shape{2}, DType::i32));
    on_both([&](const Exec& ex) {
      dropout_set_key(ex, 0xD5'0000'0000ull + static_cast<uint64_t>(n), key.on(ex));
      dropout_forward(ex, key.on(ex), 0.75f, x.on(ex), mask.on(ex), y.on(ex));
    });
    const std::string len = " n=" + std::to_string(n);
    EXPECT_TRUE(matches("dropout_set_key" + len + ": key", key, kExact));
    EXPECT_TRUE(matches("dropout_forward" + len + ": mask", mask, kExact));
    EXPECT_TRUE(matches("dropout_forward" + len + ": y", y, kExact));
    Both inplace = both(x.cpu);
    on_both([&](const Exec& ex) {
      dropout_forward(ex, key.on(ex), 0.75f, inplace.on(ex), mask.on(ex), inplace.on(ex));
    });
    EXPECT_TRUE(matches("dropout_forward in place" + len, inplace, kExact));
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(inplace.cpu.f32()[i], y.cpu.f32()[i]) << "in place differs at " << i;
  }
}

// Every direction between float32, float16 and bfloat16, bit for bit: the
// GPU's conversions against kernels/half.hpp. The inputs span every
// exponent either type has (subnormals, overflow to infinity, ties) and the
// special values; NaNs need only stay NaNs.
COVERS(Op::cast);
TEST(BackendHarness, CastBetweenFloatTypes) {
  const DType types[] = {DType::f32, DType::f16, DType::bf16};
  const float specials[] = {0.0f,
                            -0.0f,
                            1.0f,
                            65504.0f,
                            65520.0f,
                            0x1p-24f,
                            0x1p-25f,
                            1.0f + 0x1p-11f,
                            1.0f + 0x1p-8f,
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::max(),
                            std::numeric_limits<float>::denorm_min()};
  for (int64_t n : {int64_t{1}, int64_t{1000}, int64_t{100003}}) {
    Rng rng(static_cast<uint64_t>(600 + n));
    Tensor wide(Shape{n});
    for (int64_t i = 0; i < n; ++i)
      wide.f32()[i] = i < static_cast<int64_t>(std::size(specials))
                          ? specials[i]
                          : rng.uniform(-2.0f, 2.0f) *
                                std::ldexp(1.0f, static_cast<int>(rng.uniform(-140, 128)));
    for (DType from : types) {
      Tensor x(Shape{n}, from);
      cast(cpu_exec(), wide, x);
      const Both in = both(x);
      for (DType to : types) {
        Both y{Tensor(Shape{n}, to), Tensor(Shape{n}, to, Device::cuda)};
        on_both([&](const Exec& ex) { cast(ex, in.on(ex), y.on(ex)); });
        const Tensor gpu = y.gpu.to(Device::cpu);
        Tensor cpu_wide(Shape{n}), gpu_wide(Shape{n});
        cast(cpu_exec(), y.cpu, cpu_wide);
        cast(cpu_exec(), gpu, gpu_wide);
        int64_t differ = 0, first = -1;
        for (int64_t i = 0; i < n; ++i) {
          const float a = cpu_wide.f32()[i], b = gpu_wide.f32()[i];
          const bool same = std::isnan(a)
                                ? std::isnan(b)
                                : std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
          if (!same && differ++ == 0) first = i;
        }
        EXPECT_EQ(differ, 0) << "cast " << dtype_name(from) << " -> " << dtype_name(to)
                             << " n=" << n << ": first at " << first;
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Convolutions

// A convolution's workspace, sized by each backend for itself.
Both conv_workspace(const ConvGeometry& g) {
  Both workspace;
  for (const Exec ex : {cpu_exec(), gpu_exec()})
    workspace.on(ex) =
        Tensor(Shape{std::max<int64_t>(1, conv2d_workspace_floats(ex, g))}, DType::f32, ex.device);
  return workspace;
}

// The filter gradient on both backends, with and without the forward's ReLU
// output as a mask, with and without a bias gradient (an undefined db: not
// computed); dw to `dw_tol`, db to kSum (it is summed in float32 either way).
void expect_filter_gradients(Rng& rng, const ConvGeometry& g, const Both& x, const Both& dy,
                             const Both& mask, Both& workspace, const std::string& label,
                             Tol dw_tol) {
  const Shape ws{g.kh, g.kw, g.c, g.co};
  for (const bool masked : {false, true})
    for (const bool biased : {true, false}) {
      Both dw = output(rng, ws), db = biased ? output(rng, Shape{g.co}) : Both{};
      on_both([&](const Exec& ex) {
        conv2d_backward_filter(ex, g, x.on(ex), dy.on(ex), masked ? &mask.on(ex) : nullptr,
                               dw.on(ex), db.on(ex), workspace.on(ex));
      });
      const std::string what =
          label + " backward filter" + (masked ? " relu_y" : "") + (biased ? "" : " no bias");
      EXPECT_TRUE(matches(what + ": dw", dw, dw_tol));
      if (biased) {
        EXPECT_TRUE(matches(what + ": db", db, kSum));
      }
    }
}

// conv2d_workspace_floats: each backend's own size (not comparable), which
// its convolutions then run in.
COVERS(Op::conv2d_workspace_floats, Op::conv2d_forward, Op::conv2d_backward_filter,
       Op::conv2d_backward_data);
TEST(BackendHarness, Conv2dForwardAndBackward) {
  struct Case {
    int64_t n, h, w, c, k, co, stride;
    bool same;
  };
  // TensorFlow's 'same' puts an odd padding pixel at the bottom/right; the
  // comments give each case's total padding (top + bottom, left + right).
  const Case cases[] = {
      {2, 8, 8, 3, 3, 4, 1, true},      // 3x3 same, pad 1+1
      {2, 8, 8, 4, 3, 6, 2, true},      // 3x3 same stride 2, pad 0+1 (odd)
      {2, 11, 8, 3, 3, 5, 2, true},     // non-square: pad 1+1 by 0+1
      {1, 10, 10, 3, 5, 2, 2, true},    // 5x5 same stride 2, pad 1+2 (odd)
      {2, 9, 9, 3, 5, 4, 1, true},      // 5x5 same, pad 2+2
      {2, 12, 12, 1, 3, 8, 1, false},   // 3x3 valid, one input channel
      {2, 7, 7, 3, 5, 4, 2, false},     // 5x5 valid stride 2
      {3, 7, 9, 2, 1, 5, 2, false},     // 1x1 stride 2 (subsampling)
      {2, 6, 6, 8, 1, 16, 1, false},    // 1x1 stride 1 (the CPU's pointwise path)
      {4, 16, 16, 16, 3, 32, 1, true},  // a ResNet-sized block
  };
  int seed = 600;
  for (const Case& t : cases) {
    Rng rng(static_cast<uint64_t>(++seed));
    const ConvGeometry g =
        conv_geometry(t.n, t.h, t.w, t.c, t.k, t.k, t.co, t.stride, t.stride, t.same);
    std::ostringstream os;
    os << "conv2d x=(" << t.n << ", " << t.h << ", " << t.w << ", " << t.c << ") " << t.k << "x"
       << t.k << "x" << t.co << " stride " << t.stride << (t.same ? " same" : " valid");
    const std::string label = os.str();
    const Shape xs{g.n, g.h, g.w, g.c}, ws{g.kh, g.kw, g.c, g.co}, ys{g.n, g.oh, g.ow, g.co};

    Both workspace = conv_workspace(g);

    const Both x = both(uniform(rng, xs)), w = both(uniform(rng, ws));
    const Both b = both(uniform(rng, Shape{g.co}));
    Tensor relu_y;  // the CPU's fused-ReLU output, for the masked filter gradient
    for (const bool relu : {false, true})
      for (const bool biased : {true, false}) {  // without: an undefined b
        Both y = output(rng, ys);
        on_both([&](const Exec& ex) {
          conv2d_forward(ex, g, x.on(ex), w.on(ex), biased ? b.on(ex) : Tensor(), y.on(ex), relu,
                         workspace.on(ex), nullptr);
        });
        EXPECT_TRUE(matches(
            label + (biased ? "" : " no bias") + (relu ? " relu" : "") + " forward: y", y, kSum));
        if (relu && biased) relu_y = y.cpu.clone();
      }

    const Both dy = both(uniform(rng, ys));
    expect_filter_gradients(rng, g, x, dy, both(relu_y), workspace, label, kSum);

    Both dx = output(rng, xs);
    on_both([&](const Exec& ex) {
      conv2d_backward_data(ex, g, dy.on(ex), w.on(ex), dx.on(ex), workspace.on(ex));
    });
    EXPECT_TRUE(matches(label + " backward data: dx", dx, kSum));
  }
}

// The convolutions Conv2DTranspose runs with the roles swapped
// (nn/conv2d_transpose.cpp): their input is its output, sized by Keras'
// lengths, so they have input rows no window reaches (output_padding,
// strides over the kernel) and an even kernel's 'same' with output_padding
// 0, padded k / 2 on each side, which no Conv2D has.
COVERS(Op::conv2d_forward, Op::conv2d_backward_filter, Op::conv2d_backward_data);
TEST(BackendHarness, Conv2dGeometriesOfTransposedConvolutions) {
  // {n, h, w, c, kh, kw, co, sh, sw, pad_top, pad_left, oh, ow}
  const ConvGeometry cases[] = {
      {2, 10, 14, 3, 3, 3, 4, 2, 3, 0, 0, 4, 4},  // 'valid' 3x3, output_padding (1, 2)
      {2, 12, 12, 2, 2, 2, 3, 3, 3, 0, 0, 4, 4},  // 'valid' 2x2 stride 3
      {2, 6, 8, 4, 4, 4, 3, 2, 2, 2, 2, 4, 5},    // 'same' 4x4 stride 2, output_padding 0
      {2, 8, 8, 2, 5, 5, 3, 3, 3, 1, 1, 3, 3},    // 'same' 5x5 stride 3, output_padding 1: odd
  };
  int seed = 640;
  for (const ConvGeometry& g : cases) {
    Rng rng(static_cast<uint64_t>(++seed));
    std::ostringstream os;
    os << "transposed conv2d x=(" << g.n << ", " << g.h << ", " << g.w << ", " << g.c << ") "
       << g.kh << "x" << g.kw << "x" << g.co << " stride " << g.sh << "x" << g.sw << " pad "
       << g.pad_top << "," << g.pad_left << " -> " << g.oh << "x" << g.ow;
    const std::string label = os.str();
    const Shape xs{g.n, g.h, g.w, g.c}, ws{g.kh, g.kw, g.c, g.co}, ys{g.n, g.oh, g.ow, g.co};
    Both workspace = conv_workspace(g);
    const Both x = both(uniform(rng, xs)), w = both(uniform(rng, ws));
    const Both dy = both(uniform(rng, ys));
    Both y = output(rng, ys), dw = output(rng, ws), no_db, dx = output(rng, xs);
    on_both([&](const Exec& ex) {
      conv2d_forward(ex, g, x.on(ex), w.on(ex), Tensor(), y.on(ex), false, workspace.on(ex),
                     nullptr);
      conv2d_backward_filter(ex, g, x.on(ex), dy.on(ex), nullptr, dw.on(ex), no_db.on(ex),
                             workspace.on(ex));
      conv2d_backward_data(ex, g, dy.on(ex), w.on(ex), dx.on(ex), workspace.on(ex));
    });
    EXPECT_TRUE(matches(label + " forward: y", y, kSum));
    EXPECT_TRUE(matches(label + " backward filter: dw", dw, kSum));
    EXPECT_TRUE(matches(label + " backward data: dx", dx, kSum));
  }
}

// Mixed precision (op_list.hpp): GEMMs and convolutions on float16 and
// bfloat16 operands, against the CPU's kernels/mixed_reference.hpp. Both
// round their operands alike; their float32 sums differ in order, which can
// move a result rounded to the narrow type by one of its units in the last
// place: the tolerance is that unit.
Tol narrow_tolerance(DType type) {
  return type == DType::f16 ? Tol{2e-3, 1e-4} : Tol{1.6e-2, 1e-3};
}

Tensor narrowed(const Tensor& x, DType type) {
  Tensor t(x.shape(), type);
  cast(cpu_exec(), x, t);
  return t;
}

COVERS(Op::matmul);
TEST(BackendHarness, MixedPrecisionMatmul) {
  for (const DType type : {DType::f16, DType::bf16}) {
    int seed = 900;
    for (const bool a_narrow : {true, false})
      for (const bool ta : {false, true}) {
        const int64_t m = 37, n = 23, k = 65;
        Rng rng(static_cast<uint64_t>(++seed));
        const Tensor a32 = uniform(rng, ta ? Shape{k, m} : Shape{m, k});
        const Tensor b32 = uniform(rng, Shape{k, n});
        // Dense's three products: both narrow (forward), a float32 gradient
        // beside a narrow operand on either side (backward).
        const Both a = both(a_narrow ? narrowed(a32, type) : a32);
        const Both b = both(narrowed(b32, type));
        Both y = output(rng, Shape{m, n});
        on_both([&](const Exec& ex) {
          matmul(ex, ta, false, m, n, k, 1.0f, a.on(ex), b.on(ex), 0.0f, y.on(ex));
        });
        std::ostringstream label;
        label << "matmul " << dtype_name(type) << (a_narrow ? "" : " with float32 a")
              << (ta ? " T" : " N");
        EXPECT_TRUE(matches(label.str() + ": y", y, narrow_tolerance(type)));
      }
  }
}

COVERS(Op::conv2d_forward, Op::conv2d_backward_filter, Op::conv2d_backward_data);
TEST(BackendHarness, MixedPrecisionConv2d) {
  struct Case {
    int64_t n, h, w, c, k, co, stride;
    bool same;
  };
  const Case cases[] = {
      {2, 8, 8, 4, 3, 8, 1, true},      // 3x3 same
      {2, 11, 8, 8, 3, 8, 2, true},     // odd bottom/right padding: the padded copy
      {2, 12, 12, 1, 3, 8, 1, false},   // one input channel (the seed CNN's first layer)
      {4, 16, 16, 16, 3, 32, 1, true},  // a ResNet-sized block
  };
  for (const DType type : {DType::f16, DType::bf16}) {
    const Tol tol = narrow_tolerance(type);
    int seed = 950;
    for (const Case& t : cases) {
      Rng rng(static_cast<uint64_t>(++seed));
      const ConvGeometry g =
          conv_geometry(t.n, t.h, t.w, t.c, t.k, t.k, t.co, t.stride, t.stride, t.same);
      std::ostringstream os;
      os << "conv2d " << dtype_name(type) << " x=(" << t.n << ", " << t.h << ", " << t.w << ", "
         << t.c << ") " << t.k << "x" << t.k << "x" << t.co << " stride " << t.stride;
      const std::string label = os.str();
      const Shape xs{g.n, g.h, g.w, g.c}, ws{g.kh, g.kw, g.c, g.co}, ys{g.n, g.oh, g.ow, g.co};
      Both workspace = conv_workspace(g);
      const Both x = both(narrowed(uniform(rng, xs), type));
      const Both w = both(narrowed(uniform(rng, ws), type));
      const Both b = both(uniform(rng, Shape{g.co}));
      Tensor relu_y;
      for (const bool relu : {false, true})
        for (const bool biased : {true, false}) {
          Both y = output(rng, ys);
          PerBackend<bool> moments;
          on_both([&](const Exec& ex) {
            moments.on(ex) = conv2d_forward(ex, g, x.on(ex), w.on(ex), biased ? b.on(ex) : Tensor(),
                                            y.on(ex), relu, workspace.on(ex), nullptr);
          });
          EXPECT_TRUE(matches(
              label + (biased ? "" : " no bias") + (relu ? " relu" : "") + " forward: y", y, tol));
          EXPECT_FALSE(moments.cpu || moments.gpu) << label;
          if (relu && biased) relu_y = y.cpu.clone();
        }
      const Both dy = both(uniform(rng, ys));  // float32, as the layers give it
      expect_filter_gradients(rng, g, x, dy, both(relu_y), workspace, label, tol);
      Both dx = output(rng, xs);
      on_both([&](const Exec& ex) {
        conv2d_backward_data(ex, g, dy.on(ex), w.on(ex), dx.on(ex), workspace.on(ex));
      });
      EXPECT_TRUE(matches(label + " backward data: dx", dx, tol));

      // dy rounded once by the layer (a convolution without bias) for both gradients.
      const Both dy_narrow = both(narrowed(dy.cpu, type));
      Both dw = output(rng, ws), dx_from_narrow = output(rng, xs);
      on_both([&](const Exec& ex) {
        Tensor no_db;
        conv2d_backward_filter(ex, g, x.on(ex), dy_narrow.on(ex), nullptr, dw.on(ex), no_db,
                               workspace.on(ex));
        conv2d_backward_data(ex, g, dy_narrow.on(ex), w.on(ex), dx_from_narrow.on(ex),
                             workspace.on(ex));
      });
      EXPECT_TRUE(matches(label + " backward filter, dy rounded: dw", dw, tol));
      EXPECT_TRUE(matches(label + " backward data, dy rounded: dx", dx_from_narrow, tol));
      EXPECT_TRUE(same_bits(dx_from_narrow.cpu, dx.cpu)) << label << ": the CPU's dx moved";
    }
  }
}

// ---------------------------------------------------------------------------
// Pooling

COVERS(Op::max_pool_forward, Op::max_pool_backward, Op::avg_pool_forward, Op::avg_pool_backward);
TEST(BackendHarness, PoolingForwardAndBackward) {
  struct Case {
    int64_t n, h, w, c, window, stride;
    bool same;
  };
  const Case cases[] = {
      {2, 8, 8, 3, 2, 2, false},    // windows that tile the input (the CPU's fast path)
      {2, 9, 9, 4, 3, 2, false},    // overlapping 3x3 stride 2
      {2, 8, 8, 4, 3, 2, true},     // overlapping and 'same', pad 0+1 (odd)
      {1, 7, 10, 5, 3, 2, true},    // non-square 'same': pad 1+1 by 0+1
      {2, 7, 7, 3, 2, 2, true},     // 2x2 'same' on an odd size, pad 0+1
      {2, 6, 6, 3, 3, 1, true},     // 3x3 stride 1 'same', pad 1+1
      {1, 5, 5, 2, 5, 1, false},    // one window over the whole image
      {4, 16, 16, 32, 3, 2, true},  // a ResNet stem's pool
  };
  int seed = 700;
  for (const Case& t : cases) {
    Rng rng(static_cast<uint64_t>(++seed));
    const PoolGeometry g =
        pool_geometry(t.n, t.h, t.w, t.c, t.window, t.window, t.stride, t.stride, t.same);
    std::ostringstream os;
    os << "x=(" << t.n << ", " << t.h << ", " << t.w << ", " << t.c << ") " << t.window << "x"
       << t.window << " stride " << t.stride << (t.same ? " same" : " valid");
    const std::string label = os.str();
    const Shape xs{g.n, g.h, g.w, g.c}, ys{g.n, g.oh, g.ow, g.c};
    const Both x = both(uniform(rng, xs));
    const Both dy = both(uniform(rng, ys));

    // Max pooling: the winners (argmax holds iy * W + ix, pool.hpp) must be
    // the same pixels. Backward scatters dy through the CPU's winners on both
    // backends, so its comparison checks the backward alone.
    Both y = output(rng, ys), argmax = output(rng, ys, DType::i32);
    on_both([&](const Exec& ex) { max_pool_forward(ex, g, x.on(ex), y.on(ex), argmax.on(ex)); });
    EXPECT_TRUE(matches("max_pool " + label + " forward: y", y, kExact));
    EXPECT_TRUE(matches("max_pool " + label + " forward: argmax", argmax, kExact));
    const Both winners = both(argmax.cpu);
    Both dx = output(rng, xs);
    on_both(
        [&](const Exec& ex) { max_pool_backward(ex, g, dy.on(ex), winners.on(ex), dx.on(ex)); });
    // A pixel that wins several overlapping windows sums their dy, perhaps
    // in another order.
    EXPECT_TRUE(matches("max_pool " + label + " backward: dx", dx, kMath));

    // Average pooling leaves padding out of the count, as Keras does.
    Both avg = output(rng, ys);
    on_both([&](const Exec& ex) { avg_pool_forward(ex, g, x.on(ex), avg.on(ex)); });
    EXPECT_TRUE(matches("avg_pool " + label + " forward: y", avg, kMath));
    Both avg_dx = output(rng, xs);
    on_both([&](const Exec& ex) { avg_pool_backward(ex, g, dy.on(ex), avg_dx.on(ex)); });
    EXPECT_TRUE(matches("avg_pool " + label + " backward: dx", avg_dx, kMath));
  }
}

// Depthwise convolutions (op_list.hpp): co = c * the depth multiplier, with
// and without a bias; the backward passes from the same dy on both.
COVERS(Op::depthwise_conv2d_forward, Op::depthwise_conv2d_backward_data,
       Op::depthwise_conv2d_backward_filter);
TEST(BackendHarness, DepthwiseConv2dForwardAndBackward) {
  struct Case {
    int64_t n, h, w, c, k, m, stride;
    bool same;
  };
  const Case cases[] = {
      {2, 8, 8, 3, 3, 1, 1, true},     // MobileNet's 3x3 same
      {2, 8, 8, 4, 3, 2, 2, true},     // stride 2, pad 0+1 (odd), multiplier 2
      {2, 11, 8, 3, 3, 3, 2, true},    // non-square, multiplier 3
      {1, 10, 10, 2, 5, 1, 2, true},   // 5x5 same stride 2, pad 1+2 (odd)
      {2, 7, 7, 3, 3, 2, 1, false},    // valid
      {2, 7, 9, 5, 5, 1, 2, false},    // 5x5 valid stride 2
      {4, 16, 16, 32, 3, 1, 1, true},  // a MobileNet-sized block
  };
  int seed = 760;
  for (const Case& t : cases) {
    Rng rng(static_cast<uint64_t>(++seed));
    const ConvGeometry g =
        conv_geometry(t.n, t.h, t.w, t.c, t.k, t.k, t.c * t.m, t.stride, t.stride, t.same);
    std::ostringstream os;
    os << "depthwise_conv2d x=(" << t.n << ", " << t.h << ", " << t.w << ", " << t.c << ") " << t.k
       << "x" << t.k << " x" << t.m << " stride " << t.stride << (t.same ? " same" : " valid");
    const std::string label = os.str();
    const Shape xs{g.n, g.h, g.w, g.c}, ws{g.kh, g.kw, g.c, t.m}, ys{g.n, g.oh, g.ow, g.co};
    const Both x = both(uniform(rng, xs)), w = both(uniform(rng, ws));
    const Both b = both(uniform(rng, Shape{g.co}));
    for (const bool biased : {true, false}) {
      Both y = output(rng, ys);
      on_both([&](const Exec& ex) {
        depthwise_conv2d_forward(ex, g, x.on(ex), w.on(ex), biased ? b.on(ex) : Tensor(), y.on(ex));
      });
      EXPECT_TRUE(matches(label + (biased ? "" : " no bias") + " forward: y", y, kMath));
    }
    const Both dy = both(uniform(rng, ys));
    Both dx = output(rng, xs), dw = output(rng, ws);
    on_both([&](const Exec& ex) {
      depthwise_conv2d_backward_data(ex, g, dy.on(ex), w.on(ex), dx.on(ex));
    });
    EXPECT_TRUE(matches(label + " backward data: dx", dx, kMath));
    // A sum over the batch's pixels, in another order on the GPU.
    on_both([&](const Exec& ex) {
      depthwise_conv2d_backward_filter(ex, g, x.on(ex), dy.on(ex), dw.on(ex));
    });
    EXPECT_TRUE(matches(label + " backward filter: dw", dw, kSum));
  }
}

// A first convolution and the max pooling after it: in one pass where the
// backend has the kernel (the CPU, where the direct convolution suits),
// else as the layer runs it, conv2d_forward then max_pool_forward (CUDA).
// Backward gets the CPU's pooled output and winners on both backends.
COVERS(Op::conv2d_max_pool_forward, Op::conv2d_max_pool_backward_filter);
TEST(BackendHarness, ConvolutionWithMaxPool) {
  struct Case {
    int64_t n, h, w, c, k, co, window;
    bool same;
  };
  const Case cases[] = {
      {3, 12, 10, 1, 3, 32, 2, false},  // the seed CNN's first layers, smaller
      {2, 9, 9, 3, 3, 16, 3, true},     // 3 channels, 'same', 3x3 windows
      {2, 10, 10, 2, 5, 8, 2, false},   // K = 50: no one-pass kernel anywhere
  };
  int seed = 750;
  for (const Case& t : cases) {
    Rng rng(static_cast<uint64_t>(++seed));
    const ConvGeometry g = conv_geometry(t.n, t.h, t.w, t.c, t.k, t.k, t.co, 1, 1, t.same);
    const PoolGeometry pg =
        pool_geometry(g.n, g.oh, g.ow, g.co, t.window, t.window, t.window, t.window, false);
    std::ostringstream os;
    os << "conv2d_max_pool x=(" << t.n << ", " << t.h << ", " << t.w << ", " << t.c << ") " << t.k
       << "x" << t.k << "x" << t.co << (t.same ? " same" : " valid") << ", pool " << t.window;
    const std::string label = os.str();
    const Shape xs{g.n, g.h, g.w, g.c}, ws{g.kh, g.kw, g.c, g.co}, zs{g.n, g.oh, g.ow, g.co},
        ys{pg.n, pg.oh, pg.ow, pg.c};
    Both workspace = conv_workspace(g);
    const Both x = both(uniform(rng, xs)), w = both(uniform(rng, ws));
    const Both b = both(uniform(rng, Shape{g.co}));
    const Both dy = both(uniform(rng, ys));
    for (const bool relu : {false, true}) {
      const std::string what = label + (relu ? " relu" : "");
      Both y = output(rng, ys), argmax = output(rng, ys, DType::i32), z = output(rng, zs);
      PerBackend<bool> one_pass;
      on_both([&](const Exec& ex) {
        one_pass.on(ex) = conv2d_max_pool_forward(ex, g, pg, x.on(ex), w.on(ex), b.on(ex), y.on(ex),
                                                  argmax.on(ex), relu, workspace.on(ex));
        if (one_pass.on(ex)) return;
        conv2d_forward(ex, g, x.on(ex), w.on(ex), b.on(ex), z.on(ex), relu, workspace.on(ex),
                       nullptr);
        max_pool_forward(ex, pg, z.on(ex), y.on(ex), argmax.on(ex));
      });
      EXPECT_EQ(one_pass.cpu, t.k * t.k * t.c <= 32) << what;
      EXPECT_TRUE(matches(what + " forward: y", y, kSum));

      const Both winners = both(argmax.cpu), pooled = both(y.cpu);
      Both dw = output(rng, ws), db = output(rng, Shape{g.co}), dz = output(rng, zs);
      Both masked = output(rng, ys);
      on_both([&](const Exec& ex) {
        const Tensor* relu_y = relu ? &pooled.on(ex) : nullptr;
        if (one_pass.on(ex)) {
          conv2d_max_pool_backward_filter(ex, g, pg, x.on(ex), dy.on(ex), winners.on(ex), relu_y,
                                          dw.on(ex), db.on(ex), workspace.on(ex));
          return;
        }
        const Tensor* d = &dy.on(ex);
        if (relu) {
          activation_backward(ex, Activation::relu, Tensor(), pooled.on(ex), dy.on(ex),
                              masked.on(ex));
          d = &masked.on(ex);
        }
        max_pool_backward(ex, pg, *d, winners.on(ex), dz.on(ex));
        conv2d_backward_filter(ex, g, x.on(ex), dz.on(ex), nullptr, dw.on(ex), db.on(ex),
                               workspace.on(ex));
      });
      EXPECT_TRUE(matches(what + " backward: dw", dw, kSum));
      EXPECT_TRUE(matches(what + " backward: db", db, kSum));
    }
  }
}

COVERS(Op::global_avg_pool_forward, Op::global_avg_pool_backward);
TEST(BackendHarness, GlobalAvgPoolForwardAndBackward) {
  const Shape shapes[] = {Shape{2, 7, 7, 16}, Shape{3, 1, 1, 5}, Shape{2, 8, 8, 64},
                          Shape{1, 32, 32, 3}};
  int seed = 800;
  for (const Shape& s : shapes) {
    Rng rng(static_cast<uint64_t>(++seed));
    const std::string label = "global_avg_pool " + s.str();
    const Shape ys{s[0], s[3]};
    const Both x = both(uniform(rng, s));
    Both y = output(rng, ys);
    on_both([&](const Exec& ex) { global_avg_pool_forward(ex, x.on(ex), y.on(ex)); });
    EXPECT_TRUE(matches(label + " forward: y", y, kMath));

    const Both dy = both(uniform(rng, ys));
    Both dx = output(rng, s);
    on_both([&](const Exec& ex) { global_avg_pool_backward(ex, dy.on(ex), dx.on(ex)); });
    EXPECT_TRUE(matches(label + " backward: dx", dx, kElementwise));
  }
}

// ---------------------------------------------------------------------------
// Strided copies

COVERS(Op::strided_copy);
TEST(BackendHarness, StridedCopies) {
  struct Case {
    const char* what;
    CopyGeometry g;
    Shape x, y;
    float beta;
  };
  // (2, 3, 4) transposed to (4, 3, 2); a (3, 5) row repeated 4 times; that
  // repeat's backward (summed over the repeats); 2x2 nearest upsampling's
  // backward (two summed dimensions); a (2, 3) block added into the middle
  // of a (4, 6) matrix (beta 1), as padding and concatenation place blocks.
  const Case cases[] = {
      {"permute",
       {.rank = 3, .size = {4, 3, 2}, .x_stride = {1, 4, 12}, .y_stride = {6, 2, 1}},
       Shape{2, 3, 4},
       Shape{4, 3, 2},
       0.0f},
      {"repeat",
       {.rank = 3, .size = {3, 4, 5}, .x_stride = {5, 0, 1}, .y_stride = {20, 5, 1}},
       Shape{3, 5},
       Shape{3, 4, 5},
       0.0f},
      {"repeat backward",
       {.rank = 2,
        .size = {3, 5},
        .x_stride = {20, 1},
        .y_stride = {5, 1},
        .sum_rank = 1,
        .sum_size = {4},
        .sum_stride = {5}},
       Shape{3, 4, 5},
       Shape{3, 5},
       0.0f},
      {"upsampling backward",
       {.rank = 3,
        .size = {3, 2, 7},
        .x_stride = {56, 14, 1},
        .y_stride = {14, 7, 1},
        .sum_rank = 2,
        .sum_size = {2, 2},
        .sum_stride = {28, 7}},
       Shape{6, 4, 7},
       Shape{3, 2, 7},
       0.0f},
      {"block added",
       {.rank = 2, .size = {2, 3}, .x_stride = {3, 1}, .y_stride = {6, 1}, .y_offset = 8},
       Shape{2, 3},
       Shape{4, 6},
       1.0f},
      // Bidirectional's: (2, 3, 4) read with time reversed (a negative
      // stride from the last step) into the second half of (2, 3, 8).
      {"time reversed",
       {.rank = 3,
        .size = {2, 3, 4},
        .x_stride = {12, -4, 1},
        .y_stride = {24, 8, 1},
        .x_offset = 8,
        .y_offset = 4},
       Shape{2, 3, 4},
       Shape{2, 3, 8},
       0.0f},
  };
  Rng rng(900);
  for (const Case& c : cases) {
    const Both x = both(uniform(rng, c.x));
    Both y = output(rng, c.y);
    on_both([&](const Exec& ex) { strided_copy(ex, c.g, x.on(ex), c.beta, y.on(ex)); });
    EXPECT_TRUE(matches(std::string("strided_copy ") + c.what, y, kSum));
  }
}

// ---------------------------------------------------------------------------
// Batch normalisation

COVERS(Op::batchnorm_forward_train, Op::batchnorm_forward_infer, Op::batchnorm_backward);
TEST(BackendHarness, BatchNormTrainInferBackward) {
  // Over the last axis: (rows, c) after a dense layer, NHWC after a conv.
  const Shape shapes[] = {Shape{64, 8}, Shape{4, 5, 5, 16}, Shape{2, 3, 3, 3}, Shape{256, 1}};
  const float eps = 1e-3f, momentum = 0.99f;
  int seed = 900;
  // relu: with a following ReLU fused (nn::Model's BatchNormalization + ReLU).
  for (const bool relu : {false, true})
    for (const Shape& s : shapes) {
      Rng rng(static_cast<uint64_t>(++seed));
      const std::string label = "batchnorm " + s.str() + (relu ? " + relu" : "");
      const int64_t c = s[-1];
      const Shape cs{c};
      // A mean away from zero, so the variance is not the mean square.
      const Both x = both(uniform(rng, s, -2.0f, 3.0f));
      const Both gamma = both(uniform(rng, cs, 0.5f, 1.5f)), beta = both(uniform(rng, cs));
      const Tensor moving_mean0 = uniform(rng, cs), moving_var0 = uniform(rng, cs, 0.5f, 2.0f);

      Both moving_mean = both(moving_mean0), moving_var = both(moving_var0);
      Both mean = output(rng, cs), inv_std = output(rng, cs), y = output(rng, s);
      on_both([&](const Exec& ex) {
        batchnorm_forward_train(ex, x.on(ex), gamma.on(ex), beta.on(ex), eps, momentum,
                                moving_mean.on(ex), moving_var.on(ex), mean.on(ex), inv_std.on(ex),
                                y.on(ex), relu, nullptr);
      });
      EXPECT_TRUE(matches(label + " train: y", y, kSum));
      EXPECT_TRUE(matches(label + " train: mean", mean, kSum));
      EXPECT_TRUE(matches(label + " train: inv_std", inv_std, kSum));
      EXPECT_TRUE(matches(label + " train: moving_mean", moving_mean, kSum));
      EXPECT_TRUE(matches(label + " train: moving_var", moving_var, kSum));

      const Both mm = both(moving_mean0), mv = both(moving_var0);
      Both y_infer = output(rng, s);
      on_both([&](const Exec& ex) {
        batchnorm_forward_infer(ex, x.on(ex), gamma.on(ex), beta.on(ex), eps, mm.on(ex), mv.on(ex),
                                y_infer.on(ex), relu);
      });
      EXPECT_TRUE(matches(label + " infer: y", y_infer, kMath));

      // Backward with the batch's statistics (training; the CPU's from above)
      // and with constant ones (the moving statistics, frozen layers).
      Tensor frozen_inv_std(cs);
      for (int64_t j = 0; j < c; ++j)
        frozen_inv_std.f32()[j] = 1.0f / std::sqrt(moving_var0.f32()[j] + eps);
      const Both dy = both(uniform(rng, s));
      for (const bool batch_statistics : {true, false}) {
        const Both m = both(batch_statistics ? mean.cpu : moving_mean0);
        const Both is = both(batch_statistics ? inv_std.cpu : frozen_inv_std);
        Both dx = output(rng, s), dgamma = output(rng, cs), dbeta = output(rng, cs);
        on_both([&](const Exec& ex) {
          // The fused output the statistics belong to.
          Both& relu_y = batch_statistics ? y : y_infer;
          batchnorm_backward(ex, x.on(ex), dy.on(ex), relu ? &relu_y.on(ex) : nullptr, gamma.on(ex),
                             beta.on(ex), m.on(ex), is.on(ex), batch_statistics, dx.on(ex),
                             dgamma.on(ex), dbeta.on(ex));
        });
        const std::string what =
            label + " backward" + (batch_statistics ? " batch statistics" : " moving statistics");
        EXPECT_TRUE(matches(what + ": dx", dx, kSum));
        EXPECT_TRUE(matches(what + ": dgamma", dgamma, kSum));
        EXPECT_TRUE(matches(what + ": dbeta", dbeta, kSum));
      }
    }
}

// ---------------------------------------------------------------------------
// Layer normalisation and embeddings

COVERS(Op::layer_norm_forward, Op::layer_norm_backward);
TEST(BackendHarness, LayerNormForwardAndBackward) {
  // Rows of one, a few and more than a warp's columns, ranks 2 to 4; and
  // enough rows (1,000) for the GPU's parameter gradients to sum in chunks.
  const Shape shapes[] = {Shape{64, 8}, Shape{3, 5, 33}, Shape{2, 2, 3, 100}, Shape{7, 1},
                          Shape{8, 125, 40}};
  const float eps = 1e-3f;
  int seed = 1400;
  for (const Shape& s : shapes)
    for (const bool affine : {true, false}) {  // center and scale, or neither
      Rng rng(static_cast<uint64_t>(++seed));
      const std::string label = "layer_norm " + s.str() + (affine ? "" : " no gamma, beta");
      const int64_t c = s[-1];
      const Shape cs{c}, rs{s.numel() / c};
      const Both x = both(uniform(rng, s, -2.0f, 3.0f));
      const Both gamma = affine ? both(uniform(rng, cs, 0.5f, 1.5f)) : Both{};
      const Both beta = affine ? both(uniform(rng, cs)) : Both{};
      Both mean = output(rng, rs), inv_std = output(rng, rs), y = output(rng, s);
      on_both([&](const Exec& ex) {
        layer_norm_forward(ex, x.on(ex), gamma.on(ex), beta.on(ex), eps, mean.on(ex),
                           inv_std.on(ex), y.on(ex));
      });
      EXPECT_TRUE(matches(label + " forward: y", y, kSum));
      EXPECT_TRUE(matches(label + " forward: mean", mean, kSum));
      EXPECT_TRUE(matches(label + " forward: inv_std", inv_std, kSum));

      // Backward from the CPU's statistics on both backends.
      const Both m = both(mean.cpu), is = both(inv_std.cpu), dy = both(uniform(rng, s));
      Both dx = output(rng, s);
      Both dgamma = affine ? output(rng, cs) : Both{}, dbeta = affine ? output(rng, cs) : Both{};
      on_both([&](const Exec& ex) {
        layer_norm_backward(ex, x.on(ex), dy.on(ex), gamma.on(ex), m.on(ex), is.on(ex), dx.on(ex),
                            dgamma.on(ex), dbeta.on(ex));
      });
      EXPECT_TRUE(matches(label + " backward: dx", dx, kSum));
      if (affine) {
        EXPECT_TRUE(matches(label + " backward: dgamma", dgamma, kSum));
        EXPECT_TRUE(matches(label + " backward: dbeta", dbeta, kSum));
      }
    }
}

COVERS(Op::embedding_gather, Op::embedding_scatter_add);
TEST(BackendHarness, EmbeddingGatherAndScatterAdd) {
  struct Case {
    Shape ids;
    int64_t rows, dim;
    DType id_type;
  };
  const Case cases[] = {
      {Shape{4, 12}, 50, 8, DType::f32},  // the Keras interop model's, float ids
      {Shape{3, 7}, 5, 33, DType::i32},   // ids repeat often; rows wider than a warp
      {Shape{16}, 1000, 1, DType::f32},   // one column
  };
  int seed = 1450;
  for (const Case& t : cases) {
    Rng rng(static_cast<uint64_t>(++seed));
    const std::string label = std::string("embedding ") + dtype_name(t.id_type) + " ids " +
                              t.ids.str() + " into (" + std::to_string(t.rows) + ", " +
                              std::to_string(t.dim) + ")";
    Tensor ids(t.ids, t.id_type);
    for (int64_t i = 0; i < ids.numel(); ++i) {
      const auto id = static_cast<int32_t>(rng.next() % static_cast<uint64_t>(t.rows));
      if (t.id_type == DType::i32)
        ids.i32()[i] = id;
      else
        ids.f32()[i] = static_cast<float>(id);
    }
    // Out of range: a zero row and no gradient on both backends, no read
    // outside the table.
    const float bad = static_cast<float>(t.rows);
    if (t.id_type == DType::i32)
      ids.i32()[1] = -3;
    else
      ids.f32()[1] = bad;
    const Both id = both(ids), table = both(uniform(rng, Shape{t.rows, t.dim}));
    std::vector<int64_t> out_dims = t.ids.dims();
    out_dims.push_back(t.dim);
    const Shape out_shape(out_dims);
    Both y = output(rng, out_shape);
    on_both([&](const Exec& ex) { embedding_gather(ex, id.on(ex), table.on(ex), y.on(ex)); });
    EXPECT_TRUE(matches(label + " gather: y", y, kExact));
    for (int64_t j = 0; j < t.dim; ++j) EXPECT_EQ(y.cpu.f32()[t.dim + j], 0.0f) << label;

    const Both dy = both(uniform(rng, out_shape));
    Both dtable = output(rng, Shape{t.rows, t.dim});
    on_both(
        [&](const Exec& ex) { embedding_scatter_add(ex, id.on(ex), dy.on(ex), dtable.on(ex)); });
    EXPECT_TRUE(matches(label + " scatter_add: dtable", dtable, kSum));
  }
}

// ---------------------------------------------------------------------------
// Losses and accuracy

bool sparse(LossKind k) {
  return k == LossKind::softmax_xent_sparse || k == LossKind::xent_sparse;
}

// pred and target for one loss kind: logits or probabilities as the kind
// takes them, and probabilities at exactly 0 and 1 where the kind clips them
// (Keras' epsilon), whose gradient the CPU sets to 0.
struct LossInputs {
  Tensor pred, target;
};
LossInputs loss_inputs(Rng& rng, LossKind kind, int64_t rows, int64_t cols) {
  const Shape s{rows, cols};
  LossInputs in;
  switch (kind) {
    case LossKind::softmax_xent_sparse:
      in.pred = uniform(rng, s, -4.0f, 4.0f);
      in.target = labels(rng, rows, cols);
      break;
    case LossKind::xent_sparse:
      in.pred = probabilities(rng, rows, cols);
      in.target = labels(rng, rows, cols);
      in.pred.f32()[in.target.i32()[0]] = 0.0f;  // row 0's true class clipped
      break;
    case LossKind::softmax_xent:
      in.pred = uniform(rng, s, -4.0f, 4.0f);
      in.target = probabilities(rng, rows, cols);  // soft targets; rows sum to 1
      break;
    case LossKind::xent:
      in.pred = probabilities(rng, rows, cols);
      in.target = probabilities(rng, rows, cols);
      in.pred.f32()[0] = 0.0f;
      break;
    case LossKind::sigmoid_bce:
      in.pred = uniform(rng, s, -6.0f, 6.0f);
      in.target = uniform(rng, s, 0.0f, 1.0f);
      break;
    case LossKind::bce:
      in.pred = uniform(rng, s, 0.02f, 0.98f);
      in.target = uniform(rng, s, 0.0f, 1.0f);
      in.pred.f32()[0] = 0.0f;
      if (in.pred.numel() > 1) in.pred.f32()[1] = 1.0f;
      break;
    case LossKind::mse:
      in.pred = uniform(rng, s, -2.0f, 2.0f);
      in.target = uniform(rng, s, -2.0f, 2.0f);
      break;
  }
  return in;
}

COVERS(Op::loss_forward_backward);
TEST(BackendHarness, LossesForwardAndBackward) {
  const LossKind kinds[] = {
      LossKind::softmax_xent_sparse, LossKind::xent_sparse, LossKind::softmax_xent, LossKind::xent,
      LossKind::sigmoid_bce,         LossKind::bce,         LossKind::mse};
  struct Size {
    int64_t rows, cols;
  };
  // One column: a binary classifier's output (sparse kinds need two classes).
  const Size sizes[] = {{8, 10}, {64, 1000}, {1, 2}, {5, 1}};
  int seed = 1000;
  for (const LossKind kind : kinds)
    for (const Size sz : sizes) {
      if (sparse(kind) && sz.cols < 2) continue;
      Rng rng(static_cast<uint64_t>(++seed));
      const std::string label = std::string("loss ") + name(kind) + " (" + std::to_string(sz.rows) +
                                ", " + std::to_string(sz.cols) + ")";
      const LossInputs in = loss_inputs(rng, kind, sz.rows, sz.cols);
      const Both pred = both(in.pred), target = both(in.target);
      Both grad = output(rng, in.pred.shape());
      Both loss = output(rng, Shape{1});
      on_both([&](const Exec& ex) {
        loss_forward_backward(ex, kind, pred.on(ex), target.on(ex), grad.on(ex), loss.on(ex));
      });
      EXPECT_TRUE(std::isfinite(loss.cpu.f32()[0])) << label;
      EXPECT_TRUE(matches(label + ": loss", loss, kMath));
      EXPECT_TRUE(matches(label + ": grad", grad, kMath));
    }
}

// A label outside [0, classes) must not be read out of bounds: its gradient
// row is zeros and the loss NaN, on both sides; one too large, and one
// negative in the last row.
COVERS(Op::loss_forward_backward);
TEST(BackendHarness, SparseLossWithABadLabelIsNaN) {
  struct Case {
    LossKind kind;
    int64_t row;
    int32_t label;
  };
  const int64_t rows = 16, classes = 10;
  const Case cases[] = {{LossKind::softmax_xent_sparse, 2, 10},
                        {LossKind::softmax_xent_sparse, 15, -1},
                        {LossKind::xent_sparse, 2, 10},
                        {LossKind::xent_sparse, 15, -1}};
  int seed = 1100;
  for (const Case& c : cases) {
    Rng rng(static_cast<uint64_t>(++seed));
    LossInputs in = loss_inputs(rng, c.kind, rows, classes);
    in.target.i32()[c.row] = c.label;
    const Both pred = both(in.pred), target = both(in.target);
    Both grad = output(rng, in.pred.shape()), loss = output(rng, Shape{1});
    on_both([&](const Exec& ex) {
      loss_forward_backward(ex, c.kind, pred.on(ex), target.on(ex), grad.on(ex), loss.on(ex));
    });
    const std::string label = std::string("loss ") + name(c.kind) + " label " +
                              std::to_string(c.label) + " in row " + std::to_string(c.row);
    EXPECT_TRUE(std::isnan(loss.cpu.f32()[0])) << label << " (cpu)";
    EXPECT_TRUE(std::isnan(loss.gpu.to(Device::cpu).f32()[0])) << label << " (gpu)";
    EXPECT_TRUE(matches(label + ": grad", grad, kMath));
    for (int64_t j = 0; j < classes; ++j)
      EXPECT_EQ(grad.cpu.f32()[c.row * classes + j], 0.0f) << label << " column " << j;
  }
}

// A sequence model's output (batch, steps, classes) with a label per step:
// both backends take the classes along the last axis and average over every
// (example, step), the same numbers as the flat (batch * steps, classes) case.
COVERS(Op::loss_forward_backward, Op::metric_sum);
TEST(BackendHarness, SparseLossAndAccuracyOverSteps) {
  Rng rng(1150);
  const Shape seq{4, 5, 7}, flat{20, 7};
  const LossInputs in = loss_inputs(rng, LossKind::softmax_xent_sparse, 20, 7);
  const Both pred = both(in.pred.reshaped(seq)), target = both(in.target.reshaped(Shape{4, 5}));
  Both grad = output(rng, seq), loss = output(rng, Shape{1}), hits = output(rng, Shape{1});
  on_both([&](const Exec& ex) {
    loss_forward_backward(ex, LossKind::softmax_xent_sparse, pred.on(ex), target.on(ex),
                          grad.on(ex), loss.on(ex));
    metric_sum(ex, MetricKind::label_accuracy, pred.on(ex), target.on(ex), hits.on(ex));
  });
  EXPECT_TRUE(matches("sequence loss", loss, kMath));
  EXPECT_TRUE(matches("sequence grad", grad, kMath));
  EXPECT_TRUE(matches("sequence hits", hits, kExact));
  Tensor flat_grad(flat), flat_loss(Shape{1}), flat_hits(Shape{1});
  const Exec cpu = cpu_exec();
  loss_forward_backward(cpu, LossKind::softmax_xent_sparse, in.pred, in.target, flat_grad,
                        flat_loss);
  metric_sum(cpu, MetricKind::label_accuracy, in.pred, in.target, flat_hits);
  EXPECT_EQ(loss.cpu.f32()[0], flat_loss.f32()[0]);
  EXPECT_EQ(hits.cpu.f32()[0], flat_hits.f32()[0]);
  for (int64_t i = 0; i < flat.numel(); ++i) ASSERT_EQ(grad.cpu.f32()[i], flat_grad.f32()[i]) << i;
}

// Every metric's batch sum; hits exactly. Ties go to the first maximum (as
// NumPy and Keras' accuracy): an all-zero row (a dead ReLU layer's logits)
// and a row with its maximum twice.
COVERS(Op::metric_sum);
TEST(BackendHarness, MetricSums) {
  struct Size {
    int64_t rows, cols;
  };
  const Size sizes[] = {{8, 10}, {3, 1000}, {64, 1}, {1, 7}, {3000, 3}};
  const std::pair<MetricKind, const char*> kinds[] = {
      {MetricKind::label_accuracy, "label_accuracy"},
      {MetricKind::onehot_accuracy, "onehot_accuracy"},
      {MetricKind::binary_accuracy_logits, "binary_accuracy_logits"},
      {MetricKind::binary_accuracy_probs, "binary_accuracy_probs"},
      {MetricKind::squared_error, "squared_error"},
      {MetricKind::absolute_error, "absolute_error"}};
  int seed = 1200;
  for (const Size sz : sizes)
    for (const auto& [metric, kind_name] : kinds) {
      const MetricKind kind = metric;  // a lambda below captures it
      Rng rng(static_cast<uint64_t>(++seed));
      const Shape shape{sz.rows, sz.cols};
      const Both pred = both(uniform(rng, shape));
      const Both target =
          both(kind == MetricKind::label_accuracy    ? labels(rng, sz.rows, sz.cols)
               : kind == MetricKind::onehot_accuracy ? probabilities(rng, sz.rows, sz.cols)
                                                     : uniform(rng, shape, 0.0f, 1.0f));
      Both sum = output(rng, Shape{1});
      on_both(
          [&](const Exec& ex) { metric_sum(ex, kind, pred.on(ex), target.on(ex), sum.on(ex)); });
      const bool hits = kind != MetricKind::squared_error && kind != MetricKind::absolute_error;
      EXPECT_TRUE(matches(std::string(kind_name) + " (" + std::to_string(sz.rows) + ", " +
                              std::to_string(sz.cols) + ")",
                          sum, hits ? kExact : kSum));
    }

  Tensor ties = Tensor::zeros(Shape{3, 6});
  const float row1[] = {0.1f, 0.5f, 0.9f, 0.2f, 0.9f, -1.0f};
  const float row2[] = {-3.0f, -2.0f, -1.0f, -1.0f, -2.0f, -1.0f};
  for (int j = 0; j < 6; ++j) ties.f32()[6 + j] = row1[j], ties.f32()[12 + j] = row2[j];
  Tensor tie_labels(Shape{3}, DType::i32);
  const int32_t want[] = {0, 2, 2};  // each row's first maximum
  for (int r = 0; r < 3; ++r) tie_labels.i32()[r] = want[r];
  const Both x = both(ties), y = both(tie_labels);
  Rng rng(1299);
  Both sum = output(rng, Shape{1});
  on_both([&](const Exec& ex) {
    metric_sum(ex, MetricKind::label_accuracy, x.on(ex), y.on(ex), sum.on(ex));
  });
  EXPECT_EQ(sum.cpu.f32()[0], 3.0f) << "ties (cpu)";
  EXPECT_EQ(sum.gpu.to(Device::cpu).f32()[0], 3.0f) << "ties (gpu)";
}

// The counted metrics' counts, exactly: whole numbers whatever the order of
// the sum. Predictions on Keras' AUC bucket edges (i / 199) and exactly at a
// threshold (0.5, not above it); targets 0/1 but for the F1 sums' soft ones.
COVERS(Op::top_k_hits, Op::threshold_counts, Op::bucket_counts, Op::class_counts);
TEST(BackendHarness, MetricCounts) {
  struct Size {
    int64_t rows, cols;
  };
  const Size sizes[] = {{8, 10}, {3, 1000}, {64, 1}, {1, 7}, {3000, 3}};
  int seed = 1300;
  for (const Size sz : sizes) {
    Rng rng(static_cast<uint64_t>(++seed));
    const Shape shape{sz.rows, sz.cols};
    const std::string label = std::to_string(sz.rows) + "x" + std::to_string(sz.cols);
    Tensor p = uniform(rng, shape, -0.2f, 1.2f);
    for (int64_t i = 0; i < p.numel(); i += 5) p.f32()[i] = static_cast<float>(i % 200) / 199.0f;
    p.f32()[0] = 0.5f;
    Tensor t = uniform(rng, shape, 0.0f, 1.0f);
    for (float& v : t.span_f32()) v = v < 0.4f ? 1.0f : 0.0f;
    const Both pred = both(p), target = both(t);
    const Both label_ids = both(labels(rng, sz.rows, sz.cols));
    const Both onehot = both(probabilities(rng, sz.rows, sz.cols));
    Thresholds th;
    for (const float v : {0.0f, 0.5f, 0.3f, 0.99f, 1.0f}) th.at[th.count++] = v;
    Both sparse_hits = output(rng, Shape{1}), dense_hits = output(rng, Shape{1});
    Both above = output(rng, Shape{2 * th.count + 2}), buckets = output(rng, Shape{2 * 200});
    Both argmax = output(rng, Shape{4 * sz.cols}), at = output(rng, Shape{4 * sz.cols});
    on_both([&](const Exec& ex) {
      top_k_hits(ex, 3, pred.on(ex), label_ids.on(ex), sparse_hits.on(ex));
      top_k_hits(ex, 2, pred.on(ex), onehot.on(ex), dense_hits.on(ex));
      threshold_counts(ex, th, pred.on(ex), target.on(ex), above.on(ex));
      bucket_counts(ex, pred.on(ex), target.on(ex), buckets.on(ex));
      class_counts(ex, std::nullopt, pred.on(ex), target.on(ex), argmax.on(ex));
      class_counts(ex, 0.4f, pred.on(ex), onehot.on(ex), at.on(ex));
    });
    EXPECT_TRUE(matches("top_k_hits labels " + label, sparse_hits, kExact));
    EXPECT_TRUE(matches("top_k_hits one-hot " + label, dense_hits, kExact));
    EXPECT_TRUE(matches("threshold_counts " + label, above, kExact));
    EXPECT_TRUE(matches("bucket_counts " + label, buckets, kExact));
    EXPECT_TRUE(matches("class_counts argmax " + label, argmax, kExact));
    EXPECT_TRUE(matches("class_counts soft targets " + label, at, kSum));
    double total = 0.0;
    for (const float v : buckets.cpu.span_f32()) total += v;
    EXPECT_EQ(total, static_cast<double>(p.numel())) << "every value in one bucket " << label;
  }
}

// ---------------------------------------------------------------------------
// Optimizer updates
//
// Each rule runs where w lives (no Exec). A case names its slot tensors (with
// the range their values start in: accumulators of squares start positive),
// and `step` applies the rule to w and the slots with the step's values
// (rate, learning rate, gradient factor, skip flag); every case runs three steps, each
// reading the slots the one before wrote, with and without weight decay: a
// plain one, one as under a loss scale of 1024 (the gradient 1024 times
// larger, the factor 1/1024), and one skipped (a gradient overflowed: the
// flag is set), which must leave w and every slot as they were. w and every
// slot are compared after them.

struct Slot {
  const char* name;
  float lo, hi;
};
struct OptimizerCase {
  std::string name;
  std::vector<Slot> slots;
  // (step's values, g, w, slots, weight_decay)
  std::function<void(const Exec&, const Tensor&, const Tensor&, Tensor&, std::vector<Tensor>&,
                     float)>
      step;
};

// The step's values an update reads (kernels/optimizer_update.hpp), on ex's device.
Tensor step_on(const Exec& ex, float lr, float grad_factor, bool skip) {
  Tensor step = Tensor::zeros(Shape{kStepValues});
  step.f32()[kRate] = lr;
  step.f32()[kLearningRate] = 1.5f * lr;  // Adam's lr_t differs from the schedule's lr
  step.f32()[kGradFactor] = grad_factor;
  step.f32()[kSkip] = skip ? 1.0f : 0.0f;
  return step.to(ex.device);
}

std::vector<OptimizerCase> optimizer_cases() {
  using Slots = std::vector<Tensor>;
  const float eps = 1e-7f;
  std::vector<OptimizerCase> cases;
  cases.push_back({"sgd",
                   {},
                   [=](const Exec& ex, const Tensor& step, const Tensor& g, Tensor& w, Slots&,
                       float wd) { sgd_update(ex, g, w, step, wd); }});
  for (const bool nesterov : {false, true})
    cases.push_back(
        {nesterov ? "sgd momentum nesterov" : "sgd momentum",
         {{"v", -0.1f, 0.1f}},
         [=](const Exec& ex, const Tensor& step, const Tensor& g, Tensor& w, Slots& s, float wd) {
           sgd_momentum_update(ex, g, w, s[0], step, 0.9f, nesterov, wd);
         }});
  cases.push_back({"adagrad",
                   {{"acc", 0.1f, 1.0f}},
                   [=](const Exec& ex, const Tensor& step, const Tensor& g, Tensor& w, Slots& s,
                       float wd) { adagrad_update(ex, g, w, s[0], step, eps, wd); }});
  cases.push_back(
      {"adam",
       {{"m", -0.1f, 0.1f}, {"v", 1e-4f, 1e-2f}},
       [=](const Exec& ex, const Tensor& step, const Tensor& g, Tensor& w, Slots& s, float wd) {
         adam_update(ex, g, w, s[0], s[1], nullptr, step, 0.1f, 0.001f, eps, wd);
       }});
  cases.push_back(
      {"adam amsgrad",
       {{"m", -0.1f, 0.1f}, {"v", 1e-4f, 1e-2f}, {"vhat", 1e-4f, 1e-2f}},
       [=](const Exec& ex, const Tensor& step, const Tensor& g, Tensor& w, Slots& s, float wd) {
         adam_update(ex, g, w, s[0], s[1], &s[2], step, 0.1f, 0.001f, eps, wd);
       }});
  // Centered RMSprop divides by sqrt(rms - mg^2): the slots start with
  // rms >= mg^2 + 0.1 (fixed below), which each step keeps (rms - mg^2 is a
  // variance), so the denominator stays away from 0.
  cases.push_back(
      {"rmsprop",
       {{"rms", 0.1f, 1.0f}},
       [=](const Exec& ex, const Tensor& step, const Tensor& g, Tensor& w, Slots& s, float wd) {
         rmsprop_update(ex, g, w, s[0], nullptr, step, 0.9f, eps, wd);
       }});
  cases.push_back({"rmsprop centered",
                   {{"rms", 0.1f, 1.0f}, {"mg", -0.5f, 0.5f}},
                   [=](const Exec& ex, const Tensor& step, const Tensor& g, Tensor& w, Slots& s,
                       float wd) { rmsprop_update(ex, g, w, s[0], &s[1], step, 0.9f, eps, wd); }});
  cases.push_back(
      {"rmsprop momentum",
       {{"rms", 0.1f, 1.0f}, {"mom", -0.1f, 0.1f}},
       [=](const Exec& ex, const Tensor& step, const Tensor& g, Tensor& w, Slots& s, float wd) {
         rmsprop_momentum_update(ex, g, w, s[0], nullptr, s[1], step, 0.9f, 0.9f, eps, wd);
       }});
  cases.push_back(
      {"rmsprop momentum centered",
       {{"rms", 0.1f, 1.0f}, {"mom", -0.1f, 0.1f}, {"mg", -0.5f, 0.5f}},
       [=](const Exec& ex, const Tensor& step, const Tensor& g, Tensor& w, Slots& s, float wd) {
         rmsprop_momentum_update(ex, g, w, s[0], &s[2], s[1], step, 0.9f, 0.9f, eps, wd);
       }});
  return cases;
}

// w, then each slot, as pairs of CPU and GPU tensors.
std::vector<Both> all_of(const Both& w, const PerBackend<std::vector<Tensor>>& slots) {
  std::vector<Both> out{w};
  for (size_t i = 0; i < slots.cpu.size(); ++i) out.push_back(Both{slots.cpu[i], slots.gpu[i]});
  return out;
}

COVERS(Op::sgd_update, Op::sgd_momentum_update, Op::adagrad_update, Op::adam_update,
       Op::rmsprop_update, Op::rmsprop_momentum_update);
TEST(BackendHarness, OptimizerUpdates) {
  const int64_t sizes[] = {7, 4099};
  int seed = 1300;
  for (const OptimizerCase& oc : optimizer_cases())
    for (const float weight_decay : {0.0f, 0.1f})
      for (const int64_t n : sizes) {
        Rng rng(static_cast<uint64_t>(++seed));
        const std::string label = oc.name + " n=" + std::to_string(n) +
                                  " weight_decay=" + std::to_string(weight_decay).substr(0, 3);
        const Shape s{n};
        Both w = both(uniform(rng, s));
        std::vector<Tensor> host_slots;
        for (const Slot& slot : oc.slots) host_slots.push_back(uniform(rng, s, slot.lo, slot.hi));
        // Centered rules: rms = mg^2 + (0.1 .. 1).
        for (size_t i = 0; i < oc.slots.size(); ++i)
          if (std::string(oc.slots[i].name) == "mg")
            for (int64_t j = 0; j < n; ++j) {
              const float mg = host_slots[i].f32()[j];
              host_slots[0].f32()[j] += mg * mg;
            }
        PerBackend<std::vector<Tensor>> slots;
        for (const Tensor& h : host_slots) {
          const Both b = both(h);
          slots.cpu.push_back(b.cpu);
          slots.gpu.push_back(b.gpu);
        }
        std::vector<Tensor> before_skip;  // w and the slots, on the CPU and the GPU
        for (int step = 0; step < 3; ++step) {
          const float loss_scale = step == 1 ? 1024.0f : 1.0f;
          const bool skip = step == 2;
          Tensor host_g = uniform(rng, s);
          for (float& v : host_g.span_f32()) v *= loss_scale;
          if (skip) host_g.f32()[n / 2] = std::numeric_limits<float>::infinity();
          const Both g = both(host_g);
          if (skip)
            for (const Both& t : all_of(w, slots)) {
              before_skip.push_back(t.cpu.clone());
              before_skip.push_back(t.gpu.to(Device::cpu));
            }
          on_both([&](const Exec& ex) {
            oc.step(ex, step_on(ex, 0.05f, 1.0f / loss_scale, skip), g.on(ex), w.on(ex),
                    slots.on(ex), weight_decay);
          });
        }
        size_t k = 0;
        for (const Both& t : all_of(w, slots)) {
          EXPECT_TRUE(same_bits(t.cpu, before_skip[k++]))
              << label << ": a skipped step wrote (cpu)";
          EXPECT_TRUE(same_bits(t.gpu.to(Device::cpu), before_skip[k++]))
              << label << ": a skipped step wrote (gpu)";
        }
        EXPECT_TRUE(matches(label + ": w", w, kMath));
        for (size_t i = 0; i < oc.slots.size(); ++i)
          EXPECT_TRUE(
              matches(label + ": " + oc.slots[i].name, Both{slots.cpu[i], slots.gpu[i]}, kMath));
      }
}

// Keras' gradient clipping, each kind: with a limit that clips and one that
// does not, plainly and as under a loss scale of 1024 (the gradient and its
// sum of squares scaled, the factor 1/1024), and skipped (nothing written).
COVERS(Op::clip_gradient);
TEST(BackendHarness, ClipGradient) {
  int seed = 1400;
  for (const GradientClip kind :
       {GradientClip::norm, GradientClip::global_norm, GradientClip::value})
    for (const float limit : {0.05f, 1000.0f})
      for (const float loss_scale : {1.0f, 1024.0f})
        for (const int64_t n : {int64_t{7}, int64_t{4099}}) {
          Rng rng(static_cast<uint64_t>(++seed));
          const std::string label = "kind " + std::to_string(static_cast<int>(kind)) + " limit " +
                                    std::to_string(limit) + " scale " + std::to_string(loss_scale) +
                                    " n=" + std::to_string(n);
          Tensor host_g = uniform(rng, Shape{n});
          for (float& v : host_g.span_f32()) v *= loss_scale;
          double ss = 0;
          for (const float v : host_g.span_f32()) ss += static_cast<double>(v) * v;
          Tensor host_ss = Tensor::zeros(Shape{1});
          host_ss.f32()[0] = static_cast<float>(ss);
          const Both sum_squares = both(host_ss);
          Both g = both(host_g);
          Both skipped = both(host_g);
          on_both([&](const Exec& ex) {
            clip_gradient(ex, kind, limit, sum_squares.on(ex),
                          step_on(ex, 0.05f, 1.0f / loss_scale, false), g.on(ex));
            clip_gradient(ex, kind, limit, sum_squares.on(ex),
                          step_on(ex, 0.05f, 1.0f / loss_scale, true), skipped.on(ex));
          });
          EXPECT_TRUE(matches(label, g, kMath));
          EXPECT_TRUE(same_bits(skipped.cpu, host_g)) << label << ": a skipped step wrote (cpu)";
          EXPECT_TRUE(same_bits(skipped.gpu.to(Device::cpu), host_g))
              << label << ": a skipped step wrote (gpu)";
        }
}

// ---------------------------------------------------------------------------
// Input staging

// ---------------------------------------------------------------------------
// Recurrent steps

// Each recurrent step op on a batch-major (B, T, G) projection, at a step
// inside it (forwards: t_x = t_y; go_backwards: t_x != t_y), with and without
// the sequence; every output is preset, so a value left unwritten differs.
COVERS(Op::lstm_step_forward, Op::lstm_step_backward, Op::gru_step_forward, Op::gru_reset_forward,
       Op::gru_step_backward, Op::gru_reset_backward, Op::simple_rnn_step_forward,
       Op::simple_rnn_step_backward);
TEST(BackendHarness, RecurrentSteps) {
  struct Dims {
    int64_t b, t, u, t_x, t_y;
  };
  const Dims dims[] = {{3, 5, 7, 2, 2}, {2, 4, 33, 3, 0}, {1, 1, 1, 0, 0}, {17, 3, 300, 0, 2}};
  int seed = 1500;
  for (const Dims& d : dims)
    for (const bool with_seq : {true, false}) {
      Rng rng(static_cast<uint64_t>(++seed));
      const std::string label = "B=" + std::to_string(d.b) + " T=" + std::to_string(d.t) +
                                " U=" + std::to_string(d.u) + (with_seq ? " seq" : "");
      const Shape state{d.b, d.u}, seq_shape{d.b, d.t, d.u};
      const auto step = [&](int64_t g) { return Shape{d.b, g * d.u}; };
      const auto all = [&](int64_t g) { return Shape{d.b, d.t, g * d.u}; };
      const auto opt = [&](Both& t, const Exec& ex) { return with_seq ? &t.on(ex) : nullptr; };
      const auto copt = [&](const Both& t, const Exec& ex) -> const Tensor* {
        return with_seq ? &t.on(ex) : nullptr;
      };
      const Both h_prev = both(uniform(rng, state)), c_prev = both(uniform(rng, state));
      const Both dseq = both(uniform(rng, seq_shape)), dh_in = both(uniform(rng, state));
      const Both gates = both(uniform(rng, step(4), 0.05f, 0.95f));

      // LSTM.
      {
        const Both xp = both(uniform(rng, all(4), -2.0f, 2.0f)), hr = both(uniform(rng, step(4)));
        Both act = output(rng, step(4)), c = output(rng, state), h = output(rng, state),
             seq = output(rng, seq_shape);
        on_both([&](const Exec& ex) {
          lstm_step_forward(ex, d.t_x, d.t_y, xp.on(ex), hr.on(ex), c_prev.on(ex), act.on(ex),
                            c.on(ex), h.on(ex), opt(seq, ex));
        });
        EXPECT_TRUE(matches("lstm_step_forward " + label + ": gates", act, kMath));
        EXPECT_TRUE(matches("lstm_step_forward " + label + ": c", c, kMath));
        EXPECT_TRUE(matches("lstm_step_forward " + label + ": h", h, kMath));
        EXPECT_TRUE(matches("lstm_step_forward " + label + ": seq", seq, kMath));
        // Backward from the CPU's cell state, on both.
        const Both c_ref = both(c.cpu);
        Both dc = both(uniform(rng, state)), dz = output(rng, step(4));
        on_both([&](const Exec& ex) {
          lstm_step_backward(ex, d.t_y, copt(dseq, ex), gates.on(ex), c_ref.on(ex), c_prev.on(ex),
                             dh_in.on(ex), dc.on(ex), dz.on(ex));
        });
        EXPECT_TRUE(matches("lstm_step_backward " + label + ": dc", dc, kMath));
        EXPECT_TRUE(matches("lstm_step_backward " + label + ": dz", dz, kMath));
      }
      // GRU, after and before the reset.
      for (const bool reset_after : {true, false}) {
        const std::string gl = label + (reset_after ? " reset_after" : " reset_before");
        const Both xp = both(uniform(rng, all(3), -2.0f, 2.0f)), hr = both(uniform(rng, step(3)));
        const Both hrh = both(uniform(rng, step(3)));
        Both rh = output(rng, state), act = output(rng, step(4)), h = output(rng, state),
             seq = output(rng, seq_shape);
        on_both([&](const Exec& ex) {
          if (!reset_after)
            gru_reset_forward(ex, d.t_x, xp.on(ex), hr.on(ex), h_prev.on(ex), rh.on(ex));
          gru_step_forward(ex, reset_after, d.t_x, d.t_y, xp.on(ex), hr.on(ex), hrh.on(ex),
                           h_prev.on(ex), act.on(ex), h.on(ex), opt(seq, ex));
        });
        if (!reset_after) {
          EXPECT_TRUE(matches("gru_reset_forward " + gl + ": rh", rh, kMath));
        }
        EXPECT_TRUE(matches("gru_step_forward " + gl + ": gates", act, kMath));
        EXPECT_TRUE(matches("gru_step_forward " + gl + ": h", h, kMath));
        EXPECT_TRUE(matches("gru_step_forward " + gl + ": seq", seq, kMath));
        Both dh = both(dh_in.cpu), dzx = output(rng, all(3)), dzr = output(rng, step(3)),
             dzh = output(rng, step(3));
        const Both drh = both(uniform(rng, state));
        on_both([&](const Exec& ex) {
          gru_step_backward(ex, reset_after, d.t_x, d.t_y, copt(dseq, ex), gates.on(ex),
                            h_prev.on(ex), dh.on(ex), dzx.on(ex), dzr.on(ex),
                            reset_after ? nullptr : &dzh.on(ex));
          if (!reset_after)
            gru_reset_backward(ex, d.t_x, gates.on(ex), h_prev.on(ex), drh.on(ex), dh.on(ex),
                               dzx.on(ex), dzr.on(ex));
        });
        EXPECT_TRUE(matches("gru_step_backward " + gl + ": dh", dh, kMath));
        EXPECT_TRUE(matches("gru_step_backward " + gl + ": dzx", dzx, kMath));
        EXPECT_TRUE(matches("gru_step_backward " + gl + ": dzr", dzr, kMath));
        if (!reset_after) {
          EXPECT_TRUE(matches("gru_step_backward " + gl + ": dzh", dzh, kMath));
        }
      }
      // SimpleRNN, with an activation from each kind of backward.
      for (const Activation a : {Activation::tanh, Activation::relu, Activation::linear}) {
        const std::string sl = label + " " + name(a);
        const Both xp = both(uniform(rng, all(1), -2.0f, 2.0f)), hr = both(uniform(rng, step(1)));
        Both h = output(rng, state), seq = output(rng, seq_shape);
        on_both([&](const Exec& ex) {
          simple_rnn_step_forward(ex, a, d.t_x, d.t_y, xp.on(ex), hr.on(ex), h.on(ex),
                                  opt(seq, ex));
        });
        EXPECT_TRUE(matches("simple_rnn_step_forward " + sl + ": h", h, kMath));
        EXPECT_TRUE(matches("simple_rnn_step_forward " + sl + ": seq", seq, kMath));
        const Both h_ref = both(h.cpu);
        Both dz = output(rng, state), dzx = output(rng, all(1));
        on_both([&](const Exec& ex) {
          simple_rnn_step_backward(ex, a, d.t_x, d.t_y, copt(dseq, ex), h_ref.on(ex), dh_in.on(ex),
                                   dz.on(ex), dzx.on(ex));
        });
        EXPECT_TRUE(matches("simple_rnn_step_backward " + sl + ": dz", dz, kMath));
        EXPECT_TRUE(matches("simple_rnn_step_backward " + sl + ": dzx", dzx, kMath));
      }
    }
}

// Batches staged to the GPU arrive intact, one after another while the
// previous one is still in use (the copy overlaps the step), a smaller last
// batch included; on the CPU stage() hands back the host tensor itself.
TEST(BackendHarness, InputStagerDeliversEachBatch) {
  const Shape shapes[] = {Shape{32, 28, 28, 1}, Shape{32, 28, 28, 1}, Shape{32, 28, 28, 1},
                          Shape{7, 28, 28, 1}};
  InputStager on_cpu(cpu_exec()), on_gpu(gpu_exec());
  Rng rng(1400);
  int batch = 0;
  for (const Shape& s : shapes) {
    const Tensor host = uniform(rng, s);
    const Tensor& staged_cpu = on_cpu.stage(host);
    EXPECT_EQ(staged_cpu.raw(), host.raw()) << "batch " << batch << ": the CPU stager copied";

    // Use the staged batch on the GPU (y = batch + 0) as a step would, then
    // read the result back.
    const Tensor& staged = on_gpu.stage(host);
    EXPECT_EQ(staged.device(), Device::cuda) << "batch " << batch;
    EXPECT_EQ(staged.shape().str(), s.str()) << "batch " << batch;
    Both zeros{Tensor::zeros(s), Tensor::zeros(s, DType::f32, Device::cuda)};
    Both y{Tensor(s), Tensor(s, DType::f32, Device::cuda)};
    add(gpu_exec(), staged, zeros.gpu, y.gpu);
    y.cpu.copy_from(host);
    synchronize(gpu_exec());
    EXPECT_TRUE(matches("staged batch " + std::to_string(batch), y, kExact));
    ++batch;
  }
}

}  // namespace
}  // namespace drun::kernels

int main(int argc, char** argv) {
  using namespace drun::kernels;
  if (!cuda_built() || cuda_device_count() == 0) {
    std::printf("backend harness: no GPU found (%s); the CUDA column cannot run here\n",
                cuda_built() ? "this build has the CUDA backend but sees no device"
                             : "this build has no CUDA backend");
    return 77;  // meson's "skipped"
  }
  ::testing::InitGoogleTest(&argc, argv);
  // Opened here, closed after the tests and before static destructors run.
  std::shared_ptr<cuda::Context> context;
  try {
    context = make_cuda_context(0);
  } catch (const std::exception& e) {
    std::printf("backend harness: cannot open GPU 0: %s\n", e.what());
    return 1;
  }
  g_context = context.get();
  std::printf("backend harness: CPU reference against GPU 0, %s\n", cuda_device_name(0).c_str());
  return RUN_ALL_TESTS();
}
