// The one way the CPU kernels split work over the rank's threads: [0, count)
// in contiguous, equal ranges, one per thread of an OpenMP team.
#pragma once
#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace drun::kernels::cpu {

// Runs f(part, begin, end) for each of min(threads, count) ranges (at least
// one, run on the calling thread when it is the only one); returns how many.
template <class F>
int for_each_range(int64_t count, int threads, F&& f) {
  const int parts = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads, count)));
  if (parts == 1) {
    f(int64_t{0}, int64_t{0}, count);
    return 1;
  }
#pragma omp parallel num_threads(parts)
  {
    const int64_t t = omp_get_thread_num(), per = (count + parts - 1) / parts;
    const int64_t begin = std::min(count, t * per), end = std::min(count, begin + per);
    f(t, begin, end);
  }
  return parts;
}

}  // namespace drun::kernels::cpu
