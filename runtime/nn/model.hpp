// Model: layers composed as a small directed acyclic graph, in topological
// order. A Sequential model is the chain case; residual blocks use an Add node
// with two inbound nodes. Built from a JSON description:
//   {"name": "sequential", "input_shape": [28, 28, 1],
//    "layers": [{"class_name": "Conv2D", "config": {...}, "inbound": [-1]}, ...],
//    "output": 4}
// "inbound" lists earlier layer indices (-1 is the model input); when absent a
// layer takes the previous one. An entry [i, k] takes output k of layer i, a
// layer with several outputs (nn/layer.hpp's num_outputs: a recurrent
// layer's final states); i alone is [i, 0]. "output" defaults to the last layer.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/timeline.hpp"
#include "nn/layer.hpp"

namespace drun::nn {

class Model {
 public:
  Model(const json& spec, uint64_t seed);

  const Tensor& forward(const Tensor& x, bool training);
  // Backward of the last forward (which must have been a training one), from
  // the gradient of the loss with respect to the output.
  void backward(const Tensor& dy);
  // Checks a batch of input on the host, before it goes to the model's
  // device: each layer reading the model's input (Layer::check_input).
  void check_input(const Tensor& host_x) const;

  // Every variable, layer by layer in Keras' order (trainable ones first per layer).
  std::vector<Param*> params();
  std::vector<Param*> trainable_params();
  int64_t param_count(bool trainable_only = false) const;
  const Shape& input_shape() const { return input_shape_; }
  const Shape& output_shape() const;
  const std::string& name() const { return name_; }
  std::string summary() const;
  void set_exec(const Exec& ex);
  // Mixed precision: every layer's GEMMs and convolutions take their operands
  // in `t` (nn/layer.hpp); float32 by default.
  void set_compute_dtype(DType t);
  // Called after each layer's backward, when that layer's parameter gradients
  // are final: gradient exchange starts there while backward goes on.
  void set_backward_listener(std::function<void(Layer&)> listener) {
    listener_ = std::move(listener);
  }
  const Exec& exec() const { return ex_; }
  // Every layer's begin_training_step (nn/layer.hpp), before a training step.
  void begin_training_step();
  // Forward and backward of each layer go on `timeline`'s main track (null: off).
  void set_timeline(timeline::Timeline* timeline);

  struct Node {
    std::unique_ptr<Layer> layer;
    std::vector<int> inbound;         // -1: the model input
    std::vector<int> inbound_output;  // per inbound: which output of that layer (0: its first)
  };
  const std::vector<Node>& nodes() const { return nodes_; }
  int output_node() const { return output_; }
  // The description this model was built from, with generated names filled in.
  const json& spec() const { return spec_; }

 private:
  const Tensor& node_output(int id, const Tensor& x) const;
  const Tensor& node_output(const Node& n, size_t slot, const Tensor& x) const;
  // The sum of the gradients consumers give (node, input slot), in `sum`
  // where it takes one; null where there are none.
  const Tensor* summed_grad(const std::vector<std::pair<int, int>>& cons, Tensor& sum);
  // Before node i's backward where its layer has several outputs: hands it
  // the gradients at its outputs past the first, and returns the one at its
  // first, zeros where only the others get one (null: none arrives at all).
  const Tensor* other_outputs_grads(int i, const Tensor* g);
  // The gradient arriving at node i's output (null when it reaches nothing);
  // where that takes a pass (a sum over consumers, a ReLU mask), a timeline
  // span named span_name.
  const Tensor* arriving_grad(int i, const Tensor& dy, const Tensor* relu_y, const char* span_name);
  // ReLU layers whose ReLU the layer before applies (Layer::absorb_relu):
  // found once, when the model is built.
  void fuse_relus();
  // Max pooling layers that the first convolution before them applies
  // (Layer::absorb_max_pool): found once, after the ReLUs.
  void fuse_max_pools();
  // Batch norms that take their statistics from the convolution before them
  // (Layer::take_input_moments): also found once.
  void share_moments();

  std::string name_;
  Shape input_shape_;
  std::vector<Node> nodes_;
  int output_ = -1;
  json spec_;
  Exec ex_;
  // Per node: who consumes its output (node, input slot), and a buffer that
  // sums the gradient when there is more than one consumer.
  std::vector<std::vector<std::pair<int, int>>> consumers_;
  // The same without the consumers whose input has no gradient
  // (Layer::takes_ids): the ones a gradient arrives from.
  std::vector<std::vector<std::pair<int, int>>> grad_consumers_;
  std::vector<Tensor> grad_sum_;
  // Per node with several outputs, per output past the first: the consumers
  // that a gradient arrives from, and the buffers that sum it and hold the
  // first output's zero gradient where none arrives there.
  std::vector<std::vector<std::vector<std::pair<int, int>>>> other_consumers_;
  std::vector<std::vector<Tensor>> other_grad_sum_;
  std::vector<std::vector<const Tensor*>> other_grads_;
  std::vector<Tensor> zero_grad_;
  // Per node: the node whose output stands for its own (a ReLU or max pooling
  // absorbed by its input's layer), else -1; and the last node a layer
  // absorbed, whose output its own stands for, else -1.
  std::vector<int> absorbed_by_, tail_node_;
  const Tensor* input_ = nullptr;
  std::function<void(Layer&)> listener_;
  timeline::Timeline* timeline_ = nullptr;
  // Per node, interned in timeline_: its layer's passes, and the pass that
  // makes the gradient arriving at it ("gradient into NAME").
  std::vector<const char*> forward_names_, backward_names_, gradient_names_;
  std::vector<int64_t> grad_bytes_;  // per node: its trainable gradients' bytes (tools/scale)
  std::vector<const Tensor*> in_scratch_;
  std::unique_ptr<bool[]> need_scratch_;  // std::vector<bool> has no data()
};

}  // namespace drun::nn
