// Strategy: how workers keep their models in step. The trainer calls it at
// fixed points of a step; a strategy talks to other ranks only through the
// Communicator.
#pragma once
#include <optional>
#include <span>
#include <string>

#include "base/options.hpp"
#include "base/timeline.hpp"
#include "optim/optimizer.hpp"
#include "tensor/param.hpp"

namespace drun::distributed {

class Communicator;

// Before the first exchange: every worker must hold the same variables (names,
// shapes, order) as the chief; throws UsageError naming the first mismatch.
void check_same_variables(Communicator& workers, std::span<Param* const> params,
                          const std::string& strategy);
// Every worker takes the chief's values of all variables.
void broadcast_from_chief(Communicator& workers, std::span<Param* const> params);

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
  // Whether gradients leave this worker during a step; where they do not
  // (AllReduce with one worker: nothing to sum) the trainer runs its steps
  // as without a strategy, which a GPU can capture into a CUDA graph.
  virtual bool exchanges_gradients() const { return true; }
  // During backward: these parameters' gradients are final for this step.
  virtual void gradients_ready(std::span<Param> params) { (void)params; }
  // After backward: bring this step's gradients to bear on the variables,
  // with `optimizer` (the experiment's) where the update happens here.
  virtual void apply(optim::Optimizer& optimizer, std::span<Param* const> params) = 0;
  // Whether every worker takes each step together with the others (AllReduce,
  // synchronous servers), so that a collective at a given step cannot wait on
  // a worker that is elsewhere.
  virtual bool lockstep() const { return false; }
  // Whether it works on variables wherever they live (AllReduce); the others
  // see host copies of a GPU's variables (HostStaged).
  virtual bool device_aware() const { return false; }
  // Sums values over workers in place (metrics, counts).
  virtual void sum(double* values, int64_t n) = 0;
  // At the end of an epoch, on every worker: what the strategy measured in it
  // (e.g. staleness), combined over workers; an empty object when nothing.
  virtual json epoch_stats() { return json::object(); }
  // After the last step, on every worker: leave the final model in `params`
  // on the chief (e.g. fetched from the parameter servers); servers write
  // their state to `model_dir` when it is not empty.
  virtual void finish(std::span<Param* const> params, const std::string& model_dir) {
    (void)params;
    (void)model_dir;
  }
  // The job's global step where the servers keep one (the servers' version:
  // updates applied), after fetching their variables into `params`; nullopt
  // where every worker steps on its own count (AllReduce, Hogwild).
  virtual std::optional<int64_t> shared_global_step(std::span<Param* const> params) {
    (void)params;
    return std::nullopt;
  }
  // Cheap counters for summary.json's "scaling" (train/scaling_meter), over
  // the steps so far: the seconds from each step's first exchange start to
  // its end (window), of which before backward ended (hidden behind it).
  // Zeros where the strategy does not overlap exchanges with backward.
  struct ExchangeWindow {
    double window = 0.0;
    double hidden = 0.0;
  };
  virtual ExchangeWindow exchange_window() const { return {}; }
  // Bytes of gradients fused into one exchange (AllReduce's buckets); 0: none.
  virtual int64_t bucket_bytes() const { return 0; }
  // Where this worker's exchanges, waits and updates are recorded (null: nowhere).
  virtual void set_timeline(timeline::Timeline* tl) { timeline_ = tl; }
  // Before setup: training continues from the checkpoint of this global step
  // (parameter servers load their shards of it); -1: a fresh start.
  void resume_from(int64_t step) { resume_step_ = step; }
  // On the chief, before it writes its checkpoint of global step `step`:
  // state held elsewhere (the servers' shards) is written first.
  virtual void checkpoint(const std::string& model_dir, int64_t step) {
    (void)model_dir;
    (void)step;
  }

 protected:
  int64_t resume_step_ = -1;
  timeline::Timeline* timeline_ = nullptr;
};

}  // namespace drun::distributed
