#include "distributed/all_reduce.hpp"

#include <fmt/format.h>

#include "distributed/strategy_spec.hpp"

namespace drun::distributed {

AllReduce::AllReduce(Communicator& comm, int64_t bucket_bytes, bool shared_memory,
                     bool hierarchical)
    : comm_(comm),
      bucket_bytes_(bucket_bytes),
      shared_memory_(shared_memory),
      hierarchical_(hierarchical) {}

void AllReduce::setup(std::span<Param* const> params) {
  check_same_variables(comm_, params, "AllReduce");
  broadcast_from_chief(comm_, params);

  // Buckets in the order backward produces gradients: last variable first.
  // Offsets are rounded to 16 floats (64 bytes) so every gradient stays aligned.
  slots_.clear();
  buckets_.clear();
  std::vector<int64_t> sizes;
  for (auto it = params.rbegin(); it != params.rend(); ++it) {
    Param* p = *it;
    if (!p->trainable) continue;
    const int64_t n = (p->value.numel() + 15) / 16 * 16;
    if (sizes.empty() || (sizes.back() > 0 && (sizes.back() + n) * 4 > bucket_bytes_)) {
      sizes.push_back(0);
      buckets_.emplace_back();
    }
    slots_.push_back({p, buckets_.size() - 1, sizes.back()});
    sizes.back() += n;
    buckets_.back().total += 1;
  }
  // With shared memory the buckets are consecutive parts of this worker's
  // segment of node-shared memory: on one node summed in place by
  // finish_gradients, across nodes each as it is produced.
  int64_t total = 0;
  for (int64_t n : sizes) total += n;
  device_ = slots_.empty() ? Device::cpu : slots_[0].param->grad.device();
  shm_.reset();
  hierarchy_.reset();
  nccl_.reset();
  if (device_ == Device::cpu && shared_memory_ && comm_.size() > 1) {
    if (comm_.local_size() == comm_.size())
      shm_ = std::make_unique<ShmAllreduce>(comm_, total);
    else if (hierarchical_ && HierarchicalAllreduce::applies(comm_))
      hierarchy_ = std::make_unique<HierarchicalAllreduce>(comm_, total);
  }
  float* segment = shm_ ? shm_->segment() : hierarchy_ ? hierarchy_->segment() : nullptr;
  if (device_ != Device::cpu && comm_.size() > 1) nccl_ = make_nccl_communicator(comm_);
  int64_t offset = 0;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    buckets_[i].buffer = segment ? Tensor::borrowed(segment + offset, Shape{sizes[i]})
                                 : Tensor::zeros(Shape{sizes[i]}, DType::f32, device_);
    buckets_[i].offset = offset;
    buckets_[i].buffer.zero();
    if (device_ != Device::cpu && !nccl_) buckets_[i].host = Tensor::pinned(Shape{sizes[i]});
    buckets_[i].pending = buckets_[i].total;
    offset += sizes[i];
  }
  // Each gradient becomes a view into its bucket: backward writes straight
  // into the buffer that is reduced, and the optimizer reads the result there.
  for (const Slot& s : slots_) {
    const Shape shape = s.param->grad.shape();
    s.param->grad =
        buckets_[s.bucket].buffer.rows(s.offset, s.offset + shape.numel()).reshaped(shape);
  }
  slot_of_.clear();
  for (size_t i = 0; i < slots_.size(); ++i) slot_of_[slots_[i].param] = i;
  set_timeline(timeline_);  // the buckets' names
}

void AllReduce::set_timeline(timeline::Timeline* tl) {
  timeline_ = tl;
  if (!timeline_) return;
  const char* how = shm_ ? "shared memory" : nccl_ ? "NCCL" : "MPI";
  for (size_t i = 0; i < buckets_.size(); ++i) {
    const int64_t bytes = buckets_[i].buffer.numel() * 4;
    buckets_[i].event_name = timeline_->intern(fmt::format("allreduce bucket {}", i));
    timeline_->name_track(static_cast<uint16_t>(timeline::kExchange + i),
                          fmt::format("exchange: bucket {} ({:.1f} KiB, {})", i,
                                      static_cast<double>(bytes) / 1024, how));
  }
}

void AllReduce::exchange_started(Bucket& b) {
  if (!first_start_) first_start_ = std::chrono::steady_clock::now();
  if (timeline_) b.started_at = timeline_->now();
}

void AllReduce::exchange_ended(Bucket& b) {
  if (!timeline_ || b.started_at < 0) return;
  const auto index = static_cast<uint16_t>(&b - buckets_.data());
  timeline_->record(timeline::Lane::main, timeline::kExchange + index, b.event_name, "exchange",
                    b.started_at, timeline_->now(), "bytes", b.buffer.numel() * 4);
  b.started_at = -1;
}

void AllReduce::gradients_ready(std::span<Param> params) {
  for (Param& p : params) {
    auto it = slot_of_.find(&p);
    if (it == slot_of_.end()) continue;  // not trainable
    Bucket& b = buckets_[slots_[it->second].bucket];
    if (--b.pending != 0 || shm_) continue;  // shared memory: all summed at the end
    if (comm_.size() == 1) continue;
    if (hierarchy_) {
      exchange_started(b);
      hierarchy_->start(b.offset, b.buffer.numel());
      continue;
    }
    if (nccl_) {
      nccl_->allreduce_sum_start(b.buffer.f32(), b.buffer.numel());
      exchange_started(b);
      continue;
    }
    float* data = b.buffer.f32();
    if (b.host.defined()) {  // a GPU's bucket through the host (waits for backward so far)
      b.host.copy_from(b.buffer);
      data = b.host.f32();
    }
    // Non-blocking, the last bucket too: over TCP links of 50-200 Mbit/s a
    // blocking MPI_Allreduce of the seed CNN's 1.4 MB took 1.6x as long as
    // MPI_Iallreduce (Rabenseifner, comm.cpp) and MPI_Wait; on 1-10 Gbit/s
    // and through shared memory the two are equal (docs/benchmarks.md).
    exchange_started(b);
    b.request = comm_.allreduce_sum_start(data, b.buffer.numel());
  }
  // Lets MPI progress the collectives already started.
  if (hierarchy_) hierarchy_->progress();
  for (auto& b : buckets_)
    if (b.request >= 0 && comm_.test(b.request)) exchange_ended(b);
}

void AllReduce::finish_gradients() {
  for (auto& b : buckets_)
    if (b.pending != 0)
      throw std::logic_error("AllReduce: a bucket's gradients were not all produced");
  // The sums are means already: the loss gradient was scaled by 1/N.
  if (shm_) {
    // One sum of all buckets at the end, on bucket 0's track.
    int64_t bytes = 0;
    for (const auto& b : buckets_) bytes += b.buffer.numel() * 4;
    timeline::Span sum(timeline_, timeline::Lane::main, timeline::kExchange, "shared-memory sum",
                       "exchange", "bytes", bytes);
    shm_->sum();
  } else if (hierarchy_) {
    hierarchy_->finish();
    for (auto& b : buckets_) exchange_ended(b);
  } else if (nccl_)
    nccl_->wait_all();
  else if (comm_.size() > 1)
    comm_.wait_all();
  for (auto& b : buckets_) {
    exchange_ended(b);
    if (b.host.defined() && comm_.size() > 1) b.buffer.copy_from(b.host);
    b.pending = b.total;
    b.request = -1;
  }
}

void AllReduce::apply(optim::Optimizer& optimizer, std::span<Param* const> params) {
  using Clock = std::chrono::steady_clock;
  const auto backward_end = Clock::now();
  {
    timeline::Span wait(timeline_, timeline::Lane::main, timeline::kMain, "wait for exchanges",
                        "wait");
    finish_gradients();
  }
  // Shared memory sums every bucket here, after backward: nothing hidden.
  const auto start = first_start_.value_or(backward_end);
  window_.window += std::chrono::duration<double>(Clock::now() - start).count();
  window_.hidden += std::chrono::duration<double>(backward_end - start).count();
  first_start_.reset();
  timeline::Span update(timeline_, timeline::Lane::main, timeline::kMain, "optimizer", "optimizer");
  optimizer.apply(params);
}

const StrategyInfo& all_reduce_strategy() {
  static const StrategyInfo info{
      .about = {.names = {"AllReduce", "MultiWorkerMirrored"},
                .doc = "every worker sums all gradients (buckets of non-blocking allreduces)",
                .schema = {{"bucket_bytes", OptionType::integer, int64_t{4} << 20,
                            "gradients fused into one allreduce, in bytes"},
                           {"shared_memory", OptionType::boolean, true,
                            "workers on one node sum through node-shared memory"},
                           {"hierarchical", OptionType::boolean, true,
                            "across nodes: within each node first, then one slice per worker"},
                           scale_lr_option()}},
      .presets = {{"all_reduce", json::object()}},
      .configure = [](Options& o, StrategySpec& s) {
        s.bucket_bytes = o.get<int64_t>("bucket_bytes");
        s.shared_memory = o.get<bool>("shared_memory");
        s.hierarchical = o.get<bool>("hierarchical");
        if (s.bucket_bytes <= 0)
          throw UsageError("strategy.AllReduce: bucket_bytes must be positive");
      }};
  return info;
}

}  // namespace drun::distributed
