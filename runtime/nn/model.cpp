#include "nn/model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>

#include "nn/layer_registry.hpp"

namespace drun::nn {

namespace {

Shape read_shape(const json& v, const std::string& owner) {
  if (!v.is_array() || v.empty())
    throw UsageError(owner + ": input_shape must be a list of dimensions, got " + v.dump());
  std::vector<int64_t> dims;
  for (const auto& d : v) {
    if (!d.is_number_integer() || d.get<int64_t>() <= 0)
      throw UsageError(owner + ": input_shape must hold positive integers, got " + v.dump());
    dims.push_back(d.get<int64_t>());
  }
  return Shape(dims);
}

std::string with_commas(int64_t n) {
  const std::string digits = std::to_string(n);
  std::string s;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0 && digits[i - 1] != '-') s += ',';
    s += digits[i];
  }
  return s;
}

}  // namespace

Model::Model(const json& spec_in, uint64_t seed) : spec_(spec_in) {
  name_ = spec_.value("name", std::string("sequential"));
  const json& layers = spec_.at("layers");
  if (!layers.is_array() || layers.empty())
    throw UsageError("model '" + name_ + "': it has no layers");

  // The input shape: the model's, or the first layer's input_shape as in Keras.
  if (spec_.contains("input_shape") && !spec_["input_shape"].is_null())
    input_shape_ = read_shape(spec_["input_shape"], "model '" + name_ + "'");
  else if (layers[0].contains("config") && layers[0]["config"].contains("input_shape"))
    input_shape_ = read_shape(layers[0]["config"]["input_shape"], "model '" + name_ + "'");
  else
    throw UsageError("model '" + name_ +
                     "': the first layer needs input_shape (e.g. input_shape = {28, 28, 1})");

  Rng rng(seed);
  std::map<std::string, int> name_counts;
  std::vector<Shape> shapes;
  for (size_t i = 0; i < layers.size(); ++i) {
    json& entry = spec_["layers"][i];
    const std::string cls = entry.value("class_name", std::string());
    json config = entry.value("config", json::object());
    std::string lname = config.value("name", std::string());
    if (lname.empty()) {
      const std::string base = keras_base_name(cls);
      const int k = name_counts[base]++;
      lname = k == 0 ? base : base + "_" + std::to_string(k);
      config["name"] = lname;
      entry["config"] = config;
    }
    Node node;
    node.layer = make_layer(cls, config, lname);
    const std::string who = node.layer->kind() + std::string(" '") + lname + "'";
    if (entry.contains("inbound")) {
      for (const auto& v : entry["inbound"]) {
        const bool pair = v.is_array() && v.size() == 2;
        if (!(pair && v[0].is_number_integer() && v[1].is_number_integer()) &&
            !v.is_number_integer())
          throw UsageError(who + ": inbound entry " + v.dump() +
                           " is neither a layer index nor [layer index, output index]");
        node.inbound.push_back(pair ? v[0].get<int>() : v.get<int>());
        node.inbound_output.push_back(pair ? v[1].get<int>() : 0);
      }
    } else {
      node.inbound.push_back(static_cast<int>(i) - 1);
      node.inbound_output.push_back(0);
    }
    std::vector<Shape> in_shapes;
    for (size_t s = 0; s < node.inbound.size(); ++s) {
      const int id = node.inbound[s], k = node.inbound_output[s];
      if (id < -1 || id >= static_cast<int>(i))
        throw UsageError(who + ": inbound node " + std::to_string(id) + " is not an earlier layer");
      const int outputs = id < 0 ? 1 : nodes_[static_cast<size_t>(id)].layer->num_outputs();
      if (k < 0 || k >= outputs)
        throw UsageError(fmt::format(
            "{}: takes output {} of {}, which has {} output(s)", who, k,
            id < 0 ? std::string("the model input")
                   : fmt::format("layer '{}'", nodes_[static_cast<size_t>(id)].layer->name()),
            outputs));
      in_shapes.push_back(id < 0   ? input_shape_
                          : k == 0 ? shapes[static_cast<size_t>(id)]
                                   : nodes_[static_cast<size_t>(id)].layer->output_shape(k));
    }
    const int want = node.layer->num_inputs();
    if (want > 0 && static_cast<int>(node.inbound.size()) != want)
      throw UsageError(who + ": takes " + std::to_string(want) + " input(s), got " +
                       std::to_string(node.inbound.size()));
    shapes.push_back(node.layer->build(in_shapes, rng));
    nodes_.push_back(std::move(node));
  }
  output_ = spec_.value("output", static_cast<int>(nodes_.size()) - 1);
  if (output_ < 0 || output_ >= static_cast<int>(nodes_.size()))
    throw UsageError("model '" + name_ + "': output node " + std::to_string(output_) +
                     " does not exist");

  consumers_.resize(nodes_.size());
  other_consumers_.resize(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i)
    other_consumers_[i].resize(static_cast<size_t>(nodes_[i].layer->num_outputs() - 1));
  const auto takes_ids = [&](const std::pair<int, int>& c) {
    return nodes_[static_cast<size_t>(c.first)].layer->takes_ids();
  };
  for (size_t i = 0; i <= static_cast<size_t>(output_); ++i)
    for (size_t s = 0; s < nodes_[i].inbound.size(); ++s) {
      const int id = nodes_[i].inbound[s], k = nodes_[i].inbound_output[s];
      const std::pair<int, int> c{static_cast<int>(i), static_cast<int>(s)};
      if (id < 0) continue;
      if (k == 0)
        consumers_[static_cast<size_t>(id)].push_back(c);
      else if (!takes_ids(c))
        other_consumers_[static_cast<size_t>(id)][static_cast<size_t>(k - 1)].push_back(c);
    }
  grad_consumers_ = consumers_;
  for (auto& cons : grad_consumers_) std::erase_if(cons, takes_ids);
  grad_sum_.resize(nodes_.size());
  other_grad_sum_.resize(nodes_.size());
  other_grads_.resize(nodes_.size());
  zero_grad_.resize(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    other_grad_sum_[i].resize(other_consumers_[i].size());
    other_grads_[i].resize(other_consumers_[i].size());
  }
  size_t max_in = 1;
  for (const auto& n : nodes_) max_in = std::max(max_in, n.inbound.size());
  in_scratch_.resize(max_in);
  need_scratch_ = std::make_unique<bool[]>(max_in);
  fuse_relus();
  fuse_max_pools();
  share_moments();
}

// A ReLU is absorbed by the layer that feeds it when that layer's output goes
// nowhere else: the pair then makes one pass over memory each way instead of
// two (batch norm + ReLU in every ResNet block). The ReLU layer stays in the
// model (summaries, export); it just does no work.
void Model::fuse_relus() {
  absorbed_by_.assign(nodes_.size(), -1);
  tail_node_.assign(nodes_.size(), -1);
  for (size_t j = 0; j <= static_cast<size_t>(output_); ++j) {
    const Node& n = nodes_[j];
    if (!n.layer->is_plain_relu() || n.inbound.size() != 1 || n.inbound[0] < 0 ||
        nodes_[static_cast<size_t>(n.inbound[0])].layer->num_outputs() != 1)
      continue;
    const int i = n.inbound[0];
    if (i == output_ || consumers_[static_cast<size_t>(i)].size() != 1) continue;
    if (!nodes_[static_cast<size_t>(i)].layer->absorb_relu()) continue;
    absorbed_by_[j] = i;
    tail_node_[static_cast<size_t>(i)] = static_cast<int>(j);
  }
}

// Max pooling is absorbed by the convolution that feeds it when that
// convolution reads the model's input (it owes no input gradient) and its
// output goes nowhere else: the pair then never writes the convolution's
// output (the seed CNN's 26x26x32 per image, read again by the pooling and
// by both backward passes). The pooling layer stays in the model.
void Model::fuse_max_pools() {
  for (size_t j = 0; j <= static_cast<size_t>(output_); ++j) {
    const Node& n = nodes_[j];
    const auto window = n.layer->max_pool_window();
    if (!window || n.inbound.size() != 1 || n.inbound[0] < 0 ||
        nodes_[static_cast<size_t>(n.inbound[0])].layer->num_outputs() != 1)
      continue;
    const int i = n.inbound[0];
    const Node& in = nodes_[static_cast<size_t>(i)];
    if (i == output_ || absorbed_by_[static_cast<size_t>(i)] >= 0 ||
        tail_node_[static_cast<size_t>(i)] >= 0 || consumers_[static_cast<size_t>(i)].size() != 1)
      continue;
    if (in.inbound.size() != 1 || in.inbound[0] != -1) continue;
    if (!nodes_[static_cast<size_t>(i)].layer->absorb_max_pool(*window)) continue;
    absorbed_by_[j] = i;
    tail_node_[static_cast<size_t>(i)] = static_cast<int>(j);
  }
}

// A batch norm right after a convolution takes the statistics of its input
// from the convolution, which computes them while each image's output is
// still in cache: one pass over the activations fewer (every ResNet block).
void Model::share_moments() {
  for (size_t j = 0; j <= static_cast<size_t>(output_); ++j) {
    const Node& n = nodes_[j];
    if (!n.layer->takes_input_moments() || n.inbound.size() != 1 || n.inbound[0] < 0) continue;
    const auto i = static_cast<size_t>(n.inbound[0]);
    if (nodes_[i].layer->num_outputs() != 1) continue;
    if (absorbed_by_[i] >= 0) continue;  // its output is another layer's
    if (const Tensor* m = nodes_[i].layer->give_output_moments()) n.layer->take_input_moments(m);
  }
}

void Model::check_input(const Tensor& host_x) const {
  for (const Node& n : nodes_)
    if (std::find(n.inbound.begin(), n.inbound.end(), -1) != n.inbound.end())
      n.layer->check_input(host_x);
}

void Model::begin_training_step() {
  for (auto& n : nodes_) n.layer->begin_training_step();
}

const Shape& Model::output_shape() const {
  return nodes_[static_cast<size_t>(output_)].layer->output_shape();
}

void Model::set_exec(const Exec& ex) {
  ex_ = ex;
  for (auto& n : nodes_) n.layer->set_exec(ex);
}

void Model::set_compute_dtype(DType t) {
  for (auto& n : nodes_) n.layer->set_compute_dtype(t);
}

void Model::set_timeline(timeline::Timeline* tl) {
  timeline_ = tl;
  forward_names_.clear();
  backward_names_.clear();
  gradient_names_.clear();
  grad_bytes_.clear();
  if (!tl) return;
  for (auto& n : nodes_) {
    int64_t bytes = 0;
    for (const auto& p : n.layer->params())
      if (p.trainable) bytes += p.value.numel() * 4;
    grad_bytes_.push_back(bytes);
    forward_names_.push_back(tl->intern("forward " + n.layer->name()));
    backward_names_.push_back(tl->intern("backward " + n.layer->name()));
    gradient_names_.push_back(tl->intern("gradient into " + n.layer->name()));
  }
}

const Tensor& Model::node_output(int id, const Tensor& x) const {
  if (id < 0) return x;
  const int by = absorbed_by_[static_cast<size_t>(id)];
  return nodes_[static_cast<size_t>(by >= 0 ? by : id)].layer->output();
}

const Tensor& Model::node_output(const Node& n, size_t slot, const Tensor& x) const {
  const int k = n.inbound_output[slot];
  if (k == 0) return node_output(n.inbound[slot], x);
  return nodes_[static_cast<size_t>(n.inbound[slot])].layer->output(k);
}

const Tensor& Model::forward(const Tensor& x, bool training) {
  if (x.shape().drop_batch() != input_shape_)
    throw UsageError("model '" + name_ + "': input batch has shape " + x.shape().str() +
                     " but the model expects " + input_shape_.with_batch(0).str(true));
  input_ = &x;
  for (size_t i = 0; i <= static_cast<size_t>(output_); ++i) {
    if (absorbed_by_[i] >= 0) continue;
    Node& n = nodes_[i];
    for (size_t s = 0; s < n.inbound.size(); ++s) in_scratch_[s] = &node_output(n, s, x);
    timeline::Span span(timeline_, timeline::Lane::main, timeline::kMain,
                        timeline_ ? forward_names_[i] : nullptr, "forward");
    n.layer->forward(std::span(in_scratch_.data(), n.inbound.size()), training);
  }
  return node_output(output_, x);
}

const Tensor* Model::arriving_grad(int i, const Tensor& dy, const Tensor* relu_y,
                                   const char* span_name) {
  // The loss's gradient at the output, the one consumer's input gradient, or
  // the sum over several consumers; where relu_y is given, masked by
  // relu_y > 0 in the same pass.
  const auto& cons = grad_consumers_[static_cast<size_t>(i)];
  if (i != output_ && cons.empty()) return nullptr;  // no gradient reaches it
  auto part = [&](size_t k) -> const Tensor& {
    return nodes_[static_cast<size_t>(cons[k].first)].layer->input_grad(cons[k].second);
  };
  const Tensor& first = i == output_ ? dy : part(0);
  const size_t parts = i == output_ ? 1 : cons.size();
  if (parts == 1 && !relu_y) return &first;
  // Backward work of no layer (ResNet's residual sums: 3 % of its CPU step),
  // named so that a profile does not leave it out.
  timeline::Span span(timeline_, timeline::Lane::main, timeline::kMain, span_name, "backward");
  Tensor& sum = grad_sum_[static_cast<size_t>(i)];
  sum.ensure(first.shape(), DType::f32, ex_.device);
  if (parts == 1) {
    kernels::activation_backward(ex_, kernels::Activation::relu, Tensor(), *relu_y, first, sum);
    return &sum;
  }
  if (relu_y && parts == 2) {
    kernels::add_relu_backward(ex_, part(0), part(1), *relu_y, sum);
    return &sum;
  }
  kernels::add(ex_, part(0), part(1), sum);
  for (size_t k = 2; k < parts; ++k) kernels::axpy(ex_, 1.0f, part(k), sum);
  if (relu_y)
    kernels::activation_backward(ex_, kernels::Activation::relu, Tensor(), *relu_y, sum, sum);
  return &sum;
}

const Tensor* Model::summed_grad(const std::vector<std::pair<int, int>>& cons, Tensor& sum) {
  if (cons.empty()) return nullptr;
  auto part = [&](size_t k) -> const Tensor& {
    return nodes_[static_cast<size_t>(cons[k].first)].layer->input_grad(cons[k].second);
  };
  if (cons.size() == 1) return &part(0);
  sum.ensure(part(0).shape(), DType::f32, ex_.device);
  kernels::add(ex_, part(0), part(1), sum);
  for (size_t k = 2; k < cons.size(); ++k) kernels::axpy(ex_, 1.0f, part(k), sum);
  return &sum;
}

const Tensor* Model::other_outputs_grads(int i, const Tensor* g) {
  const auto u = static_cast<size_t>(i);
  bool any = false;
  for (size_t k = 0; k < other_consumers_[u].size(); ++k) {
    other_grads_[u][k] = summed_grad(other_consumers_[u][k], other_grad_sum_[u][k]);
    any = any || other_grads_[u][k];
  }
  nodes_[u].layer->set_extra_output_grads(other_grads_[u]);
  if (g || !any) return g;
  // An encoder whose sequence goes nowhere, only its final states.
  const Tensor& y = nodes_[u].layer->output();
  zero_grad_[u].ensure(y.shape(), DType::f32, ex_.device);
  kernels::fill(ex_, 0.0f, zero_grad_[u]);
  return &zero_grad_[u];
}

void Model::backward(const Tensor& dy) {
  const Tensor& x = *input_;
  for (int i = output_; i >= 0; --i) {
    if (absorbed_by_[static_cast<size_t>(i)] >= 0) continue;  // its layer below does its work
    Node& n = nodes_[static_cast<size_t>(i)];
    const int tail = tail_node_[static_cast<size_t>(i)];
    const Tensor* g = arriving_grad(tail >= 0 ? tail : i, dy,
                                    tail >= 0 ? n.layer->relu_output_masked_by_model() : nullptr,
                                    timeline_ ? gradient_names_[static_cast<size_t>(i)] : nullptr);
    if (n.layer->num_outputs() > 1) g = other_outputs_grads(i, g);
    if (!g) continue;
    for (size_t s = 0; s < n.inbound.size(); ++s) {
      in_scratch_[s] = &node_output(n, s, x);
      need_scratch_[s] = n.inbound[s] >= 0 && !n.layer->takes_ids();
    }
    {
      timeline::Span span(timeline_, timeline::Lane::main, timeline::kMain,
                          timeline_ ? backward_names_[static_cast<size_t>(i)] : nullptr, "backward",
                          "grad_bytes", timeline_ ? grad_bytes_[static_cast<size_t>(i)] : 0);
      n.layer->backward(std::span(in_scratch_.data(), n.inbound.size()), *g,
                        std::span<const bool>(need_scratch_.get(), n.inbound.size()));
    }
    if (listener_) listener_(*n.layer);
  }
}

std::vector<Param*> Model::params() {
  std::vector<Param*> out;
  for (auto& n : nodes_)
    for (auto& p : n.layer->params()) out.push_back(&p);
  return out;
}

std::vector<Param*> Model::trainable_params() {
  std::vector<Param*> out;
  for (auto& n : nodes_)
    for (auto& p : n.layer->params())
      if (p.trainable) out.push_back(&p);
  return out;
}

int64_t Model::param_count(bool trainable_only) const {
  int64_t total = 0;
  for (const auto& n : nodes_)
    for (const auto& p : n.layer->params())
      if (!trainable_only || p.trainable) total += p.value.numel();
  return total;
}

std::string Model::summary() const {
  const bool graph = [&] {
    for (size_t i = 0; i < nodes_.size(); ++i)
      if (nodes_[i].inbound.size() != 1 || nodes_[i].inbound[0] != static_cast<int>(i) - 1 ||
          nodes_[i].inbound_output[0] != 0)
        return true;
    return false;
  }();
  using Row = std::array<std::string, 4>;  // layer (type), output shape, params, connected to
  std::vector<Row> rows{{"Layer (type)", "Output Shape", "Param #", graph ? "Connected to" : ""}};
  for (const Node& node : nodes_) {
    const Layer& l = *node.layer;
    std::string links;
    if (graph)
      for (size_t k = 0; k < node.inbound.size(); ++k) {
        const int id = node.inbound[k], out = node.inbound_output[k];
        links += fmt::format(
            "{}{}{}", links.empty() ? "" : ", ",
            id < 0 ? std::string("input") : nodes_[static_cast<size_t>(id)].layer->name(),
            out > 0 ? fmt::format("[{}]", out) : "");
      }
    rows.push_back({l.name() + " (" + l.kind() + ")", l.output_shape().with_batch(0).str(true),
                    with_commas(l.param_count()), links});
  }
  // Keras' widths, widened so that a long name or shape keeps a space before the next column.
  std::array<size_t, 3> width{28, 26, 10};
  for (const Row& r : rows)
    for (size_t c = 0; c < width.size(); ++c) width[c] = std::max(width[c], r[c].size() + 1);
  const size_t line = std::max<size_t>(65, 1 + width[0] + width[1] + width[2]);
  const std::string rule(line, '_'), thick(line, '=');
  const auto row = [&](const Row& r) {
    return fmt::format(" {:<{}}{:<{}}{:<{}}{}\n", r[0], width[0], r[1], width[1], r[2], width[2],
                       r[3]);
  };
  std::string s = fmt::format("Model: \"{}\"\n{}\n{}{}\n", name_, rule, row(rows[0]), thick);
  for (size_t i = 1; i < rows.size(); ++i) s += row(rows[i]);
  const int64_t total = param_count(), trainable = param_count(true);
  s += fmt::format("{}\nTotal params: {}\nTrainable params: {}\nNon-trainable params: {}\n{}\n",
                   thick, with_commas(total), with_commas(trainable),
                   with_commas(total - trainable), rule);
  return s;
}

}  // namespace drun::nn
