// Strategy: how workers keep their models in step. The trainer calls it at
// fixed points of a step; a strategy talks to other ranks only through the
// Communicator.
#pragma once
#include <span>
#include <string>

#include "tensor/param.hpp"

namespace drun::dist {

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string name() const = 0;
  virtual int workers() const = 0;
  virtual int worker_index() const = 0;
  bool is_chief() const { return worker_index() == 0; }

  // Once, before training: e.g. check that every worker holds the same
  // variables and give them the chief's initial values.
  virtual void setup(std::span<Param* const> params) = 0;
  // The trainer multiplies the loss gradient by this before backward. Every
  // parameter gradient is linear in it, so AllReduce's 1/N turns the sum over
  // workers into their mean without a pass over the gradients.
  virtual float gradient_scale() const { return 1.0f; }
  // During backward: these parameters' gradients are final for this step.
  virtual void gradients_ready(std::span<Param> params) = 0;
  // After backward, before the optimizer: gradients hold what to apply.
  virtual void finish_gradients() = 0;
  // Sums values over workers in place (metrics, counts).
  virtual void sum(double* values, int64_t n) = 0;
};

}  // namespace drun::dist
