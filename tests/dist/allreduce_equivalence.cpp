// AllReduce gives, after 20 steps, the same weights as one worker training on
// the global batch: N workers with per-worker batch b on rows [k*b, (k+1)*b)
// of each global batch of N*b examples, against a local single-worker run on
// the whole global batch. Run under mpirun with 2 and 4 ranks; every rank
// computes the single-worker reference itself and compares.
#include <cmath>
#include <cstdio>

#include "base/rng.hpp"
#include "data/batch.hpp"
#include "dist/all_reduce.hpp"
#include "nn/model.hpp"
#include "small_cnn.hpp"
#include "train/trainer.hpp"

using namespace drun;
using drun::testing::compiled;
using drun::testing::small_cnn;

namespace {

// Global batch `step`: n examples, deterministic.
void global_batch(int64_t step, int64_t n, data::Batch& b) {
  Rng rng(1000 + static_cast<uint64_t>(step));
  b.x = Tensor(Shape{n, 12, 12, 1});
  b.y = Tensor(Shape{n}, DType::i32);
  for (float& v : b.x.span_f32()) v = rng.uniform();
  for (int64_t i = 0; i < n; ++i) b.y.i32()[i] = static_cast<int32_t>(rng.next() % 10);
  b.size = n;
}

}  // namespace

int main(int argc, char** argv) {
  dist::Communicator comm(&argc, &argv);
  const int workers = comm.size(), rank = comm.rank();
  constexpr int64_t kPerWorker = 8, kSteps = 20;
  const kernels::Exec ex{Device::cpu, 1};

  // The reference: one worker, global batch. Same seed as the distributed model.
  nn::Model ref_model(small_cnn(), 7);
  train::Trainer ref(ref_model, compiled(), ex);
  // Distributed: the model starts from another seed on every rank but the
  // chief, so the initial broadcast is tested too.
  nn::Model model(small_cnn(), rank == 0 ? 7 : 100 + static_cast<uint64_t>(rank));
  train::Trainer trainer(model, compiled(), ex);
  dist::AllReduce strategy(comm, /*bucket_bytes=*/2048);  // several buckets
  trainer.set_strategy(&strategy);

  data::Batch global, mine;
  for (int64_t step = 0; step < kSteps; ++step) {
    global_batch(step, kPerWorker * workers, global);
    ref.train_step(global);
    mine.x = global.x.rows(rank * kPerWorker, (rank + 1) * kPerWorker).clone();
    mine.y = global.y.rows(rank * kPerWorker, (rank + 1) * kPerWorker).clone();
    mine.size = kPerWorker;
    trainer.train_step(mine);
  }

  double worst = 0.0;
  auto a = ref_model.params(), b = model.params();
  for (size_t i = 0; i < a.size(); ++i)
    for (int64_t j = 0; j < a[i]->value.numel(); ++j)
      worst = std::max(worst,
                       static_cast<double>(std::fabs(a[i]->value.f32()[j] - b[i]->value.f32()[j])));
  double moved = 0.0;  // the test must see training move the weights
  nn::Model fresh(small_cnn(), 7);
  auto f = fresh.params();
  for (size_t i = 0; i < a.size(); ++i)
    for (int64_t j = 0; j < a[i]->value.numel(); ++j)
      moved = std::max(moved,
                       static_cast<double>(std::fabs(a[i]->value.f32()[j] - f[i]->value.f32()[j])));
  std::printf(
      "rank %d of %d: %zu buckets, max |w_allreduce - w_single| = %.3e (weights moved %.3e)\n",
      rank, workers, strategy.bucket_count(), worst, moved);
  int ok = worst <= 1e-5 && moved > 1e-3 && strategy.bucket_count() > 1 ? 1 : 0;
  double all = ok;
  comm.allreduce_sum(&all, 1);
  if (rank == 0) std::printf("%d of %d ranks agree within 1e-5\n", static_cast<int>(all), workers);
  return static_cast<int>(all) == workers ? 0 : 1;
}
