#include "nn/loss.hpp"

#include <map>

namespace drun::nn {

namespace {
const std::map<std::string, std::string>& snake_names() {
  static const std::map<std::string, std::string> m = {
      {"sparse_categorical_crossentropy", "SparseCategoricalCrossentropy"},
      {"categorical_crossentropy", "CategoricalCrossentropy"},
      {"binary_crossentropy", "BinaryCrossentropy"},
      {"mean_squared_error", "MeanSquaredError"},
      {"mse", "MeanSquaredError"}};
  return m;
}
}  // namespace

Loss::Loss(const json& spec) {
  json config = json::object();
  if (spec.is_string()) {
    auto it = snake_names().find(spec.get<std::string>());
    class_name_ = it != snake_names().end() ? it->second : spec.get<std::string>();
  } else {
    class_name_ = spec.value("class_name", std::string());
    config = spec.value("config", json::object());
  }
  Options o(config, class_name_.empty() ? std::string("loss") : class_name_);
  o.maybe<std::string>("name");
  o.maybe<std::string>("reduction");
  from_logits_ = o.get<bool>("from_logits", false);
  using K = kernels::LossKind;
  if (class_name_ == "SparseCategoricalCrossentropy") {
    kind_ = from_logits_ ? K::softmax_xent_sparse : K::xent_sparse;
  } else if (class_name_ == "CategoricalCrossentropy") {
    kind_ = from_logits_ ? K::softmax_xent : K::xent;
  } else if (class_name_ == "BinaryCrossentropy") {
    kind_ = from_logits_ ? K::sigmoid_bce : K::bce;
  } else if (class_name_ == "MeanSquaredError") {
    if (from_logits_) throw UsageError("MeanSquaredError: from_logits does not apply");
    kind_ = K::mse;
  } else {
    throw UsageError("unknown loss '" + class_name_ +
                     "'; valid: SparseCategoricalCrossentropy, CategoricalCrossentropy, "
                     "BinaryCrossentropy, MeanSquaredError (or their snake_case names)");
  }
  o.finish();
}

bool Loss::sparse() const {
  return class_name_ == "SparseCategoricalCrossentropy";
}

json Loss::config() const {
  json c = {{"name", class_name_}, {"reduction", "sum_over_batch_size"}};
  if (class_name_ != "MeanSquaredError") c["from_logits"] = from_logits_;
  return {{"class_name", class_name_}, {"config", c}};
}

void Loss::check(const Shape& pred, const Tensor& target) const {
  const int64_t rows = pred.rank() ? pred[0] : 0;
  if (!sparse()) {
    if (target.dtype() != DType::f32 || target.numel() != pred.numel())
      throw UsageError(class_name_ + ": targets of shape " + target.shape().str() + " " +
                       dtype_name(target.dtype()) + " do not match predictions " + pred.str() +
                       " (sparse labels need SparseCategoricalCrossentropy)");
    return;
  }
  if (target.dtype() != DType::i32 || target.numel() != rows)
    throw UsageError(class_name_ + ": expects one integer class label per example (" +
                     std::to_string(rows) + "), got targets of shape " + target.shape().str() +
                     " " + dtype_name(target.dtype()));
  const int64_t classes = rows ? pred.numel() / rows : 0;
  const int32_t* labels = target.i32();
  for (int64_t r = 0; r < rows; ++r)
    if (labels[r] < 0 || labels[r] >= classes)
      throw UsageError(class_name_ + ": label " + std::to_string(labels[r]) + " of example " +
                       std::to_string(r) + " is outside [0, " + std::to_string(classes) + ")");
}

void Loss::compute(const kernels::Exec& ex, const Tensor& pred, const Tensor& target, Tensor& grad,
                   Tensor& loss) {
  grad.ensure(pred.shape(), DType::f32, pred.device());
  kernels::loss_forward_backward(ex, kind_, pred, target, grad, loss);
}

}  // namespace drun::nn
