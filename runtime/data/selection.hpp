// Selection: which examples of a data set a pipeline reads, from the take,
// skip and split ops given before batch, applied in the order they came
// (tf.data's: skip(10):take(5) reads examples 10..14, take(5):skip(10) none).
// It is made once, before any epoch's shuffle, so every epoch reads the same
// examples and shuffle only reorders them; the two parts of a split never
// share an example, whatever the later ops.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace drun::data {

struct SelectStep {
  enum class Kind { take, skip, split };
  Kind kind = Kind::take;
  int64_t count = 0;    // take, skip: examples
  double fraction = 0;  // split: the first part's share, rounded to whole examples
  bool first = true;    // split: keep the first part (true) or the rest
  // split: the examples are put in an order drawn from this seed before the
  // cut, so that sorted data (e.g. by class) gives parts alike; without it the
  // cut follows the data set's order.
  std::optional<uint64_t> seed;

  static SelectStep take(int64_t n) { return {Kind::take, n, 0, true, std::nullopt}; }
  static SelectStep skip(int64_t n) { return {Kind::skip, n, 0, true, std::nullopt}; }
  static SelectStep split(double fraction, bool first, std::optional<uint64_t> seed = {}) {
    return {Kind::split, 0, fraction, first, seed};
  }
};

// Throws UsageError for a negative count or a fraction outside (0, 1).
void check_select_step(const SelectStep& step);

// Examples kept by split's first part out of m: fraction * m rounded to nearest.
int64_t split_point(double fraction, int64_t m);

// How many examples `steps` keep out of n: select_examples(steps, n).size()
// without making the list.
int64_t count_selected(std::span<const SelectStep> steps, int64_t n);

// The indices of the examples that `steps` keep out of n, in the order the
// pipeline reads them when not shuffling. Checks each step as above.
std::vector<int64_t> select_examples(std::span<const SelectStep> steps, int64_t n);

}  // namespace drun::data
