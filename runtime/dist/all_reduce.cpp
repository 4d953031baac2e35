#include "dist/all_reduce.hpp"

namespace drun::dist {

AllReduce::AllReduce(Communicator& comm, int64_t bucket_bytes)
    : comm_(comm), bucket_bytes_(bucket_bytes) {}

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
  for (size_t i = 0; i < buckets_.size(); ++i) {
    buckets_[i].buffer = Tensor::zeros(Shape{sizes[i]});
    buckets_[i].pending = buckets_[i].total;
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
  started_ = 0;
}

void AllReduce::gradients_ready(std::span<Param> params) {
  for (Param& p : params) {
    auto it = slot_of_.find(&p);
    if (it == slot_of_.end()) continue;  // not trainable
    Bucket& b = buckets_[slots_[it->second].bucket];
    if (--b.pending != 0) continue;
    // The last bucket is waited for at once: its blocking allreduce is
    // faster than starting and waiting for a non-blocking one.
    if (++started_ == buckets_.size())
      comm_.allreduce_sum(b.buffer.f32(), b.buffer.numel());
    else
      b.request = comm_.allreduce_sum_start(b.buffer.f32(), b.buffer.numel());
  }
  // Lets MPI progress the collectives already started.
  for (auto& b : buckets_)
    if (b.request >= 0) comm_.test(b.request);
}

void AllReduce::finish_gradients() {
  for (auto& b : buckets_)
    if (b.pending != 0)
      throw std::logic_error("AllReduce: a bucket's gradients were not all produced");
  // The sums are means already: the loss gradient was scaled by 1/N.
  if (buckets_.size() > 1) comm_.wait_all();  // one bucket: reduced by a blocking call
  for (auto& b : buckets_) {
    b.pending = b.total;
    b.request = -1;
  }
  started_ = 0;
}

void AllReduce::apply(optim::Optimizer& optimizer, std::span<Param* const> params) {
  finish_gradients();
  optimizer.apply(params);
}

}  // namespace drun::dist
