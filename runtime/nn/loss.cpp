#include "nn/loss.hpp"

#include "base/did_you_mean.hpp"

namespace drun::nn {

namespace {

using K = kernels::LossKind;

// The options every loss takes.
const Schema& common_options() {
  static const Schema s{{"from_logits", OptionType::boolean, false,
                         "the outputs are logits, not probabilities (cross-entropies)"},
                        {"reduction", OptionType::string, "sum_over_batch_size",
                         "accepted from Keras files; the loss is always the batch mean"},
                        {"name", OptionType::string, nullptr, "Keras' name of the loss"}};
  return s;
}

// Keras' convention: a class name starts with a capital letter; the
// snake_case names are string shorthands, not class names.
bool is_class_name(const std::string& name) {
  return !name.empty() && name[0] >= 'A' && name[0] <= 'Z';
}

// label_smoothing, where a loss takes it.
Schema smoothing_option(const char* doc) {
  return {{"label_smoothing", OptionType::number, 0.0, doc}};
}

}  // namespace

const LossInfo& sparse_categorical_crossentropy_loss() {
  static const LossInfo info{{{"SparseCategoricalCrossentropy", "sparse_categorical_crossentropy"},
                              "cross-entropy against integer class labels",
                              smoothing_option("in [0, 1]: the label becomes (1 - s) one-hot + "
                                               "s / classes (drun's; Keras' has none)")},
                             K::xent_sparse,
                             K::softmax_xent_sparse,
                             true,
                             true};
  return info;
}

const LossInfo& categorical_crossentropy_loss() {
  static const LossInfo info{{{"CategoricalCrossentropy", "categorical_crossentropy"},
                              "cross-entropy against one-hot (or soft) labels",
                              smoothing_option("in [0, 1]: targets become (1 - s) targets + "
                                               "s / classes")},
                             K::xent,
                             K::softmax_xent,
                             true,
                             false};
  return info;
}

const LossInfo& binary_crossentropy_loss() {
  static const LossInfo info{
      {{"BinaryCrossentropy", "binary_crossentropy"},
       "cross-entropy of each output against a 0/1 label",
       smoothing_option("in [0, 1]: targets become (1 - s) targets + s / 2")},
      K::bce,
      K::sigmoid_bce,
      true,
      false};
  return info;
}

const LossInfo& mean_squared_error_loss() {
  static const LossInfo info{
      {{"MeanSquaredError", "mean_squared_error", "mse"}, "the mean squared error, for regression"},
      K::mse,
      K::mse,
      false,
      false};
  return info;
}

const std::vector<const LossInfo*>& loss_registry() {
  static const std::vector<LossInfo> infos = with_common_options(
      std::vector<LossInfo>{
#define DRUN_LOSS(id) id##_loss(),
#include "nn/loss_list.hpp"
#undef DRUN_LOSS
      },
      common_options());
  static const std::vector<const LossInfo*> pointers = entry_pointers(infos);
  return pointers;
}

Loss::Loss(const json& spec) {
  json config = json::object();
  std::string given;
  if (spec.is_string()) {
    given = spec.get<std::string>();
  } else if (spec.is_object()) {
    given = spec.value("class_name", std::string());
    config = spec.value("config", json::object());
  } else {
    throw UsageError("loss: expected a name or {class_name = ..., config = {...}}, got " +
                     spec.dump());
  }
  info_ = find_entry(loss_registry(), given);
  if (!info_ || (!spec.is_string() && !is_class_name(given)))
    throw UsageError("unknown loss '" + given + "'" +
                     did_you_mean_in_list(given, registry_names(loss_registry())) +
                     "; valid: " + registry_names(loss_registry()));
  class_name_ = info_->about.name();
  Options o(config, class_name_, info_->about.schema);
  from_logits_ = o.get<bool>("from_logits");
  if (from_logits_ && !info_->takes_logits)
    throw UsageError(class_name_ + ": from_logits does not apply");
  kind_ = from_logits_ ? info_->on_logits : info_->on_probabilities;
  if (info_->about.schema.find("label_smoothing")) {
    smoothing_given_ = o.get<double>("label_smoothing");
    label_smoothing_ = static_cast<float>(smoothing_given_);
    if (!(label_smoothing_ >= 0.f && label_smoothing_ <= 1.f))
      throw UsageError(class_name_ + ": label_smoothing must be in [0, 1], got " +
                       std::to_string(label_smoothing_));
  }
}

json Loss::config() const {
  json c = {{"name", class_name_}, {"reduction", info_->about.schema.find("reduction")->fallback}};
  if (info_->takes_logits) c["from_logits"] = from_logits_;
  if (label_smoothing_ != 0.f) c["label_smoothing"] = smoothing_given_;
  return {{"class_name", class_name_}, {"config", c}};
}

void Loss::check(const Shape& pred, const Tensor& target) const {
  // Sparse labels: one per row, an example or a step of a sequence ((N, T, C)
  // predictions take (N, T) labels), each of the last axis' classes.
  const auto [rows, classes] = kernels::class_rows(pred);
  if (!sparse()) {
    if (target.dtype() != DType::f32 || target.numel() != pred.numel())
      throw UsageError(class_name_ + ": targets of shape " + target.shape().str() + " " +
                       dtype_name(target.dtype()) + " do not match predictions " + pred.str() +
                       " (sparse labels need SparseCategoricalCrossentropy)");
    return;
  }
  if (target.dtype() != DType::i32 || target.numel() != rows)
    throw UsageError(class_name_ + ": expects one integer class label per example (" +
                     std::to_string(rows) + " for predictions " + pred.str() +
                     "), got targets of shape " + target.shape().str() + " " +
                     dtype_name(target.dtype()));
  const int32_t* labels = target.i32();
  const int64_t steps = pred.rank() > 2 ? rows / pred[0] : 1;
  for (int64_t r = 0; r < rows; ++r)
    if (labels[r] < 0 || labels[r] >= classes)
      throw UsageError(class_name_ + ": label " + std::to_string(labels[r]) + " of example " +
                       std::to_string(r / steps) +
                       (steps > 1 ? " (step " + std::to_string(r % steps) + ")" : "") +
                       " is outside [0, " + std::to_string(classes) + ")");
}

void Loss::compute(const kernels::Exec& ex, const Tensor& pred, const Tensor& target, Tensor& grad,
                   Tensor& loss) {
  grad.ensure(pred.shape(), DType::f32, pred.device());
  if (label_smoothing_ == 0.f) {
    kernels::loss_forward_backward(ex, kind_, pred, target, grad, loss);
    return;
  }
  const float s = label_smoothing_;
  if (sparse()) {
    // Smoothed one-hot targets, (1 - s) onehot + s / classes, give a loss and
    // a gradient linear in the targets: (1 - s) times the sparse loss plus s
    // times the loss against uniform targets, without a (rows, classes)
    // one-hot table built from the labels.
    const int64_t classes = kernels::class_rows(pred.shape()).cols;
    const kernels::LossKind dense = kind_ == kernels::LossKind::softmax_xent_sparse
                                        ? kernels::LossKind::softmax_xent
                                        : kernels::LossKind::xent;
    smoothed_.ensure(pred.shape(), DType::f32, pred.device());
    other_grad_.ensure(pred.shape(), DType::f32, pred.device());
    other_loss_.ensure(Shape{1}, DType::f32, pred.device());
    kernels::fill(ex, 1.0f / static_cast<float>(classes), smoothed_);
    kernels::loss_forward_backward(ex, kind_, pred, target, grad, loss);
    kernels::loss_forward_backward(ex, dense, pred, smoothed_, other_grad_, other_loss_);
    kernels::scale(ex, 1.0f - s, grad);
    kernels::axpy(ex, s, other_grad_, grad);
    kernels::scale(ex, 1.0f - s, loss);
    kernels::axpy(ex, s, other_loss_, loss);
    return;
  }
  // Keras' smoothing: targets * (1 - s) + s / classes (2 for the binary loss).
  const float share = kind_ == kernels::LossKind::sigmoid_bce || kind_ == kernels::LossKind::bce
                          ? 0.5f * s
                          : s / static_cast<float>(kernels::class_rows(pred.shape()).cols);
  smoothed_.ensure(target.shape(), DType::f32, target.device());
  kernels::fill(ex, share, smoothed_);
  kernels::axpy(ex, 1.0f - s, target, smoothed_);
  kernels::loss_forward_backward(ex, kind_, pred, smoothed_, grad, loss);
}

}  // namespace drun::nn
