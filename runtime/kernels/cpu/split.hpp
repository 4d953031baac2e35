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

// Runs f(begin, end) over [0, count) in ranges of at least `grain` elements
// (fewer threads where there is little work: a fork and join costs more than
// a few thousand additions), on at most `threads` threads.
template <class F>
void for_each_chunk(int64_t count, int threads, int64_t grain, F&& f) {
  const int64_t most = std::max<int64_t>(1, count / std::max<int64_t>(1, grain));
  for_each_range(count, static_cast<int>(std::min<int64_t>(threads, most)),
                 [&](int64_t, int64_t begin, int64_t end) {
                   if (end > begin) f(begin, end);
                 });
}

}  // namespace drun::kernels::cpu
