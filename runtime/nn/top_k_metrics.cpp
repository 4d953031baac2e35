// Keras' top_k_categorical_accuracy and sparse_top_k_categorical_accuracy:
// the share of rows whose label is among the k largest predictions.
#include "nn/metrics.hpp"

namespace drun::nn {

namespace {

class TopK final : public CountedMetric {
 public:
  TopK(int k, bool sparse) : k_(k), sparse_(sparse) {}
  int64_t width() const override { return 1; }
  void measure(const kernels::Exec& ex, const Tensor& pred, const Tensor& target, Tensor& counts,
               const std::string& who) const override {
    if (!sparse_) {
      check_dense_targets(pred, target, who);
    } else if (target.dtype() != DType::i32 ||
               target.numel() != kernels::class_rows(pred.shape()).rows) {
      throw UsageError("metric '" + who + "': " + target.shape().str() + " " +
                       dtype_name(target.dtype()) + " targets for predictions " +
                       pred.shape().str() + " (wants one integer label per example)");
    }
    kernels::top_k_hits(ex, k_, pred, target, counts);
  }
  void finish(const double* totals, int64_t rows, const std::string& name,
              NamedValues& out) const override {
    out.emplace_back(name, rows ? totals[0] / static_cast<double>(rows) : 0.0);
  }

 private:
  int k_;
  bool sparse_;
};

const Schema& top_k_schema() {
  static const Schema s{
      {"k", OptionType::integer, 5, "how many of the largest predictions may hold the label"},
      {"name", OptionType::string, nullptr, "the name results use"}};
  return s;
}

std::unique_ptr<const CountedMetric> make_top_k(Options& o, bool sparse, const std::string& who) {
  const int64_t k = o.get<int64_t>("k");
  if (k < 1) throw UsageError(who + ": k must be at least 1, got " + std::to_string(k));
  return std::make_unique<TopK>(static_cast<int>(k), sparse);
}

}  // namespace

const MetricInfo& top_k_categorical_accuracy_metric() {
  static const MetricInfo info{
      {{"top_k_categorical_accuracy", "TopKCategoricalAccuracy"},
       "one-hot targets whose class is among the k largest outputs",
       top_k_schema()},
      nullptr,
      false,
      [](Options& o, const Shape&, const std::string& who) { return make_top_k(o, false, who); }};
  return info;
}

const MetricInfo& sparse_top_k_categorical_accuracy_metric() {
  static const MetricInfo info{
      {{"sparse_top_k_categorical_accuracy", "SparseTopKCategoricalAccuracy"},
       "integer labels among the k largest outputs",
       top_k_schema()},
      nullptr,
      false,
      [](Options& o, const Shape&, const std::string& who) { return make_top_k(o, true, who); }};
  return info;
}

}  // namespace drun::nn
