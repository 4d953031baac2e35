// Benchmark: time to exchange a model's gradients through drun's AllReduce
// strategy (fused buckets, non-blocking allreduces) against one bare
// allreduce call on the same bytes (Communicator::allreduce_sum: exactly one
// MPI_Allreduce, in place). Run under mpirun, e.g.
//   mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2
//          build/tools/bench/allreduce_bench --case all --bucket-mib 4
// (one command line; tools/bench/allreduce.sh runs every case and bucket).
// Cases:
//   seed      the seed CNN's 6 tensors (nn::Model from its Keras JSON spec)
//   uniform   25 tensors of 1M floats (25M parameters, 100 MB)
//   resnet50  ResNet-50's 161 trainable tensors (25.6M parameters): many small
//             batch-norm vectors, conv kernels up to 2.4M floats
// Variants, interleaved in each iteration (order rotated), each started
// after a barrier:
//   strategy  distributed::AllReduce: setup() once (the gradients become views into
//             its persistent buckets); per iteration gradients_ready() for
//             every layer, last layer first, then finish_gradients()
//   bare      one allreduce_sum on a contiguous buffer allocated once
//   flat      only across nodes with several workers each, where the strategy
//             sums hierarchically: AllReduce{hierarchical = false} on a copy
//             of the gradients, one MPI_Iallreduce over all workers per bucket
// and, with --fresh, after those iterations (it disturbs malloc's state and so
// the variant that follows it):
//   fresh     a buffer allocated for each call, the gradients copied into it,
//             one allreduce_sum, the buffer freed (what a framework without
//             persistent fusion buffers does)
// Both strategy and bare sum in place (the strategy leaves averaging to the
// loss gradient's 1/N scale), so values grow N-fold per iteration; they are
// re-filled, outside the timed region, before they could overflow.
// Rank 0 prints one JSON line per case: medians over iterations of rank 0's
// times, algorithm bandwidth (bytes / time) and bus bandwidth
// (bytes / time * 2(n-1)/n), the strategy's split into gradients_ready()
// and finish_gradients(), and whether it summed hierarchically (with the
// flat strategy's median then). Each rank checks at the end that the
// strategies' sums equal the bare allreduce's (to float rounding) and aborts
// the job when they do not.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/seed_cnn.hpp"
#include "distributed/all_reduce.hpp"
#include "distributed/comm.hpp"
#include "median.hpp"
#include "nn/model.hpp"

using namespace drun;
using Clock = std::chrono::steady_clock;

namespace {

using drun::bench::median;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// A set of "layers", each a contiguous run of Params, in forward order.
struct Workload {
  std::string name;
  std::vector<std::vector<Param>> owned;  // synthetic cases
  std::unique_ptr<nn::Model> model;       // the seed CNN
  std::vector<std::span<Param>> layers;
  std::vector<Param*> all;

  void finish() {
    for (auto& l : layers)
      for (Param& p : l) all.push_back(&p);
  }
  int64_t floats() const {
    int64_t n = 0;
    for (const Param* p : all) n += p->value.numel();
    return n;
  }
};

Param make_param(const std::string& name, Shape shape) {
  Param p;
  p.name = name;
  p.value = Tensor::zeros(shape);
  p.grad = Tensor(shape);
  return p;
}

void add_layer(Workload& w, std::vector<Param> params) {
  w.owned.push_back(std::move(params));
}

void seal(Workload& w) {
  for (auto& l : w.owned) w.layers.emplace_back(l);
  w.finish();
}

Workload seed_cnn() {
  Workload w;
  w.name = "seed_cnn";
  w.model = std::make_unique<nn::Model>(testing::seed_cnn_spec(), 1);
  for (const auto& node : w.model->nodes())
    if (!node.layer->params().empty()) w.layers.emplace_back(node.layer->params());
  w.finish();
  return w;
}

Workload uniform25m() {
  Workload w;
  w.name = "uniform_25m";
  for (int i = 0; i < 25; ++i)
    add_layer(w, {make_param("dense_" + std::to_string(i) + "/kernel", Shape{1000, 1000})});
  seal(w);
  return w;
}

// ResNet-50 (Keras applications layout, no conv biases): conv kernel + batch
// norm gamma/beta per conv, 1000-way dense head. 25.5M trainable floats.
Workload resnet50() {
  Workload w;
  w.name = "resnet50_mix";
  int id = 0;
  auto conv_bn = [&](int64_t k, int64_t in, int64_t out) {
    const std::string c = "conv" + std::to_string(id), b = "bn" + std::to_string(id);
    ++id;
    add_layer(w, {make_param(c + "/kernel", Shape{k, k, in, out})});
    add_layer(w, {make_param(b + "/gamma", Shape{out}), make_param(b + "/beta", Shape{out})});
  };
  conv_bn(7, 3, 64);
  int64_t in = 64;
  const int blocks[4] = {3, 4, 6, 3};
  const int64_t widths[4] = {64, 128, 256, 512};
  for (int s = 0; s < 4; ++s)
    for (int b = 0; b < blocks[s]; ++b) {
      const int64_t wd = widths[s];
      if (b == 0) conv_bn(1, in, 4 * wd);  // projection shortcut
      conv_bn(1, in, wd);
      conv_bn(3, wd, wd);
      conv_bn(1, wd, 4 * wd);
      in = 4 * wd;
    }
  add_layer(w, {make_param("fc/kernel", Shape{2048, 1000}), make_param("fc/bias", Shape{1000})});
  seal(w);
  return w;
}

void fill_grads(Workload& w, int rank) {
  for (Param* p : w.all) {
    float* g = p->grad.f32();
    for (int64_t i = 0, n = p->grad.numel(); i < n; ++i)
      g[i] = 0.001f * static_cast<float>((i + rank) % 1000);
  }
}

struct BenchOptions {
  std::string which = "all";
  double bucket_mib = 4.0;
  int iters = 50, iters_big = 20, warmup = 5;
  bool fresh = false;
};

void usage() {
  std::fprintf(stderr,
               "allreduce_bench [--case seed|uniform|resnet50|all] [--bucket-mib M] "
               "[--iters N] [--iters-big N] [--warmup N] [--fresh]\n");
}

void pack(const Workload& w, float* dst) {
  size_t off = 0;
  for (const Param* p : w.all) {
    std::memcpy(dst + off, p->grad.f32(), p->grad.bytes());
    off += static_cast<size_t>(p->grad.numel());
  }
}

void run_case(distributed::Communicator& comm, Workload (*make)(), const BenchOptions& o,
              int iters) {
  const int rank = comm.rank(), n = comm.size();
  Workload w = make(), w_flat = make();
  const int64_t floats = w.floats();
  const double bytes = static_cast<double>(floats) * 4.0;
  const auto bucket_bytes = static_cast<int64_t>(o.bucket_mib * 1024 * 1024);

  distributed::AllReduce strategy(comm, bucket_bytes);
  strategy.setup(w.all);  // re-points the gradients into zero-filled buckets
  // Across nodes: the same strategy without the hierarchy, on its own copy of
  // the gradients (setup re-points them).
  distributed::AllReduce flat(comm, bucket_bytes, /*shared_memory=*/true, /*hierarchical=*/false);
  const bool compare_flat = strategy.uses_hierarchy();
  if (compare_flat) flat.setup(w_flat.all);
  std::vector<float> bare(static_cast<size_t>(floats));
  // Same values in the strategies' buckets and the bare buffer (which a write
  // leaves warm, as backward leaves the buckets).
  auto refill = [&] {
    fill_grads(w, rank);
    if (compare_flat) fill_grads(w_flat, rank);
    pack(w, bare.data());
  };
  refill();
  double growth = 1.0;  // bound on |value| after the in-place sums so far

  auto exchange = [](distributed::AllReduce& s, Workload& wl, double& ready, double& finish) {
    const auto t0 = Clock::now();
    for (auto l = wl.layers.rbegin(); l != wl.layers.rend(); ++l) s.gradients_ready(*l);
    ready = ms_since(t0);
    const auto t1 = Clock::now();
    s.finish_gradients();
    finish = ms_since(t1);
  };
  std::vector<double> t_strategy, t_ready, t_finish, t_bare, t_flat, t_fresh;
  const int variants = compare_flat ? 3 : 2;
  for (int it = -o.warmup; it < iters; ++it) {
    const bool keep = it >= 0;
    if (growth * n > 1e30) {
      refill();
      growth = 1.0;
    }
    growth *= n;
    // Rotate the order of the variants so that none always runs first.
    for (int k = 0; k < variants; ++k) {
      const int v = (k + (it < 0 ? 0 : it)) % variants;
      comm.barrier();
      const auto t0 = Clock::now();
      double ready = 0, finish = 0;
      if (v == 0) {
        exchange(strategy, w, ready, finish);
        if (keep) {
          t_strategy.push_back(ms_since(t0));
          t_ready.push_back(ready);
          t_finish.push_back(finish);
        }
      } else if (v == 1) {
        comm.allreduce_sum(bare.data(), floats);
        if (keep) t_bare.push_back(ms_since(t0));
      } else {
        exchange(flat, w_flat, ready, finish);
        if (keep) t_flat.push_back(ms_since(t0));
      }
    }
  }
  if (o.fresh)
    for (int it = -o.warmup; it < iters; ++it) {
      comm.barrier();
      const auto t0 = Clock::now();
      std::unique_ptr<float[]> buf(new float[static_cast<size_t>(floats)]);
      pack(w, buf.get());
      comm.allreduce_sum(buf.get(), floats);
      buf.reset();
      if (it >= 0) t_fresh.push_back(ms_since(t0));
    }

  // Every variant summed the same values as often: the strategy's (and the
  // flat one's) sums must be the bare MPI_Allreduce's, up to float rounding.
  std::vector<float> got(static_cast<size_t>(floats));
  double off = 0, largest = 0;
  for (Workload* checked : {&w, &w_flat}) {
    if (checked == &w_flat && !compare_flat) continue;
    pack(*checked, got.data());
    for (size_t i = 0; i < got.size(); ++i) {
      off = std::max(off, static_cast<double>(std::abs(got[i] - bare[i])));
      largest = std::max(largest, static_cast<double>(std::abs(bare[i])));
    }
  }
  if (off > 1e-5 * largest) {
    std::fprintf(stderr,
                 "allreduce_bench: rank %d, case %s: the strategy's sums differ from "
                 "MPI_Allreduce's by %g (largest value %g)\n",
                 rank, w.name.c_str(), off, largest);
    comm.abort(1);
  }
  if (rank != 0) return;
  const double bus = 2.0 * (n - 1) / n;
  auto gbs = [&](double ms) { return ms > 0 ? bytes / (ms * 1e6) : 0.0; };
  const double s = median(t_strategy), b = median(t_bare), f = median(t_fresh), fl = median(t_flat);
  std::printf(
      "{\"case\": \"%s\", \"ranks\": %d, \"local_ranks\": %d, \"tensors\": %zu, "
      "\"floats\": %lld, \"mib\": %.2f, \"bucket_mib\": %g, \"buckets\": %zu, \"iters\": %d, "
      "\"hierarchical\": %s, \"strategy_ms\": %.3f, \"bare_ms\": %.3f, \"fresh_ms\": %.3f, "
      "\"flat_ms\": %.3f, \"strategy_gbs\": %.2f, \"bare_gbs\": %.2f, \"fresh_gbs\": %.2f, "
      "\"strategy_busbw\": %.2f, \"bare_busbw\": %.2f, "
      "\"ratio_strategy_bare\": %.3f, \"ratio_fresh_bare\": %.3f, \"ratio_strategy_flat\": %.3f, "
      "\"ready_ms\": %.3f, \"finish_ms\": %.3f}\n",
      w.name.c_str(), n, comm.local_size(), w.all.size(), static_cast<long long>(floats),
      bytes / (1 << 20), o.bucket_mib, strategy.bucket_count(), iters,
      compare_flat ? "true" : "false", s, b, f, fl, gbs(s), gbs(b), gbs(f), gbs(s) * bus,
      gbs(b) * bus, b > 0 ? s / b : 0.0, b > 0 ? f / b : 0.0, fl > 0 ? s / fl : 0.0,
      median(t_ready), median(t_finish));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  distributed::Communicator comm(&argc, &argv);
  BenchOptions o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        usage();
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--case")
      o.which = next();
    else if (a == "--bucket-mib")
      o.bucket_mib = std::atof(next());
    else if (a == "--iters")
      o.iters = std::atoi(next());
    else if (a == "--iters-big")
      o.iters_big = std::atoi(next());
    else if (a == "--warmup")
      o.warmup = std::atoi(next());
    else if (a == "--fresh")
      o.fresh = true;
    else {
      usage();
      return 2;
    }
  }
  if (o.bucket_mib <= 0) {
    usage();
    return 2;
  }
  if (o.which == "seed" || o.which == "all") run_case(comm, seed_cnn, o, o.iters);
  if (o.which == "uniform" || o.which == "all") run_case(comm, uniform25m, o, o.iters_big);
  if (o.which == "resnet50" || o.which == "all") run_case(comm, resnet50, o, o.iters_big);
  return 0;
}
