// The ops of kernels/op_list.hpp: each one, generated at the end of this
// file, runs its checks, makes sure every tensor it is given lives on its
// device, and hands itself to the build's GPU backend or to its CPU side,
// on_cpu::<op> (kernels/cpu/ops_cpu.hpp, written out in cpu/ops_cpu.cpp).
#include "kernels/ops.hpp"

#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/cast.hpp"
#include "kernels/cpu/ops_cpu.hpp"
#include "kernels/gpu_backend.hpp"
#include "kernels/optimizer_update.hpp"
#include "kernels/recurrent.hpp"

namespace drun::kernels {

namespace {

// The device check of one argument: a tensor (or a non-null tensor pointer)
// must be on the op's device; anything else passes.
template <class T>
void check_device(const Exec& ex, const char* op, const T& arg) {
  const Tensor* t = nullptr;
  if constexpr (std::is_same_v<T, Tensor>)
    t = &arg;
  else if constexpr (std::is_same_v<T, Tensor*> || std::is_same_v<T, const Tensor*>)
    t = arg;
  if (t && t->defined() && t->device() != ex.device)
    throw std::logic_error(std::string(op) + ": a " + t->shape().str() + " tensor is on " +
                           device_name(t->device()) + ", the op runs on " + device_name(ex.device));
}

// The backend for ex: null for the CPU (on_cpu), the build's GPU backend for
// a GPU. Every tensor argument must be on ex's device: a tensor left behind
// on the other side is a bug of the caller, caught here rather than as a
// wild pointer in a kernel.
template <class... Args>
GpuBackend* gpu(const Exec& ex, const char* op, const Args&... args) {
  (check_device(ex, op, args), ...);
  if (ex.device == Device::cpu) return nullptr;
  GpuBackend* g = gpu_backend();
  if (!g)
    throw std::runtime_error(std::string(op) + ": no " + device_name(ex.device) +
                             " backend in this build");
  return g;
}

// ---------------------------------------------------------------------------
// The checks of op_list.hpp's last column

void none() {}

// Every defined tensor has as many elements as the first.
template <class... More>
void same_size(const char* op, const Tensor& first, const More&... more) {
  const auto check = [&](const Tensor& t) {
    if (t.defined() && t.numel() != first.numel())
      throw std::logic_error(std::string(op) + ": sizes differ, " + first.shape().str() + " vs " +
                             t.shape().str());
  };
  (check(more), ...);
}

// A strided copy stays inside both tensors (float32): its nearest and
// furthest element of each.
void check_copy(const char* op, const CopyGeometry& g, const Tensor& x, const Tensor& y) {
  const auto fail = [&](const std::string& why) {
    throw std::logic_error(std::string(op) + ": " + why);
  };
  if (g.rank < 0 || g.rank > CopyGeometry::kMaxRank || g.sum_rank < 0 ||
      g.sum_rank > CopyGeometry::kMaxSumRank)
    fail("rank " + std::to_string(g.rank) + " with " + std::to_string(g.sum_rank) + " summed");
  if (x.dtype() != DType::f32 || y.dtype() != DType::f32) fail("float32 tensors only");
  if (g.count() == 0) return;
  // A negative stride walks backwards (a time reversal): the lowest and the
  // highest element reached must both lie inside the tensor.
  int64_t x_first = g.x_offset, x_last = g.x_offset, y_first = g.y_offset, y_last = g.y_offset;
  const auto reach = [](int64_t extent, int64_t stride, int64_t& first, int64_t& last) {
    (stride < 0 ? first : last) += extent * stride;
  };
  for (int d = 0; d < g.rank; ++d) {
    if (g.size[d] < 0) fail("a negative size");
    reach(g.size[d] - 1, g.x_stride[d], x_first, x_last);
    reach(g.size[d] - 1, g.y_stride[d], y_first, y_last);
  }
  for (int d = 0; d < g.sum_rank; ++d) {
    if (g.sum_size[d] < 1 || g.sum_stride[d] < 0) fail("an empty or negative summed dimension");
    x_last += (g.sum_size[d] - 1) * g.sum_stride[d];
  }
  if (x_first < 0 || y_first < 0 || x_last >= x.numel() || y_last >= y.numel())
    fail("reaches elements " + std::to_string(x_first) + ".." + std::to_string(x_last) + " of x " +
         x.shape().str() + " or " + std::to_string(y_first) + ".." + std::to_string(y_last) +
         " of y " + y.shape().str());
}

// A depthwise convolution's tensors: float32, sized as g says, co a
// multiple of c (the depth multiplier); b, where given and defined, co values.
void check_depthwise(const char* op, const ConvGeometry& g, const Tensor& x, const Tensor& w,
                     const Tensor& y, const Tensor* b) {
  const auto fail = [&](const std::string& why) {
    throw std::logic_error(std::string(op) + ": " + why);
  };
  if (g.c <= 0 || g.co % g.c != 0)
    fail(std::to_string(g.co) + " outputs are not a multiple of " + std::to_string(g.c) +
         " channels");
  const bool has_bias = b && b->defined();
  for (const Tensor* t : {&x, &w, &y, has_bias ? b : &y})
    if (t->dtype() != DType::f32) fail("float32 tensors only");
  if (x.numel() != g.n * g.h * g.w * g.c || w.numel() != g.kh * g.kw * g.co ||
      y.numel() != g.n * g.oh * g.ow * g.co || (has_bias && b->numel() != g.co))
    fail("x " + x.shape().str() + ", w " + w.shape().str() + " and y " + y.shape().str() +
         " do not fit the geometry");
}

// Dropout's key: two int32.
void check_key(const char* op, const Tensor& stored) {
  if (stored.numel() != 2 || stored.dtype() != DType::i32)
    throw std::logic_error(std::string(op) + ": the key is two int32, got " +
                           dtype_name(stored.dtype()) + " " + stored.shape().str());
}

// An optimizer update: the gradient fits the variable, the step's values
// are kStepValues float32.
void check_update(const char* op, const Tensor& g, const Tensor& w, const Tensor& step) {
  same_size(op, g, w);
  if (step.numel() != kStepValues || step.dtype() != DType::f32)
    throw std::logic_error(std::string(op) + ": the step's values are " +
                           std::to_string(kStepValues) + " float32, got " +
                           dtype_name(step.dtype()) + " " + step.shape().str());
}

// Gradient clipping: the step's values as an update's, the sum of squares
// one float32 where the kind reads it.
void check_clip(const char* op, GradientClip kind, const Tensor& sum_squares, const Tensor& step,
                const Tensor& g) {
  check_update(op, g, g, step);
  if (kind != GradientClip::value &&
      (sum_squares.numel() != 1 || sum_squares.dtype() != DType::f32))
    throw std::logic_error(std::string(op) + ": the sum of squares must be one float32 value");
}

// A filter gradient's dy in x's narrow type: rounded once for both of a
// convolution's gradients, so it has no float32 to mask or to sum a bias
// gradient from.
void check_rounded_dy(const char* op, const Tensor& x, const Tensor& dy, const Tensor* relu_y,
                      const Tensor& db) {
  if (dy.dtype() == DType::f32) return;
  if (dy.dtype() != x.dtype() || relu_y || db.defined())
    throw std::logic_error(std::string(op) + ": dy in " + dtype_name(dy.dtype()) +
                           " needs x in the same type, no relu_y and no db");
}

void check_activation_backward(const char* op, ActivationFn a, const Tensor& x, const Tensor& y,
                               const Tensor& dy, const Tensor& dx) {
  same_size(op, y, dy, dx, x);
  if (a.reads_input() && !x.defined())
    throw std::logic_error(std::string(op) + ": " + activation_name(a.kind) +
                           "'s backward needs the forward's input");
}

// Every matrix of a batched GEMM's operand lies inside its float32 tensor.
void check_batched_matmul(const char* op, const BatchedGemm& g, const Tensor& a, const Tensor& b,
                          const Tensor& y) {
  const auto fits = [&](const char* what, const Tensor& t, const MatrixLayout& l, int64_t rows,
                        int64_t cols) {
    if (t.dtype() != DType::f32)
      throw std::logic_error(std::string(op) + ": " + what + " is " + dtype_name(t.dtype()) +
                             ", not float32");
    if (g.batch <= 0 || g.heads <= 0 || rows <= 0 || cols <= 0) return;
    const int64_t last =
        (g.batch - 1) * l.outer + (g.heads - 1) * l.inner + (rows - 1) * l.ld + cols - 1;
    if (l.ld < cols || l.outer < 0 || l.inner < 0 || last >= t.numel())
      throw std::logic_error(std::string(op) + ": " + what + "'s matrices (" +
                             std::to_string(rows) + "x" + std::to_string(cols) + ", ld " +
                             std::to_string(l.ld) + ") run past its " + t.shape().str());
  };
  fits("a", a, g.a, g.trans_a ? g.k : g.m, g.trans_a ? g.m : g.k);
  fits("b", b, g.b, g.trans_b ? g.n : g.k, g.trans_b ? g.k : g.n);
  fits("y", y, g.y, g.m, g.n);
}

// x and y alike, in rows of t: the causal mask's row index is the row's mod t.
void check_rows_of(const char* op, int64_t t, const Tensor& x, const Tensor& y) {
  same_size(op, x, y);
  const int64_t cols = x.rank() ? x.dim(-1) : 1;
  if (t <= 0 || cols <= 0 || (x.numel() / cols) % t != 0)
    throw std::logic_error(std::string(op) + ": " + x.shape().str() + " is not in groups of " +
                           std::to_string(t) + " rows");
}

// One float32 value: a flag, a loss, a metric's sum.
void check_scalar(const char* op, const char* what, const Tensor& t) {
  if (t.numel() != 1 || t.dtype() != DType::f32)
    throw std::invalid_argument(std::string(op) + ": the " + what + " must be one float32 value");
}

void check_flag(const char* op, const Tensor& flag) {
  check_scalar(op, "flag", flag);
}

// Sparse labels: one int32 per row of pred (class_rows: per example, or per
// step of a sequence); dense targets: pred's size.
void check_targets(const char* op, bool sparse, const Tensor& pred, const Tensor& target) {
  if (!sparse) return same_size(op, pred, target);
  if (target.dtype() != DType::i32 || pred.rank() == 0 ||
      target.numel() != class_rows(pred.shape()).rows)
    throw std::logic_error(std::string(op) + ": wants one int32 label per row of " +
                           pred.shape().str() + ", got " + target.shape().str() + " " +
                           dtype_name(target.dtype()));
}

void check_cast(const char* op, const Tensor& x, const Tensor& y) {
  same_size(op, x, y);
  for (const Tensor* t : {&x, &y})
    if (!t->defined() || !castable(t->dtype()))
      throw std::logic_error(std::string(op) + ": converts float32, float16 and bfloat16, not " +
                             (t->defined() ? dtype_name(t->dtype()) : "an undefined tensor"));
}

void check_loss(const char* op, LossKind kind, const Tensor& pred, const Tensor& target,
                const Tensor& grad, const Tensor& loss) {
  same_size(op, pred, grad);
  check_targets(op, kind == LossKind::softmax_xent_sparse || kind == LossKind::xent_sparse, pred,
                target);
  check_scalar(op, "loss", loss);
}

void check_metric(const char* op, MetricKind kind, const Tensor& pred, const Tensor& target,
                  const Tensor& sum) {
  check_targets(op, kind == MetricKind::label_accuracy, pred, target);
  check_scalar(op, "sum", sum);
}

void check_top_k(const char* op, const Tensor& pred, const Tensor& target, const Tensor& sum) {
  check_targets(op, target.dtype() == DType::i32, pred, target);
  check_scalar(op, "sum", sum);
}

// Targets of pred's size in float32; `want` float32 counts, or (want < 0)
// -want of them at least, in an even number (bucket_counts' pairs).
void check_counts(const char* op, const Tensor& pred, const Tensor& target, const Tensor& counts,
                  int64_t want) {
  same_size(op, pred, target);
  const int64_t n = counts.numel();
  const bool fits = want >= 0 ? n == want : n >= -want && n % 2 == 0;
  if (!fits || counts.dtype() != DType::f32 || target.dtype() != DType::f32 ||
      pred.dtype() != DType::f32)
    throw std::logic_error(std::string(op) + ": float32 predictions and targets, and " +
                           (want >= 0 ? std::to_string(want) : "an even number of") +
                           " float32 counts; got " + counts.shape().str() + " " +
                           dtype_name(counts.dtype()));
}

void check_thresholds(const char* op, const Thresholds& th, const Tensor& pred,
                      const Tensor& target, const Tensor& counts) {
  if (th.count < 1 || th.count > Thresholds::kMax)
    throw std::logic_error(std::string(op) + ": " + std::to_string(th.count) +
                           " thresholds (1 to " + std::to_string(Thresholds::kMax) + ")");
  check_counts(op, pred, target, counts, 2 * int64_t{th.count} + 2);
}

// Layer normalisation: y (or dy) as x, one statistic per row of x's last
// axis, gamma and beta (where defined) one per column.
void check_layer_norm(const char* op, const Tensor& x, const Tensor& gamma, const Tensor& beta,
                      const Tensor& mean, const Tensor& inv_std, const Tensor& y) {
  same_size(op, x, y);
  const int64_t c = x.rank() ? x.dim(-1) : 0;
  if (c == 0)
    throw std::logic_error(std::string(op) + ": x " + x.shape().str() + " has no columns");
  for (const Tensor* t : {&gamma, &beta})
    if (t->defined() && t->numel() != c)
      throw std::logic_error(std::string(op) + ": gamma and beta have " + std::to_string(c) +
                             " values for x " + x.shape().str() + ", got " + t->shape().str());
  for (const Tensor* t : {&mean, &inv_std})
    if (t->numel() != x.numel() / c)
      throw std::logic_error(std::string(op) + ": one statistic per row of x " + x.shape().str() +
                             ", got " + t->shape().str());
}

// Embedding: float32 or int32 ids, a 2-D float32 table, rows of its width per id.
void check_embedding(const char* op, const Tensor& ids, const Tensor& table, const Tensor& rows) {
  if (ids.dtype() != DType::f32 && ids.dtype() != DType::i32)
    throw std::logic_error(std::string(op) + ": ids are float32 or int32, not " +
                           dtype_name(ids.dtype()));
  if (table.rank() != 2 || table.dtype() != DType::f32 || rows.dtype() != DType::f32 ||
      rows.numel() != ids.numel() * table.dim(1))
    throw std::logic_error(std::string(op) + ": " + ids.shape().str() + " ids into a " +
                           table.shape().str() + " table do not give " + rows.shape().str());
}

// A recurrent step's buffers: `wide` tensors hold B g U values, `narrow`
// ones B U (null entries skipped).
void check_step_sizes(const char* op, int64_t b, int64_t g, int64_t u,
                      std::initializer_list<const Tensor*> wide,
                      std::initializer_list<const Tensor*> narrow) {
  const auto fail = [&](const char* what, const Tensor& t) {
    throw std::logic_error(std::string(op) + ": a " + what + " tensor is " + t.shape().str());
  };
  for (const Tensor* w : wide)
    if (w && w->numel() != b * g * u) fail("step", *w);
  for (const Tensor* n : narrow)
    if (n && n->numel() != b * u) fail("state", *n);
}

// A recurrent step (kernels/recurrent.hpp): xs (B, T, g U) batch-major with
// the step's time inside it, h (B, U), seq (B, T, U) where given, and the
// step's buffers (check_step_sizes).
void check_rnn_step(const char* op, int64_t g, int64_t t_x, int64_t t_y, const Tensor& xs,
                    const Tensor& h, const Tensor* seq, std::initializer_list<const Tensor*> wide,
                    std::initializer_list<const Tensor*> narrow) {
  const auto fail = [&](const std::string& what) {
    throw std::logic_error(std::string(op) + ": " + what);
  };
  if (xs.rank() != 3 || h.rank() != 2 || xs.dim(0) != h.dim(0) || xs.dim(2) != g * h.dim(1))
    fail("wants (B, T, " + std::to_string(g) + " U) beside a (B, U) state, got " +
         xs.shape().str() + " and " + h.shape().str());
  const int64_t b = h.dim(0), t = xs.dim(1), u = h.dim(1);
  if (t_x < 0 || t_x >= t || t_y < 0 || t_y >= t)
    fail("step " + std::to_string(t_x) + "/" + std::to_string(t_y) + " outside " +
         std::to_string(t) + " steps");
  if (seq && seq->numel() != b * t * u) fail("the sequence is " + seq->shape().str());
  check_step_sizes(op, b, g, u, wide, narrow);
}

// The LSTM's backward step: (B, 4U) step tensors and (B, U) states beside
// dh, dseq (B, T, U) where given, with t_y one of its steps.
void check_lstm_step_backward(const char* op, int64_t t_y, const Tensor* dseq, const Tensor& dh,
                              std::initializer_list<const Tensor*> wide,
                              std::initializer_list<const Tensor*> narrow) {
  const auto fail = [&](const std::string& what) {
    throw std::logic_error(std::string(op) + ": " + what);
  };
  if (dh.rank() != 2) fail("wants a (B, U) state gradient, got " + dh.shape().str());
  const int64_t b = dh.dim(0), u = dh.dim(1);
  if (dseq && (dseq->rank() != 3 || dseq->dim(0) != b || dseq->dim(2) != u))
    fail("the sequence's gradient is " + dseq->shape().str() + " beside " + dh.shape().str());
  if (dseq && (t_y < 0 || t_y >= dseq->dim(1)))
    fail("step " + std::to_string(t_y) + " outside " + std::to_string(dseq->dim(1)) + " steps");
  check_step_sizes(op, b, 4, u, wide, narrow);
}

// The gates a GRU step keeps: (B, 4U) beside its (B, U) state.
void check_rnn_gates(const char* op, const Tensor& gates, const Tensor& h) {
  if (gates.numel() != 4 * h.numel())
    throw std::logic_error(std::string(op) + ": the gates are " + gates.shape().str() +
                           " beside a " + h.shape().str() + " state");
}

void check_simple_rnn_activation(const char* op, ActivationFn a) {
  if (!simple_rnn_activation_ok(a))
    throw std::logic_error(std::string(op) + ": " + activation_name(a.kind) +
                           " is not an activation of the fused step");
}

}  // namespace

// ---------------------------------------------------------------------------
// The ops: checks, device check, then the GPU backend or on_cpu.

#define DRUN_OP(ret, name, params, args, device, checks)                                     \
  ret name params {                                                                          \
    [[maybe_unused]] constexpr const char* op = #name;                                       \
    checks;                                                                                  \
    if (GpuBackend* backend = gpu(device, op, DRUN_UNPAREN args)) return backend->name args; \
    return on_cpu::name args;                                                                \
  }
#include "kernels/op_list.hpp"
#undef DRUN_OP

void begin_capture(const Exec& ex) {
  GpuBackend* g = gpu(ex, "begin_capture");
  if (!g) throw std::logic_error("begin_capture: only device work on a GPU is captured");
  g->begin_capture(ex);
}

std::unique_ptr<GpuGraph> end_capture(const Exec& ex, std::string& why) {
  GpuBackend* g = gpu(ex, "end_capture");
  if (!g) throw std::logic_error("end_capture: only device work on a GPU is captured");
  return g->end_capture(ex, why);
}

InputStager::InputStager(const Exec& ex) {
  if (GpuBackend* g = gpu(ex, "input staging")) gpu_ = g->make_stager(ex);
}

InputStager::~InputStager() = default;

const Tensor& InputStager::stage(const Tensor& host) {
  return gpu_ ? gpu_->stage(host) : host;
}

}  // namespace drun::kernels
