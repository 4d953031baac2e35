// The metrics, one DRUN_METRIC line each: DRUN_METRIC(id) is the metric whose
// `const MetricInfo& id_metric()` nn/metrics.cpp (or top_k_metrics.cpp,
// confusion_metrics.cpp, f_score_metrics.cpp) defines (nn/metrics.hpp): its
// Keras names, its options and how it measures a batch. Metric, core.registry('metrics')
// and the API docs lint's `metric` values come from here.
// Adding a metric means: its kernel (kernels' MetricKind for a sum, an op of
// kernels/metric_counts.hpp for a counted one, nn/counted_metric.hpp), its
// entry and line here, its test and its docs row.
//
// No include guard: define DRUN_METRIC, include this file, undefine it.
DRUN_METRIC(accuracy)
DRUN_METRIC(mse)
DRUN_METRIC(mae)
DRUN_METRIC(top_k_categorical_accuracy)
DRUN_METRIC(sparse_top_k_categorical_accuracy)
DRUN_METRIC(precision)
DRUN_METRIC(recall)
DRUN_METRIC(auc)
DRUN_METRIC(f1_score)
