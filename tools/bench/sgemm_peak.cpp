// sgemm_peak: OpenBLAS cblas_sgemm throughput for square row-major matrices.
//
//   sgemm_peak [--threads T] [--n N] [--repeats R] [--warmup W]
//
// Threads are set with openblas_set_num_threads(T). Reports the median of R
// timed calls (after W untimed ones) as one JSON line:
//   {"threads":T,"n":N,"gflops":...}
// With --n given more than once (e.g. --n 2048 --n 4096), one line per size.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" void openblas_set_num_threads(int num_threads);

namespace {

[[noreturn]] void usage(const char* argv0) {
  std::fprintf(stderr, "usage: %s [--threads T] [--n N]... [--repeats R] [--warmup W]\n", argv0);
  std::exit(2);
}

double run(int n, int repeats, int warmup) {
  const size_t nn = static_cast<size_t>(n) * n;
  std::vector<float> a(nn), b(nn), c(nn, 0.0f);
  for (size_t i = 0; i < nn; ++i) {
    a[i] = static_cast<float>((i * 7 + 3) % 101) / 101.0f - 0.5f;
    b[i] = static_cast<float>((i * 13 + 5) % 97) / 97.0f - 0.5f;
  }
  auto call = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n,
                0.0f, c.data(), n);
  };
  for (int i = 0; i < warmup; ++i) call();
  std::vector<double> secs;
  secs.reserve(repeats);
  for (int i = 0; i < repeats; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    call();
    auto t1 = std::chrono::steady_clock::now();
    secs.push_back(std::chrono::duration<double>(t1 - t0).count());
  }
  std::sort(secs.begin(), secs.end());
  const double med =
      repeats % 2 ? secs[repeats / 2] : 0.5 * (secs[repeats / 2 - 1] + secs[repeats / 2]);
  volatile float sink = c[nn / 2];  // keep the result observable
  (void)sink;
  return 2.0 * n * n * static_cast<double>(n) / med / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 1, repeats = 7, warmup = 2;
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto next = [&]() -> int {
      if (i + 1 >= argc) usage(argv[0]);
      return std::atoi(argv[++i]);
    };
    if (arg == "--threads")
      threads = next();
    else if (arg == "--n")
      sizes.push_back(next());
    else if (arg == "--repeats")
      repeats = next();
    else if (arg == "--warmup")
      warmup = next();
    else
      usage(argv[0]);
  }
  if (sizes.empty()) sizes.push_back(2048);
  if (threads < 1 || repeats < 1 || warmup < 0) usage(argv[0]);
  for (int n : sizes)
    if (n < 1) usage(argv[0]);

  openblas_set_num_threads(threads);
  for (int n : sizes) {
    const double gflops = run(n, repeats, warmup);
    std::printf("{\"threads\":%d,\"n\":%d,\"gflops\":%.2f}\n", threads, n, gflops);
    std::fflush(stdout);
  }
  return 0;
}
