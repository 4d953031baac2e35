#include "drun/model.hpp"

#include <optional>

#include "dataset_impl.hpp"
#include "edge.hpp"
#include "keras/keras_h5.hpp"
#include "nn/model.hpp"
#include "runtime_impl.hpp"
#include "train/session.hpp"

namespace drun {

struct Model::Impl {
  train::Context* ctx;
  std::shared_ptr<nn::Model> model;
  std::unique_ptr<train::Session> session;  // once compiled

  train::Session& compiled(const char* what) {
    if (!session) throw Error(std::string(what) + ": compile the model first");
    return *session;
  }
};

namespace {

Evaluation evaluation_of(const json& j) {
  Evaluation e;
  for (const auto& [k, v] : j.items()) {
    if (k == "examples")
      e.examples = v.get<int64_t>();
    else if (v.is_number())
      e.metrics[k] = v.get<double>();
  }
  return e;
}

Evaluation evaluation_of(const train::Evaluation& t) {
  Evaluation e;
  e.metrics["loss"] = t.loss;
  for (const auto& [k, v] : t.metrics) e.metrics[k] = v;
  e.examples = t.examples;
  return e;
}

}  // namespace

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;

Model Model::sequential(const Runtime& runtime, const std::vector<Layer>& layers, uint64_t seed,
                        const std::string& name) {
  return api::at_edge([&] {
    json spec = {{"name", name}, {"layers", json::array()}};
    for (const auto& l : layers)
      spec["layers"].push_back(api::described(l.class_name, l.config, "layer"));
    auto impl = std::make_unique<Impl>();
    impl->ctx = &runtime.impl().context();
    impl->model = std::make_shared<nn::Model>(spec, seed);
    impl->model->set_exec(impl->ctx->exec);
    return Model(std::move(impl));
  });
}

Model Model::load(const Runtime& runtime, const std::string& path) {
  return api::at_edge([&] {
    auto impl = std::make_unique<Impl>();
    impl->ctx = &runtime.impl().context();
    impl->model = keras::load_model(path);
    impl->model->set_exec(impl->ctx->exec);
    return Model(std::move(impl));
  });
}

void Model::compile(const Optimizer& optimizer, const Loss& loss,
                    const std::vector<std::string>& metrics) {
  api::at_edge([&] {
    const json options = {
        {"optimizer", api::described(optimizer.class_name, optimizer.config, "optimizer")},
        {"loss", api::described(loss.class_name, loss.config, "loss")},
        {"metrics", metrics}};
    impl_->session = std::make_unique<train::Session>(
        impl_->model, train::parse_compile_options(options), impl_->ctx->exec);
  });
}

FitResult Model::fit(const Dataset& train, const FitOptions& options, const Dataset* eval) {
  return api::at_edge([&] {
    auto& session = impl_->compiled("fit");
    json o = api::to_json(options.more, "fit");
    for (const char* key : {"epochs", "steps", "model_dir", "strategy"})
      if (o.contains(key)) throw Error(std::string("fit: give ") + key + " in FitOptions itself");
    if (options.steps > 0) o["steps"] = options.steps;
    if (options.epochs > 0) o["epochs"] = options.epochs;
    if (!options.model_dir.empty()) o["model_dir"] = options.model_dir;
    o["strategy"] = {{"name", options.strategy.name},
                     {"options", api::to_json(options.strategy.options, "strategy")}};
    const auto request = train::parse_fit_request(o);
    const json result = train::run_fit(*impl_->ctx, session, request, train.impl().input,
                                       eval ? &eval->impl().input : nullptr);
    FitResult r;
    r.summary_json = result.dump(2);
    r.global_step = result.value("global_step", int64_t{0});
    if (result.contains("train")) r.train = evaluation_of(result["train"]);
    if (result.contains("eval")) r.eval = evaluation_of(result["eval"]);
    return r;
  });
}

Evaluation Model::evaluate(const Dataset& data) {
  return api::at_edge([&] {
    auto input = train::make_pipeline(data.impl().input);
    return evaluation_of(impl_->compiled("evaluate").trainer.evaluate(*input, -1));
  });
}

Prediction Model::predict(const Dataset& data) {
  return api::at_edge([&] {
    auto input = train::make_pipeline(data.impl().input);
    // As in the Lua API, an uncompiled model predicts too: through a trainer
    // of its own, whose loss nothing reads.
    std::unique_ptr<train::Session> own;
    if (!impl_->session)
      own = std::make_unique<train::Session>(
          impl_->model, train::parse_compile_options({{"loss", "mse"}}), impl_->ctx->exec);
    auto& session = impl_->session ? *impl_->session : *own;
    const Tensor out = session.trainer.predict(*input);
    Prediction p;
    p.shape = out.shape().dims();
    p.values.assign(out.f32(), out.f32() + out.numel());
    return p;
  });
}

void Model::save(const std::string& path) const {
  api::at_edge([&] {
    keras::save_model(*impl_->model, path,
                      impl_->session ? impl_->session->training_config() : json(nullptr));
  });
}

std::string Model::summary() const {
  return api::at_edge([&] { return impl_->model->summary(); });
}

int64_t Model::param_count() const {
  return api::at_edge([&] { return impl_->model->param_count(); });
}

}  // namespace drun
