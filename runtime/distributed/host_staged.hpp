// A strategy that works on host memory (parameter servers, Hogwild, the
// elastic-averaging family), run by a worker whose variables live on a GPU:
// the strategy sees host copies of the variables. The host copies of the
// trainable variables are the strategy's: only it changes them (Hogwild's
// live in node-shared memory, where other workers write too), so before each
// of its calls only the GPU's gradients, and the values that the forward
// pass changes (batch-norm statistics), are copied in; after it the values
// go back to the GPU. Servers and shared memory stay on the CPU.
#pragma once
#include <memory>
#include <vector>

#include "distributed/strategy.hpp"

namespace drun::distributed {

class HostStaged final : public Strategy {
 public:
  explicit HostStaged(Strategy& inner) : inner_(inner) {}
  std::string name() const override { return inner_.name(); }
  int workers() const override { return inner_.workers(); }
  int worker_index() const override { return inner_.worker_index(); }
  void setup(std::span<Param* const> params) override;
  float gradient_scale() const override { return inner_.gradient_scale(); }
  void apply(optim::Optimizer& optimizer, std::span<Param* const> params) override;
  bool lockstep() const override { return inner_.lockstep(); }
  void sum(double* values, int64_t n) override { inner_.sum(values, n); }
  json epoch_stats() override { return inner_.epoch_stats(); }
  ExchangeWindow exchange_window() const override { return inner_.exchange_window(); }
  int64_t bucket_bytes() const override { return inner_.bucket_bytes(); }
  void finish(std::span<Param* const> params, const std::string& model_dir) override;
  std::optional<int64_t> shared_global_step(std::span<Param* const> params) override;
  void checkpoint(const std::string& model_dir, int64_t step) override {
    inner_.checkpoint(model_dir, step);
  }

 private:
  void to_host(std::span<Param* const> device);
  void to_device(std::span<Param* const> device) const;
  Strategy& inner_;
  std::vector<Param> host_;
  std::vector<Param*> host_ptrs_;
};

}  // namespace drun::distributed
