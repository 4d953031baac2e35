// conv_bench: one convolution's forward, filter gradient and input gradient
// on each CPU engine that runs it (Winograd F(2x2, 3x3) and F(4x4, 3x3),
// implicit GEMM, im2col), on
// ResNet's CIFAR shapes by default; the engines take turns within each
// repeat, and the median of the repeats is reported per pass, with the
// GFLOP/s of the direct convolution's multiply-adds (2 * N*OH*OW*K*CO).
//
//   conv_bench [--threads T] [--batch N] [--repeats R] [--shape H,W,C,CO]...
//              [--engines winograd2,winograd4,implicit,im2col] [--passes forward,filter,data]
//
// One JSON line per shape, engine and pass. The CPU kernel variant is the
// process's (DRUN_ISA selects another).
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "kernels/cpu/conv2d_im2col.hpp"
#include "kernels/cpu/conv2d_implicit.hpp"
#include "kernels/cpu/conv2d_winograd.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "median.hpp"

namespace {

using drun::bench::median;

using drun::kernels::ConvGeometry;
namespace cpu = drun::kernels::cpu;

[[noreturn]] void usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--threads T] [--batch N] [--repeats R] [--shape H,W,C,CO]... "
               "[--engines winograd2,winograd4,implicit,im2col] [--passes forward,filter,data]\n",
               argv0);
  std::exit(2);
}

struct Engine {
  const char* name;
  bool suits;
  int64_t workspace;
  std::function<void(float*)> forward, filter, data;  // each given the workspace
};

double seconds(const std::function<void(float*)>& f, float* ws) {
  const auto t0 = std::chrono::steady_clock::now();
  f(ws);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool listed(const std::string& list, const char* name) {
  return ("," + list + ",").find(std::string(",") + name + ",") != std::string::npos;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 1, repeats = 7;
  int64_t batch = 128;
  std::vector<std::array<int64_t, 4>> shapes;
  std::string wanted = "winograd2,winograd4,implicit,im2col", wanted_passes = "forward,filter,data";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage(argv[0]);
    if (a == "--threads") {
      threads = std::atoi(argv[++i]);
    } else if (a == "--batch") {
      batch = std::atoll(argv[++i]);
    } else if (a == "--repeats") {
      repeats = std::atoi(argv[++i]);
    } else if (a == "--passes") {
      wanted_passes = argv[++i];
    } else if (a == "--engines") {
      wanted = argv[++i];
    } else if (a == "--shape") {
      std::array<int64_t, 4> s{};
      if (std::sscanf(argv[++i], "%ld,%ld,%ld,%ld", &s[0], &s[1], &s[2], &s[3]) != 4)
        usage(argv[0]);
      shapes.push_back(s);
    } else {
      usage(argv[0]);
    }
  }
  if (threads < 1 || repeats < 1 || batch < 1) usage(argv[0]);
  if (shapes.empty()) shapes = {{32, 32, 16, 16}, {16, 16, 32, 32}, {8, 8, 64, 64}};

  for (const auto& s : shapes) {
    const ConvGeometry g =
        drun::kernels::conv_geometry(batch, s[0], s[1], s[2], 3, 3, s[3], 1, 1, true);
    std::vector<float> x(g.n * g.h * g.w * g.c), w(g.k() * g.co), b(g.co),
        y(g.n * g.out_pixels() * g.co);
    std::vector<float> dy(y.size()), dx(x.size()), dw(w.size()), db(g.co);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7 + 3) % 101) / 101.0f;
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>((i * 13 + 5) % 97) / 970.0f;
    for (size_t i = 0; i < dy.size(); ++i) dy[i] = static_cast<float>((i * 11 + 1) % 89) / 89.0f;
    const auto winograd = [&](int m) -> Engine {
      return {m == 2 ? "winograd2" : "winograd4",
              cpu::conv2d_winograd_suits(g),
              cpu::conv2d_winograd_workspace_floats(g, threads),
              [&, m](float* ws) {
                cpu::conv2d_winograd_forward(g, x.data(), w.data(), b.data(), y.data(), true, ws,
                                             threads, nullptr, m);
              },
              [&, m](float* ws) {
                cpu::conv2d_winograd_backward_filter(g, x.data(), dy.data(), nullptr, dw.data(),
                                                     db.data(), ws, threads, m);
              },
              [&, m](float* ws) {
                cpu::conv2d_winograd_backward_data(g, dy.data(), w.data(), dx.data(), ws, threads,
                                                   m);
              }};
    };
    std::vector<Engine> engines = {
        winograd(2),
        winograd(4),
        {"implicit", cpu::conv2d_implicit_suits(g) && cpu::conv2d_implicit_backward_data_suits(g),
         cpu::conv2d_implicit_workspace_floats(g, threads),
         [&](float* ws) {
           cpu::conv2d_implicit_forward(g, x.data(), w.data(), b.data(), y.data(), true, ws,
                                        threads);
         },
         [&](float* ws) {
           cpu::conv2d_implicit_backward_filter(g, x.data(), dy.data(), nullptr, dw.data(),
                                                db.data(), ws, threads);
         },
         [&](float* ws) {
           cpu::conv2d_implicit_backward_data(g, dy.data(), w.data(), dx.data(), ws, threads);
         }},
        {"im2col", true, cpu::conv2d_im2col_workspace_floats(g, threads),
         [&](float* ws) {
           cpu::conv2d_im2col_forward(g, x.data(), w.data(), b.data(), y.data(), true, ws, threads);
         },
         [&](float* ws) {
           cpu::conv2d_im2col_backward_filter(g, x.data(), dy.data(), nullptr, dw.data(), db.data(),
                                              ws, threads);
         },
         [&](float* ws) {
           cpu::conv2d_im2col_backward_data(g, dy.data(), w.data(), dx.data(), ws, threads);
         }},
    };
    std::vector<std::vector<float>> workspaces;
    for (Engine& e : engines) {
      e.suits = e.suits && listed(wanted, e.name);
      workspaces.emplace_back(e.suits ? e.workspace : 0);
    }
    const char* passes[] = {"forward", "filter", "data"};
    // times[engine][pass][repeat]
    std::vector<std::array<std::vector<double>, 3>> times(engines.size());
    for (int r = -1; r < repeats; ++r)  // repeat -1 warms up
      for (size_t e = 0; e < engines.size(); ++e) {
        if (!engines[e].suits) continue;
        float* ws = workspaces[e].data();
        const std::function<void(float*)>* f[] = {&engines[e].forward, &engines[e].filter,
                                                  &engines[e].data};
        for (int p = 0; p < 3; ++p) {
          if (!listed(wanted_passes, passes[p])) continue;
          const double t = seconds(*f[p], ws);
          if (r >= 0) times[e][p].push_back(t);
        }
      }
    const double flop = 2.0 * static_cast<double>(g.n * g.out_pixels() * g.k() * g.co);
    for (size_t e = 0; e < engines.size(); ++e) {
      if (!engines[e].suits) continue;
      for (int p = 0; p < 3; ++p) {
        if (times[e][p].empty()) continue;
        const double t = median(times[e][p]);
        std::printf(
            "{\"isa\": \"%s\", \"threads\": %d, \"batch\": %ld, \"shape\": \"%ldx%ldx%ld->%ld\", "
            "\"engine\": \"%s\", \"pass\": \"%s\", \"ms\": %.3f, \"gflops\": %.1f}\n",
            cpu::cpu_kernels().name, threads, batch, s[0], s[1], s[2], s[3], engines[e].name,
            passes[p], t * 1e3, flop / t * 1e-9);
      }
    }
  }
  return 0;
}
