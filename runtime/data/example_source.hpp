// ExampleSource: a data set's inputs made one example at a time when a batch
// needs them, instead of held in memory (e.g. images decoded from files).
// A Pipeline calls make() from several threads at once for one batch.
#pragma once
#include <cstdint>

#include "tensor/shape.hpp"

namespace drun::data {

class ExampleSource {
 public:
  virtual ~ExampleSource() = default;

  virtual int64_t size() const = 0;
  // One example's shape, e.g. (224, 224, 3).
  virtual Shape example_shape() const = 0;
  // Threads that should make a batch's examples (data sets that decode use several).
  virtual int threads() const = 0;
  // Writes example `index` (float32, example_shape()) into dst. Any random
  // choice (a crop, a flip) is drawn from `draw` alone, which the pipeline
  // derives from its epoch and the example, so it never depends on threads.
  // Thread-safe; throws UsageError naming the file for unreadable input.
  virtual void make(int64_t index, uint64_t draw, float* dst) const = 0;
};

}  // namespace drun::data
