// MultiHeadAttention as Keras 3's: inputs query (T, E), value (S, Ev) and
// optionally key (S, Ek, else the value), per example. Each head h projects
// q = query Wq[:, h] + bq[h] (and k, v alike), attends softmax(q k^T /
// sqrt(key_dim)) v, and the heads' results meet in one output projection
// (H, Dv, O). The projections are GEMMs over every example at once, the
// per-head products batched GEMMs that read each head in place from its
// projection (kernels' batched_matmul); scale, causal mask and softmax are
// one op. Weights in Keras' names, shapes and order (query/kernel (E, H, D),
// query/bias (H, D), key/..., value/..., attention_output/kernel (H, Dv, O),
// attention_output/bias (O)). The products run in float32 whatever the
// model's compute type.
#include <cmath>

#include "nn/affine.hpp"
#include "nn/init.hpp"
#include "nn/layers.hpp"

namespace drun::nn {

namespace {

using kernels::BatchedGemm;
using kernels::MatrixLayout;

// Keras' attention_axes for inputs (batch, time, features): the default
// (null) or the one axis there is to attend over, however written.
bool default_attention_axes(const json& v) {
  if (v.is_null()) return true;
  const json axis = v.is_array() && v.size() == 1 ? v[0] : v;
  return axis == 1 || axis == -2;
}

class MultiHeadAttention final : public Layer {
 public:
  MultiHeadAttention(Options& o, const std::string& name) : Layer(name) {
    heads_ = o.get<int64_t>("num_heads");
    key_dim_ = o.get<int64_t>("key_dim");
    value_dim_ = o.get<int64_t>("value_dim", key_dim_);
    if (heads_ <= 0 || key_dim_ <= 0 || value_dim_ <= 0)
      throw UsageError(who() + ": num_heads, key_dim and value_dim must be positive (got " +
                       std::to_string(heads_) + ", " + std::to_string(key_dim_) + ", " +
                       std::to_string(value_dim_) + ")");
    rate_ = o.get<float>("dropout");
    if (!(rate_ >= 0.0f && rate_ < 1.0f)) throw UsageError(who() + ": dropout must be in [0, 1)");
    use_bias_ = o.get<bool>("use_bias");
    causal_ = o.get<bool>("use_causal_mask");
    kernel_init_ = o.get<std::string>("kernel_initializer");
    bias_init_ = o.get<std::string>("bias_initializer");
    seed_ = o.get<uint64_t>("seed");
    const json& out = o.value("output_shape");
    const json units = out.is_array() && out.size() == 1 ? out[0] : out;
    if (!units.is_null() && !(units.is_number_integer() && units.get<int64_t>() > 0))
      throw UsageError(who() + ": output_shape " + out.dump() +
                       " is not supported (one positive integer, or none: the query's features)");
    if (!units.is_null()) units_ = units.get<int64_t>();
    const json& axes = o.value("attention_axes");
    if (!default_attention_axes(axes))
      throw UsageError(who() + ": attention_axes " + axes.dump() +
                       " is not supported (attention over the time axis only: none)");
  }
  const char* kind() const override { return "MultiHeadAttention"; }
  int num_inputs() const override { return -1; }  // query, value and perhaps key
  Rng* rng() override { return &rng_; }
  bool keras_inputs_as_arguments() const override { return true; }
  json keras_call_kwargs() const override {
    return causal_ ? json{{"use_causal_mask", true}} : json::object();
  }

  Shape build(std::span<const Shape> in, Rng& rng) override {
    if (in.size() != 2 && in.size() != 3)
      throw UsageError(who() + ": takes query and value (and perhaps key), got " +
                       std::to_string(in.size()) + " input(s)");
    const Shape& q = in[0];
    const Shape& v = in[1];
    const Shape& k = in.size() == 3 ? in[2] : in[1];
    const bool ranks = q.rank() == 2 && v.rank() == 2 && k.rank() == 2;
    if (!ranks || k[0] != v[0]) {
      std::string shapes =
          "query " + q.with_batch(0).str(true) + ", value " + v.with_batch(0).str(true);
      if (in.size() == 3) shapes += ", key " + k.with_batch(0).str(true);
      throw UsageError(who() + ": " + shapes +
                       (ranks ? ": key and value must have the same length"
                              : ": expects inputs (batch, time, features)"));
    }
    t_ = q[0];
    s_ = v[0];
    eq_ = q[1];
    ek_ = k[1];
    ev_ = v[1];
    if (units_ == 0) units_ = eq_;
    dx_.resize(in.size());
    rng_ = Rng(seed_ ? seed_ : rng.next());
    // Keras' fans for an (E, H, D) kernel: the first axis is the receptive field.
    const auto project = [&](const char* part, int64_t e, int64_t d) {
      idx_.push_back(static_cast<int>(params_.size()));
      Param& w = add_param(std::string(part) + "/kernel", Shape{e, heads_, d});
      initialize(w.value, kernel_init_, e * heads_, e * d, rng, who());
      if (use_bias_) {
        Param& b = add_param(std::string(part) + "/bias", Shape{heads_, d});
        initialize(b.value, bias_init_, e * heads_, e * d, rng, who());
      }
    };
    project("query", eq_, key_dim_);
    project("key", ek_, key_dim_);
    project("value", ev_, value_dim_);
    idx_.push_back(static_cast<int>(params_.size()));
    Param& w = add_param("attention_output/kernel", Shape{heads_, value_dim_, units_});
    initialize(w.value, kernel_init_, heads_ * value_dim_, heads_ * units_, rng, who());
    if (use_bias_) {
      Param& b = add_param("attention_output/bias", Shape{units_});
      initialize(b.value, bias_init_, heads_ * value_dim_, heads_ * units_, rng, who());
    }
    return output_shape_ = Shape{t_, units_};
  }

  void begin_training_step() override {
    if (rate_ > 0.0f) draw_key();
    keyed_ = rate_ > 0.0f;
  }

  void forward(std::span<const Tensor* const> in, bool training) override {
    const Tensor& query = *in[0];
    const Tensor& value = *in[1];
    const Tensor& key = in.size() == 3 ? *in[2] : value;
    b_ = query.dim(0);
    const int64_t hd = heads_ * key_dim_, hv = heads_ * value_dim_;
    ensure(q_, Shape{b_, t_, hd});
    ensure(k_, Shape{b_, s_, hd});
    ensure(v_, Shape{b_, s_, hv});
    ensure(p_, Shape{b_, heads_, t_, s_});
    ensure(c_, Shape{b_, t_, hv});
    ensure(out_, Shape{b_, t_, units_});
    project(query, kQuery, b_ * t_, eq_, hd, q_);
    project(key, kKey, b_ * s_, ek_, hd, k_);
    project(value, kValue, b_ * s_, ev_, hv, v_);
    kernels::batched_matmul(ex_, scores_gemm(), 1.0f, q_, k_, 0.0f, p_);
    kernels::masked_softmax_forward(ex_, scale(), causal_, t_, p_, p_);
    training_ = training && rate_ > 0.0f;
    if (training_) {
      ensure(dropped_, p_.shape());
      ensure(mask_, p_.shape());
      if (!keyed_) draw_key();  // no begin_training_step since the last forward
      keyed_ = false;
      kernels::dropout_forward(ex_, key_, 1.0f - rate_, p_, mask_, dropped_);
    }
    const Tensor& probs = training_ ? dropped_ : p_;
    kernels::batched_matmul(
        ex_,
        {false, false, t_, value_dim_, s_, b_, heads_, p_layout(), v_layout(), c_layout(), causal_},
        1.0f, probs, v_, 0.0f, c_);
    affine_forward(ex_, b_ * t_, hv, units_, c_, weight(kOutput),
                   use_bias_ ? &bias(kOutput) : nullptr, out_);
  }

  void backward(std::span<const Tensor* const> in, const Tensor& dy,
                std::span<const bool> need_dx) override {
    const Tensor& query = *in[0];
    const Tensor& value = *in[1];
    const Tensor& key = in.size() == 3 ? *in[2] : value;
    const int64_t hd = heads_ * key_dim_, hv = heads_ * value_dim_;
    // The output projection.
    kernels::matmul(ex_, true, false, hv, units_, b_ * t_, 1.0f, c_, dy, 0.0f,
                    params_[static_cast<size_t>(idx_[kOutput])].grad);
    if (use_bias_) kernels::column_sums(ex_, dy, bias_grad(kOutput));
    ensure(dc_, c_.shape());
    kernels::matmul(ex_, false, true, b_ * t_, hv, units_, 1.0f, dy, weight(kOutput), 0.0f, dc_);
    // The heads: dP = dC V^T, dV = P^T dC (P as dropped), then through dropout and softmax.
    const Tensor& probs = training_ ? dropped_ : p_;
    ensure(dp_, p_.shape());
    ensure(dv_, v_.shape());
    kernels::batched_matmul(
        ex_,
        {false, true, t_, s_, value_dim_, b_, heads_, c_layout(), v_layout(), p_layout(), causal_},
        1.0f, dc_, v_, 0.0f, dp_);
    kernels::batched_matmul(
        ex_,
        {true, false, s_, value_dim_, t_, b_, heads_, p_layout(), c_layout(), v_layout(), causal_},
        1.0f, probs, dc_, 0.0f, dv_);
    if (training_) kernels::mul(ex_, dp_, mask_, dp_);
    kernels::masked_softmax_backward(ex_, scale(), p_, dp_, dp_);
    // dQ = dS K, dK = dS^T Q.
    ensure(dq_, q_.shape());
    ensure(dk_, k_.shape());
    kernels::batched_matmul(
        ex_,
        {false, false, t_, key_dim_, s_, b_, heads_, p_layout(), k_layout(), q_layout(), causal_},
        1.0f, dp_, k_, 0.0f, dq_);
    kernels::batched_matmul(
        ex_,
        {true, false, s_, key_dim_, t_, b_, heads_, p_layout(), q_layout(), k_layout(), causal_},
        1.0f, dp_, q_, 0.0f, dk_);
    // The input projections; the value input also takes the key's share
    // where it stands for the key.
    project_backward(query, kQuery, b_ * t_, eq_, hd, dq_);
    project_backward(key, kKey, b_ * s_, ek_, hd, dk_);
    project_backward(value, kValue, b_ * s_, ev_, hv, dv_);
    if (need_dx[0]) input_grad_of(kQuery, query, b_ * t_, eq_, hd, dq_, dx_[0], 0.0f);
    if (need_dx[1]) {
      input_grad_of(kValue, value, b_ * s_, ev_, hv, dv_, dx_[1], 0.0f);
      if (in.size() == 2) input_grad_of(kKey, key, b_ * s_, ek_, hd, dk_, dx_[1], 1.0f);
    }
    if (in.size() == 3 && need_dx[2]) input_grad_of(kKey, key, b_ * s_, ek_, hd, dk_, dx_[2], 0.0f);
  }

  json config() const override {
    json c = Layer::config();
    c["num_heads"] = heads_;
    c["key_dim"] = key_dim_;
    c["value_dim"] = value_dim_;
    c["dropout"] = rate_;
    c["use_bias"] = use_bias_;
    c["output_shape"] = units_ == eq_ ? json() : json(units_);
    c["attention_axes"] = nullptr;
    c["kernel_initializer"] = {{"class_name", "GlorotUniform"}, {"config", {{"seed", nullptr}}}};
    c["bias_initializer"] = {{"class_name", "Zeros"}, {"config", json::object()}};
    if (seed_) c["seed"] = seed_;
    return c;
  }

 private:
  enum Part { kQuery, kKey, kValue, kOutput };

  const Tensor& weight(Part p) const { return params_[static_cast<size_t>(idx_[p])].value; }
  const Tensor& bias(Part p) const { return params_[static_cast<size_t>(idx_[p]) + 1].value; }
  Tensor& bias_grad(Part p) { return params_[static_cast<size_t>(idx_[p]) + 1].grad; }
  float scale() const { return 1.0f / std::sqrt(static_cast<float>(key_dim_)); }

  // Head h of example b inside each buffer (kernels' MatrixLayout).
  MatrixLayout q_layout() const { return {heads_ * key_dim_, t_ * heads_ * key_dim_, key_dim_}; }
  MatrixLayout k_layout() const { return {heads_ * key_dim_, s_ * heads_ * key_dim_, key_dim_}; }
  MatrixLayout v_layout() const {
    return {heads_ * value_dim_, s_ * heads_ * value_dim_, value_dim_};
  }
  MatrixLayout c_layout() const {
    return {heads_ * value_dim_, t_ * heads_ * value_dim_, value_dim_};
  }
  MatrixLayout p_layout() const { return {s_, heads_ * t_ * s_, t_ * s_}; }
  BatchedGemm scores_gemm() const {
    return {false, true, t_, s_, key_dim_, b_, heads_, q_layout(), k_layout(), p_layout(), causal_};
  }

  // y (rows, cols) = x (rows, in) W + b.
  void project(const Tensor& x, Part p, int64_t rows, int64_t in, int64_t cols, Tensor& y) {
    affine_forward(ex_, rows, in, cols, x, weight(p), use_bias_ ? &bias(p) : nullptr, y);
  }
  void project_backward(const Tensor& x, Part p, int64_t rows, int64_t in, int64_t cols,
                        const Tensor& dy) {
    kernels::matmul(ex_, true, false, in, cols, rows, 1.0f, x, dy, 0.0f,
                    params_[static_cast<size_t>(idx_[p])].grad);
    if (use_bias_) kernels::column_sums(ex_, dy, bias_grad(p));
  }
  // dx = beta dx + dy W^T.
  void input_grad_of(Part p, const Tensor& x, int64_t rows, int64_t in, int64_t cols,
                     const Tensor& dy, Tensor& dx, float beta) {
    ensure(dx, x.shape());
    kernels::matmul(ex_, false, true, rows, in, cols, 1.0f, dy, weight(p), beta, dx);
  }

  void draw_key() {
    ensure(key_, Shape{2}, DType::i32);
    kernels::dropout_set_key(ex_, rng_.next(), key_);
  }

  int64_t heads_ = 0, key_dim_ = 0, value_dim_ = 0, units_ = 0;
  int64_t t_ = 0, s_ = 0, eq_ = 0, ek_ = 0, ev_ = 0, b_ = 0;
  float rate_ = 0.0f;
  bool use_bias_ = true, causal_ = false;
  std::string kernel_init_, bias_init_;
  uint64_t seed_ = 0;
  std::vector<int> idx_;  // per Part: its kernel's index in params_ (the bias follows)
  bool training_ = false;
  bool keyed_ = false;  // begin_training_step wrote the next forward's key
  Rng rng_;
  Tensor key_, mask_, dropped_;  // attention dropout's key, mask and dropped probabilities
  Tensor q_, k_, v_, p_, c_;     // projections, probabilities, the heads' results
  Tensor dc_, dp_, dq_, dk_, dv_;
};

}  // namespace

const LayerInfo& multi_head_attention_layer() {
  static const LayerInfo info{
      .about =
          {.names = {"MultiHeadAttention"},
           .doc = "attention of a query sequence over a value (and key) sequence, in heads",
           .schema =
               {{"num_heads", OptionType::integer, kRequired, "attention heads"},
                {"key_dim", OptionType::integer, kRequired, "size of each head for query and key"},
                {"value_dim", OptionType::integer, nullptr,
                 "size of each head for value (none: key_dim)"},
                {"dropout", OptionType::number, 0.0,
                 "dropout rate of the attention probabilities, in training"},
                {"use_bias", OptionType::boolean, true, "whether the projections add biases"},
                {"output_shape", OptionType::any, nullptr, "output features (none: the query's)"},
                {"attention_axes", OptionType::any, nullptr,
                 "only none: attention over the time axis"},
                {"use_causal_mask", OptionType::boolean, false,
                 "query i attends to keys 0..i only (Keras' call argument)"},
                {"kernel_initializer", OptionType::string, "glorot_uniform",
                 "the kernels' initial values"},
                {"bias_initializer", OptionType::string, "zeros", "the biases' initial values"},
                {"seed", OptionType::integer, 0,
                 "the dropout masks' seed (0: drawn from the model's seed)"}},
           .positional = {"num_heads", "key_dim"}},
      .make = [](Options& o,
                 const std::string& name) { return std::make_unique<MultiHeadAttention>(o, name); },
      .from_keras =
          [](json& config, const std::string& who) {
            // Newer Keras options, each harmless at its default.
            if (config.value("use_gate", json(false)) != false)
              throw UsageError(who + ": use_gate = true is not supported");
            if (!config.value("sliding_window", json()).is_null())
              throw UsageError(who + ": sliding_window = " + config["sliding_window"].dump() +
                               " is not supported");
            config.erase("use_gate");
            config.erase("sliding_window");
          }};
  return info;
}

}  // namespace drun::nn
