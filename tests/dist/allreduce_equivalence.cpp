// AllReduce gives, after 20 steps, the same weights as one worker training on
// the global batch: N workers with per-worker batch b on rows [k*b, (k+1)*b)
// of each global batch of N*b examples, against a local single-worker run on
// the whole global batch. Run under mpirun with 2 and 4 ranks; every rank
// computes the single-worker reference itself and compares, once summing
// through node-shared memory and once through MPI_Iallreduce. Across nodes
// (tests/netns) the shared-memory run is the hierarchical sum: within each
// node through shared memory, across nodes per slice. With
// `--device cuda` the workers train on GPUs (buckets in device memory,
// summed by NCCL or through the host) against the same CPU reference.
#include <cmath>
#include <cstdio>

#include "base/rng.hpp"
#include "data/batch.hpp"
#include "device_option.hpp"
#include "distributed/all_reduce.hpp"
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

// 20 steps of this rank's part of each global batch under AllReduce; returns
// the largest difference from the single-worker reference.
double worst_difference(distributed::Communicator& comm, bool shared_memory, nn::Model& ref_model,
                        const kernels::Exec& ex, const char*& exchange) {
  const int workers = comm.size(), rank = comm.rank();
  constexpr int64_t kPerWorker = 8, kSteps = 20;
  // The model starts from another seed on every rank but the chief, so the
  // initial broadcast is tested too.
  nn::Model model(small_cnn(), rank == 0 ? 7 : 100 + static_cast<uint64_t>(rank));
  train::Trainer trainer(model, compiled(), ex);
  distributed::AllReduce strategy(comm, /*bucket_bytes=*/2048, shared_memory);  // several buckets
  trainer.set_strategy(&strategy);
  const bool one_node = comm.local_size() == comm.size();
  exchange = ex.device != Device::cpu        ? "GPU"
             : strategy.uses_shared_memory() ? "shared memory"
             : strategy.uses_hierarchy() ? "hierarchical (node-shared memory, then across nodes)"
                                         : "MPI_Iallreduce";
  const bool expected = !shared_memory
                            ? !strategy.uses_shared_memory() && !strategy.uses_hierarchy()
                        : one_node ? strategy.uses_shared_memory()
                                   : strategy.uses_hierarchy();
  if (strategy.bucket_count() < 2 || (ex.device == Device::cpu && !expected)) return 1e9;
  if (ex.device != Device::cpu)
    std::printf("rank %d: device buckets summed %s\n", rank,
                strategy.uses_nccl() ? "by NCCL" : "through host memory");
  data::Batch global, mine;
  for (int64_t step = 0; step < kSteps; ++step) {
    global_batch(step, kPerWorker * workers, global);
    mine.x = global.x.rows(rank * kPerWorker, (rank + 1) * kPerWorker).clone();
    mine.y = global.y.rows(rank * kPerWorker, (rank + 1) * kPerWorker).clone();
    mine.size = kPerWorker;
    trainer.train_step(mine);
  }
  double worst = 0.0;
  auto a = ref_model.params(), b = model.params();
  for (size_t i = 0; i < a.size(); ++i) {
    const Tensor w = b[i]->value.to(Device::cpu);
    for (int64_t j = 0; j < a[i]->value.numel(); ++j)
      worst = std::max(worst, static_cast<double>(std::fabs(a[i]->value.f32()[j] - w.f32()[j])));
  }
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  distributed::Communicator comm(&argc, &argv);
  const int workers = comm.size(), rank = comm.rank();
  const auto device = testing::device_option(argc, argv, comm);
  if (device.missing) return 77;
  constexpr int64_t kPerWorker = 8, kSteps = 20;

  // The reference: one worker, global batch. Same seed as the distributed chief.
  nn::Model ref_model(small_cnn(), 7);
  train::Trainer ref(ref_model, compiled(), kernels::Exec{Device::cpu, 1});
  data::Batch global;
  for (int64_t step = 0; step < kSteps; ++step) {
    global_batch(step, kPerWorker * workers, global);
    ref.train_step(global);
  }
  double moved = 0.0;  // the test must see training move the weights
  nn::Model fresh(small_cnn(), 7);
  auto a = ref_model.params(), f = fresh.params();
  for (size_t i = 0; i < a.size(); ++i)
    for (int64_t j = 0; j < a[i]->value.numel(); ++j)
      moved = std::max(moved,
                       static_cast<double>(std::fabs(a[i]->value.f32()[j] - f[i]->value.f32()[j])));

  int ok = moved > 1e-3 ? 1 : 0;
  // Both exchanges on the CPU: node-shared memory (all ranks on this
  // machine) and MPI's allreduce; GPUs have their own (device buckets).
  for (const bool shm : {true, false}) {
    if (shm && device.gpu) continue;
    const char* exchange = "?";
    const double worst = worst_difference(comm, shm, ref_model, device.exec, exchange);
    std::printf("rank %d of %d, %s: max |w_allreduce - w_single| = %.3e (weights moved %.3e)\n",
                rank, workers, exchange, worst, moved);
    ok = ok && worst <= 1e-5;
  }
  double all = ok;
  comm.allreduce_sum(&all, 1);
  if (rank == 0) std::printf("%d of %d ranks agree within 1e-5\n", static_cast<int>(all), workers);
  return static_cast<int>(all) == workers ? 0 : 1;
}
