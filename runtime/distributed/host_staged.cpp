#include "distributed/host_staged.hpp"

namespace drun::distributed {

void HostStaged::setup(std::span<Param* const> params) {
  host_.clear();
  for (const Param* p : params) {
    Param h;
    h.name = p->name;
    h.trainable = p->trainable;
    // Pinned: these cross to and from the GPU every step.
    h.value = Tensor::pinned(p->value.shape());
    h.value.copy_from(p->value);
    if (p->grad.defined()) h.grad = Tensor::pinned(p->grad.shape());
    host_.push_back(std::move(h));
  }
  host_ptrs_.clear();
  for (Param& h : host_) host_ptrs_.push_back(&h);
  inner_.setup(host_ptrs_);
  to_device(params);  // e.g. the chief's initial values
}

void HostStaged::to_host(std::span<Param* const> device) {
  for (size_t i = 0; i < host_.size(); ++i)
    if (host_[i].trainable)
      host_[i].grad.copy_from(device[i]->grad);
    else
      host_[i].value.copy_from(device[i]->value);
}

void HostStaged::to_device(std::span<Param* const> device) const {
  for (size_t i = 0; i < host_.size(); ++i) device[i]->value.copy_from(host_[i].value);
}

void HostStaged::apply(optim::Optimizer& optimizer, std::span<Param* const> params) {
  to_host(params);
  inner_.apply(optimizer, host_ptrs_);
  to_device(params);
}

void HostStaged::finish(std::span<Param* const> params, const std::string& model_dir) {
  to_host(params);
  inner_.finish(host_ptrs_, model_dir);
  to_device(params);
}

std::optional<int64_t> HostStaged::shared_global_step(std::span<Param* const> params) {
  to_host(params);
  auto step = inner_.shared_global_step(host_ptrs_);
  to_device(params);
  return step;
}

}  // namespace drun::distributed
