// The ops of kernels/op_list.hpp: each one, generated at the end of this
// file, runs its checks, makes sure every tensor it is given lives on its
// device, and hands itself to the build's GPU backend or to its CPU side,
// on_cpu::<op> (kernels/cpu/ops_cpu.hpp, written out in cpu/ops_cpu.cpp).
#include "kernels/ops.hpp"

#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/cast.hpp"
#include "kernels/cpu/ops_cpu.hpp"
#include "kernels/gpu_backend.hpp"
#include "kernels/optimizer_update.hpp"

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
