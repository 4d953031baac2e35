// A strategy that works on host memory (parameter servers, Hogwild, the
// elastic-averaging family), run by a worker whose variables live on a GPU:
// the strategy sees host copies of the variables. Before each of its calls
// the GPU's values and gradients are copied into them, and after it the
// values go back, so the servers and the node-shared memory stay on the CPU
// as the issue asks ("workers stage gradients through host memory").
#pragma once
#include <memory>
#include <vector>

#include "dist/strategy.hpp"

namespace drun::dist {

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
  void finish(std::span<Param* const> params, const std::string& model_dir) override;
  std::optional<int64_t> shared_global_step(std::span<Param* const> params) override;
  void checkpoint(const std::string& model_dir, int64_t step) override {
    inner_.checkpoint(model_dir, step);
  }

 private:
  void to_host(std::span<Param* const> device, bool with_gradients);
  void to_device(std::span<Param* const> device) const;
  Strategy& inner_;
  std::vector<Param> host_;
  std::vector<Param*> host_ptrs_;
};

}  // namespace drun::dist
