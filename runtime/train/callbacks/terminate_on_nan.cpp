#include "train/callbacks/terminate_on_nan.hpp"

#include <cmath>
#include <cstdio>

#include "train/callbacks/callback_registry.hpp"

namespace drun::train {

const CallbackInfo& terminate_on_nan_callback() {
  static const CallbackInfo info{
      {{"TerminateOnNaN"}, "stops training at the first batch whose loss is NaN or infinite", {}},
      [](Options&) { return std::make_unique<TerminateOnNaN>(); }};
  return info;
}

void TerminateOnNaN::train_batch_end(int64_t batch, const BatchLogs& logs, CallbackControl& c) {
  const double loss = logs.loss();
  if (std::isfinite(loss)) return;
  if (c.chief())
    std::printf("Batch %lld: Invalid loss, terminating training\n", static_cast<long long>(batch));
  c.stop_training();
}

}  // namespace drun::train
