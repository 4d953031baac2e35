// Applying take, skip and split steps to the example indices of a data set.
#include "data/selection.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "base/options.hpp"
#include "data/permutation.hpp"

namespace drun::data {
namespace {

// A split's order is drawn from a stream that no epoch's shuffle uses (those
// are (epoch, pass) with small numbers), so a split with seed s and a shuffle
// with seed s do not produce the same permutation.
constexpr uint64_t kSplitStream = ~uint64_t{0};

}  // namespace

void check_select_step(const SelectStep& s) {
  if (s.kind != SelectStep::Kind::split && s.count < 0)
    throw UsageError(std::string("data pipeline: ") +
                     (s.kind == SelectStep::Kind::take ? "take" : "skip") +
                     " needs a count >= 0, got " + std::to_string(s.count));
  if (s.kind == SelectStep::Kind::split && !(s.fraction > 0.0 && s.fraction < 1.0))
    throw UsageError("data pipeline: split fraction must be between 0 and 1 (exclusive), got " +
                     std::to_string(s.fraction));
}

int64_t split_point(double fraction, int64_t m) {
  const auto k = static_cast<int64_t>(std::floor(fraction * static_cast<double>(m) + 0.5));
  return std::clamp<int64_t>(k, 0, m);
}

int64_t count_selected(std::span<const SelectStep> steps, int64_t n) {
  int64_t m = std::max<int64_t>(n, 0);
  for (const SelectStep& s : steps) {
    check_select_step(s);
    switch (s.kind) {
      case SelectStep::Kind::take:
        m = std::min(m, s.count);
        break;
      case SelectStep::Kind::skip:
        m -= std::min(m, s.count);
        break;
      case SelectStep::Kind::split: {
        const int64_t k = split_point(s.fraction, m);
        m = s.first ? k : m - k;
        break;
      }
    }
  }
  return m;
}

std::vector<int64_t> select_examples(std::span<const SelectStep> steps, int64_t n) {
  std::vector<int64_t> kept(static_cast<size_t>(std::max<int64_t>(n, 0)));
  std::iota(kept.begin(), kept.end(), int64_t{0});
  std::vector<int64_t> perm;
  for (const SelectStep& s : steps) {
    check_select_step(s);
    const auto m = static_cast<int64_t>(kept.size());
    switch (s.kind) {
      case SelectStep::Kind::take:
        kept.resize(static_cast<size_t>(std::min(m, s.count)));
        break;
      case SelectStep::Kind::skip:
        kept.erase(kept.begin(), kept.begin() + std::min(m, s.count));
        break;
      case SelectStep::Kind::split: {
        if (s.seed) {
          permutation(m, *s.seed, kSplitStream, 0, perm);
          std::vector<int64_t> drawn(kept.size());
          for (size_t i = 0; i < kept.size(); ++i) drawn[i] = kept[static_cast<size_t>(perm[i])];
          kept.swap(drawn);
        }
        const int64_t k = split_point(s.fraction, m);
        if (s.first)
          kept.resize(static_cast<size_t>(k));
        else
          kept.erase(kept.begin(), kept.begin() + k);
        break;
      }
    }
  }
  return kept;
}

}  // namespace drun::data
