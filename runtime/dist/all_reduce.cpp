#include "dist/all_reduce.hpp"

#include <cstring>

#include "base/options.hpp"

namespace drun::dist {

AllReduce::AllReduce(Communicator& comm, int64_t bucket_bytes)
    : comm_(comm), bucket_bytes_(bucket_bytes) {}

void AllReduce::setup(std::span<Param* const> params) {
  // Every worker must hold the same variables: compare with the chief's list.
  std::string mine;
  for (const Param* p : params) mine += p->name + p->value.shape().str() + ";";
  std::string chief = mine;
  comm_.broadcast(chief, 0);
  if (chief != mine) {
    size_t i = 0;
    while (i < mine.size() && i < chief.size() && mine[i] == chief[i]) ++i;
    const size_t from = mine.rfind(';', i == 0 ? 0 : i - 1);
    const size_t start = from == std::string::npos ? 0 : from + 1;
    throw UsageError("AllReduce: worker " + std::to_string(comm_.rank()) +
                     " holds other variables than the chief, first difference at '" +
                     mine.substr(start, mine.find(';', start) - start) + "' vs the chief's '" +
                     chief.substr(start, chief.find(';', start) - start) + "'");
  }
  for (Param* p : params) comm_.broadcast(p->value.f32(), p->value.numel(), 0);

  // Buckets in the order backward produces gradients: last variable first.
  slots_.clear();
  buckets_.clear();
  std::vector<int64_t> sizes;
  for (auto it = params.rbegin(); it != params.rend(); ++it) {
    Param* p = *it;
    if (!p->trainable) continue;
    const int64_t n = p->value.numel();
    if (sizes.empty() || (sizes.back() > 0 && (sizes.back() + n) * 4 > bucket_bytes_)) {
      sizes.push_back(0);
      buckets_.emplace_back();
    }
    slots_.push_back({p, buckets_.size() - 1, sizes.back()});
    sizes.back() += n;
    buckets_.back().total += 1;
  }
  for (size_t i = 0; i < buckets_.size(); ++i) {
    buckets_[i].buffer = Tensor(Shape{sizes[i]});
    buckets_[i].pending = buckets_[i].total;
  }
  slot_of_.clear();
  for (size_t i = 0; i < slots_.size(); ++i) slot_of_[slots_[i].param] = i;
}

void AllReduce::gradients_ready(std::span<Param> params) {
  for (Param& p : params) {
    auto it = slot_of_.find(&p);
    if (it == slot_of_.end()) continue;  // not trainable
    const Slot& s = slots_[it->second];
    Bucket& b = buckets_[s.bucket];
    std::memcpy(b.buffer.f32() + s.offset, p.grad.f32(), p.grad.bytes());
    if (--b.pending == 0) b.request = comm_.allreduce_sum_start(b.buffer.f32(), b.buffer.numel());
  }
  // Lets MPI progress the collectives already started.
  for (auto& b : buckets_)
    if (b.request >= 0) comm_.test(b.request);
}

void AllReduce::finish_gradients() {
  for (auto& b : buckets_)
    if (b.pending != 0)
      throw std::logic_error("AllReduce: a bucket's gradients were not all produced");
  comm_.wait_all();
  const float inv = 1.0f / static_cast<float>(comm_.size());
  for (const auto& s : slots_) {
    const float* src = buckets_[s.bucket].buffer.f32() + s.offset;
    float* dst = s.param->grad.f32();
    for (int64_t i = 0, n = s.param->grad.numel(); i < n; ++i) dst[i] = src[i] * inv;
  }
  for (auto& b : buckets_) {
    b.pending = b.total;
    b.request = -1;
  }
}

}  // namespace drun::dist
