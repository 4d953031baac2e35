// Layer: forward and backward of one operation, as in Torch's nn. A layer owns
// its parameters, their gradients and its output buffers; buffers are sized on
// the first batch and reused afterwards, so a warm step allocates nothing.
// backward() overwrites parameter gradients (it does not accumulate).
#pragma once
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/options.hpp"
#include "base/rng.hpp"
#include "kernels/ops.hpp"
#include "tensor/param.hpp"
#include "tensor/tensor.hpp"

namespace drun::nn {

using kernels::Exec;

class Layer {
 public:
  explicit Layer(std::string name) : name_(std::move(name)) {}
  virtual ~Layer() = default;
  Layer(const Layer&) = delete;
  Layer& operator=(const Layer&) = delete;

  // Keras' class name, e.g. "Conv2D".
  virtual const char* kind() const = 0;
  const std::string& name() const { return name_; }
  virtual int num_inputs() const { return 1; }

  // Takes per-example input shapes (no batch dimension), creates parameters
  // and returns the per-example output shape. Throws UsageError naming the
  // layer when a shape does not fit.
  virtual Shape build(std::span<const Shape> inputs, Rng& rng) = 0;
  virtual void forward(std::span<const Tensor* const> inputs, bool training) = 0;
  // Before a training step's forward, and outside it (the trainer calls it
  // before a step it may launch as a CUDA graph): what the layer draws on the
  // host each step goes to its device here (Dropout's key), so that the step
  // itself reads it from memory. A training forward without this call before
  // it draws for itself.
  virtual void begin_training_step() {}
  // Whether the input is integer token ids (Embedding), which have no
  // gradient: the model asks none of this layer (need_dx false) and sums
  // none from it into the layer before.
  virtual bool takes_ids() const { return false; }
  // Checks a batch of the model's input while it is still on the host,
  // before it is staged to the device (nn::Model::check_input): what a layer
  // on a GPU could not tell without waiting for it (Embedding's ids).
  virtual void check_input(const Tensor&) const {}
  // Writes input gradients for the inputs with need_dx[i] and every parameter
  // gradient. `inputs` are the tensors given to the last forward.
  virtual void backward(std::span<const Tensor* const> inputs, const Tensor& dy,
                        std::span<const bool> need_dx) = 0;

  const Tensor& output() const { return out_; }
  const Tensor& input_grad(int i = 0) const { return dx_[static_cast<size_t>(i)]; }
  // Layers with several outputs (a recurrent layer's return_state: its
  // output, then its final states, as Keras returns them). Output 0 is
  // output() and its gradient backward()'s dy; the others answer here, and
  // their gradients come before each backward (null where none arrives), so
  // that a layer of one output pays nothing for them.
  virtual int num_outputs() const { return 1; }
  const Tensor& output(int k) const { return k == 0 ? out_ : extra_output(k); }
  Shape output_shape(int k) const { return k == 0 ? output_shape_ : extra_output_shape(k); }
  virtual void set_extra_output_grads(std::span<const Tensor* const>) {}
  std::vector<Param>& params() { return params_; }
  const Shape& output_shape() const { return output_shape_; }
  // Keras' layer config (the keys Keras 3 accepts), for summaries and export.
  virtual json config() const;
  // How Keras calls the layer in a functional model (export, import): its
  // inputs as separate arguments (attention's query, value, key) rather than
  // one list (Add's), and the call's keyword arguments, which drun takes as
  // options (use_causal_mask).
  virtual bool keras_inputs_as_arguments() const { return false; }
  virtual json keras_call_kwargs() const { return json::object(); }
  // The keyword under which Keras' call takes the inputs after the first as
  // one list (a recurrent layer's initial_state), or null.
  virtual const char* keras_inputs_keyword() const { return nullptr; }
  // Where the layer runs; its variables move to that device. A wrapper
  // (Bidirectional) moves the layers it holds.
  virtual void set_exec(const Exec& ex);
  // Mixed precision (Keras' policies, nn::Model::set_compute_dtype): the type
  // the layer's GEMMs and convolutions take their operands in, float32 (the
  // default), float16 or bfloat16. Variables stay float32 (the optimizer's
  // master weights); where the type is narrower, the layer rounds copies of
  // its input and kernel to it each step and the ops sum in float32.
  void set_compute_dtype(DType t) { compute_ = t; }
  DType compute_dtype() const { return compute_; }
  int64_t param_count() const;
  // The layer's random generator (Dropout's masks), for checkpoints; null when none.
  virtual Rng* rng() { return nullptr; }

  // Fusing a ReLU layer into the layer before it (nn::Model decides where):
  // whether this layer is exactly y = max(0, x), and whether this layer can
  // apply such a ReLU to its own output (it then does from now on: its
  // output is the ReLU's, its backward takes the gradient at the ReLU's output).
  virtual bool is_plain_relu() const { return false; }
  virtual bool absorb_relu() { return false; }
  // A layer whose absorbed ReLU's gradient would be a pass of its own (Add)
  // gives its output here: the model then masks the arriving gradient by
  // it in the same pass that sums the consumers' gradients, and the
  // layer's backward takes the gradient at the ReLU's input.
  virtual const Tensor* relu_output_masked_by_model() const { return nullptr; }

  // Fusing a max pooling layer into a first convolution (nn::Model decides
  // where: the convolution's input is the model's, so no input gradient is
  // asked of it): the pooling's window where this layer is max pooling; and
  // whether this layer can pool its own output so (it then does from now on:
  // its output is the pooling's, its backward takes the gradient there).
  struct PoolWindow {
    int64_t ph, pw, sh, sw;
    bool same;
  };
  virtual std::optional<PoolWindow> max_pool_window() const { return std::nullopt; }
  virtual bool absorb_max_pool(const PoolWindow&) { return false; }

  // Batch-norm statistics handed over from the layer before (nn::Model
  // decides where): whether this layer would take its input's per-image
  // moments (kernels' conv2d_forward, op_list.hpp); where the layer before
  // will keep its output's (filled by each training forward where its
  // kernels compute them, else undefined), or null where it cannot; and
  // the hand-over itself.
  virtual bool takes_input_moments() const { return false; }
  virtual const Tensor* give_output_moments() { return nullptr; }
  virtual void take_input_moments(const Tensor*) {}

 protected:
  Param& add_param(const std::string& short_name, const Shape& shape, bool trainable = true);
  // Name for messages: "Conv2D 'conv2d'".
  std::string who() const { return std::string(kind()) + " '" + name_ + "'"; }
  void expect_rank(const Shape& in, int rank, const char* what) const;
  // An NHWC image's (height, width, channels), or a (steps, channels)
  // sequence's as an image one row high: the 1-D layers run the 2-D kernels.
  struct Spatial {
    int64_t h, w, c;
  };
  Spatial expect_spatial(const Shape& in, bool one_d) const;
  // Output k >= 1 of a layer with several (num_outputs) and its per-example shape.
  virtual const Tensor& extra_output(int k) const;
  virtual Shape extra_output_shape(int k) const;
  // Two or more inputs of one shape (Add, Multiply).
  void expect_same_shapes(std::span<const Shape> in) const;
  // Sizes a buffer of this layer on the device it runs on.
  void ensure(Tensor& t, const Shape& shape, DType dtype = DType::f32) const {
    t.ensure(shape, dtype, ex_.device);
  }
  // x as the compute type: x itself for float32, else `copy` holding x rounded to it.
  const Tensor& in_compute_type(const Tensor& x, Tensor& copy) const {
    if (compute_ == DType::f32) return x;
    ensure(copy, x.shape(), compute_);
    kernels::cast(ex_, x, copy);
    return copy;
  }

  std::string name_;
  Shape output_shape_;
  Tensor out_;
  std::vector<Tensor> dx_{1};
  std::vector<Param> params_;
  Exec ex_;
  DType compute_ = DType::f32;
};

// Builds a layer from its Keras class name and config (the Lua table's keys).
// Unknown class or option: UsageError naming it and the valid ones.
std::unique_ptr<Layer> make_layer(const std::string& class_name, const json& config,
                                  const std::string& name);

// Shorthands for single-input layers.
inline void forward1(Layer& l, const Tensor& x, bool training) {
  const Tensor* in[1] = {&x};
  l.forward(in, training);
}
inline void backward1(Layer& l, const Tensor& x, const Tensor& dy, bool need_dx) {
  const Tensor* in[1] = {&x};
  const bool need[1] = {need_dx};
  l.backward(in, dy, need);
}

}  // namespace drun::nn
