// gemm_shapes: the matrix products of a language model's training step
// (tools/bench/gemm_shapes.txt), each as drun's layers call it —
// kernels::affine for a forward with its bias, kernels::matmul for the rest,
// so each takes the route the step's takes (drun's own kernel or OpenBLAS,
// gemm.cpp). tools/bench/gemm_shapes.sh times PyTorch's products beside it.
//
//   gemm_shapes --list tools/bench/gemm_shapes.txt [--model transformer]
//               [--threads T] [--batch-ms 10] [--batches 5]
//
// Per product: calls in batches of at least --batch-ms (operands in cache, as
// a layer's weights are), the median batch's time per call; one JSON line:
//   {"model":..,"product":..,"count":..,"m":..,"n":..,"k":..,"threads":..,"ms":..,"gflops":..}
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/cpu/gemm.hpp"
#include "kernels/ops.hpp"
#include "median.hpp"
#include "tensor/tensor.hpp"

namespace {

using drun::Device;
using drun::Shape;
using drun::Tensor;
using drun::bench::median;
using drun::kernels::Exec;

struct Product {
  std::string model, name, kind;
  int64_t count = 0, m = 0, n = 0, k = 0;
};

[[noreturn]] void usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s --list FILE [--model NAME] [--threads T] [--batch-ms MS] "
               "[--batches N]\n",
               argv0);
  std::exit(2);
}

std::vector<Product> read_list(const std::string& path, const std::string& model) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "error: cannot read %s\n", path.c_str());
    std::exit(1);
  }
  std::vector<Product> out;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    Product p;
    fields >> p.model >> p.name >> p.count >> p.kind >> p.m >> p.n >> p.k;
    const bool known = p.kind == "forward" || p.kind == "input_grad" || p.kind == "weight_grad" ||
                       p.kind == "product";
    if (!fields || !known || p.count < 1 || p.m < 1 || p.n < 1 || p.k < 1) {
      std::fprintf(stderr, "error: %s:%d: expected 'model product count kind m n k': %s\n",
                   path.c_str(), number, line.c_str());
      std::exit(1);
    }
    if (model.empty() || p.model == model) out.push_back(p);
  }
  return out;
}

void fill(Tensor& t, int salt) {
  float* v = t.f32();
  for (int64_t i = 0; i < t.numel(); ++i)
    v[i] = static_cast<float>((i * 7 + salt) % 101) / 101.0f - 0.5f;
}

}  // namespace

int main(int argc, char** argv) {
  std::string list, model;
  int threads = 1, batches = 5;
  double batch_ms = 10.0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage(argv[0]);
    if (a == "--list")
      list = argv[++i];
    else if (a == "--model")
      model = argv[++i];
    else if (a == "--threads")
      threads = std::atoi(argv[++i]);
    else if (a == "--batch-ms")
      batch_ms = std::atof(argv[++i]);
    else if (a == "--batches")
      batches = std::atoi(argv[++i]);
    else
      usage(argv[0]);
  }
  if (list.empty() || threads < 1 || batches < 1 || batch_ms <= 0.0) usage(argv[0]);
  drun::kernels::cpu::blas_init_single_threaded();
  const Exec ex{Device::cpu, threads};
  using Clock = std::chrono::steady_clock;

  for (const Product& p : read_list(list, model)) {
    // Operands by kind (gemm_shapes.txt): a is x or dy, b the weight or dy.
    const bool weight_grad = p.kind == "weight_grad";
    Tensor a(weight_grad ? Shape{p.k, p.m} : Shape{p.m, p.k});
    Tensor b(p.kind == "input_grad" ? Shape{p.n, p.k} : Shape{p.k, p.n});
    Tensor bias(Shape{p.n}), y(Shape{p.m, p.n});
    fill(a, 3), fill(b, 5), fill(bias, 11);
    const auto call = [&] {
      if (p.kind == "forward")
        drun::kernels::affine(ex, p.m, p.k, p.n, a, b, bias, y);
      else
        drun::kernels::matmul(ex, weight_grad, p.kind == "input_grad", p.m, p.n, p.k, 1.0f, a, b,
                              0.0f, y);
    };
    // Calls per batch from a first timed call, then a batch untimed.
    const auto t0 = Clock::now();
    call();
    const double once = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    const int calls = std::max(1, static_cast<int>(batch_ms / std::max(once, 1e-3)));
    for (int i = 0; i < calls; ++i) call();
    std::vector<double> per_call;
    for (int r = 0; r < batches; ++r) {
      const auto start = Clock::now();
      for (int i = 0; i < calls; ++i) call();
      per_call.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count() /
                         calls);
    }
    const double ms = median(per_call);
    std::printf(
        "{\"model\":\"%s\",\"product\":\"%s\",\"count\":%ld,\"m\":%ld,\"n\":%ld,\"k\":%ld,"
        "\"threads\":%d,\"ms\":%.5f,\"gflops\":%.1f}\n",
        p.model.c_str(), p.name.c_str(), static_cast<long>(p.count), static_cast<long>(p.m),
        static_cast<long>(p.n), static_cast<long>(p.k), threads, ms,
        2.0 * static_cast<double>(p.m * p.n * p.k) / (ms * 1e6));
  }
  return 0;
}
