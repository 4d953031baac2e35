// Bidirectional: Keras' wrapper of a recurrent layer (LSTM, GRU, SimpleRNN).
// Two copies of the layer read the same input, the backward one with
// go_backwards; where they return sequences, the backward one's (in its
// processing order, last step first) is turned back in time, by the strided
// copy that merges it, before the two are merged: concatenated on the last
// axis, summed, averaged or multiplied. The copies' weights are the
// wrapper's, the forward copy's then the backward's, under Keras' names
// (bidirectional/forward_lstm/lstm_cell/kernel), so that files, checkpoints,
// optimizers and strategies see them as any layer's. With return_state the
// outputs are Keras': [output, the forward copy's states..., the backward
// copy's states...]; initial states, after the sequence, go in that order too.
#include <iterator>
#include <optional>

#include "nn/copy_views.hpp"
#include "nn/recurrent.hpp"

namespace drun::nn {

namespace {

// Keras' merge modes, in the order of kMergeNames.
enum class Merge { concat, sum, mul, ave };
constexpr const char* kMergeNames[] = {"concat", "sum", "mul", "ave"};

std::string none_refused(const std::string& who) {
  return who + ": merge_mode None (two outputs) is not supported; use 'concat', 'sum', 'mul' " +
         "or 'ave'";
}

Merge parse_merge(const std::string& mode, const std::string& who) {
  for (size_t i = 0; i < std::size(kMergeNames); ++i)
    if (mode == kMergeNames[i]) return static_cast<Merge>(i);
  if (mode == "none" || mode == "None") throw UsageError(none_refused(who));
  throw UsageError(who + ": merge_mode '" + mode + "' is not one of 'concat', 'sum', 'mul', 'ave'");
}

// Keras writes None as null, which would read as the default.
void bidirectional_from_keras(json& config, const std::string& who) {
  if (config.contains("merge_mode") && config["merge_mode"].is_null())
    throw UsageError(none_refused(who));
}

// One side of a copy between (B, T, width) tensors: the block of columns
// [col, col + u) of each step, its steps in reverse where `reversed`.
struct Side {
  Strides stride;
  int64_t offset;
};
Side side(int64_t steps, int64_t width, int64_t col, bool reversed) {
  Strides s{};
  s[0] = steps * width;
  s[1] = reversed ? -width : width;
  s[2] = 1;
  return {s, col + (reversed ? (steps - 1) * width : 0)};
}

class Bidirectional final : public Layer {
 public:
  Bidirectional(Options& o, const std::string& name) : Layer(name) {
    // Not who(): kind() is not answered before the object is constructed.
    const std::string who = "Bidirectional '" + name + "'";
    merge_ = parse_merge(o.get<std::string>("merge_mode"), who);
    const json layer = o.value("layer");
    forward_ = copy_of(layer, "forward_", std::nullopt, who);
    // As Keras: the copy goes backwards whatever the wrapped layer did, and
    // a given backward layer is taken as it is, under its own name.
    backward_ = o.has("backward_layer") ? copy_of(o.raw("backward_layer"), "", std::nullopt, who)
                                        : copy_of(layer, "backward_", true, who);
    const json fc = forward_->config(), bc = backward_->config();
    if (fc["go_backwards"] == bc["go_backwards"])
      throw UsageError(who + ": the forward and backward layers both have go_backwards = " +
                       fc["go_backwards"].dump() + "; the backward one must run the other way");
    if (fc["return_sequences"] != bc["return_sequences"])
      throw UsageError(
          who + ": the forward layer has return_sequences = " + fc["return_sequences"].dump() +
          ", the backward one " + bc["return_sequences"].dump() + "; they must agree");
    sequences_ = fc["return_sequences"].get<bool>();
    if (fc["return_state"] != bc["return_state"])
      throw UsageError(who + ": the forward layer has return_state = " + fc["return_state"].dump() +
                       ", the backward one " + bc["return_state"].dump() + "; they must agree");
    states_ = static_cast<size_t>(dynamic_cast<Recurrent&>(*forward_).num_states());
    if (states_ != static_cast<size_t>(dynamic_cast<Recurrent&>(*backward_).num_states()))
      throw UsageError(who + ": the forward layer is a " + forward_->kind() +
                       ", the backward one a " + backward_->kind() + "; their states must agree");
  }
  const char* kind() const override { return "Bidirectional"; }
  int num_inputs() const override { return 0; }  // the sequence, then any initial states
  int num_outputs() const override { return 1 + 2 * (forward_->num_outputs() - 1); }
  const char* keras_inputs_keyword() const override { return "initial_state"; }
  void set_extra_output_grads(std::span<const Tensor* const> grads) override {
    forward_->set_extra_output_grads(grads.subspan(0, grads.size() / 2));
    backward_->set_extra_output_grads(grads.subspan(grads.size() / 2));
  }

  Shape build(std::span<const Shape> in, Rng& rng) override {
    if (in.size() != 1 && in.size() != 1 + 2 * states_)
      throw UsageError(who() + ": takes the sequence and " + std::to_string(2 * states_) +
                       " initial states (the forward layer's, then the backward one's), got " +
                       std::to_string(in.size() - 1));
    std::vector<Shape> in_f{in[0]}, in_b{in[0]};
    if (in.size() > 1) {
      in_f.insert(in_f.end(), in.begin() + 1, in.begin() + 1 + static_cast<ptrdiff_t>(states_));
      in_b.insert(in_b.end(), in.begin() + 1 + static_cast<ptrdiff_t>(states_), in.end());
    }
    dx_.resize(in.size());
    in_f_.resize(in_f.size());
    in_b_.resize(in_b.size());
    const Shape f = forward_->build(in_f, rng), b = backward_->build(in_b, rng);
    units_f_ = f[f.rank() - 1];
    units_b_ = b[b.rank() - 1];
    if (merge_ != Merge::concat && units_f_ != units_b_)
      throw UsageError(who() + ": the forward layer has " + std::to_string(units_f_) +
                       " units, the backward one " + std::to_string(units_b_) +
                       "; merging them other than by 'concat' needs the same number");
    params_.clear();
    for (Layer* l : {forward_.get(), backward_.get()})
      for (const Param& p : l->params()) {
        params_.push_back(p);  // the same tensors: a copy shares their storage
        params_.back().name = name_ + "/" + p.name;
      }
    Shape out = f;
    if (merge_ == Merge::concat) out[out.rank() - 1] = units_f_ + units_b_;
    return output_shape_ = out;
  }

  // The copies' variables move with them; the wrapper's stand for the same tensors.
  void set_exec(const Exec& ex) override {
    ex_ = ex;
    forward_->set_exec(ex);
    backward_->set_exec(ex);
    size_t i = 0;
    for (Layer* l : {forward_.get(), backward_.get()})
      for (const Param& p : l->params()) {
        params_[i].value = p.value;
        params_[i++].grad = p.grad;
      }
  }

  void forward(std::span<const Tensor* const> in, bool training) override {
    split(in);
    forward_->forward(in_f_, training);
    backward_->forward(in_b_, training);
    const Tensor &yf = forward_->output(), &yb = backward_->output();
    batch_ = in[0]->dim(0);
    steps_ = sequences_ ? in[0]->dim(1) : 1;
    ensure(out_, output_shape_.with_batch(batch_));
    switch (merge_) {
      case Merge::concat: {
        const int64_t width = units_f_ + units_b_;
        copy(yf, side(steps_, units_f_, 0, false), out_, side(steps_, width, 0, false), units_f_);
        copy(yb, back(units_b_), out_, side(steps_, width, units_f_, false), units_b_);
        break;
      }
      case Merge::sum:
      case Merge::ave:
        kernels::cast(ex_, yf, out_);  // a copy
        copy(yb, back(units_b_), out_, forth(units_f_), units_f_, 1.0f);
        if (merge_ == Merge::ave) kernels::scale(ex_, 0.5f, out_);
        break;
      case Merge::mul:
        ensure(yb_forth_, yb.shape());
        copy(yb, back(units_b_), yb_forth_, forth(units_b_), units_b_);
        kernels::mul(ex_, yf, yb_forth_, out_);
        break;
    }
  }

  void backward(std::span<const Tensor* const> in, const Tensor& dy,
                std::span<const bool> need_dx) override {
    const Tensor &yf = forward_->output(), &yb = backward_->output();
    ensure(dyb_, yb.shape());
    const Tensor* dyf = &dy;
    switch (merge_) {
      case Merge::concat: {
        const int64_t width = units_f_ + units_b_;
        ensure(dyf_, yf.shape());
        copy(dy, side(steps_, width, 0, false), dyf_, forth(units_f_), units_f_);
        copy(dy, side(steps_, width, units_f_, true), dyb_, forth(units_b_), units_b_);
        dyf = &dyf_;
        break;
      }
      case Merge::sum:
        copy(dy, back(units_f_), dyb_, forth(units_b_), units_b_);
        break;
      case Merge::ave:
        ensure(dyf_, yf.shape());
        kernels::cast(ex_, dy, dyf_);
        kernels::scale(ex_, 0.5f, dyf_);
        copy(dyf_, back(units_f_), dyb_, forth(units_b_), units_b_);
        dyf = &dyf_;
        break;
      case Merge::mul:
        // d(yf) = dy * yb turned forth; d(yb) = (dy * yf) turned back.
        ensure(dyf_, yf.shape());
        kernels::mul(ex_, dy, yf, dyf_);
        copy(dyf_, back(units_f_), dyb_, forth(units_b_), units_b_);
        kernels::mul(ex_, dy, yb_forth_, dyf_);
        dyf = &dyf_;
        break;
    }
    split(in);
    // Whether each copy owes its input's gradient: the sequence's, then its states'.
    bool need_f[3] = {need_dx[0], false, false}, need_b[3] = {need_dx[0], false, false};
    for (size_t k = 1; k < in_f_.size(); ++k) {
      need_f[k] = need_dx[k];
      need_b[k] = need_dx[states_ + k];
    }
    forward_->backward(in_f_, *dyf, std::span<const bool>(need_f, in_f_.size()));
    backward_->backward(in_b_, dyb_, std::span<const bool>(need_b, in_b_.size()));
    if (need_dx[0]) {
      ensure(dx_[0], in[0]->shape());
      kernels::add(ex_, forward_->input_grad(), backward_->input_grad(), dx_[0]);
    }
    for (size_t k = 1; k < in_f_.size(); ++k) {  // views of the copies' own
      dx_[k] = forward_->input_grad(static_cast<int>(k));
      dx_[states_ + k] = backward_->input_grad(static_cast<int>(k));
    }
  }

  json config() const override {
    json c = Layer::config();
    c["merge_mode"] = merge_name();
    c["layer"] = described(*forward_);
    c["backward_layer"] = described(*backward_);
    return c;
  }

 private:
  // A copy of the wrapped layer `desc` ({class_name, config}), named
  // `prefix` + its name (without the prefix it may already carry, as Keras
  // names it), going backwards where `go_backwards` says so.
  static std::unique_ptr<Layer> copy_of(const json& desc, const std::string& prefix,
                                        std::optional<bool> go_backwards, const std::string& who) {
    const json cls = desc.is_object() ? desc.value("class_name", json()) : json();
    const LayerInfo* info = cls.is_string() ? find_layer(cls.get<std::string>()) : nullptr;
    if (!info)
      throw UsageError(who + ": wraps a recurrent layer (nn.LSTM{...}, nn.GRU{...}, " +
                       "nn.SimpleRNN{...}), got " + desc.dump().substr(0, 200));
    json config = desc.value("config", json::object());
    if (!config.is_object())
      throw UsageError(who + ": the wrapped layer's config is " + config.dump().substr(0, 200) +
                       ", not a table of options");
    std::string name = config.value("name", keras_base_name(info->about.name()));
    if (name.starts_with(prefix)) name.erase(0, prefix.size());
    name = prefix + name;
    config["name"] = name;
    if (go_backwards) config["go_backwards"] = *go_backwards;
    std::unique_ptr<Layer> layer;
    try {
      layer = make_layer(info->about.name(), config, name);
    } catch (const UsageError& e) {
      throw UsageError(who + ": " + e.what());
    }
    if (!dynamic_cast<Recurrent*>(layer.get()))
      throw UsageError(who + ": wraps a recurrent layer (LSTM, GRU, SimpleRNN), got a " +
                       layer->kind() + " layer");
    return layer;
  }

  // A layer as Keras 3 serializes the one a wrapper holds.
  static json described(const Layer& l) {
    return {{"module", "keras.layers"},
            {"class_name", l.kind()},
            {"config", l.config()},
            {"registered_name", nullptr}};
  }

  const char* merge_name() const { return kMergeNames[static_cast<size_t>(merge_)]; }

  const Tensor& extra_output(int k) const override {
    const auto n = static_cast<int>(states_);
    return k <= n ? forward_->output(k) : backward_->output(k - n);
  }
  Shape extra_output_shape(int k) const override {
    const auto n = static_cast<int>(states_);
    return k <= n ? forward_->output_shape(k) : backward_->output_shape(k - n);
  }

  // The copies' inputs: the sequence, then each one's initial states.
  void split(std::span<const Tensor* const> in) {
    if (in.size() != dx_.size())
      throw UsageError(who() + ": was built with " + std::to_string(dx_.size() - 1) +
                       " initial states, given " + std::to_string(in.size() - 1));
    in_f_[0] = in_b_[0] = in[0];
    for (size_t k = 1; k < in_f_.size(); ++k) {
      in_f_[k] = in[k];
      in_b_[k] = in[states_ + k];
    }
  }

  // The backward copy's (B, T, u) sequence read last step first, and a
  // (B, T, u) tensor in order: the sides of a copy that turns it in time.
  Side back(int64_t u) const { return side(steps_, u, 0, sequences_); }
  Side forth(int64_t u) const { return side(steps_, u, 0, false); }

  // y (at `to`) = beta y + x (at `from`), over (B, T, u).
  void copy(const Tensor& x, const Side& from, Tensor& y, const Side& to, int64_t u,
            float beta = 0.0f) const {
    kernels::strided_copy(
        ex_,
        copy_geometry(Shape{batch_, steps_, u}, from.stride, to.stride, from.offset, to.offset), x,
        beta, y);
  }

  Merge merge_ = Merge::concat;
  std::unique_ptr<Layer> forward_, backward_;
  bool sequences_ = false;
  size_t states_ = 1;                       // the wrapped cell's: h (LSTM: h, c)
  std::vector<const Tensor*> in_f_, in_b_;  // the copies' inputs (split)
  int64_t units_f_ = 0, units_b_ = 0;
  int64_t batch_ = 0, steps_ = 0;  // of the last forward; 1 step where only the last state
  Tensor yb_forth_;                // mul: the backward copy's output in time order
  Tensor dyf_, dyb_;               // the gradients at the copies' outputs
};

}  // namespace

const LayerInfo& bidirectional_layer() {
  static const LayerInfo info{
      .about = {.names = {"Bidirectional"},
                .doc = "runs a recurrent layer forwards and a copy of it backwards in time and "
                       "merges their outputs",
                .schema = {{"layer", OptionType::table, kRequired,
                            "the recurrent layer to wrap: nn.LSTM{...}, nn.GRU{...} or "
                            "nn.SimpleRNN{...}"},
                           {"merge_mode", OptionType::string, "concat",
                            "how the two outputs combine: 'concat' (on the last axis), 'sum', "
                            "'mul' or 'ave' (Keras' None, two outputs, is refused)"},
                           {"backward_layer", OptionType::table, nullptr,
                            "the backward layer, with go_backwards = true (default: a copy of "
                            "layer)"}},
                .positional = {"layer", "merge_mode"}},
      .make = [](Options& o,
                 const std::string& name) { return std::make_unique<Bidirectional>(o, name); },
      .from_keras = bidirectional_from_keras};
  return info;
}

}  // namespace drun::nn
