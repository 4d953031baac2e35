// The metrics, one DRUN_METRIC line each: DRUN_METRIC(id) is the metric whose
// `const MetricInfo& id_metric()` nn/metrics.cpp defines (nn/metrics.hpp): its
// Keras names and how it measures a batch. Metric, core.registry('metrics')
// and the API docs lint's `metric` values come from here.
// Adding a metric means: its kernel (kernels' MetricKind), its entry and line
// here, its test and its docs row.
//
// No include guard: define DRUN_METRIC, include this file, undefine it.
DRUN_METRIC(accuracy)
DRUN_METRIC(mse)
DRUN_METRIC(mae)
