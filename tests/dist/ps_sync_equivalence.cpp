// Synchronous parameter servers (SyncReplicasOptimizer, no backup workers)
// give, after 20 steps, the same weights as AllReduce: 2 workers with
// per-worker batch b, once through ParameterServer{mode='sync'} and once
// through AllReduce with the same data. Run under mpirun: the first
// size - 2 ranks are parameter servers (1 with -np 3, 2 with -np 4), the
// last two are the workers; the workers compare. With `--device cuda` the
// workers train on GPUs: the servers see host copies (HostStaged) and
// AllReduce sums device buckets.
#include <cmath>
#include <cstdio>

#include "base/rng.hpp"
#include "data/batch.hpp"
#include "device_option.hpp"
#include "distributed/all_reduce.hpp"
#include "distributed/ps_server.hpp"
#include "distributed/ps_worker.hpp"
#include "nn/model.hpp"
#include "small_cnn.hpp"
#include "train/trainer.hpp"

using namespace drun;
using drun::testing::compiled;
using drun::testing::small_cnn;

namespace {

// Worker `k`'s batch of step `step`: n examples, deterministic.
void batch_of(int64_t step, int k, int64_t n, data::Batch& b) {
  Rng rng(1000 + static_cast<uint64_t>(step) * 16 + static_cast<uint64_t>(k));
  b.x = Tensor(Shape{n, 12, 12, 1});
  b.y = Tensor(Shape{n}, DType::i32);
  for (float& v : b.x.span_f32()) v = rng.uniform();
  for (int64_t i = 0; i < n; ++i) b.y.i32()[i] = static_cast<int32_t>(rng.next() % 10);
  b.size = n;
}

constexpr int64_t kPerWorker = 8, kSteps = 20;

// 20 steps of worker `k` under `strategy`; returns the final weights.
std::vector<std::vector<float>> train_under(distributed::Strategy& strategy, int k, uint64_t seed,
                                            const kernels::Exec& ex) {
  nn::Model model(small_cnn(), seed);
  train::Trainer trainer(model, compiled(), ex);
  trainer.set_strategy(&strategy);
  data::Batch b;
  for (int64_t step = 0; step < kSteps; ++step) {
    batch_of(step, k, kPerWorker, b);
    trainer.train_step(b);
  }
  trainer.strategy()->finish(model.params(), "");
  std::vector<std::vector<float>> w;
  for (const Param* p : model.params()) {
    const Tensor v = p->value.to(Device::cpu);
    w.emplace_back(v.f32(), v.f32() + v.numel());
  }
  return w;
}

}  // namespace

int main(int argc, char** argv) {
  distributed::Communicator world(&argc, &argv);
  const int servers = world.size() - 2;
  if (servers < 1) {
    std::fprintf(stderr, "run with at least 3 ranks\n");
    return 2;
  }
  const bool is_server = world.rank() < servers;
  auto workers = world.split(is_server ? 1 : 0);
  const auto spec =
      distributed::parse_strategy({{"name", "ParameterServer"}, {"options", {{"mode", "sync"}}}});

  if (is_server) {
    nn::Model model(small_cnn(), 7);
    const json stats =
        distributed::ParameterServer(world, spec, model.params(), compiled().optimizer, "").serve();
    std::printf("server %d: %s\n", world.rank(), stats.dump().c_str());
    world.barrier();
    return stats.value("version", 0) == kSteps ? 0 : 1;
  }

  const auto device = testing::device_option(argc, argv, *workers);
  if (device.missing) {
    world.abort(77);  // the servers wait for workers that will not come
    return 77;
  }
  const int k = workers->rank();
  // Other seeds off the chief: both strategies must start from the chief's weights.
  const uint64_t seed = k == 0 ? 7 : 99;
  distributed::PsWorker ps(world, *workers, spec, compiled().optimizer);
  const auto w_ps = train_under(ps, k, seed, device.exec);
  distributed::AllReduce all_reduce(*workers);
  const auto w_ar = train_under(all_reduce, k, seed, device.exec);
  nn::Model fresh(small_cnn(), 7);

  double worst = 0, moved = 0;
  const auto f = fresh.params();
  for (size_t i = 0; i < w_ps.size(); ++i)
    for (size_t j = 0; j < w_ps[i].size(); ++j) {
      worst = std::max(worst, static_cast<double>(std::fabs(w_ps[i][j] - w_ar[i][j])));
      moved = std::max(moved, static_cast<double>(std::fabs(w_ar[i][j] - f[i]->value.f32()[j])));
    }
  std::printf("worker %d (%d servers): max |w_ps_sync - w_allreduce| = %.3e (weights moved %.3e)\n",
              k, servers, worst, moved);
  world.barrier();
  return worst <= 1e-5 && moved > 1e-3 ? 0 : 1;
}
