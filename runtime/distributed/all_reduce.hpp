// AllReduce (synchronous data parallelism, as Horovod and TensorFlow's
// MultiWorkerMirroredStrategy): every worker computes gradients on its shard
// of the global batch; gradients are averaged over workers and every worker
// applies the same update. Gradients live, last layer first, in fusion
// buffers of about `bucket_bytes` (setup() makes each Param::grad a view into
// its buffer, so nothing is copied); a buffer's non-blocking allreduce starts
// as soon as backward has produced all of its gradients, so communication
// overlaps the rest of backward. The buffers persist: a warm step allocates
// nothing. Gradients on GPUs stay there: their buckets are device memory,
// summed by NCCL; without NCCL each bucket goes through host memory and MPI.
#pragma once
#include <chrono>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "distributed/comm.hpp"
#include "distributed/comm_nccl.hpp"
#include "distributed/hierarchical_allreduce.hpp"
#include "distributed/shm_allreduce.hpp"
#include "distributed/strategy.hpp"

namespace drun::distributed {

class AllReduce final : public Strategy {
 public:
  // shared_memory: when every worker is on one node, sum through node-shared
  // memory (ShmAllreduce) instead of MPI's allreduce. hierarchical: across
  // nodes with several workers each, sum within each node through shared
  // memory and across nodes one slice per worker (HierarchicalAllreduce)
  // instead of one MPI allreduce over all workers.
  AllReduce(Communicator& comm, int64_t bucket_bytes = 4 << 20, bool shared_memory = true,
            bool hierarchical = true);
  std::string name() const override { return "AllReduce"; }
  int workers() const override { return comm_.size(); }
  int worker_index() const override { return comm_.rank(); }
  void setup(std::span<Param* const> params) override;
  bool lockstep() const override { return true; }
  bool device_aware() const override { return true; }
  float gradient_scale() const override { return 1.0f / static_cast<float>(comm_.size()); }
  bool exchanges_gradients() const override { return comm_.size() > 1; }
  void gradients_ready(std::span<Param> params) override;
  void apply(optim::Optimizer& optimizer, std::span<Param* const> params) override;
  // Waits for every bucket's sum: gradients then hold the mean over workers.
  void finish_gradients();
  void sum(double* values, int64_t n) override { comm_.allreduce_sum(values, n); }
  void set_timeline(timeline::Timeline* timeline) override;
  ExchangeWindow exchange_window() const override { return window_; }
  int64_t bucket_bytes() const override { return bucket_bytes_; }

  size_t bucket_count() const { return buckets_.size(); }
  bool uses_shared_memory() const { return shm_ != nullptr; }
  bool uses_hierarchy() const { return hierarchy_ != nullptr; }
  bool uses_nccl() const { return nccl_ != nullptr; }

 private:
  struct Slot {
    Param* param;
    size_t bucket;
    int64_t offset;  // floats into the bucket
  };
  struct Bucket {
    Tensor buffer;
    int64_t offset = 0;  // floats into this worker's segment (shared memory)
    Tensor host;         // GPU gradients without NCCL: the bucket's copy that MPI sums
    int pending = 0;     // gradients not yet copied in this step
    int total = 0;
    Communicator::Request request = -1;
    // Timeline: when this step's exchange started (-1: not in flight) and its name.
    int64_t started_at = -1;
    const char* event_name = nullptr;
  };
  // Timeline: the bucket's exchange has started, or was seen to have ended.
  void exchange_started(Bucket& b);
  void exchange_ended(Bucket& b);
  Communicator& comm_;
  int64_t bucket_bytes_;
  bool shared_memory_;
  bool hierarchical_;
  std::unique_ptr<ShmAllreduce> shm_;
  std::unique_ptr<HierarchicalAllreduce> hierarchy_;
  std::unique_ptr<DeviceCommunicator> nccl_;
  Device device_ = Device::cpu;
  std::vector<Slot> slots_;
  std::unordered_map<const Param*, size_t> slot_of_;
  std::vector<Bucket> buckets_;
  // This step's first exchange start (none yet: nullopt), and the totals.
  std::optional<std::chrono::steady_clock::time_point> first_start_;
  ExchangeWindow window_;
};

}  // namespace drun::distributed
